//! `sed` and `tar`, for users who allow them with `--bash-allow`. A sed
//! script is read against an allowlist of its own grammar: it may only
//! substitute, transliterate, print and delete, never run commands or
//! write files. (awk is a full language, so it is treated as an
//! interpreter: see the policy's module docs.)

use super::options::Examples;
use crate::shell::refusal::{Refusal, refuse};

fn flag_name(arg: &str) -> &str {
    arg.split_once('=').map_or(arg, |(name, _)| name)
}

/// A cluster of short flags (`-nr`, `-k2`, `-t,`): every letter known; a
/// letter in `takes_value` ends the cluster (the rest is its value).
fn known_short_cluster(arg: &str, known: &[&str], takes_value: &str) -> bool {
    let Some(letters) = arg.strip_prefix('-') else {
        return false;
    };
    if letters.starts_with('-') || letters.is_empty() {
        return false;
    }
    if letters.chars().all(|c| c.is_ascii_digit()) {
        return true;
    }
    for (i, c) in letters.char_indices() {
        if !known.contains(&format!("-{c}").as_str()) {
            return false;
        }
        if takes_value.contains(c) {
            return i + c.len_utf8() <= letters.len();
        }
    }
    true
}

/// What sed accepts and refuses, by example (run by `policy/examples.rs`).
#[cfg_attr(not(test), allow(dead_code))]
pub const SED_EXAMPLES: Examples = Examples {
    allowed: &["sed -n 1,5p a.txt", "sed -E -e s/a+/b/g a.txt"],
    refused: &[
        "sed -i s/a/b/ a.txt",
        "sed s/a/b/w out.txt a.txt",
        "sed 1e date a.txt",
        "sed -f script.sed a.txt",
    ],
};

pub fn sed(args: &[String]) -> Result<(), Refusal> {
    let mut script_given = false;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let name = flag_name(arg);
        if name == "--in-place"
            || (name.starts_with('-') && !name.starts_with("--") && name.contains('i'))
        {
            return refuse(arg, "edits files in place");
        }
        if name == "-f" || name == "--file" || (name.starts_with("-f") && !name.starts_with("--")) {
            return refuse(arg, "reads its script from a file, which cannot be checked");
        }
        if name == "-e" || name == "--expression" {
            let script = if arg.contains('=') {
                arg.split_once('=').map_or("", |(_, v)| v)
            } else {
                i += 1;
                args.get(i).map_or("", String::as_str)
            };
            check_sed_script(script)?;
            script_given = true;
        } else if name.starts_with('-') && name != "-" {
            if ![
                "-n",
                "-E",
                "-r",
                "-s",
                "-z",
                "-u",
                "--quiet",
                "--silent",
                "--regexp-extended",
                "--separate",
                "--null-data",
                "--posix",
                "--debug",
            ]
            .contains(&name)
                && !known_short_cluster(name, &["-n", "-E", "-r", "-s", "-z", "-u"], "")
            {
                return refuse(
                    arg,
                    "unknown sed option (only options known to be safe are allowed)",
                );
            }
        } else if !script_given {
            check_sed_script(arg)?;
            script_given = true;
        }
        i += 1;
    }
    Ok(())
}

