//! git: global options, read-only subcommands and their option tables, the
//! options the server adds to neutralise a repository's configuration, and
//! the keys of that configuration which refuse a command.
//!
//! git's option parser, like `getopt_long`, accepts any unique prefix of a
//! long option (`--open` for `--open-files-in-pager`, `--ext-dif` for
//! `--ext-diff`), so every subcommand has an allowlist of exact options.
//! `--help` is refused (it runs `man`); `--version` stands alone.

use super::git_config::config_key_hazard;
use std::path::PathBuf;

use super::options::{
    self, Examples, FLAG, OPT_TEXT, Operands, OptionRow, OptionsEnd, PATH, Parsed, PathCheck,
    Program, RefusedRow, TEXT, TEXT_OR_DEFAULT,
};
use crate::shell::refusal::{Refusal, refuse};

/// Global options (before the subcommand) that are accepted.
const GLOBAL_FLAGS: &[&str] = &[
    "--no-pager",
    "-P",
    "--no-replace-objects",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-optional-locks",
    "--no-advice",
];

/// Global options refused with a reason of their own.
const GLOBAL_REFUSED: &[(&str, &str)] = &[
    ("-c", "sets configuration, which can make git run programs"),
    (
        "--config-env",
        "sets configuration, which can make git run programs",
    ),
    ("--exec-path", "changes where git finds its programs"),
    (
        "--git-dir",
        "changes the repository; rootbound pins it to the one inside the workspace",
    ),
    (
        "--work-tree",
        "changes the work tree; rootbound pins it to the one inside the workspace",
    ),
    (
        "--namespace",
        "changes which references git sees and writes",
    ),
    ("--bare", "treats the directory as a bare repository"),
    ("-p", "runs a pager program"),
    ("--paginate", "runs a pager program"),
    (
        "--help",
        "runs the `man` program; ask for `git <subcommand> -h` output is not available either",
    ),
    ("-h", "prints usage through a pager; omit it"),
];

/// The git subcommands that only read, with their tables.
pub const SUBCOMMANDS: &[&Program] = &[
    &STATUS,
    &LOG,
    &SHOW,
    &DIFF,
    &GREP,
    &BLAME,
    &LS_FILES,
    &LS_TREE,
    &REV_PARSE,
    &REV_LIST,
    &SHORTLOG,
    &DESCRIBE,
    &CAT_FILE,
    &BRANCH,
    &TAG,
    &SHOW_REF,
    &MERGE_BASE,
    &NAME_REV,
    &COUNT_OBJECTS,
    &VERSION,
    &WHATCHANGED,
];

/// The names of the read-only subcommands, for messages.
pub fn read_only_names() -> Vec<&'static str> {
    SUBCOMMANDS.iter().map(|p| p.name).collect()
}

/// Options git adds to every command to switch off what a repository's
/// configuration could make it run (before the subcommand).
pub const NEUTRALIZE_GLOBAL: &[&str] = &[
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
    "gpg.openpgp.program=false",
    "-c",
    "gpg.x509.program=false",
    "-c",
    "gpg.ssh.program=false",
    "-c",
    "log.showSignature=false",
    "-c",
    "protocol.allow=never",
    "-c",
    "protocol.ext.allow=never",
    "-c",
    "protocol.fd.allow=never",
    "-c",
    "safe.bareRepository=explicit",
    "-c",
    "core.alternateRefsCommand=",
    "-c",
    "diff.submodule=short",
    "-c",
    "status.submoduleSummary=false",
    "-c",
    "submodule.recurse=false",
];

/// Options the subcommand gets after the caller's, so the caller's cannot
/// turn them back on.
///
/// `--ignore-submodules=all` keeps git from running itself inside a
/// submodule, whose configuration the server has not checked (a
/// submodule's filter would run there); the option wins over a
/// `.gitmodules` that says `ignore = none`, where the configuration key
/// would not.
fn neutralize_sub(sub: &str) -> &'static [&'static str] {
    match sub {
        "diff" | "log" | "show" | "whatchanged" => {
            &["--no-ext-diff", "--no-textconv", "--ignore-submodules=all"]
        }
        "status" => &["--ignore-submodules=all"],
        "blame" | "grep" => &["--no-textconv"],
        _ => &[],
    }
}

/// A git command line, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitCommand {
    /// The caller's global options, in order (`-C` with its value).
    pub globals: Vec<String>,
    /// Where git runs, relative to the working directory (from `-C`).
    pub dir: PathBuf,
    /// The subcommand (None for `git --version`).
    pub sub: Option<String>,
    /// The subcommand's arguments.
    pub args: Vec<String>,
    /// Where `--` stands in `args`, if it does.
    pub dashdash: Option<usize>,
    /// For a subcommand that writes (one the user allowed): every path its
    /// arguments name, relative to the working directory, so that the
    /// caller can refuse those inside the repository's own directory.
    pub written_paths: Vec<PathBuf>,
    /// The subcommand was read by a writing table (the user allowed it) and
    /// may change the work tree's files and directories.
    pub changes_work_tree: bool,
}

/// Passes each path on to the real check, and notes it.
struct Noting<'a> {
    inner: &'a dyn PathCheck,
    seen: std::cell::RefCell<Vec<PathBuf>>,
}

impl PathCheck for Noting<'_> {
    fn check(&self, base: &std::path::Path, arg: &str, follow_last: bool) -> Result<(), String> {
        self.inner.check(base, arg, follow_last)?;
        self.seen.borrow_mut().push(base.join(arg));
        Ok(())
    }
}

impl GitCommand {
    /// The argv that runs: the caller's globals, then the neutralising
    /// globals, the subcommand, the caller's options and operands, the
    /// neutralising subcommand options (before `--`), then what follows `--`.
    /// `git grep` stops reading options at its pattern, so its neutralising
    /// options come right after the subcommand instead.
    pub fn argv(&self) -> Vec<String> {
        let mut out = vec!["git".to_string()];
        out.extend(self.globals.iter().cloned());
        let Some(sub) = &self.sub else {
            return out;
        };
        out.extend(NEUTRALIZE_GLOBAL.iter().map(|s| s.to_string()));
        out.push(sub.clone());
        let extra = neutralize_sub(sub).iter().map(|s| s.to_string());
        if sub == "grep" {
            out.extend(extra);
            out.extend(self.args.iter().cloned());
            return out;
        }
        let split = self.dashdash.unwrap_or(self.args.len());
        out.extend(self.args[..split].iter().cloned());
        out.extend(extra);
        out.extend(self.args[split..].iter().cloned());
        out
    }
}

