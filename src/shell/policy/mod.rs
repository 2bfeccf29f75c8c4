//! What may run (docs/security.md), decided on fully parsed, expanded argv.
//! Pure: the only outside knowledge is the [`PathCheck`] it is given.
//!
//! A command runs if its program matches an allow entry word by word (`git
//! status` admits `git status -s`, `ls` does not admit `lsof`), no deny
//! entry matches it, it is not an interpreter or wrapper (in read-only
//! mode), and its arguments pass its program's table: every option is one
//! the table lists, spelled in full, and every path, in an option's value or
//! an operand, stays inside the roots. Programs without a table (ones a user
//! added with `--bash-allow`) get a generic check: every argument that could
//! name a path must stay inside the roots. An interpreter a user allows
//! (python, node, awk, ...) can run any program: the policy cannot judge its
//! code, and only the sandbox confines it.

pub mod coreutils;
pub mod env;
#[cfg(test)]
mod examples;
pub mod find;
pub mod git;
pub mod git_config;
pub mod git_write;
pub mod options;
pub mod scripts;
pub mod search;

use std::path::Path;

pub use options::PathCheck;

use crate::shell::config::{BashConfig, BashMode};
use crate::shell::refusal::{Refusal, refuse};

/// Programs that run in read-only mode.
pub const READ_ONLY_PROGRAMS: &[&str] = &[
    "cat",
    "head",
    "tail",
    "wc",
    "ls",
    "tree",
    "find",
    "grep",
    "rg",
    "egrep",
    "fgrep",
    "file",
    "stat",
    "du",
    "df",
    "pwd",
    "echo",
    "printf",
    "basename",
    "dirname",
    "realpath",
    "sort",
    "uniq",
    "cut",
    "tr",
    "diff",
    "cmp",
    "comm",
    "nl",
    "od",
    "xxd",
    "sha256sum",
    "md5sum",
    "true",
    "false",
    "which",
    "git",
];

/// Programs that run other programs or code: never in read-only mode.
pub const INTERPRETERS_AND_WRAPPERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "fish",
    "csh",
    "tcsh",
    "busybox",
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "deno",
    "bun",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "env",
    "xargs",
    "timeout",
    "nice",
    "nohup",
    "setsid",
    "stdbuf",
    "time",
    "watch",
    "eval",
    "exec",
    "command",
    "builtin",
    "sudo",
    "su",
    "doas",
    "chroot",
    "unshare",
    "nsenter",
    "flock",
    "ionice",
    "taskset",
    "script",
    "parallel",
    "strace",
    "gdb",
    "expect",
    "osascript",
    "pkexec",
    "runuser",
];

/// A command that passed the policy, and what the runner must know of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// The argv that runs (for git: with the neutralising options added).
    pub argv: Vec<String>,
    /// For git: where it runs, relative to the working directory (`-C`).
    pub git_dir: Option<std::path::PathBuf>,
    /// For git: the subcommand, if any.
    pub git_subcommand: Option<String>,
    /// For a git subcommand that writes: the paths it names (relative to
    /// the working directory).
    pub git_written_paths: Vec<std::path::PathBuf>,
    /// For git: a subcommand that may change the work tree's files
    /// ([`git_write::KEEPS_WORK_TREE`] lists the writing ones that do not).
    pub git_changes_work_tree: bool,
}

/// The allow and deny lists of one configuration.
#[derive(Debug, Clone)]
pub struct Policy {
    mode: BashMode,
    /// `--bash-allow` entries as word lists.
    user_allow: Vec<Vec<String>>,
    deny: Vec<Vec<String>>,
}

fn split_words(entry: &str) -> Vec<String> {
    entry.split_whitespace().map(str::to_string).collect()
}

impl Policy {
    pub fn new(config: &BashConfig) -> Policy {
        let user_allow = if config.mode == BashMode::Allowlist {
            config
                .allow
                .iter()
                .map(|e| split_words(e))
                .filter(|w| !w.is_empty())
                .collect()
        } else {
            Vec::new()
        };
        Policy {
            mode: config.mode,
            user_allow,
            deny: config
                .deny
                .iter()
                .map(|e| split_words(e))
                .filter(|w| !w.is_empty())
                .collect(),
        }
    }

