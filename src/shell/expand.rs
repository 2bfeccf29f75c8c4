//! Glob expansion of command arguments, done by the server (never by a
//! shell), relative to the working directory, with bash's rules: `*` and
//! `?` do not match a leading dot unless the pattern component starts with
//! one; results are sorted; a pattern that matches nothing, or is not a
//! valid pattern (`echo [`), stays a literal word.
//!
//! Two rules keep it from leaking or stalling:
//! - only directories the path guard approves are read, through the guard's
//!   race-safe handle, and a match that leads outside the roots (a symlink
//!   out, a dangling one) is left out and only counted, never named;
//! - one [`Budget`] bounds the whole command line: words, bytes and time.
//!   Each directory is read at most once per command line.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

use globset::GlobBuilder;

use super::parse::Word;
use super::refusal::{Refusal, refuse};
use crate::fs::guard::Guard;

/// Limits of one command line after expansion.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Words in all argv together.
    pub max_words: usize,
    /// Bytes in all argv together.
    pub max_bytes: usize,
    /// When planning must be done.
    pub deadline: Instant,
}

/// Expands the words of one command line, sharing directory reads and the
/// budget between them.
pub struct Expander<'a> {
    guard: &'a Guard,
    cwd: &'a Path,
    budget: Budget,
    words: usize,
    bytes: usize,
    /// Directory listings by real path (None: not readable or not inside).
    listings: HashMap<PathBuf, Option<Rc<Vec<String>>>>,
    /// What a path relative to the working directory is: None if it leads
    /// outside the roots (or cannot be resolved), else whether it is a
    /// directory.
    kinds: HashMap<String, Option<bool>>,
    /// Matches left out because they lead outside the roots.
    pub left_out: usize,
}

impl<'a> Expander<'a> {
    pub fn new(guard: &'a Guard, cwd: &'a Path, budget: Budget) -> Expander<'a> {
        Expander {
            guard,
            cwd,
            budget,
            words: 0,
            bytes: 0,
            listings: HashMap::new(),
            kinds: HashMap::new(),
            left_out: 0,
        }
    }

    /// The words `word` stands for, counted against the budget.
    pub fn expand(&mut self, word: &Word) -> Result<Vec<String>, Refusal> {
        let out = match &word.glob {
            Some(pattern) => self.expand_pattern(&word.value, pattern)?,
            None => vec![word.value.clone()],
        };
        self.words += out.len();
        self.bytes += out.iter().map(|w| w.len() + 1).sum::<usize>();
        self.check_budget(&word.value)?;
        Ok(out)
    }

    fn check_budget(&self, part: &str) -> Result<(), Refusal> {
        if self.words > self.budget.max_words {
            return refuse(
                part,
                format!(
                    "the command line expands to more than {} words; narrow the patterns",
                    self.budget.max_words
                ),
            );
        }
        if self.bytes > self.budget.max_bytes {
            return refuse(
                part,
                format!(
                    "the command line expands to more than {} bytes; narrow the patterns",
                    self.budget.max_bytes
                ),
            );
        }
        if Instant::now() > self.budget.deadline {
            return refuse(
                part,
                "expanding the patterns took longer than the time limit; narrow them",
            );
        }
        Ok(())
    }

    fn expand_pattern(&mut self, literal: &str, pattern: &str) -> Result<Vec<String>, Refusal> {
        let absolute = pattern.starts_with('/');
        // `*/` matches directories only, and keeps its slash.
        let dirs_only = pattern.ends_with('/');
        let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
        let mut current: Vec<String> = vec![if absolute { "/".into() } else { String::new() }];
        for (k, part) in parts.iter().enumerate() {
            let last = k + 1 == parts.len();
            let mut next = Vec::new();
            if !has_glob(part) {
                let name = unescape(part);
                for base in &current {
                    let path = join(base, &name);
                    // A directory on the way is only checked when it is read.
                    if !last || self.kind(&path).is_some() {
                        next.push(path);
                    }
                }
            } else {
                let Ok(glob) = GlobBuilder::new(part)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                else {
                    return Ok(vec![literal.to_string()]);
                };
                // A part too large to compile stays a literal word, as one
                // globset cannot parse does (compile_matcher would panic).
                let Ok(matcher) = crate::text::globs::matcher(glob) else {
                    return Ok(vec![literal.to_string()]);
                };
                let dot_ok = part.starts_with('.') || part.starts_with("\\.");
                for base in &current {
                    let Some(names) = self.listing(base) else {
                        continue;
                    };
                    for name in names.iter() {
                        let hidden = name.starts_with('.') && !dot_ok;
                        if hidden || !matcher.is_match(name) {
                            continue;
                        }
                        let path = join(base, name);
                        match self.kind(&path) {
                            None => self.left_out += 1,
                            Some(is_dir) if (last && !dirs_only) || is_dir => next.push(path),
                            Some(_) => {}
                        }
                        if next.len() > self.budget.max_words {
                            self.words += next.len();
                            self.check_budget(literal)?;
                        }
                    }
                    self.check_budget(literal)?;
                }
            }
            current = next;
            if current.is_empty() {
                break;
            }
        }
        if current.is_empty() || current == [String::new()] || current == ["/"] {
            return Ok(vec![literal.to_string()]);
        }
        if dirs_only {
            for path in &mut current {
                path.push('/');
            }
        }
        Ok(current)
    }

    fn absolute(&self, path: &str) -> PathBuf {
        if path.is_empty() {
            self.cwd.to_path_buf()
        } else {
            self.cwd.join(path)
        }
    }

    /// None if `path` leads outside the roots or cannot be resolved.
    fn kind(&mut self, path: &str) -> Option<bool> {
        if let Some(known) = self.kinds.get(path) {
            return *known;
        }
        let kind = match self.guard.resolve_absolute(&self.absolute(path)) {
            Ok(resolved) if resolved.exists() => Some(resolved.is_dir()),
            _ => None,
        };
        self.kinds.insert(path.to_string(), kind);
        kind
    }

    /// The sorted names in the directory `dir` (relative to the working
    /// directory), if the guard approves it.
    fn listing(&mut self, dir: &str) -> Option<Rc<Vec<String>>> {
        let resolved = self
            .guard
            .resolve_absolute(&self.absolute(dir))
            .ok()
            .filter(|r| r.is_dir())?;
        if let Some(known) = self.listings.get(resolved.real()) {
            return known.clone();
        }
        let names = self.guard.read_dir(&resolved).ok().map(|entries| {
            let mut names: Vec<String> = entries
                .filter_map(Result::ok)
                .filter_map(|item| item.name.into_string().ok())
                .collect();
            names.sort();
            Rc::new(names)
        });
        self.listings
            .insert(resolved.real().to_path_buf(), names.clone());
        names
    }
}