/// Reads and checks `git ARGS`. `user_subcommands`: subcommands that
/// `--bash-allow` entries such as `git commit` admitted; they are read by
/// their writing tables (`git_write`), and one without a table is refused.
pub fn check(
    args: &[String],
    paths: &dyn PathCheck,
    user_subcommands: &[String],
) -> Result<GitCommand, Refusal> {
    let mut command = GitCommand {
        globals: Vec::new(),
        dir: PathBuf::new(),
        sub: None,
        args: Vec::new(),
        dashdash: None,
        written_paths: Vec::new(),
        changes_work_tree: false,
    };
    let mut i = 0;
    while let Some(word) = args.get(i) {
        if !word.starts_with('-') {
            break;
        }
        i += 1;
        if word == "--version" {
            if args.len() != 1 {
                return refuse(word, "`git --version` must be given alone");
            }
            command.globals.push(word.clone());
            return Ok(command);
        }
        let name = word.split_once('=').map_or(word.as_str(), |(n, _)| n);
        if let Some((_, why)) = GLOBAL_REFUSED.iter().find(|(n, _)| *n == name) {
            return refuse(word, format!("`git {name}` {why}"));
        }
        if word == "-C" {
            let Some(dir) = args.get(i) else {
                return refuse(word, "`git -C` needs a directory");
            };
            i += 1;
            paths
                .check(&command.dir, dir, true)
                .map_err(|why| Refusal::new(dir, why))?;
            command.dir.push(dir);
            command.globals.extend([word.clone(), dir.clone()]);
            continue;
        }
        if GLOBAL_FLAGS.contains(&word.as_str()) {
            command.globals.push(word.clone());
            continue;
        }
        return refuse(
            word,
            format!(
                "`{word}` is not a git option that rootbound accepts before the subcommand \
                 (accepted: {}, -C DIR); options must be spelled in full",
                GLOBAL_FLAGS.join(", ")
            ),
        );
    }
    let Some(sub) = args.get(i) else {
        return refuse("git", "a git subcommand is needed");
    };
    let rest = &args[i + 1..];
    if rest.iter().any(|a| a == "--help") {
        return refuse(
            format!("git {sub} --help"),
            "`--help` runs the `man` program; `-h` prints the short usage",
        );
    }
    command.sub = Some(sub.clone());
    command.args = rest.to_vec();
    let user_allowed = user_subcommands.iter().any(|u| u == sub);
    if user_allowed {
        // Paths a writing subcommand names are noted: none may lie in the
        // repository's own directory (`git mv x .git/config`).
        let noting = Noting {
            inner: paths,
            seen: std::cell::RefCell::new(Vec::new()),
        };
        check_subcommand(&mut command, sub, rest, &noting, true)?;
        command.written_paths = noting.seen.into_inner();
        command.changes_work_tree = super::git_write::SUBCOMMANDS.iter().any(|p| p.name == sub)
            && !super::git_write::KEEPS_WORK_TREE.contains(&sub.as_str());
        return Ok(command);
    }
    if SUBCOMMANDS.iter().any(|p| p.name == sub) {
        check_subcommand(&mut command, sub, rest, paths, false)?;
        return Ok(command);
    }
    if sub == "help" {
        return refuse("git help", "`git help` runs the `man` program");
    }
    let why = format!(
        "only read-only git subcommands are allowed ({})",
        read_only_names().join(", ")
    );
    // A writing subcommand with a table is what `--bash-allow "git SUB"`
    // admits, so the user may approve it; one without a table never runs.
    if super::git_write::SUBCOMMANDS.iter().any(|p| p.name == sub) {
        let argv: Vec<String> = std::iter::once("git".to_string())
            .chain(args.iter().cloned())
            .collect();
        return Err(Refusal::askable(
            format!("git {sub}"),
            &argv,
            super::suggested_prefix(&argv),
            why,
        ));
    }
    refuse(format!("git {sub}"), why)
}

