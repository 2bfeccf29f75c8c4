//! The guarded shell behind the `bash` tool: a strict parser for a small
//! shell subset ([`parse`]), a pure policy that decides what may run
//! ([`policy`]), glob expansion through the path guard ([`expand`]), the
//! Landlock sandbox ([`sandbox`]) and the runner that executes the checked
//! pipeline itself, never through `bash -c` ([`run`]). [`Shell`] ties them
//! together for one server configuration.

pub mod expand;
pub mod parse;
pub mod policy;
pub mod run;
pub mod sandbox;

use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

use crate::config::{BashConfig, BashMode};
use crate::discovery::ignore_rules::find_git_root;
use crate::fs::guard::{Guard, Refusal as GuardRefusal};
use policy::{PathCheck, Policy, Refusal};
use run::{Outcome, Setup, Stage, Step};
use sandbox::Sandbox;

/// Output read from a command line at most; past it the commands are killed.
pub const MAX_READ_BYTES: usize = 1024 * 1024;

/// git options that keep a repository's configuration from running programs.
const GIT_NEUTRALIZE: &[&str] = &[
    "--no-pager",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.pager=cat",
    "-c",
    "core.editor=false",
    "-c",
    "core.sshCommand=false",
    "-c",
    "core.askPass=false",
    "-c",
    "credential.helper=",
    "-c",
    "gpg.program=false",
    "-c",
    "log.showSignature=false",
    "-c",
    "protocol.allow=never",
];

/// The shell of one server: policy, sandbox and environment, built once.
#[derive(Debug)]
pub struct Shell {
    config: BashConfig,
    policy: Policy,
    sandbox: Option<Sandbox>,
    env: Vec<(String, String)>,
    cwd: PathBuf,
}

impl Shell {
    /// Builds the shell for `config`; logs what the kernel sandbox provides.
    pub fn new(config: &BashConfig, guard: &Guard) -> Shell {
        let roots: Vec<PathBuf> = guard.roots().map(Path::to_path_buf).collect();
        let temp = if config.mode == BashMode::ReadOnly {
            None
        } else {
            sandbox::private_temp_dir().ok()
        };
        let mut writable = Vec::new();
        if config.mode != BashMode::ReadOnly {
            writable.extend(roots.iter().cloned());
            writable.extend(temp.iter().cloned());
        }
        let sandbox = match Sandbox::build(&roots, &writable) {
            Ok(s) => {
                tracing::info!("bash sandbox: {}", s.description);
                Some(s)
            }
            Err(why) => {
                tracing::warn!(
                    "bash runs without a kernel sandbox ({why}); only the command checks apply"
                );
                None
            }
        };
        Shell {
            config: config.clone(),
            policy: Policy::new(config),
            sandbox,
            env: child_env(temp.as_deref()),
            cwd: guard.primary().to_path_buf(),
        }
    }

    /// Checks and runs `command`. Err is a refusal message.
    pub async fn execute(
        &self,
        command: &str,
        guard: &Guard,
        cancel: &CancellationToken,
    ) -> Result<Outcome, String> {
        let steps = self
            .plan(command, guard)
            .map_err(|r| self.refusal_message(&r))?;
        let setup = Setup {
            cwd: &self.cwd,
            env: &self.env,
            sandbox: self.sandbox.as_ref().map(Sandbox::raw_fd),
            timeout: self.config.timeout,
            max_bytes: MAX_READ_BYTES,
        };
        Ok(run::run(&steps, &setup, cancel).await)
    }

    fn refusal_message(&self, r: &Refusal) -> String {
        format!(
            "Command refused: `{}`: {}.\n{}",
            r.part,
            r.reason.trim_end_matches('.'),
            self.policy.summary()
        )
    }

    /// Parses, expands and checks `command` into the steps to run.
    pub fn plan(&self, command: &str, guard: &Guard) -> Result<Vec<Step>, Refusal> {
        if self.config.mode == BashMode::Unrestricted {
            return self.plan_unrestricted(command);
        }
        let line = parse::parse(command).map_err(|e| Refusal {
            part: e.part,
            reason: e.reason,
        })?;
        let paths = GuardPaths { guard };
        let mut steps = Vec::new();
        for item in &line.items {
            let mut stages = Vec::new();
            for cmd in &item.pipeline.commands {
                let Some((program, args)) = cmd.words.split_first() else {
                    continue;
                };
                if program.glob.is_some() {
                    return Err(Refusal {
                        part: program.value.clone(),
                        reason: "glob characters are not allowed in a program name".into(),
                    });
                }
                let mut argv = vec![program.value.clone()];
                for arg in args {
                    argv.extend(expand::expand(arg, &self.cwd, guard)?);
                }
                self.policy.check(&argv, &paths)?;
                if argv[0] == "git" {
                    argv = self.neutralized_git(argv)?;
                }
                stages.push(Stage {
                    argv,
                    redirects: cmd.redirects.clone(),
                });
            }
            steps.push(Step {
                stages,
                then: item.then,
            });
        }
        Ok(steps)
    }

