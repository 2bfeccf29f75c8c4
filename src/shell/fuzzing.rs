//! The property the `cargo fuzz` target checks (`fuzz/`): for any command
//! line, planning never panics, and a line that is accepted runs exactly
//! the argv that was checked — the parsed, expanded words of each command,
//! with only the server's own neutralising options added to git.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::expand::{Budget, Expander};
use super::policy::git::NEUTRALIZE_GLOBAL;
use super::{MAX_ARGV_BYTES, MAX_WORDS, Shell, parse};
use crate::fs::guard::Guard;
use crate::shell::config::{BashConfig, BashMode};

struct Fixture {
    root: PathBuf,
    guard: Guard,
    shells: Vec<Shell>,
}

/// A small tree in the temporary directory, made once per process: files
/// for globs to match, a link out of the root, and a git repository.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let base = std::env::temp_dir().join("rootbound-fuzz-fixture");
        let root = base.join("root");
        crate::fs::fuzz_fixture(&root).expect("fuzz fixture");
        let guard = Guard::new(&[&root]).expect("fuzz root");
        let gate = std::sync::Arc::new(crate::fs::write_gate::WriteGate::new(vec![root.clone()]));
        let shells = [
            BashConfig::default(),
            BashConfig {
                mode: BashMode::Allowlist,
                allow: vec![
                    "sed".into(),
                    "awk".into(),
                    "tar".into(),
                    "git commit".into(),
                ],
                deny: vec!["git log".into()],
                ..BashConfig::default()
            },
        ]
        .iter()
        .map(|config| Shell::new(config, &guard, gate.clone()))
        .collect();
        Fixture {
            root: guard.primary().to_path_buf(),
            guard,
            shells,
        }
    })
}

/// Plans `line` in read-only and allowlist mode and checks the property.
/// Panics if it does not hold.
pub fn check_line(line: &str) {
    let fixture = fixture();
    let deadline = Instant::now() + Duration::from_secs(10);
    for shell in &fixture.shells {
        let Ok(plan) = shell.plan(line, &fixture.guard, deadline) else {
            continue;
        };
        let parsed = parse::parse(line).expect("an accepted line parses");
        let budget = Budget {
            max_words: MAX_WORDS,
            max_bytes: MAX_ARGV_BYTES,
            deadline,
        };
        let mut expander = Expander::new(&fixture.guard, &fixture.root, budget);
        assert_eq!(plan.steps.len(), parsed.items.len(), "{line:?}");
        for (step, item) in plan.steps.iter().zip(&parsed.items) {
            assert_eq!(step.then, item.then, "{line:?}");
            assert_eq!(step.stages.len(), item.pipeline.commands.len(), "{line:?}");
            for (stage, command) in step.stages.iter().zip(&item.pipeline.commands) {
                let mut expected = vec![command.words[0].value.clone()];
                for word in &command.words[1..] {
                    expected.extend(expander.expand(word).expect("expanded once already"));
                }
                assert_eq!(stage.redirects, command.redirects, "{line:?}");
                let runs = if expected[0] == "git" {
                    without_neutralizers(&stage.argv)
                } else {
                    stage.argv.clone()
                };
                assert_eq!(runs, expected, "{line:?} runs other words than it checked");
            }
        }
    }
}

/// git's argv with the server's own options taken out again: the global
/// block (one contiguous run, exactly as added) and the subcommand's
/// `--no-ext-diff`, `--no-textconv` and `--ignore-submodules=all`.
fn without_neutralizers(argv: &[String]) -> Vec<String> {
    let block: Vec<&str> = NEUTRALIZE_GLOBAL.to_vec();
    let start = argv
        .windows(block.len())
        .position(|w| w.iter().map(String::as_str).eq(block.iter().copied()));
    let mut out: Vec<String> = match start {
        Some(at) => argv[..at]
            .iter()
            .chain(&argv[at + block.len()..])
            .cloned()
            .collect(),
        None => argv.to_vec(),
    };
    // Each added subcommand option appears once, added by the server.
    for added in ["--no-ext-diff", "--no-textconv", "--ignore-submodules=all"] {
        if let Some(at) = out.iter().rposition(|a| a == added) {
            out.remove(at);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_lines_run_what_was_checked() {
        for line in [
            "ls -la *.txt | sort -r && echo done",
            "git -P log -n 1 -- src",
            "git grep -e x -- src",
            "cat a.txt; grep -n x src/*.rs 2>/dev/null",
            "echo '[' \"*\" *",
            "find . -name '*.rs' -print",
        ] {
            check_line(line);
        }
    }

    #[test]
    fn refused_and_odd_lines_do_not_panic() {
        for line in [
            "",
            "\0",
            "$(",
            "'",
            "echo \\",
            "ls 9999999999999999999999>/dev/null",
            "git",
            "git -C",
            "a\u{202e}b",
            "echo ~",
            "echo */../../*",
            "ls link_out/*",
        ] {
            check_line(line);
        }
    }
}