/// Checks a subcommand's arguments against its table: the writing one when
/// the user allowed it (`git branch NAME` creates), else the read-only one;
/// a subcommand without a table is refused.
fn check_subcommand(
    command: &mut GitCommand,
    sub: &str,
    rest: &[String],
    paths: &dyn PathCheck,
    user_allowed: bool,
) -> Result<(), Refusal> {
    let writing = user_allowed
        .then(|| super::git_write::SUBCOMMANDS.iter().find(|p| p.name == sub))
        .flatten();
    if let Some(program) = writing.or_else(|| SUBCOMMANDS.iter().find(|p| p.name == sub)) {
        let parsed = options::check(program, rest, paths, &command.dir).map_err(|r| Refusal {
            reason: r.reason.replacen(
                &format!("of {}", program.name),
                &format!("of git {}", program.name),
                1,
            ),
            ..r
        })?;
        command.dashdash = parsed.dashdash_at;
        return Ok(());
    }
    // No table: what it may do is not known (`git bisect run` runs
    // programs, `git am` changes the work tree), so it does not run.
    refuse(
        format!("git {sub}"),
        format!(
            "rootbound has no option table for `git {sub}`, so it does not run it, even when \
             allowed; subcommands with tables: {}",
            super::git_write::SUBCOMMANDS
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
}

/// The words of a git command line with its global options (and their
/// values) removed, for matching deny entries: `git -P log` is `git log`.
pub fn without_globals(argv: &[String]) -> Vec<&str> {
    let mut out = vec!["git"];
    let mut i = 1;
    while let Some(word) = argv.get(i) {
        if !word.starts_with('-') {
            break;
        }
        i += if word == "-C" || word == "-c" || word == "--config-env" {
            2
        } else {
            1
        };
    }
    out.extend(argv.iter().skip(i).map(String::as_str));
    out
}

/// The first hazard in `git config --list -z --show-scope --show-origin`
/// output: entries of `scope NUL origin NUL key LF value NUL`.
pub fn config_listing_hazard(listing: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(listing);
    let mut fields = text.split('\0');
    loop {
        let scope = fields.next()?;
        if scope.is_empty() {
            return None;
        }
        let origin = fields.next().unwrap_or("");
        let entry = fields.next().unwrap_or("");
        let (key, value) = entry.split_once('\n').unwrap_or((entry, ""));
        if let Some(why) = config_key_hazard(key, value) {
            return Some(format!(
                "git's configuration sets `{key}` ({scope}, {}), which {why}; rootbound does not \
                 run git in a repository configured this way",
                origin.strip_prefix("file:").unwrap_or(origin)
            ));
        }
    }
}

// --- Tables -----------------------------------------------------------------

const DIFF_OPTIONS: &[OptionRow] = &[
    ("-p", "--patch", FLAG),
    ("-u", "", FLAG),
    ("-s", "--no-patch", FLAG),
    ("-U", "--unified", OPT_TEXT),
    ("", "--output-indicator-new", TEXT),
    ("", "--output-indicator-old", TEXT),
    ("", "--output-indicator-context", TEXT),
    ("", "--raw", FLAG),
    ("", "--patch-with-raw", FLAG),
    ("", "--indent-heuristic", FLAG),
    ("", "--no-indent-heuristic", FLAG),
    ("", "--minimal", FLAG),
    ("", "--patience", FLAG),
    ("", "--histogram", FLAG),
    ("", "--anchored", TEXT),
    ("", "--diff-algorithm", TEXT),
    ("", "--stat", OPT_TEXT),
    ("", "--stat-width", TEXT),
    ("", "--stat-name-width", TEXT),
    ("", "--stat-graph-width", TEXT),
    ("", "--stat-count", TEXT),
    ("", "--compact-summary", FLAG),
    ("", "--numstat", FLAG),
    ("", "--shortstat", FLAG),
    ("-X", "--dirstat", OPT_TEXT),
    ("", "--cumulative", FLAG),
    ("", "--dirstat-by-file", OPT_TEXT),
    ("", "--summary", FLAG),
    ("", "--patch-with-stat", FLAG),
    ("-z", "", FLAG),
    ("", "--name-only", FLAG),
    ("", "--name-status", FLAG),
    ("", "--color", OPT_TEXT),
    ("", "--no-color", FLAG),
    ("", "--color-moved", OPT_TEXT),
    ("", "--no-color-moved", FLAG),
    ("", "--color-moved-ws", TEXT),
    ("", "--no-color-moved-ws", FLAG),
    ("", "--word-diff", OPT_TEXT),
    ("", "--word-diff-regex", TEXT),
    ("", "--color-words", OPT_TEXT),
    ("", "--no-renames", FLAG),
    ("", "--rename-empty", FLAG),
    ("", "--no-rename-empty", FLAG),
    ("", "--check", FLAG),
    ("", "--ws-error-highlight", TEXT),
    ("", "--full-index", FLAG),
    ("", "--binary", FLAG),
    ("", "--abbrev", OPT_TEXT),
    ("", "--no-abbrev", FLAG),
    ("-B", "--break-rewrites", OPT_TEXT),
    ("-M", "--find-renames", OPT_TEXT),
    ("-C", "--find-copies", OPT_TEXT),
    ("", "--find-copies-harder", FLAG),
    ("-D", "--irreversible-delete", FLAG),
    ("-l", "", OPT_TEXT),
    ("", "--diff-filter", TEXT),
    ("-S", "", TEXT),
    ("-G", "", TEXT),
    ("", "--find-object", TEXT),
    ("", "--pickaxe-all", FLAG),
    ("", "--pickaxe-regex", FLAG),
    ("", "--skip-to", TEXT),
    ("", "--rotate-to", TEXT),
    ("-R", "", FLAG),
    ("", "--relative", OPT_TEXT),
    ("", "--no-relative", FLAG),
    ("-a", "--text", FLAG),
    ("", "--ignore-cr-at-eol", FLAG),
    ("", "--ignore-space-at-eol", FLAG),
    ("-b", "--ignore-space-change", FLAG),
    ("-w", "--ignore-all-space", FLAG),
    ("", "--ignore-blank-lines", FLAG),
    ("-I", "--ignore-matching-lines", TEXT),
    ("", "--inter-hunk-context", TEXT),
    ("-W", "--function-context", FLAG),
    ("", "--exit-code", FLAG),
    ("", "--quiet", FLAG),
    ("", "--no-ext-diff", FLAG),
    ("", "--no-textconv", FLAG),
    ("", "--src-prefix", TEXT),
    ("", "--dst-prefix", TEXT),
    ("", "--no-prefix", FLAG),
    ("", "--default-prefix", FLAG),
    ("", "--line-prefix", TEXT),
    ("", "--ita-invisible-in-index", FLAG),
    ("", "--ita-visible-in-index", FLAG),
    ("", "--cc", FLAG),
    ("", "--combined-all-paths", FLAG),
    ("-m", "", FLAG),
    ("", "--diff-merges", TEXT),
    ("", "--no-diff-merges", FLAG),
    ("", "--remerge-diff", FLAG),
    ("", "--dd", FLAG),
];

/// Runs git inside submodules, whose configuration is not checked.
const SUBMODULES: &str =
    "runs git inside submodules, whose configuration rootbound has not checked";

const DIFF_REFUSED: &[RefusedRow] = &[
    ("", "--submodule", SUBMODULES),
    ("", "--ignore-submodules", SUBMODULES),
    ("", "--ext-diff", "runs an external diff program"),
    ("", "--textconv", "runs text-conversion programs"),
    ("", "--output", "writes to a file"),
    ("-O", "", "reads an order file; it is not supported"),
];

const REVISION_OPTIONS: &[OptionRow] = &[
    ("-n", "--max-count", TEXT),
    ("", "--skip", TEXT),
    ("", "--since", TEXT),
    ("", "--after", TEXT),
    ("", "--since-as-filter", TEXT),
    ("", "--until", TEXT),
    ("", "--before", TEXT),
    ("", "--max-age", TEXT),
    ("", "--min-age", TEXT),
    ("", "--author", TEXT),
    ("", "--committer", TEXT),
    ("", "--grep-reflog", TEXT),
    ("", "--grep", TEXT),
    ("", "--all-match", FLAG),
    ("", "--invert-grep", FLAG),
    ("-i", "--regexp-ignore-case", FLAG),
    ("", "--basic-regexp", FLAG),
    ("-E", "--extended-regexp", FLAG),
    ("-F", "--fixed-strings", FLAG),
    ("-P", "--perl-regexp", FLAG),
    ("", "--remove-empty", FLAG),
    ("", "--merges", FLAG),
    ("", "--no-merges", FLAG),
    ("", "--min-parents", TEXT),
    ("", "--max-parents", TEXT),
    ("", "--no-min-parents", FLAG),
    ("", "--no-max-parents", FLAG),
    ("", "--first-parent", FLAG),
    ("", "--exclude-first-parent-only", FLAG),
    ("", "--not", FLAG),
    ("", "--all", FLAG),
    ("", "--branches", OPT_TEXT),
    ("", "--tags", OPT_TEXT),
    ("", "--remotes", OPT_TEXT),
    ("", "--glob", TEXT),
    ("", "--exclude", TEXT),
    ("", "--exclude-hidden", TEXT),
    ("", "--reflog", FLAG),
    ("", "--alternate-refs", FLAG),
    ("", "--single-worktree", FLAG),
    ("", "--ignore-missing", FLAG),
    ("", "--cherry-mark", FLAG),
    ("", "--cherry-pick", FLAG),
    ("", "--left-only", FLAG),
    ("", "--right-only", FLAG),
    ("", "--cherry", FLAG),
    ("-g", "--walk-reflogs", FLAG),
    ("", "--merge", FLAG),
    ("", "--boundary", FLAG),
    ("", "--simplify-by-decoration", FLAG),
    ("", "--show-pulls", FLAG),
    ("", "--full-history", FLAG),
    ("", "--dense", FLAG),
    ("", "--sparse", FLAG),
    ("", "--simplify-merges", FLAG),
    ("", "--ancestry-path", OPT_TEXT),
    ("", "--date-order", FLAG),
    ("", "--author-date-order", FLAG),
    ("", "--topo-order", FLAG),
    ("", "--reverse", FLAG),
    ("", "--no-walk", OPT_TEXT),
    ("", "--do-walk", FLAG),
    ("", "--pretty", OPT_TEXT),
    ("", "--format", TEXT),
    ("", "--abbrev-commit", FLAG),
    ("", "--no-abbrev-commit", FLAG),
    ("", "--oneline", FLAG),
    ("", "--encoding", TEXT),
    ("", "--expand-tabs", OPT_TEXT),
    ("", "--no-expand-tabs", FLAG),
    ("", "--notes", OPT_TEXT),
    ("", "--no-notes", FLAG),
    ("", "--show-notes-by-default", FLAG),
    ("", "--relative-date", FLAG),
    ("", "--date", TEXT),
    ("", "--parents", FLAG),
    ("", "--children", FLAG),
    ("", "--left-right", FLAG),
    ("", "--graph", FLAG),
    ("", "--show-linear-break", OPT_TEXT),
    ("", "--decorate", OPT_TEXT),
    ("", "--no-decorate", FLAG),
    ("", "--decorate-refs", TEXT),
    ("", "--decorate-refs-exclude", TEXT),
    ("", "--clear-decorations", FLAG),
    ("", "--source", FLAG),
    ("", "--mailmap", FLAG),
    ("", "--no-mailmap", FLAG),
    ("", "--use-mailmap", FLAG),
    ("", "--no-use-mailmap", FLAG),
    ("", "--log-size", FLAG),
    ("", "--follow", FLAG),
    ("", "--no-follow", FLAG),
    ("", "--no-commit-header", FLAG),
    ("", "--commit-header", FLAG),
];

const REVISION_REFUSED: &[RefusedRow] = &[
    ("", "--submodule", SUBMODULES),
    ("", "--ignore-submodules", SUBMODULES),
    ("", "--show-signature", "runs gpg"),
    ("", "--ext-diff", "runs an external diff program"),
    ("", "--textconv", "runs text-conversion programs"),
    ("", "--output", "writes to a file"),
    ("-O", "", "reads an order file; it is not supported"),
];

pub const LOG: Program = Program {
    name: "log",
    shared: &[DIFF_OPTIONS, REVISION_OPTIONS],
    refused: REVISION_REFUSED,
    numbers: true,
    examples: Examples {
        allowed: &[
            "git log --oneline -n 5",
            "git log -p --follow -- src/a.rs",
            "git log -5 --stat",
        ],
        refused: &[
            "git log --show-signature",
            "git log --ext-diff",
            "git log -- ../x",
        ],
    },
    ..Program::BASE
};

pub const WHATCHANGED: Program = Program {
    name: "whatchanged",
    examples: Examples {
        allowed: &["git whatchanged -n 3"],
        refused: &["git whatchanged --output=out.txt"],
    },
    ..LOG
};

pub const SHOW: Program = Program {
    name: "show",
    examples: Examples {
        allowed: &["git show HEAD --stat", "git show --name-only HEAD~1"],
        refused: &["git show --textconv HEAD"],
    },
    ..LOG
};

pub const DIFF: Program = Program {
    name: "diff",
    options: &[
        ("", "--cached", FLAG),
        ("", "--staged", FLAG),
        ("", "--merge-base", FLAG),
        ("", "--no-index", FLAG),
        ("", "--base", FLAG),
        ("", "--ours", FLAG),
        ("", "--theirs", FLAG),
        ("-1", "", FLAG),
        ("-2", "", FLAG),
        ("-3", "", FLAG),
        ("-0", "", FLAG),
    ],
    shared: &[DIFF_OPTIONS],
    refused: DIFF_REFUSED,
    examples: Examples {
        allowed: &[
            "git diff --cached --name-only",
            "git diff -U5 HEAD~1 -- src",
        ],
        refused: &[
            "git diff --ext-diff",
            "git diff --ext-dif",
            "git diff -O order.txt",
        ],
    },
    ..Program::BASE
};

pub const GREP: Program = Program {
    name: "grep",
    options: &[
        ("", "--cached", FLAG),
        ("", "--no-index", FLAG),
        ("", "--untracked", FLAG),
        ("", "--no-exclude-standard", FLAG),
        ("", "--exclude-standard", FLAG),
        ("-a", "--text", FLAG),
        ("", "--no-textconv", FLAG),
        ("-i", "--ignore-case", FLAG),
        ("-I", "", FLAG),
        ("", "--max-depth", TEXT),
        ("-r", "--recursive", FLAG),
        ("", "--no-recursive", FLAG),
        ("-w", "--word-regexp", FLAG),
        ("-v", "--invert-match", FLAG),
        ("-h", "", FLAG),
        ("-H", "", FLAG),
        ("", "--full-name", FLAG),
        ("-E", "--extended-regexp", FLAG),
        ("-G", "--basic-regexp", FLAG),
        ("-P", "--perl-regexp", FLAG),
        ("-F", "--fixed-strings", FLAG),
        ("-n", "--line-number", FLAG),
        ("", "--column", FLAG),
        ("-l", "--files-with-matches", FLAG),
        ("", "--name-only", FLAG),
        ("-L", "--files-without-match", FLAG),
        ("-z", "--null", FLAG),
        ("-o", "--only-matching", FLAG),
        ("-c", "--count", FLAG),
        ("", "--color", OPT_TEXT),
        ("", "--no-color", FLAG),
        ("", "--break", FLAG),
        ("", "--heading", FLAG),
        ("-p", "--show-function", FLAG),
        ("-A", "--after-context", TEXT),
        ("-B", "--before-context", TEXT),
        ("-C", "--context", TEXT),
        ("-W", "--function-context", FLAG),
        ("-m", "--max-count", TEXT),
        ("", "--threads", TEXT),
        ("-f", "", PATH),
        ("-e", "", TEXT),
        ("", "--and", FLAG),
        ("", "--or", FLAG),
        ("", "--not", FLAG),
        ("", "--all-match", FLAG),
        ("-q", "--quiet", FLAG),
    ],
    refused: &[
        ("", "--recurse-submodules", SUBMODULES),
        (
            "-O",
            "--open-files-in-pager",
            "opens the matches in a pager program",
        ),
        ("", "--textconv", "runs text-conversion programs"),
    ],
    operands: Operands::PatternThenPaths(&["-e", "-f"]),
    numbers: true,
    // `PARSE_OPT_STOP_AT_NON_OPTION`: the pattern ends the options, and
    // git dies on a later word that starts with `-` (unless after `--`).
    options_end: OptionsEnd::FirstOperand,
    examples: Examples {
        allowed: &["git grep -n foo", "git grep -e foo --and -e bar -- src"],
        refused: &[
            "git grep --open-files-in-pager=sh foo",
            "git grep -O foo",
            "git grep --textc foo",
        ],
    },
    ..Program::BASE
};

pub const STATUS: Program = Program {
    name: "status",
    options: &[
        ("-s", "--short", FLAG),
        ("-b", "--branch", FLAG),
        ("", "--show-stash", FLAG),
        ("", "--porcelain", OPT_TEXT),
        ("", "--long", FLAG),
        ("-v", "--verbose", FLAG),
        ("-vv", "", FLAG),
        ("-u", "--untracked-files", OPT_TEXT),
        ("", "--ignored", OPT_TEXT),
        ("-z", "", FLAG),
        ("", "--column", OPT_TEXT),
        ("", "--no-column", FLAG),
        ("", "--ahead-behind", FLAG),
        ("", "--no-ahead-behind", FLAG),
        ("", "--renames", FLAG),
        ("", "--no-renames", FLAG),
        ("", "--find-renames", OPT_TEXT),
    ],
    refused: &[("", "--ignore-submodules", SUBMODULES)],
    examples: Examples {
        allowed: &["git status -s -b", "git status --porcelain=v2 -z"],
        refused: &["git status --ignore-submodules=all"],
    },
    ..Program::BASE
};

pub const BLAME: Program = Program {
    name: "blame",
    options: &[
        ("-b", "", FLAG),
        ("", "--root", FLAG),
        ("", "--show-stats", FLAG),
        ("-L", "", TEXT),
        ("-l", "", FLAG),
        ("-t", "", FLAG),
        ("-S", "", PATH),
        ("", "--reverse", TEXT),
        ("", "--first-parent", FLAG),
        ("-p", "--porcelain", FLAG),
        ("", "--line-porcelain", FLAG),
        ("", "--incremental", FLAG),
        ("", "--encoding", TEXT),
        ("", "--contents", PATH),
        ("", "--date", TEXT),
        ("", "--progress", FLAG),
        ("", "--no-progress", FLAG),
        ("-M", "", OPT_TEXT),
        ("-C", "", OPT_TEXT),
        ("", "--ignore-rev", TEXT),
        ("", "--ignore-revs-file", PATH),
        ("", "--color-lines", FLAG),
        ("", "--color-by-age", FLAG),
        ("-c", "", FLAG),
        ("-s", "", FLAG),
        ("-e", "--show-email", FLAG),
        ("-f", "--show-name", FLAG),
        ("-n", "--show-number", FLAG),
        ("-w", "", FLAG),
        ("", "--abbrev", OPT_TEXT),
        ("", "--since", TEXT),
        ("", "--no-textconv", FLAG),
        ("", "--minimal", FLAG),
    ],
    refused: &[("", "--textconv", "runs text-conversion programs")],
    examples: Examples {
        allowed: &["git blame -L 1,5 a.rs", "git blame -w -M a.rs"],
        refused: &[
            "git blame --contents /etc/passwd a.rs",
            "git blame --textconv a.rs",
        ],
    },
    ..Program::BASE
};

pub const LS_FILES: Program = Program {
    name: "ls-files",
    options: &[
        ("-c", "--cached", FLAG),
        ("-d", "--deleted", FLAG),
        ("-m", "--modified", FLAG),
        ("-o", "--others", FLAG),
        ("-i", "--ignored", FLAG),
        ("-s", "--stage", FLAG),
        ("-u", "--unmerged", FLAG),
        ("-k", "--killed", FLAG),
        ("", "--resolve-undo", FLAG),
        ("", "--directory", FLAG),
        ("", "--no-empty-directory", FLAG),
        ("", "--eol", FLAG),
        ("", "--deduplicate", FLAG),
        ("-x", "--exclude", TEXT),
        ("", "--exclude-standard", FLAG),
        ("", "--error-unmatch", FLAG),
        ("", "--full-name", FLAG),
        ("", "--abbrev", OPT_TEXT),
        ("", "--debug", FLAG),
        ("", "--format", TEXT),
        ("", "--sparse", FLAG),
        ("-t", "", FLAG),
        ("-v", "", FLAG),
        ("-f", "", FLAG),
        ("-z", "", FLAG),
    ],
    refused: &[
        ("", "--recurse-submodules", SUBMODULES),
        (
            "-X",
            "--exclude-from",
            "reads patterns from a file of names, which cannot be checked",
        ),
    ],
    examples: Examples {
        allowed: &[
            "git ls-files -m",
            "git ls-files --others --exclude-standard src",
        ],
        refused: &["git ls-files --recurse-submodules", "git ls-files -X list"],
    },
    ..Program::BASE
};

pub const LS_TREE: Program = Program {
    name: "ls-tree",
    options: &[
        ("-d", "", FLAG),
        ("-r", "", FLAG),
        ("-t", "", FLAG),
        ("-l", "--long", FLAG),
        ("-z", "", FLAG),
        ("", "--name-only", FLAG),
        ("", "--name-status", FLAG),
        ("", "--object-only", FLAG),
        ("", "--full-name", FLAG),
        ("", "--full-tree", FLAG),
        ("", "--abbrev", OPT_TEXT),
        ("", "--format", TEXT),
    ],
    examples: Examples {
        allowed: &["git ls-tree -r --name-only HEAD"],
        refused: &["git ls-tree -R HEAD"],
    },
    ..Program::BASE
};

pub const REV_PARSE: Program = Program {
    name: "rev-parse",
    options: &[
        ("", "--git-dir", FLAG),
        ("", "--absolute-git-dir", FLAG),
        ("", "--git-common-dir", FLAG),
        ("", "--show-toplevel", FLAG),
        ("", "--show-prefix", FLAG),
        ("", "--show-cdup", FLAG),
        ("", "--is-inside-work-tree", FLAG),
        ("", "--is-inside-git-dir", FLAG),
        ("", "--is-bare-repository", FLAG),
        ("", "--is-shallow-repository", FLAG),
        ("", "--show-object-format", OPT_TEXT),
        ("", "--show-ref-format", FLAG),
        ("", "--abbrev-ref", OPT_TEXT),
        ("", "--short", OPT_TEXT),
        ("", "--verify", FLAG),
        ("-q", "--quiet", FLAG),
        ("", "--symbolic", FLAG),
        ("", "--symbolic-full-name", FLAG),
        ("", "--all", FLAG),
        ("", "--branches", OPT_TEXT),
        ("", "--tags", OPT_TEXT),
        ("", "--remotes", OPT_TEXT),
        ("", "--glob", TEXT),
        ("", "--exclude", TEXT),
        ("", "--default", TEXT),
        ("", "--revs-only", FLAG),
        ("", "--no-revs", FLAG),
        ("", "--flags", FLAG),
        ("", "--no-flags", FLAG),
        ("", "--not", FLAG),
        ("", "--since", TEXT),
        ("", "--after", TEXT),
        ("", "--until", TEXT),
        ("", "--before", TEXT),
        ("", "--path-format", TEXT),
        ("", "--local-env-vars", FLAG),
        ("", "--git-path", TEXT),
        ("", "--shared-index-path", FLAG),
        ("", "--sq", FLAG),
    ],
    refused: &[(
        "",
        "--show-superproject-working-tree",
        "runs git in the superproject, whose configuration rootbound has not checked",
    )],
    examples: Examples {
        allowed: &[
            "git rev-parse --show-toplevel",
            "git rev-parse --abbrev-ref HEAD",
        ],
        refused: &["git rev-parse --show-superproject-working-tree"],
    },
    ..Program::BASE
};

pub const REV_LIST: Program = Program {
    name: "rev-list",
    options: &[
        ("", "--count", FLAG),
        ("", "--objects", FLAG),
        ("", "--objects-edge", FLAG),
        ("", "--no-object-names", FLAG),
        ("", "--object-names", FLAG),
        ("", "--unpacked", FLAG),
        ("", "--disk-usage", OPT_TEXT),
        ("", "--quiet", FLAG),
        ("", "--timestamp", FLAG),
        ("", "--in-commit-order", FLAG),
        ("", "--header", FLAG),
    ],
    shared: &[REVISION_OPTIONS],
    refused: REVISION_REFUSED,
    numbers: true,
    examples: Examples {
        allowed: &[
            "git rev-list --count HEAD",
            "git rev-list -n 3 --objects HEAD",
        ],
        refused: &["git rev-list --show-signature HEAD"],
    },
    ..Program::BASE
};

pub const SHORTLOG: Program = Program {
    name: "shortlog",
    options: &[
        ("-n", "--numbered", FLAG),
        ("-s", "--summary", FLAG),
        ("-e", "--email", FLAG),
        ("-c", "--committer", FLAG),
        ("", "--group", TEXT),
        ("-w", "", OPT_TEXT),
    ],
    shared: &[REVISION_OPTIONS],
    refused: REVISION_REFUSED,
    examples: Examples {
        allowed: &["git shortlog -sn HEAD"],
        refused: &["git shortlog --ext-diff HEAD"],
    },
    ..Program::BASE
};

pub const DESCRIBE: Program = Program {
    name: "describe",
    options: &[
        ("", "--tags", FLAG),
        ("", "--all", FLAG),
        ("", "--long", FLAG),
        ("", "--abbrev", OPT_TEXT),
        ("", "--exact-match", FLAG),
        ("", "--always", FLAG),
        ("", "--match", TEXT),
        ("", "--exclude", TEXT),
        ("", "--contains", FLAG),
        ("", "--first-parent", FLAG),
        ("", "--candidates", TEXT),
        ("", "--debug", FLAG),
    ],
    refused: &[("", "--dirty", SUBMODULES), ("", "--broken", SUBMODULES)],
    examples: Examples {
        allowed: &["git describe --tags --always"],
        refused: &["git describe --dirty"],
    },
    ..Program::BASE
};

pub const CAT_FILE: Program = Program {
    name: "cat-file",
    options: &[
        ("-t", "", FLAG),
        ("-s", "", FLAG),
        ("-e", "", FLAG),
        ("-p", "", FLAG),
        ("", "--allow-unknown-type", FLAG),
        ("", "--mailmap", FLAG),
        ("", "--no-mailmap", FLAG),
        ("", "--use-mailmap", FLAG),
        ("", "--no-use-mailmap", FLAG),
    ],
    refused: &[
        ("", "--textconv", "runs text-conversion programs"),
        ("", "--filters", "runs filter programs"),
    ],
    examples: Examples {
        allowed: &["git cat-file -p HEAD", "git cat-file -t HEAD"],
        refused: &[
            "git cat-file --textconv HEAD:a.rs",
            "git cat-file --filters HEAD:a.rs",
        ],
    },
    ..Program::BASE
};

/// Options of `git branch` and `git tag` that only list.
const LISTING_OPTIONS: &[OptionRow] = &[
    ("-l", "--list", FLAG),
    ("", "--contains", TEXT_OR_DEFAULT),
    ("", "--no-contains", TEXT_OR_DEFAULT),
    ("", "--merged", TEXT_OR_DEFAULT),
    ("", "--no-merged", TEXT_OR_DEFAULT),
    ("", "--points-at", TEXT),
    ("", "--sort", TEXT),
    ("", "--format", TEXT),
    ("", "--column", OPT_TEXT),
    ("", "--no-column", FLAG),
    ("", "--color", OPT_TEXT),
    ("", "--no-color", FLAG),
    ("-i", "--ignore-case", FLAG),
    ("", "--omit-empty", FLAG),
];

/// `git branch NAME` and `git tag NAME` create; only `--list` takes patterns.
fn listing_rules(parsed: &Parsed<'_>) -> Result<(), Refusal> {
    if let Some(op) = parsed.operands.first()
        && !parsed.has_any(&["-l", "--list"])
    {
        return refuse(
            *op,
            "a name without --list creates a branch or tag; use --list PATTERN to list",
        );
    }
    Ok(())
}

pub const BRANCH: Program = Program {
    name: "branch",
    options: &[
        ("-a", "--all", FLAG),
        ("-r", "--remotes", FLAG),
        ("-v", "--verbose", FLAG),
        ("-vv", "", FLAG),
        ("", "--show-current", FLAG),
        ("", "--abbrev", OPT_TEXT),
        ("", "--no-abbrev", FLAG),
    ],
    shared: &[LISTING_OPTIONS],
    operands: Operands::Texts,
    rules: Some(listing_rules),
    examples: Examples {
        allowed: &[
            "git branch -a -v",
            "git branch --list feat*",
            "git branch --merged",
        ],
        refused: &["git branch newname", "git branch -d old"],
    },
    ..Program::BASE
};

pub const TAG: Program = Program {
    name: "tag",
    options: &[("-n", "", OPT_TEXT)],
    shared: &[LISTING_OPTIONS],
    operands: Operands::Texts,
    rules: Some(listing_rules),
    examples: Examples {
        allowed: &["git tag -l v1*", "git tag -n"],
        refused: &["git tag v9"],
    },
    ..Program::BASE
};

pub const SHOW_REF: Program = Program {
    name: "show-ref",
    options: &[
        ("", "--head", FLAG),
        ("", "--heads", FLAG),
        ("", "--branches", FLAG),
        ("", "--tags", FLAG),
        ("-d", "--dereference", FLAG),
        ("-s", "--hash", OPT_TEXT),
        ("", "--abbrev", OPT_TEXT),
        ("", "--verify", FLAG),
        ("", "--exists", FLAG),
        ("-q", "--quiet", FLAG),
    ],
    operands: Operands::Texts,
    examples: Examples {
        allowed: &[
            "git show-ref --tags",
            "git show-ref --verify refs/heads/main",
        ],
        refused: &["git show-ref --exclude-existing"],
    },
    ..Program::BASE
};

pub const MERGE_BASE: Program = Program {
    name: "merge-base",
    options: &[
        ("-a", "--all", FLAG),
        ("", "--octopus", FLAG),
        ("", "--independent", FLAG),
        ("", "--is-ancestor", FLAG),
        ("", "--fork-point", FLAG),
    ],
    examples: Examples {
        allowed: &[
            "git merge-base HEAD main",
            "git merge-base --is-ancestor HEAD main",
        ],
        refused: &["git merge-base --fork-pt main"],
    },
    ..Program::BASE
};

pub const NAME_REV: Program = Program {
    name: "name-rev",
    options: &[
        ("", "--tags", FLAG),
        ("", "--refs", TEXT),
        ("", "--exclude", TEXT),
        ("", "--all", FLAG),
        ("", "--name-only", FLAG),
        ("", "--no-undefined", FLAG),
        ("", "--always", FLAG),
    ],
    examples: Examples {
        allowed: &["git name-rev --name-only HEAD"],
        refused: &["git name-rev --stdin"],
    },
    ..Program::BASE
};

pub const COUNT_OBJECTS: Program = Program {
    name: "count-objects",
    options: &[("-v", "--verbose", FLAG), ("-H", "--human-readable", FLAG)],
    operands: Operands::None,
    examples: Examples {
        allowed: &["git count-objects -vH"],
        refused: &["git count-objects src"],
    },
    ..Program::BASE
};

pub const VERSION: Program = Program {
    name: "version",
    options: &[("", "--build-options", FLAG)],
    operands: Operands::None,
    examples: Examples {
        allowed: &["git version --build-options"],
        refused: &["git version --help"],
    },
    ..Program::BASE
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    struct Lexical;
    impl PathCheck for Lexical {
        fn check(&self, base: &Path, arg: &str, _follow: bool) -> Result<(), String> {
            let joined = base.join(arg);
            let s = joined.to_string_lossy();
            if s.starts_with('/') || s.contains("..") {
                Err(format!("{arg} is outside"))
            } else {
                Ok(())
            }
        }
    }

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    fn run(line: &str) -> Result<GitCommand, Refusal> {
        check(&words(line), &Lexical, &[])
    }

    #[test]
    fn read_only_commands_pass() {
        for ok in [
            "status",
            "status -s -b",
            "log --oneline -n 5",
            "log -5 --stat",
            "log -p --follow -- src/x.rs",
            "diff HEAD~1",
            "diff --cached --name-only",
            "diff -U5 a b",
            "show HEAD --stat",
            "grep -n foo",
            "grep -e foo -e bar -- src",
            "blame -L 1,5 src/x.rs",
            "ls-files",
            "rev-parse --git-dir",
            "rev-parse --show-toplevel HEAD",
            "branch",
            "branch -a -v",
            "branch --merged",
            "branch --contains HEAD",
            "branch --list feat*",
            "tag",
            "tag -l v1*",
            "-C src status",
            "--no-pager log",
            "-P log",
            "--version",
        ] {
            assert!(run(ok).is_ok(), "{ok}: {:?}", run(ok));
        }
    }

    #[test]
    fn abbreviated_and_dangerous_options_are_refused() {
        for bad in [
            "grep --open=sh x",
            "grep --op x",
            "grep --open-files-in-pager x",
            "grep -O x",
            "grep -Osh x",
            "-P grep --open=sh x",
            "grep --textc x",
            "diff --ext-dif",
            "diff --ext-diff",
            "log --textconv",
            "diff --output=x",
            "diff --out=x",
            "log --show-signature",
            "-c core.pager=sh log",
            "--config-env=a=b log",
            "--exec-path=/tmp log",
            "--git-dir=/x log",
            "--work-tree=x log",
            "--help",
            "help log",
            "-p log",
            "log --help",
            "--version status",
            "commit -m x",
            "push",
            "config core.pager sh",
            "branch newname",
            "branch -d old",
            "branch -m a b",
            "tag v9",
            "-C .. status",
            "-C /tmp status",
            "log -- ../x",
            "statusx",
            "",
        ] {
            assert!(run(bad).is_err(), "{bad}: {:?}", run(bad));
        }
    }

    #[test]
    fn the_servers_options_come_after_the_callers() {
        let cmd = run("-P log -p HEAD -- src").unwrap();
        let argv = cmd.argv();
        let log = argv.iter().position(|a| a == "log").unwrap();
        assert_eq!(argv[1], "-P");
        assert!(
            argv[..log]
                .windows(2)
                .any(|w| w == ["-c", "core.fsmonitor=false"])
        );
        assert_eq!(
            &argv[log..],
            [
                "log",
                "-p",
                "HEAD",
                "--no-ext-diff",
                "--no-textconv",
                "--ignore-submodules=all",
                "--",
                "src"
            ]
        );
        let grep = run("grep foo").unwrap().argv();
        let at = grep.iter().position(|a| a == "grep").unwrap();
        assert_eq!(&grep[at..], ["grep", "--no-textconv", "foo"]);
        assert_eq!(run("--version").unwrap().argv(), ["git", "--version"]);
    }

    #[test]
    fn user_allowed_subcommands_get_path_checks_only() {
        let ok = check(&words("commit -m msg"), &Lexical, &["commit".into()]);
        assert!(ok.is_ok());
        let bad = check(&words("commit ../x"), &Lexical, &["commit".into()]);
        assert!(bad.is_err());
    }

    /// `git grep` stops reading options at its pattern (git dies on a later
    /// word that starts with `-`); such a word is an operand, a path.
    #[test]
    fn git_grep_reads_no_option_after_its_pattern() {
        let args = words("-n foo --cached -O/../x");
        let parsed = options::parse(&GREP, &args).unwrap();
        assert_eq!(parsed.options.len(), 1);
        assert_eq!(parsed.operands, ["foo", "--cached", "-O/../x"]);
        let e = run("grep foo -O/../x").unwrap_err();
        assert!(e.reason.contains("outside"), "{e:?}");
        assert!(run("grep -e foo -- src").is_ok());
    }

    /// `git config` stops reading options at its first operand: in `git
    /// config core.hooksPath --get` the value is `--get`, which is set.
    #[test]
    fn git_config_reads_a_value_that_looks_like_an_option_as_the_value() {
        let config = |line: &str| check(&words(line), &Lexical, &["config".into()]);
        for bad in [
            "config core.hooksPath --get",
            "config core.fsmonitor --list",
            "config set core.hooksPath --get",
            "config set --all core.hooksPath x",
            "config set -- core.hooksPath x",
            "config -- core.hooksPath x",
        ] {
            assert!(config(bad).is_err(), "{bad}");
        }
        for ok in [
            "config --get core.hooksPath",
            "config user.name --unset",
            "config set -- user.name x",
            "config --unset core.hooksPath",
        ] {
            assert!(config(ok).is_ok(), "{ok}: {:?}", config(ok));
        }
    }

    #[test]
    fn deny_matching_sees_through_global_options() {
        let argv = words("git -P -C src --no-pager log -n 1");
        assert_eq!(without_globals(&argv), ["git", "log", "-n", "1"]);
    }

    #[test]
    fn configuration_keys_that_name_programs_are_hazards() {
        for (key, value) in [
            ("filter.x.clean", "sh"),
            ("FILTER.x.Smudge", "sh"),
            ("diff.x.textconv", "sh"),
            ("diff.external", "sh"),
            ("core.pager", "less"),
            ("core.fsmonitor", "sh"),
            ("core.fsmonitor", "true"),
            ("core.hooksPath", "h"),
            ("core.sshCommand", "ssh"),
            ("man.viewer", "x"),
            ("man.x.cmd", "x"),
            ("gpg.ssh.program", "x"),
            ("credential.helper", "store"),
            ("include.path", "x"),
            ("includeIf.gitdir:/x.path", "y"),
            ("pager.log", "sh"),
            ("core.bare", "true"),
            ("uploadpack.packObjectsHook", "x"),
            ("gpg.ssh.defaultKeyCommand", "sh -c x"),
            ("sequence.editor", "x"),
            ("core.hooksPath", "x"),
            ("alias.co", "!sh"),
            ("alias.st", "status"),
            ("protocol.ext.allow", "always"),
            ("protocol.file.allow", "user"),
            ("url.ext::sh.insteadOf", "https://"),
            ("extensions.partialClone", "origin"),
            ("remote.origin.promisor", "true"),
            ("remote.origin.url", "ext::sh -c x"),
            ("remote.origin.pushurl", "fd::3"),
            ("remote.origin.vcs", "x"),
            ("blame.ignoreRevsFile", "/etc/passwd"),
            ("mailmap.file", "/etc/passwd"),
            ("core.excludesFile", "/x"),
            ("gpg.ssh.allowedSignersFile", "/x"),
        ] {
            assert!(config_key_hazard(key, value).is_some(), "{key}");
        }
        for (key, value) in [
            ("core.fsmonitor", "false"),
            ("core.bare", "false"),
            ("user.name", "x"),
            ("remote.origin.url", "x"),
            ("remote.origin.url", "https://example.com/r.git"),
            ("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"),
            ("branch.main.remote", "origin"),
            ("protocol.ext.allow", "never"),
            ("core.autocrlf", "input"),
            ("filter.lfs.required", "true"),
            ("color.ui", "auto"),
        ] {
            assert!(config_key_hazard(key, value).is_none(), "{key}");
        }
    }

    #[test]
    fn a_config_listing_is_read_entry_by_entry() {
        let listing =
            b"local\0file:.git/config\0core.bare\nfalse\0local\0file:.git/config\0filter.x.clean\ntouch y\0";
        let why = config_listing_hazard(listing).unwrap();
        assert!(
            why.contains("filter.x.clean") && why.contains(".git/config"),
            "{why}"
        );
        assert_eq!(
            config_listing_hazard(b"local\0file:.git/config\0user.name\nme\0"),
            None
        );
        assert_eq!(config_listing_hazard(b""), None);
    }
}