fn join(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_string()
    } else if base.ends_with('/') {
        format!("{base}{name}")
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::shell::parse::parse;
    use std::os::unix::fs::symlink;
    use std::time::Duration;

    fn word(text: &str) -> Word {
        parse(&format!("echo {text}")).unwrap().items[0]
            .pipeline
            .commands[0]
            .words[1]
            .clone()
    }

    fn budget() -> Budget {
        Budget {
            max_words: 10_000,
            max_bytes: 1 << 20,
            deadline: Instant::now() + Duration::from_secs(10),
        }
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
        let mut x = Expander::new(&guard, &root, budget());
        let mut e = |t: &str| x.expand(&word(t)).unwrap();
        assert_eq!(e("*.rs"), vec!["a.rs", "b.rs"]);
        assert_eq!(e(".*.rs"), vec![".hidden.rs"]);
        assert_eq!(e("src/*.rs"), vec!["src/x.rs", "src/y.rs"]);
        assert_eq!(e("*/*.rs"), vec!["src/x.rs", "src/y.rs"]);
        assert_eq!(e("src/*/z.rs"), vec!["src/sub/z.rs"]);
        assert_eq!(e("[ab].rs"), vec!["a.rs", "b.rs"]);
        assert_eq!(e("?.txt"), vec!["c.txt"]);
        assert_eq!(e("src/../*.txt"), vec!["src/../c.txt"]);
        assert_eq!(e("*/"), vec!["src/"]);
        assert_eq!(e("s*/*/"), vec!["src/sub/"]);
        // No match, or not a pattern: the word stays literal.
        assert_eq!(e("*.zig"), vec!["*.zig"]);
        assert_eq!(e("["), vec!["["]);
        assert_eq!(e("'*'.rs"), vec!["*.rs"]);
        assert_eq!(e("plain"), vec!["plain"]);
        let abs = format!("{}/*.txt", root.display());
        assert_eq!(e(&abs), vec![format!("{}/c.txt", root.display())]);
    }

    #[test]
    fn nothing_outside_is_read_or_named() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(root.join("in")).unwrap();
        std::fs::write(root.join("in/ok.txt"), "").unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("outside/secret"), "").unwrap();
        symlink(base.join("outside"), root.join("link")).unwrap();
        symlink(base.join("outside/secret"), root.join("file_link")).unwrap();
        let guard = Guard::new(&[&root]).unwrap();
        let mut x = Expander::new(&guard, &root, budget());
        // Patterns that would reach outside stay literal: nothing was read there.
        for literal in ["../*", "/etc/*", "in/../../*", "link/*", "l*/*"] {
            assert_eq!(x.expand(&word(literal)).unwrap(), vec![literal]);
        }
        // A match that is a link out is left out and counted, never named.
        x.left_out = 0;
        assert_eq!(x.expand(&word("*")).unwrap(), vec!["in"]);
        assert_eq!(x.left_out, 2);
    }

    #[test]
    fn the_budget_bounds_words_and_time() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for i in 0..50 {
            std::fs::write(root.join(format!("f{i}")), "").unwrap();
        }
        let guard = Guard::new(&[&root]).unwrap();
        let small = Budget {
            max_words: 120,
            ..budget()
        };
        let mut x = Expander::new(&guard, &root, small);
        assert_eq!(x.expand(&word("*")).unwrap().len(), 50);
        assert_eq!(x.expand(&word("*")).unwrap().len(), 50);
        let e = x.expand(&word("*")).unwrap_err();
        assert!(e.reason.contains("more than 120 words"), "{e:?}");
        let late = Budget {
            deadline: Instant::now() - Duration::from_millis(1),
            ..budget()
        };
        let e = Expander::new(&guard, &root, late)
            .expand(&word("*"))
            .unwrap_err();
        assert!(e.reason.contains("time limit"), "{e:?}");
    }
}
