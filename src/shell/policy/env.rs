//! Which variables a command line may set before a command
//! (`RUST_BACKTRACE=1 cargo test`), in allowlist mode. Read-only mode sets
//! none; a full shell (workspace-write) sets any, inside its sandbox.
//!
//! The names every allowlist server accepts ([`DEFAULT_NAMES`]) change how
//! a program reports, formats or paces itself, and none of them can make a
//! program load or run other code: no `LD_*`, `GIT_*`, `NODE_OPTIONS`,
//! `PYTHONPATH`, `PYTHONSTARTUP`, `PYTHONWARNINGS` (it imports the
//! categories it names), `PYTEST_ADDOPTS` (`-p` loads a plugin),
//! `RUSTFLAGS` (a linker is a program), `GOFLAGS` (`-toolexec`), `PATH`,
//! `HOME`, `EDITOR` or `PAGER`. The user adds others by name (`--bash-env
//! NAME`), knowing what the name does.
//!
//! A documented name's value holds no `/`: glibc reads a locale name with
//! one (`LANGUAGE=../../root/loc`, `LC_ALL`, `LANG`) as a path, and would
//! load message catalogs from a root, whose format strings the programs
//! then run; `TZ` and `TERM` name files too. A git stage takes only
//! documented names: git's environment is the server's, and the
//! configuration check sees only that.

use crate::shell::refusal::{Refusal, refuse};

/// Names any allowlist line may set.
pub const DEFAULT_NAMES: &[&str] = &[
    // Rust and cargo: backtraces, logs, the test harness, colours.
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
    "RUST_LOG",
    "RUST_LOG_STYLE",
    "RUST_TEST_THREADS",
    "RUST_TEST_NOCAPTURE",
    "RUST_MIN_STACK",
    "CARGO_TERM_COLOR",
    "CARGO_TERM_VERBOSE",
    "CARGO_TERM_QUIET",
    "CARGO_INCREMENTAL",
    "CARGO_BUILD_JOBS",
    // Node.
    "NODE_ENV",
    "DEBUG",
    // Python.
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONHASHSEED",
    "PYTHONFAULTHANDLER",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    // Go.
    "GOTRACEBACK",
    "GOMAXPROCS",
    // Any program: colours, CI, language, time zone, width.
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "CI",
    "TERM",
    "COLUMNS",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "LC_COLLATE",
    "LC_NUMERIC",
    "LC_TIME",
    "TZ",
];

/// The most bytes one assignment's value may hold.
const MAX_VALUE_BYTES: usize = 4096;

/// Checks the assignments before one command. `user_names`: the names
/// `--bash-env` added; `allowed`: whether this mode sets variables at all;
/// `git`: whether the command is git.
pub fn check(
    assignments: &[(String, String)],
    user_names: &[String],
    allowed: bool,
    git: bool,
) -> Result<Vec<(String, String)>, Refusal> {
    let Some((first, _)) = assignments.first() else {
        return Ok(Vec::new());
    };
    if !allowed {
        return refuse(
            format!("{first}="),
            "read-only mode sets no variables before a command (allowlist mode sets the \
             documented ones, and those named with --bash-env)",
        );
    }
    for (name, value) in assignments {
        let documented = DEFAULT_NAMES.contains(&name.as_str());
        if git && !documented {
            return refuse(
                format!("{name}="),
                format!(
                    "git runs with the server's environment, which its configuration check \
                     saw; only the documented names (RUST_BACKTRACE, NO_COLOR, LANG, ...) may \
                     be set for it, and {name} is not one"
                ),
            );
        }
        if documented && value.contains('/') {
            return refuse(
                format!("{name}="),
                "the value of a documented variable may not hold `/` (a locale, time zone or \
                 terminal name with one is read as a path to load)",
            );
        }
        if !documented && !user_names.iter().any(|n| n == name) {
            return refuse(
                format!("{name}="),
                format!(
                    "{name} is not a variable commands may be given; the server's user can \
                     allow it with --bash-env {name}"
                ),
            );
        }
        if value.len() > MAX_VALUE_BYTES || value.contains('\0') {
            return refuse(
                format!("{name}="),
                format!("a value of at most {MAX_VALUE_BYTES} bytes, without NUL, is accepted"),
            );
        }
    }
    Ok(assignments.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn documented_names_pass_others_need_the_user() {
        let ok = pairs(&[("RUST_BACKTRACE", "1"), ("NO_COLOR", "")]);
        assert_eq!(check(&ok, &[], true, false).unwrap(), ok);
        for name in [
            "LD_PRELOAD",
            "GIT_DIR",
            "NODE_OPTIONS",
            "PYTHONSTARTUP",
            "PYTHONPATH",
            "PYTHONWARNINGS",
            "PYTEST_ADDOPTS",
            "RUSTFLAGS",
            "RUSTC_WRAPPER",
            "GOFLAGS",
            "PATH",
            "HOME",
            "BASH_ENV",
            "PAGER",
        ] {
            let line = pairs(&[(name, "x")]);
            let refused = check(&line, &[], true, false).unwrap_err();
            assert!(
                refused.reason.contains(&format!("--bash-env {name}")),
                "{refused:?}"
            );
            let named = vec![name.to_string()];
            assert_eq!(check(&line, &named, true, false).unwrap(), line);
            // Never for git, named or not: its configuration check saw
            // only the server's environment.
            assert!(check(&line, &named, true, true).is_err());
        }
        let ok_for_git = pairs(&[("NO_COLOR", "1")]);
        assert!(check(&ok_for_git, &[], true, true).is_ok());
    }

    #[test]
    fn a_documented_value_names_no_path() {
        for (name, value) in [
            ("LANGUAGE", "../../../work/root/loc"),
            ("LC_ALL", "/work/root/loc"),
            ("LANG", "./x"),
            ("TZ", ":/work/root/tz"),
            ("TERM", "../x"),
        ] {
            let refused = check(&pairs(&[(name, value)]), &[], true, false).unwrap_err();
            assert!(refused.reason.contains('/'), "{refused:?}");
        }
        assert!(check(&pairs(&[("LANG", "C.UTF-8")]), &[], true, false).is_ok());
    }

    #[test]
    fn read_only_mode_sets_nothing() {
        let refused = check(&pairs(&[("RUST_BACKTRACE", "1")]), &[], false, false).unwrap_err();
        assert!(refused.reason.contains("read-only"), "{refused:?}");
        assert!(check(&[], &[], false, false).unwrap().is_empty());
    }

    #[test]
    fn long_values_are_refused() {
        let long = "x".repeat(MAX_VALUE_BYTES + 1);
        assert!(check(&pairs(&[("RUST_LOG", &long)]), &[], true, false).is_err());
    }
}