    /// Unrestricted mode: a real shell runs the line, inside the sandbox;
    /// only deny prefixes are checked.
    fn plan_unrestricted(&self, command: &str) -> Result<Vec<Step>, Refusal> {
        let words: Vec<&str> = command.split_whitespace().collect();
        for deny in &self.config.deny {
            let d: Vec<&str> = deny.split_whitespace().collect();
            if !d.is_empty() && words.len() >= d.len() && words[..d.len()] == d[..] {
                return Err(Refusal {
                    part: deny.clone(),
                    reason: "denied by configuration".into(),
                });
            }
        }
        Ok(vec![Step {
            stages: vec![Stage {
                argv: vec!["bash".into(), "-c".into(), command.to_string()],
                redirects: Vec::new(),
            }],
            then: None,
        }])
    }

    /// git with every configuration key that can run a program switched off;
    /// refused if the repository's configuration names a program we cannot
    /// switch off (filters) or includes files we cannot check.
    fn neutralized_git(&self, argv: Vec<String>) -> Result<Vec<String>, Refusal> {
        if let Some(why) = git_config_hazard(&self.cwd) {
            return Err(Refusal {
                part: argv.join(" "),
                reason: why,
            });
        }
        let mut out: Vec<String> = vec!["git".into()];
        out.extend(GIT_NEUTRALIZE.iter().map(|s| s.to_string()));
        let mut rest = argv.into_iter().skip(1).peekable();
        // Global options the policy allowed, then the subcommand.
        while let Some(arg) = rest.next_if(|a| a.starts_with('-')) {
            out.push(arg);
        }
        if let Some(sub) = rest.next() {
            let extra: &[&str] = match sub.as_str() {
                "diff" | "log" | "show" => &["--no-ext-diff", "--no-textconv"],
                "blame" | "grep" => &["--no-textconv"],
                _ => &[],
            };
            out.push(sub);
            out.extend(extra.iter().map(|s| s.to_string()));
        }
        out.extend(rest);
        Ok(out)
    }
}

/// The environment commands get: nothing from the server's but PATH, HOME
/// and LANG; a pager-free terminal; git kept from system and user config.
fn child_env(temp: Option<&Path>) -> Vec<(String, String)> {
    let from_server =
        |key: &str, default: &str| std::env::var(key).unwrap_or_else(|_| default.to_string());
    let mut env = vec![
        (
            "PATH".to_string(),
            from_server("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ),
        ("HOME".to_string(), from_server("HOME", "/")),
        ("LANG".to_string(), from_server("LANG", "C.UTF-8")),
        ("TERM".to_string(), "dumb".to_string()),
        ("PAGER".to_string(), "cat".to_string()),
        ("GIT_PAGER".to_string(), "cat".to_string()),
        ("GIT_CONFIG_NOSYSTEM".to_string(), "1".to_string()),
        ("GIT_CONFIG_GLOBAL".to_string(), "/dev/null".to_string()),
        ("GIT_TERMINAL_PROMPT".to_string(), "0".to_string()),
        ("GIT_OPTIONAL_LOCKS".to_string(), "0".to_string()),
    ];
    if let Some(temp) = temp {
        env.push(("TMPDIR".to_string(), temp.display().to_string()));
    }
    env
}

/// Why the repository's own git configuration makes running git unsafe, if
/// it does: filter drivers run programs on every checkout-status comparison
/// and cannot be switched off from the command line; includes load
/// configuration we have not read.
pub fn git_config_hazard(cwd: &Path) -> Option<String> {
    let top = find_git_root(cwd)?;
    let dot_git = top.join(".git");
    let config = if dot_git.is_file() {
        let pointer = std::fs::read_to_string(&dot_git).ok()?;
        let dir = pointer.trim().strip_prefix("gitdir:")?.trim().to_string();
        let dir = if Path::new(&dir).is_absolute() {
            PathBuf::from(dir)
        } else {
            top.join(dir)
        };
        dir.join("config")
    } else {
        dot_git.join("config")
    };
    let text = std::fs::read_to_string(config).ok()?;
    let mut section = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line
                .trim_matches(|c| c == '[' || c == ']')
                .to_ascii_lowercase();
            if section == "include" || section.starts_with("includeif") {
                return Some("the repository's git configuration includes other files, which cannot be checked for programs git would run".into());
            }
            continue;
        }
        let key = line
            .split('=')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if section.starts_with("filter") && matches!(key.as_str(), "clean" | "smudge" | "process") {
            return Some(format!(
                "the repository's git configuration defines a filter program ([{section}] {key}) that git would run; it cannot be switched off safely"
            ));
        }
    }
    None
}