/// Accepts only scripts built from addresses, `s///` and `y///` with safe
/// flags, and commands that print or delete: never `e`, `w`, `W`, `r`, `R`.
pub fn check_sed_script(script: &str) -> Result<(), Refusal> {
    let chars: Vec<char> = script.chars().collect();
    let bad = |why: &str| refuse(script, format!("sed script: {why}"));
    let mut i = 0;
    // Skips a delimited part starting after the delimiter; returns the index after the closing one.
    let skip_part = |mut j: usize, delim: char| -> Option<usize> {
        while j < chars.len() {
            match chars[j] {
                '\\' => j += 2,
                c if c == delim => return Some(j + 1),
                '\n' => return None,
                _ => j += 1,
            }
        }
        None
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\n' | ';' | '{' | '}' | '!' | ',' | '$' | '~' | '+' => i += 1,
            '0'..='9' => i += 1,
            '/' => match skip_part(i + 1, '/') {
                Some(next) => {
                    i = next;
                    while i < chars.len() && matches!(chars[i], 'I' | 'M') {
                        i += 1;
                    }
                }
                None => return bad("unterminated address"),
            },
            '\\' => {
                let Some(&delim) = chars.get(i + 1) else {
                    return bad("unterminated address");
                };
                match skip_part(i + 2, delim) {
                    Some(next) => i = next,
                    None => return bad("unterminated address"),
                }
            }
            's' | 'y' => {
                let Some(&delim) = chars.get(i + 1) else {
                    return bad("incomplete command");
                };
                if delim == '\\' || delim == '\n' {
                    return bad("bad delimiter");
                }
                let Some(mid) = skip_part(i + 2, delim) else {
                    return bad("unterminated command");
                };
                let Some(end) = skip_part(mid, delim) else {
                    return bad("unterminated command");
                };
                i = end;
                while i < chars.len() && !matches!(chars[i], ';' | '\n' | '}' | ' ' | '\t') {
                    let flag = chars[i];
                    if c == 'y' || !matches!(flag, 'g' | 'i' | 'I' | 'm' | 'M' | 'p' | '0'..='9') {
                        return bad(&format!(
                            "flag `{flag}` is not allowed (it can write files or run commands)"
                        ));
                    }
                    i += 1;
                }
            }
            'p' | 'd' | 'D' | 'q' | 'Q' | '=' | 'n' | 'N' | 'P' | 'g' | 'G' | 'h' | 'H' | 'x'
            | 'l' | 'z' => i += 1,
            other => {
                return bad(&format!(
                    "command `{other}` is not allowed (only s, y and printing/deleting commands)"
                ));
            }
        }
    }
    Ok(())
}

const TAR_SAFE_SHORT: &str = "tvfzjJxcCOpP";

/// What tar accepts and refuses, by example (run by `policy/examples.rs`).
#[cfg_attr(not(test), allow(dead_code))]
pub const TAR_EXAMPLES: Examples = Examples {
    allowed: &["tar -tzf a.tgz", "tar --list --file=a.tar"],
    refused: &[
        "tar --to-command=sh -xf a.tar",
        "tar -I sh -xf a.tar",
        "tar -tf host:file",
    ],
};

pub fn tar(args: &[String]) -> Result<(), Refusal> {
    for arg in args {
        let name = arg.strip_prefix("--file=").unwrap_or(arg);
        if !name.starts_with('-')
            && let Some(colon) = name.find(':')
            && !name[..colon].contains('/')
        {
            return refuse(
                arg,
                "names a remote archive (HOST:FILE), which tar reaches through rsh; \
                 write ./NAME for a local file with a colon",
            );
        }
    }
    for (k, arg) in args.iter().enumerate() {
        let name = flag_name(arg);
        if [
            "--to-command",
            "--use-compress-program",
            "--checkpoint-action",
            "--rsh-command",
            "--info-script",
            "--new-volume-script",
            "--index-file",
        ]
        .contains(&name)
        {
            return refuse(arg, "runs programs or writes outside the archive's files");
        }
        let first_bundle = k == 0 && !arg.starts_with('-');
        if name.starts_with("--") {
            if ![
                "--list",
                "--extract",
                "--get",
                "--create",
                "--file",
                "--gzip",
                "--gunzip",
                "--bzip2",
                "--xz",
                "--zstd",
                "--directory",
                "--to-stdout",
                "--verbose",
                "--exclude",
                "--wildcards",
                "--strip-components",
                "--no-same-owner",
                "--no-same-permissions",
                "--keep-old-files",
                "--skip-old-files",
            ]
            .contains(&name)
            {
                return refuse(
                    arg,
                    "unknown tar option (only options known to be safe are allowed)",
                );
            }
        } else if (name.starts_with('-') || first_bundle) && name != "-" {
            let letters = name.trim_start_matches('-');
            if let Some(bad) = letters.chars().find(|c| !TAR_SAFE_SHORT.contains(*c)) {
                return refuse(arg, format!("tar option `{bad}` is not allowed"));
            }
        }
    }
    Ok(())
}