    /// What is allowed, for refusal messages.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "{} mode allows: {}, and read-only git ({}).",
            self.mode.as_str(),
            READ_ONLY_PROGRAMS
                .iter()
                .filter(|p| **p != "git")
                .copied()
                .collect::<Vec<_>>()
                .join(", "),
            git::read_only_names().join(", ")
        );
        if !self.user_allow.is_empty() {
            let extra: Vec<String> = self.user_allow.iter().map(|w| w.join(" ")).collect();
            out.push_str(&format!(" Also allowed: {}.", extra.join(", ")));
        }
        if !self.deny.is_empty() {
            let deny: Vec<String> = self.deny.iter().map(|w| w.join(" ")).collect();
            out.push_str(&format!(" Denied: {}.", deny.join(", ")));
        }
        out.push_str(
            " Options must be spelled in full. Combine commands with |, &&, || and ; only; no $, \
             backticks, subshells, or redirections other than >/dev/null, 2>/dev/null, 2>&1 \
             and >&2.",
        );
        if self.mode == BashMode::Allowlist {
            out.push_str(
                " NAME=value before a command sets a variable for it if the name is one of \
                 RUST_BACKTRACE, RUST_LOG, NO_COLOR, CI, NODE_ENV, PYTHONUNBUFFERED and the \
                 others docs/security.md lists, or one the server allows with --bash-env.",
            );
        }
        out
    }

    /// Checks one simple command's final argv (after glob expansion).
    #[cfg(test)]
    pub fn check(&self, argv: &[String], paths: &dyn PathCheck) -> Result<Checked, Refusal> {
        self.check_approved(argv, paths, &[])
    }

    /// `Policy::check` (tests), with entries the user approved through the client
    /// (docs/security.md, "Asking the user") counted as allow entries, in
    /// every mode: an approval widens the allow list, never the deny list,
    /// the option tables, the paths or the sandbox. A refusal only an
    /// approval could lift carries the command in [`Refusal::asks`].
    pub fn check_approved(
        &self,
        argv: &[String],
        paths: &dyn PathCheck,
        approved: &[Vec<String>],
    ) -> Result<Checked, Refusal> {
        let Some(program) = argv.first() else {
            return refuse("", "empty command");
        };
        if program.contains('/') {
            return refuse(
                program,
                "programs given as a path are not allowed; use the plain name of an allowed program",
            );
        }
        if program.contains(['*', '?', '[']) {
            return refuse(program, "glob characters are not allowed in a program name");
        }
        let words = command_words(argv);
        if let Some(entry) = self
            .deny
            .iter()
            .find(|d| starts_with_words(argv, d) || starts_with_words(&words, d))
        {
            return refuse(
                argv.join(" "),
                format!("`{}` is denied by configuration", entry.join(" ")),
            );
        }
        // An approval admits the words the user saw as a prefix of the
        // command itself, options included (`rm build` does not admit
        // `rm -rf build`); a --bash-allow entry is also matched with the
        // options taken out.
        let was_approved = approved.iter().any(|e| starts_with_words(argv, e));
        // A deny entry is matched loosely where the user is asked: a
        // command that names its words anywhere, in order (`env make
        // deploy`, `make -C . deploy`), is neither asked about nor
        // admitted by an approval.
        let denied_inside = self.deny.iter().find(|d| names_words(argv, d));
        let denied = |entry: &Vec<String>| {
            Refusal::new(
                argv.join(" "),
                format!(
                    "it names the words of `{}`, which is denied by configuration",
                    entry.join(" ")
                ),
            )
        };
        let built_in = READ_ONLY_PROGRAMS.contains(&program.as_str());
        let user_entry = self
            .user_allow
            .iter()
            .filter(|e| starts_with_words(argv, e) || starts_with_words(&words, e))
            .max_by_key(|e| e.len());
        let refusal = if self.mode == BashMode::ReadOnly
            && INTERPRETERS_AND_WRAPPERS.contains(&program.as_str())
        {
            Some(
                "interpreters and wrappers can run any code, so they are not allowed in read-only mode",
            )
        } else if !built_in && user_entry.is_none() {
            Some("this program is not on the allowlist")
        } else {
            None
        };
        if let Some(reason) = refusal {
            if let Some(entry) = denied_inside {
                return Err(denied(entry));
            }
            if !was_approved {
                return Err(Refusal::askable(
                    program,
                    argv,
                    suggested_prefix(argv),
                    reason,
                ));
            }
        }
        let args = &argv[1..];
        let here = Path::new("");
        let table = coreutils::ALL
            .iter()
            .chain(search::ALL)
            .find(|p| p.name == program);
        match program.as_str() {
            "git" => {
                let subcommand =
                    |e: &Vec<String>| git::without_globals(e).get(1).map(|s| s.to_string());
                // An approved git entry counts only for a command that
                // starts with its words, `-C` and other options included.
                let approved_subcommands: Vec<String> = approved
                    .iter()
                    .filter(|e| e.len() >= 2 && starts_with_words(argv, e))
                    .filter_map(subcommand)
                    .collect();
                if let (false, Some(entry)) = (approved_subcommands.is_empty(), denied_inside) {
                    return Err(denied(entry));
                }
                let user_subcommands: Vec<String> = self
                    .user_allow
                    .iter()
                    .filter(|e| e.first().is_some_and(|p| p == "git"))
                    .filter_map(subcommand)
                    .chain(approved_subcommands)
                    .collect();
                let git = git::check(args, paths, &user_subcommands).map_err(|refusal| {
                    match denied_inside {
                        Some(entry) if !refusal.asks.is_empty() => denied(entry),
                        _ => refusal,
                    }
                })?;
                return Ok(Checked {
                    argv: git.argv(),
                    git_dir: Some(git.dir),
                    git_subcommand: git.sub,
                    git_written_paths: git.written_paths,
                    git_changes_work_tree: git.changes_work_tree,
                });
            }
            "find" => find::check(args, paths, here)?,
            name if coreutils::TEXT_ONLY.contains(&name) => {}
            "sed" => scripts::sed(args).and_then(|()| check_paths_generic(args, paths, here))?,
            "tar" => scripts::tar(args).and_then(|()| check_paths_generic(args, paths, here))?,
            _ => match table {
                Some(table) => {
                    options::check(table, args, paths, here)?;
                }
                None => check_paths_generic(args, paths, here)?,
            },
        }
        Ok(Checked {
            argv: argv.to_vec(),
            git_dir: None,
            git_subcommand: None,
            git_written_paths: Vec::new(),
            git_changes_work_tree: false,
        })
    }
}

