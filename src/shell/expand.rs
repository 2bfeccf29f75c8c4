//! Glob expansion of command arguments, done by the server (never by a
//! shell), relative to the working directory and through the path guard.
//! Bash's rules: `*` and `?` do not match a leading dot unless the pattern
//! component starts with one; results are sorted; a pattern that matches
//! nothing stays a literal word.

use std::path::Path;

use globset::GlobBuilder;

use super::parse::Word;
use super::policy::Refusal;
use crate::fs::guard::Guard;

/// Expansions beyond this refuse the command (a pattern gone wild).
const MAX_MATCHES: usize = 10_000;

/// The words `word` stands for.
pub fn expand(word: &Word, cwd: &Path, guard: &Guard) -> Result<Vec<String>, Refusal> {
    let Some(pattern) = &word.glob else {
        return Ok(vec![word.value.clone()]);
    };
    let refuse = |why: &str| {
        Err(Refusal {
            part: word.value.clone(),
            reason: why.to_string(),
        })
    };
    if pattern.starts_with('/') {
        return refuse(
            "absolute glob patterns are not expanded; glob relative to the workspace root",
        );
    }
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    if parts.contains(&"..") {
        return refuse("glob patterns may not go up with `..`");
    }
    // (relative path as shown, does it exist) for the levels matched so far.
    let mut current: Vec<String> = vec![String::new()];
    for part in &parts {
        let mut next = Vec::new();
        if !has_glob(part) {
            let literal = unescape(part);
            for base in &current {
                let rel = join(base, &literal);
                if std::fs::symlink_metadata(cwd.join(&rel)).is_ok() || *part == "." {
                    next.push(rel);
                }
            }
        } else {
            let Ok(glob) = GlobBuilder::new(part)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
            else {
                return refuse("invalid glob pattern");
            };
            let matcher = glob.compile_matcher();
            let dot_ok = part.starts_with('.') || part.starts_with("\\.");
            for base in &current {
                let dir = cwd.join(if base.is_empty() { "." } else { base.as_str() });
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                let mut names: Vec<String> = entries
                    .filter_map(Result::ok)
                    .filter_map(|e| e.file_name().into_string().ok())
                    .filter(|n| dot_ok || !n.starts_with('.'))
                    .filter(|n| matcher.is_match(n))
                    .collect();
                names.sort();
                next.extend(names.into_iter().map(|n| join(base, &n)));
                if next.len() > MAX_MATCHES {
                    return refuse("the pattern matches too many paths");
                }
            }
        }
        current = next;
        if current.is_empty() {
            break;
        }
    }
    if current.is_empty() || current == [String::new()] {
        return Ok(vec![word.value.clone()]);
    }
    for rel in &current {
        if guard.resolve_absolute(&cwd.join(rel)).is_err() {
            return refuse(&format!(
                "it expands to `{rel}`, which leads outside the workspace roots"
            ));
        }
    }
    Ok(current)
}

fn join(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_string()
    } else {
        format!("{base}/{name}")
    }
}

/// Whether a pattern component has glob characters that are not escaped.
fn has_glob(part: &str) -> bool {
    let mut escaped = false;
    for c in part.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if matches!(c, '*' | '?' | '[') {
            return true;
        }
    }
    false
}

fn unescape(part: &str) -> String {
    let mut out = String::with_capacity(part.len());
    let mut chars = part.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse::parse;
    use std::os::unix::fs::symlink;

    fn word(text: &str) -> Word {
        parse(&format!("echo {text}")).unwrap().items[0]
            .pipeline
            .commands[0]
            .words[1]
            .clone()
    }

    #[test]
    fn expands_like_bash_inside_the_working_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for f in [
            "b.rs",
            "a.rs",
            ".hidden.rs",
            "c.txt",
            "src/x.rs",
            "src/y.rs",
            "src/sub/z.rs",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let guard = Guard::new(&[&root]).unwrap();
        let e = |t: &str| expand(&word(t), &root, &guard).unwrap();
        assert_eq!(e("*.rs"), vec!["a.rs", "b.rs"]);
        assert_eq!(e(".*.rs"), vec![".hidden.rs"]);
        assert_eq!(e("src/*.rs"), vec!["src/x.rs", "src/y.rs"]);
        assert_eq!(e("*/*.rs"), vec!["src/x.rs", "src/y.rs"]);
        assert_eq!(e("src/*/z.rs"), vec!["src/sub/z.rs"]);
        assert_eq!(e("[ab].rs"), vec!["a.rs", "b.rs"]);
        assert_eq!(e("?.txt"), vec!["c.txt"]);
        // No match: the word stays literal; quoted glob characters are literal.
        assert_eq!(e("*.zig"), vec!["*.zig"]);
        assert_eq!(e("'*'.rs"), vec!["*.rs"]);
        assert_eq!(e("plain"), vec!["plain"]);
    }

    #[test]
    fn refuses_escapes_from_the_roots() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(root.join("in")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("outside/secret"), "").unwrap();
        symlink(base.join("outside"), root.join("link")).unwrap();
        let guard = Guard::new(&[&root]).unwrap();
        for bad in ["../*", "/etc/*", "in/../../*", "l*/*"] {
            assert!(expand(&word(bad), &root, &guard).is_err(), "{bad}");
        }
    }
}
