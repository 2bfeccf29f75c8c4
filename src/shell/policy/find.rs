//! `find`: starting points, then an expression of tests and actions. Only
//! the primaries listed here are accepted; those that run programs, delete,
//! write files or follow symbolic links are refused with the reason.

use std::path::Path;

use super::options::{Examples, PathCheck};
use crate::shell::refusal::{Refusal, refuse};

/// A primary of the expression and what follows it.
#[derive(Clone, Copy)]
enum Arity {
    None,
    Text,
    Path,
}

const PRIMARIES: &[(&str, Arity)] = &[
    // Operators.
    ("(", Arity::None),
    (")", Arity::None),
    ("!", Arity::None),
    (",", Arity::None),
    ("-not", Arity::None),
    ("-a", Arity::None),
    ("-and", Arity::None),
    ("-o", Arity::None),
    ("-or", Arity::None),
    // Options that read like tests.
    ("-depth", Arity::None),
    ("-d", Arity::None),
    ("-maxdepth", Arity::Text),
    ("-mindepth", Arity::Text),
    ("-mount", Arity::None),
    ("-xdev", Arity::None),
    ("-noleaf", Arity::None),
    ("-daystart", Arity::None),
    ("-ignore_readdir_race", Arity::None),
    ("-noignore_readdir_race", Arity::None),
    ("-regextype", Arity::Text),
    ("-warn", Arity::None),
    ("-nowarn", Arity::None),
    // Tests.
    ("-amin", Arity::Text),
    ("-anewer", Arity::Path),
    ("-atime", Arity::Text),
    ("-cmin", Arity::Text),
    ("-cnewer", Arity::Path),
    ("-ctime", Arity::Text),
    ("-empty", Arity::None),
    ("-executable", Arity::None),
    ("-false", Arity::None),
    ("-fstype", Arity::Text),
    ("-gid", Arity::Text),
    ("-group", Arity::Text),
    ("-ilname", Arity::Text),
    ("-iname", Arity::Text),
    ("-inum", Arity::Text),
    ("-ipath", Arity::Text),
    ("-iregex", Arity::Text),
    ("-iwholename", Arity::Text),
    ("-links", Arity::Text),
    ("-lname", Arity::Text),
    ("-mmin", Arity::Text),
    ("-mtime", Arity::Text),
    ("-name", Arity::Text),
    ("-newer", Arity::Path),
    ("-newermt", Arity::Text),
    ("-newerat", Arity::Text),
    ("-newerct", Arity::Text),
    ("-nogroup", Arity::None),
    ("-nouser", Arity::None),
    ("-path", Arity::Text),
    ("-perm", Arity::Text),
    ("-readable", Arity::None),
    ("-regex", Arity::Text),
    ("-samefile", Arity::Path),
    ("-size", Arity::Text),
    ("-true", Arity::None),
    ("-type", Arity::Text),
    ("-uid", Arity::Text),
    ("-used", Arity::Text),
    ("-user", Arity::Text),
    ("-wholename", Arity::Text),
    ("-writable", Arity::None),
    ("-xtype", Arity::Text),
    // Actions that print to standard output.
    ("-ls", Arity::None),
    ("-print", Arity::None),
    ("-print0", Arity::None),
    ("-printf", Arity::Text),
    ("-prune", Arity::None),
    ("-quit", Arity::None),
];

const REFUSED: &[(&str, &str)] = &[
    ("-exec", "runs a program for every file"),
    ("-execdir", "runs a program for every file"),
    ("-ok", "runs a program for every file"),
    ("-okdir", "runs a program for every file"),
    ("-delete", "deletes files"),
    ("-fprint", "writes to a file"),
    ("-fprint0", "writes to a file"),
    ("-fprintf", "writes to a file"),
    ("-fls", "writes to a file"),
    (
        "-L",
        "follows symbolic links, which can lead out of the workspace",
    ),
    (
        "-follow",
        "follows symbolic links, which can lead out of the workspace",
    ),
    (
        "-files0-from",
        "reads the starting points from a file, which cannot be checked",
    ),
];