/// The words of a command with its options removed, for matching deny and
/// allow entries (`git -P log` is `git log`, `npm --silent run test` is `npm
/// run test`). A deny entry names a command, not every spelling a tool
/// offers: `npm t` is another word.
fn command_words(argv: &[String]) -> Vec<String> {
    if argv.first().is_some_and(|p| p == "git") {
        return git::without_globals(argv)
            .into_iter()
            .map(str::to_string)
            .collect();
    }
    let mut out: Vec<String> = argv.iter().take(1).cloned().collect();
    out.extend(argv.iter().skip(1).filter(|w| !w.starts_with('-')).cloned());
    out
}

/// The allow entry an approval of `argv` for the session adds: the
/// program, and its next word when that reads as a subcommand (`cargo
/// build`, `make test`), never an option, a path or a file name.
pub fn suggested_prefix(argv: &[String]) -> Vec<String> {
    if argv.first().is_some_and(|p| p == "git") {
        // Up to the subcommand, options before it included: an approval of
        // `git clean` in one repository is not one for `git -C other clean`.
        let globals = argv.len() + 1 - git::without_globals(argv).len();
        return argv.iter().take(globals + 1).cloned().collect();
    }
    let subcommand = argv.get(1).filter(|word| {
        word.starts_with(|c: char| c.is_ascii_lowercase())
            && word
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    });
    argv.iter().take(1).chain(subcommand).cloned().collect()
}

/// `argv` holds the words of `entry` in order, anywhere.
fn names_words(argv: &[String], entry: &[String]) -> bool {
    let mut words = argv.iter();
    entry.iter().all(|e| words.any(|a| a == e))
}

/// `argv` begins with the words of `entry`.
fn starts_with_words(argv: &[String], entry: &[String]) -> bool {
    entry.len() <= argv.len() && entry.iter().zip(argv).all(|(e, a)| e == a)
}