/// Path checks through the guard, relative to the primary root.
struct GuardPaths<'a> {
    guard: &'a Guard,
}

impl PathCheck for GuardPaths<'_> {
    fn check(&self, arg: &str) -> Result<(), String> {
        match self.guard.resolve(arg) {
            Ok(_) | Err(GuardRefusal::Invalid(_)) => Ok(()),
            Err(GuardRefusal::Outside { display, .. }) => Err(format!(
                "{} is not inside a workspace root",
                display.display()
            )),
            Err(GuardRefusal::Unresolvable { display, reason }) => {
                Err(format!("{} cannot be checked: {reason}", display.display()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn shell(mode: BashMode, dir: &Path) -> (Shell, Guard) {
        let guard = Guard::new(&[dir]).unwrap();
        let config = BashConfig {
            mode,
            allow: vec![],
            deny: vec![],
            timeout: Duration::from_secs(5),
        };
        (Shell::new(&config, &guard), guard)
    }

    #[test]
    fn git_is_run_with_its_configuration_neutralized() {
        let dir = tempfile::tempdir().unwrap();
        let (sh, guard) = shell(BashMode::ReadOnly, dir.path());
        let steps = sh.plan("git log -n 1", &guard).unwrap();
        let argv = &steps[0].stages[0].argv;
        assert_eq!(argv[0], "git");
        assert!(argv.windows(2).any(|w| w == ["-c", "core.fsmonitor=false"]));
        assert!(
            argv.windows(2)
                .any(|w| w == ["-c", "core.hooksPath=/dev/null"])
        );
        let log = argv.iter().position(|a| a == "log").unwrap();
        assert_eq!(&argv[log + 1..log + 3], ["--no-ext-diff", "--no-textconv"]);
        assert_eq!(&argv[log + 3..], ["-n", "1"]);
    }

    #[test]
    fn git_is_refused_when_the_repository_configures_filters_or_includes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(
            dir.path().join(".git/config"),
            "[core]\n\tbare = false\n[filter \"evil\"]\n\tclean = touch /tmp/pwned\n",
        )
        .unwrap();
        let (sh, guard) = shell(BashMode::ReadOnly, dir.path());
        let e = sh.plan("git status", &guard).unwrap_err();
        assert!(e.reason.contains("filter"), "{e:?}");
        std::fs::write(
            dir.path().join(".git/config"),
            "[include]\n\tpath = other\n",
        )
        .unwrap();
        assert!(
            sh.plan("git status", &guard)
                .unwrap_err()
                .reason
                .contains("includes")
        );
        std::fs::write(
            dir.path().join(".git/config"),
            "[core]\n\tfsmonitor = touch /tmp/x\n",
        )
        .unwrap();
        assert!(
            sh.plan("git status", &guard).is_ok(),
            "fsmonitor is neutralized, not refused"
        );
    }

    #[test]
    fn plans_expand_globs_and_check_each_stage() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "").unwrap();
        std::fs::write(dir.path().join("b.rs"), "").unwrap();
        let (sh, guard) = shell(BashMode::ReadOnly, dir.path());
        let steps = sh
            .plan("wc -l *.rs | sort -n && echo done", &guard)
            .unwrap();
        assert_eq!(steps[0].stages[0].argv, ["wc", "-l", "a.rs", "b.rs"]);
        assert_eq!(steps[0].stages[1].argv, ["sort", "-n"]);
        assert_eq!(steps[1].stages[0].argv, ["echo", "done"]);
        assert!(sh.plan("ls | rm x", &guard).is_err());
    }

    #[test]
    fn the_child_environment_is_scrubbed() {
        let env = child_env(None);
        let keys: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert!(keys.contains(&"PATH") && keys.contains(&"HOME") && keys.contains(&"TERM"));
        assert!(env.iter().any(|(k, v)| k == "PAGER" && v == "cat"));
        assert!(!keys.iter().any(|k| k.contains("TOKEN")
            || k.contains("SECRET")
            || *k == "USER"
            || *k == "SSH_AUTH_SOCK"));
    }
}