/// What find accepts and refuses, by example (run by `policy/examples.rs`).
#[cfg_attr(not(test), allow(dead_code))]
pub const EXAMPLES: Examples = Examples {
    allowed: &[
        "find . -name *.rs -type f",
        "find src -newer Cargo.toml -print0",
        "find -H . -maxdepth 2 ( -path ./target -prune -o -print )",
    ],
    refused: &[
        "find . -exec rm {} ;",
        "find . -delete",
        "find -L .",
        "find . -newer /etc/passwd",
        "find . -fprint out.txt",
    ],
};

/// Options before the starting points.
const LEADING: &[&str] = &["-H", "-P"];

fn starts_expression(word: &str) -> bool {
    word.starts_with('-') && word.len() > 1 || word == "(" || word == "!"
}

/// Checks `find`'s arguments. `base`: where relative paths start.
pub fn check(args: &[String], paths: &dyn PathCheck, base: &Path) -> Result<(), Refusal> {
    if args.len() == 1 && (args[0] == "--help" || args[0] == "--version") {
        return Ok(());
    }
    let mut i = 0;
    while let Some(word) = args.get(i) {
        if let Some((_, why)) = REFUSED.iter().find(|(n, _)| n == word) {
            return refuse(word, format!("`find {word}` {why}"));
        }
        if LEADING.contains(&word.as_str()) || word.starts_with("-O") && word.len() > 2 {
            i += 1;
            continue;
        }
        break;
    }
    // Starting points.
    while let Some(word) = args.get(i).filter(|w| !starts_expression(w)) {
        paths
            .check(base, word, true)
            .map_err(|why| Refusal::new(word, why))?;
        i += 1;
    }
    // The expression.
    while let Some(word) = args.get(i) {
        i += 1;
        if let Some((_, why)) = REFUSED.iter().find(|(n, _)| n == word) {
            return refuse(word, format!("`find {word}` {why}"));
        }
        let Some((_, arity)) = PRIMARIES.iter().find(|(n, _)| n == word) else {
            return refuse(
                word,
                format!(
                    "`{word}` is not a find primary that rootbound knows to be safe (tests such as \
                     -name, -path, -type, -newer, and the actions -print, -print0, -printf, -ls \
                     are; quote a starting point that begins with `-`)"
                ),
            );
        };
        match arity {
            Arity::None => {}
            Arity::Text | Arity::Path => {
                let Some(value) = args.get(i) else {
                    return refuse(word, format!("`find {word}` needs a value"));
                };
                i += 1;
                if matches!(arity, Arity::Path) {
                    paths
                        .check(base, value, true)
                        .map_err(|why| Refusal::new(value, why))?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Lexical;
    impl PathCheck for Lexical {
        fn check(&self, _base: &Path, arg: &str, _follow: bool) -> Result<(), String> {
            if arg.starts_with('/') || arg.contains("..") {
                Err(format!("{arg} is outside"))
            } else {
                Ok(())
            }
        }
    }

    fn allowed(line: &str) -> bool {
        let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        check(&args, &Lexical, Path::new("")).is_ok()
    }

    #[test]
    fn tests_and_printing_actions_are_allowed() {
        for ok in [
            "",
            ".",
            ". -name *.rs -type f -maxdepth 3 -print",
            "src -newer Cargo.toml ! -name x -o ( -path a -prune )",
            "-H . -printf %p\\n",
            ". -mmin -5 -size +1k -ls",
        ] {
            assert!(allowed(ok), "{ok}");
        }
    }

    #[test]
    fn actions_that_run_delete_or_write_are_refused() {
        for bad in [
            ". -exec rm {} ;",
            ". -execdir sh",
            ". -ok rm",
            ". -delete",
            ". -fprint out",
            ". -fprintf out %p",
            ". -fls out",
            "-L .",
            ". -follow",
            ". -unknown",
            ". -newer /etc/passwd",
            "/ -name x",
            ". -name",
            "-files0-from list",
        ] {
            assert!(!allowed(bad), "{bad}");
        }
    }
}
