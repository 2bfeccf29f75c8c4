//! The examples every table carries ([`Examples`]: each option table's,
//! find's, sed's and tar's), run through the policy as the bash tool runs a
//! command: [`Policy::check_approved`], with paths checked by the guard
//! beneath a temporary root. A table whose examples no longer hold fails
//! here, so they stay true statements of the policy.

use std::path::{Path, PathBuf};

use super::options::Examples;
use super::{PathCheck, Policy, coreutils, find, git, git_write, scripts, search};
use crate::fs::guard::Guard;
use crate::shell::config::{BashConfig, BashMode};

/// Paths as the guard sees them, relative to the root (the working
/// directory); a name whose final link is not followed is checked by its
/// directory, as the bash tool's own check does.
struct InsideRoot {
    guard: Guard,
    root: PathBuf,
}

impl PathCheck for InsideRoot {
    fn check(&self, base: &Path, arg: &str, follow_last: bool) -> Result<(), String> {
        let path = self.root.join(base).join(arg);
        let to_check = match path.parent() {
            Some(parent) if !follow_last => parent,
            _ => path.as_path(),
        };
        self.guard
            .resolve_absolute(to_check)
            .map(|_| ())
            .map_err(|refusal| format!("`{arg}`: {refusal:?}"))
    }
}

/// Every table the policy reads, the words its command lines start with,
/// its examples, and the configuration under which they run: the read-only
/// tables in read-only mode; a writing git table with its subcommand allowed
/// (`--bash-allow "git commit"`), which is what makes the policy read it;
/// sed and tar allowed, as a user must.
fn tables() -> Vec<(Vec<String>, &'static Examples, BashConfig)> {
    let read_only = BashConfig::default;
    let allowing = |entry: &str| BashConfig {
        mode: BashMode::Allowlist,
        allow: vec![entry.to_string()],
        ..BashConfig::default()
    };
    let words = |line: &str| line.split_whitespace().map(str::to_string).collect();
    let mut out = Vec::new();
    for program in coreutils::ALL.iter().chain(search::ALL) {
        out.push((words(program.name), &program.examples, read_only()));
    }
    out.push((words("find"), &find::EXAMPLES, read_only()));
    out.push((words("sed"), &scripts::SED_EXAMPLES, allowing("sed")));
    out.push((words("tar"), &scripts::TAR_EXAMPLES, allowing("tar")));
    for program in git::SUBCOMMANDS {
        let git = format!("git {}", program.name);
        out.push((words(&git), &program.examples, read_only()));
    }
    for program in git_write::SUBCOMMANDS {
        let git = format!("git {}", program.name);
        out.push((words(&git), &program.examples, allowing(&git)));
    }
    out
}

#[test]
fn examples_of_every_table_are_true() {
    let dir = tempfile::tempdir().unwrap();
    let guard = Guard::new(&[dir.path()]).unwrap();
    let paths = InsideRoot {
        root: guard.primary().to_path_buf(),
        guard,
    };
    let mut wrong = Vec::new();
    let mut lines = 0;
    for (words, examples, config) in tables() {
        assert!(
            !examples.allowed.is_empty() && !examples.refused.is_empty(),
            "{}: a table shows what it allows and what it refuses",
            words.join(" ")
        );
        let policy = Policy::new(&config);
        let allowed = examples.allowed.iter().map(|line| (line, true));
        let refused = examples.refused.iter().map(|line| (line, false));
        for (line, should_pass) in allowed.chain(refused) {
            lines += 1;
            let argv: Vec<String> = line.split_whitespace().map(str::to_string).collect();
            assert!(
                argv.starts_with(&words),
                "`{line}` is not a line of the table of {}",
                words.join(" ")
            );
            match (policy.check_approved(&argv, &paths, &[]), should_pass) {
                (Ok(_), true) => {}
                // Refused by the table or a path, not only by the allow list.
                (Err(refusal), false) if refusal.asks.is_empty() => {}
                (Ok(_), false) => wrong.push(format!("`{line}` is allowed")),
                (Err(refusal), _) => wrong.push(format!("`{line}`: {refusal}")),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "examples that do not hold:\n{}",
        wrong.join("\n")
    );
    assert!(lines > 2 * tables().len());
}