/// For programs without a table: every argument that could name a path must
/// stay inside the roots: operands, the values of `--opt=value`, and values
/// attached to short options (`-f/etc/x`).
pub fn check_paths_generic(
    args: &[String],
    paths: &dyn PathCheck,
    base: &Path,
) -> Result<(), Refusal> {
    for arg in args {
        let candidate = if let Some(rest) = arg.strip_prefix('-') {
            match rest.split_once('=') {
                Some((_, value)) => value,
                None => match rest.find(['/', '.']) {
                    Some(at) if rest.len() > 1 && !rest.starts_with('-') => &rest[at..],
                    _ => continue,
                },
            }
        } else {
            arg.as_str()
        };
        if candidate.is_empty() {
            continue;
        }
        paths
            .check(base, candidate, true)
            .map_err(|why| Refusal::new(arg, why))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Inside;
    impl PathCheck for Inside {
        fn check(&self, base: &Path, arg: &str, _follow: bool) -> Result<(), String> {
            let joined = base.join(arg);
            let s = joined.to_string_lossy();
            if s.starts_with('/') && !s.starts_with("/root/ws") || s.contains("..") {
                Err(format!("{arg} is outside"))
            } else {
                Ok(())
            }
        }
    }

    fn config(mode: BashMode, allow: &[&str], deny: &[&str]) -> BashConfig {
        BashConfig {
            mode,
            allow: allow.iter().map(|s| s.to_string()).collect(),
            deny: deny.iter().map(|s| s.to_string()).collect(),
            ..BashConfig::default()
        }
    }

    fn argv(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    fn ro() -> Policy {
        Policy::new(&config(BashMode::ReadOnly, &[], &[]))
    }

    fn allowed(p: &Policy, line: &str) -> bool {
        p.check(&argv(line), &Inside).is_ok()
    }

    #[test]
    fn read_only_allowlist_is_matched_word_by_word() {
        let p = ro();
        for ok in [
            "ls -la",
            "cat README.md",
            "grep -rn foo src",
            "git status -s",
            "git log --oneline -n 5",
            "wc -l x",
            "echo hi",
        ] {
            assert!(allowed(&p, ok), "{ok}");
        }
        for bad in [
            "lsof",
            "rm -rf x",
            "cp a b",
            "mv a b",
            "curl http://x",
            "touch x",
            "chmod 777 x",
            "make",
            "cargo build",
        ] {
            assert!(!allowed(&p, bad), "{bad}");
        }
    }

    #[test]
    fn ordinary_read_only_commands_pass() {
        let p = ro();
        for ok in [
            "cut -d/ -f2 f",
            "sort -t/ -k2 f",
            "tr / _",
            "echo /",
            "grep -rn /etc/hosts .",
            "dirname /usr/bin/env",
            "basename /a/b.rs .rs",
            "xxd -l 16 f",
            "xxd -c 8 f",
            "uniq -f 1 f",
            "head -5 f",
            "tail -n +3 f",
            "diff -u a b",
            "diff -r --no-dereference a b",
            "ls -l link",
            "find . -name *.rs",
            "rg -n foo src",
            "rg --files",
            "which git",
            "stat -c %s f",
            "git rev-parse --git-dir",
        ] {
            assert!(allowed(&p, ok), "{ok}: {:?}", p.check(&argv(ok), &Inside));
        }
    }

    #[test]
    fn programs_as_paths_and_globs_are_refused() {
        let p = ro();
        for bad in ["/bin/ls", "./ls", "../bin/cat x", "bin/cat", "l*", "c?t x"] {
            assert!(!allowed(&p, bad), "{bad}");
        }
    }

    #[test]
    fn interpreters_and_wrappers_are_refused_in_read_only_mode_even_if_listed() {
        let p = Policy::new(&config(BashMode::ReadOnly, &["python3", "env"], &[]));
        for bad in [
            "sh -c ls",
            "bash -c ls",
            "python3 -c 1",
            "env ls",
            "xargs ls",
            "timeout 5 ls",
            "nice ls",
            "sudo ls",
            "eval ls",
            "exec ls",
            "command ls",
            "perl -e 1",
            "node x.js",
        ] {
            assert!(!allowed(&p, bad), "{bad}");
        }
        let e = p.check(&argv("env ls"), &Inside).unwrap_err();
        assert!(e.reason.contains("interpreters"), "{e:?}");
    }

    #[test]
    fn allowlist_mode_adds_user_prefixes_and_deny_wins() {
        let p = Policy::new(&config(
            BashMode::Allowlist,
            &["cargo test", "git commit", "python3", "npm"],
            &["git log", "cargo test --release", "npm run test"],
        ));
        assert!(allowed(&p, "cargo test --lib"));
        assert!(!allowed(&p, "cargo build"));
        assert!(!allowed(&p, "cargo testx"));
        assert!(allowed(&p, "git commit -m x"));
        assert!(allowed(&p, "python3 x.py"));
        assert!(!allowed(&p, "git log"));
        assert!(!allowed(&p, "git -P log"));
        assert!(!allowed(&p, "git --no-pager -C src log"));
        assert!(!allowed(&p, "cargo test --release"));
        assert!(!allowed(&p, "npm --silent run test"));
        assert!(!allowed(&p, "npm run test -- x"));
        assert!(allowed(&p, "npm run lint"));
        assert!(allowed(&p, "ls"));
        assert!(!allowed(&p, "cargo test ../x"));
        let ro_with_deny = Policy::new(&config(BashMode::ReadOnly, &[], &["cat"]));
        assert!(!allowed(&ro_with_deny, "cat x"));
    }

    #[test]
    fn abbreviations_and_unknown_options_are_refused_everywhere() {
        let p = ro();
        for bad in [
            "sort --out=x f",
            "sort --compress-prog=sh f",
            "du --files0=list",
            "du --files0-from=list",
            "wc --files0-from=list",
            "ls --derefer x",
            "grep -R x .",
            "grep --dereference-recursive x .",
            "rg -L x",
            "rg --pre=sh x",
            "rg --pre sh x",
            "rg -z x",
            "rg --hostname-bin=x --hyperlink-format=default x",
            "rg --ignore-file=x y",
            "diff -l a b",
            "diff -r a b",
            "file -fLINK",
            "file -z x",
            "find . -exec rm {} ;",
            "tree -o out",
            "xxd in out",
            "uniq in out",
            "git grep --open=sh x",
            "git grep --textc x",
            "git diff --ext-dif",
            "git --help",
        ] {
            assert!(!allowed(&p, bad), "{bad}");
        }
    }

    #[test]
    fn sed_awk_tar_rules() {
        let p = Policy::new(&config(BashMode::Allowlist, &["sed", "awk", "tar"], &[]));
        assert!(allowed(&p, "sed -n 1,5p file"));
        assert!(allowed(&p, "sed s/a/b/g file"));
        for bad in [
            "sed -i s/a/b/ f",
            "sed -f script f",
            "sed s/a/b/w out f",
            "sed 1e date f",
            "sed r /etc/passwd f",
        ] {
            assert!(!allowed(&p, bad), "{bad}");
        }
        // awk is an interpreter: allowed when listed, confined by the sandbox.
        assert!(allowed(&p, "awk -F, {print$1} f"));
        assert!(!allowed(&ro(), "awk {print} f"));
        assert!(allowed(&p, "tar -tzf a.tgz"));
        for bad in [
            "tar --to-command=sh -xf a.tar",
            "tar -I sh -xf a.tar",
            "tar -tf host:file",
            "tar --file=host:x -t",
        ] {
            assert!(!allowed(&p, bad), "{bad}");
        }
    }

    #[test]
    fn every_path_argument_is_checked() {
        let p = ro();
        for bad in [
            "cat /etc/passwd",
            "cat ../secret",
            "ls src/../..",
            "grep -r x /etc",
            "grep -f/etc/shadow x",
            "diff a ../b",
            "git log -- ../x",
            "tail -n 5 /var/log/syslog",
            "head --lines=1 ../x",
            "realpath --relative-to=/etc x",
        ] {
            let e = p.check(&argv(bad), &Inside).unwrap_err();
            assert!(e.reason.contains("outside"), "{bad}: {e:?}");
        }
        assert!(allowed(&p, "cat /root/ws/file"));
        assert!(allowed(&p, "head -n 5 src/main.rs"));
    }

    /// Issue 18: xxd stops reading options at its first operand, and takes
    /// the next word as its output file, whatever it looks like.
    #[test]
    fn xxd_reads_a_word_after_its_input_as_the_output_file() {
        let allowlist = Policy::new(&config(BashMode::Allowlist, &[], &[]));
        for p in [ro(), allowlist] {
            for bad in [
                "xxd -r -p payload.hex -n/../.git/config",
                "xxd -r -p payload.hex -n/x",
                "xxd payload.hex -c 8",
                "xxd -r payload.hex -- out",
                // xxd reads `-rn` as `-r` alone (one option per word), so the
                // next word is its input and the one after its output.
                "xxd -rn payload.hex out",
                "xxd -r -as payload.hex out",
                // `-cols8` is `-cols` taking the next word to xxd.
                "xxd -cols8 payload.hex",
            ] {
                assert!(!allowed(&p, bad), "{bad}");
            }
            let e = p
                .check(&argv("xxd -r -p payload.hex -n/../.git/config"), &Inside)
                .unwrap_err();
            assert!(e.reason.contains("output file"), "{e:?}");
            for ok in [
                "xxd -r -p payload.hex",
                "xxd -c8 -g1 f",
                "xxd -s -16 f",
                "xxd -- f",
            ] {
                assert!(allowed(&p, ok), "{ok}: {:?}", p.check(&argv(ok), &Inside));
            }
        }
    }

    /// tree takes a value from the next word and reads on in the same word:
    /// `-Po x out` is `-P x -o out`, an output file.
    #[test]
    fn tree_reads_a_cluster_as_tree_does() {
        let p = ro();
        for bad in [
            "tree -Po x out",
            "tree -L2o out",
            "tree -aP x /etc",
            "tree -aL 1 /etc",
        ] {
            assert!(!allowed(&p, bad), "{bad}");
        }
        // `-IP x y`: both patterns come from the words after the cluster.
        assert!(allowed(&p, "tree -IP x /etc"));
        for ok in [
            "tree -L2",
            "tree -aL 2 src",
            "tree -L 2 -P *.rs src",
            "tree src -a",
        ] {
            assert!(allowed(&p, ok), "{ok}: {:?}", p.check(&argv(ok), &Inside));
        }
    }

    /// ripgrep's lexopt reads `-f=/etc/x` as `-f /etc/x`.
    #[test]
    fn rg_reads_a_short_value_after_an_equals_sign() {
        let p = ro();
        let e = p.check(&argv("rg -f=/etc/passwd x"), &Inside).unwrap_err();
        assert!(e.reason.contains("outside"), "{e:?}");
        assert!(allowed(&p, "rg -e=x -n src"));
    }

    /// ls may not follow a link named on its command line (`-H` and its long
    /// forms): an in-root link to an outside directory would list it.
    #[test]
    fn ls_never_follows_a_command_line_link() {
        let p = ro();
        for bad in [
            "ls -H link",
            "ls -lH link",
            "ls --dereference-command-line link",
            "ls --dereference-command-line-symlink-to-dir link",
        ] {
            assert!(!allowed(&p, bad), "{bad}");
        }
        assert!(allowed(&p, "ls -l link"));
    }

    /// GNU's tools permute (Linux); elsewhere BSD's may run, which take a
    /// word after an operand as a file, so such a word is refused there.
    #[test]
    fn options_after_operands_are_read_as_each_program_does() {
        let p = ro();
        let linux = cfg!(target_os = "linux");
        for line in [
            "cat a -n",
            "ls src -la",
            "head f -n 3",
            "sort f -r",
            "cmp a b -s",
        ] {
            assert_eq!(allowed(&p, line), linux, "{line}");
        }
        // Read as options on Linux, these are refused as options; read as
        // files, they would be checked as files.
        for bad in [
            "wc a --files0-from=list",
            "sort f -o out",
            "cat a -n/../../x",
        ] {
            assert!(!allowed(&p, bad), "{bad}");
        }
        // grep, diff and file permute wherever they run.
        for ok in ["grep foo src -n", "diff a b -u", "file f -b"] {
            assert!(allowed(&p, ok), "{ok}");
        }
        assert!(!allowed(&p, "grep foo src -R"));
        // basename and tr stop at the first operand: these are operands.
        assert!(allowed(&p, "basename /a/b.rs -s .rs"));
        assert!(allowed(&p, "tr a -d"));
        // which: Debian's stops, GNU's permutes.
        assert!(!allowed(&p, "which ls -a"));
        assert!(allowed(&p, "which -a ls"));
    }

    #[test]
    fn the_summary_lists_what_is_allowed() {
        let s = Policy::new(&config(BashMode::Allowlist, &["cargo test"], &["git log"])).summary();
        assert!(
            s.contains("cat, head") && s.contains("status, log, show"),
            "{s}"
        );
        assert!(
            s.contains("Also allowed: cargo test") && s.contains("Denied: git log"),
            "{s}"
        );
        assert!(s.contains("allowlist mode"));
    }
}
