//! git subcommands that write, for `--bash-allow "git commit"` and the like:
//! each with its allowlist of exact options, as for the read-only ones.
//!
//! A subcommand the user allows is governed all the same: options that run
//! a program (`fetch --upload-pack`, `rebase --exec`), set configuration
//! (`clone -c`), copy hooks in (`init --template`), sign (the signing
//! program comes from configuration), open an editor or ask at a terminal
//! (`add -p`) are not in the tables, so they are refused. A subcommand the
//! user allows that has no table here, nor a read-only one, does not run
//! (`git::check`).

use super::options::{
    Examples, FLAG, OPT_TEXT, Operands, OptionsEnd, PATH, Parsed, Program, RefusedRow, TEXT,
};
use crate::shell::refusal::{Refusal, refuse};

/// The writing subcommands rootbound has tables for.
pub const SUBCOMMANDS: &[&Program] = &[
    &ADD,
    &COMMIT,
    &CHECKOUT,
    &SWITCH,
    &RESTORE,
    &RESET,
    &STASH,
    &RM,
    &MV,
    &MERGE,
    &CHERRY_PICK,
    &REVERT,
    &REBASE,
    &APPLY,
    &CLEAN,
    &INIT,
    &FETCH,
    &PULL,
    &PUSH,
    &CLONE,
    &BRANCH,
    &TAG,
    &CONFIG,
];

const INTERACTIVE: &str = "asks at a terminal, which commands do not have";
const SIGNS: &str = "signs with a program named by configuration";
const EDITOR: &str = "opens an editor program";

/// The writing subcommands that leave the work tree's files and directories
/// as they are (they write the index, objects and refs): in one line, a git
/// command may follow these and read-only ones, and no other writing one.
pub const KEEPS_WORK_TREE: &[&str] = &["add", "commit", "fetch", "push", "branch", "tag"];
const STRATEGY: &str = "chooses a merge strategy, which is a program; the default is used";
const RUNS_PROGRAM: &str = "runs a program given on the command line";
const SUBMODULE_WORK: &str = "works in submodules, whose configuration is never checked";
const NAMES_FILE: &str = "reads a list of names from a file";

const MAKES_BARE: &str = "makes a bare repository, a layout rootbound does not run git in";
const SENDS_SERVER_OPTIONS: &str = "sends options to the other side's program";
const MOVES_REPOSITORY: &str =
    "puts the repository elsewhere; rootbound pins it inside the workspace";
const COPIES_TEMPLATE: &str = "copies hooks and configuration from a template";

pub const ADD: Program = Program {
    name: "add",
    options: &[
        ("-n", "--dry-run", FLAG),
        ("-v", "--verbose", FLAG),
        ("-f", "--force", FLAG),
        ("-u", "--update", FLAG),
        ("-A", "--all", FLAG),
        ("", "--no-all", FLAG),
        ("", "--ignore-removal", FLAG),
        ("", "--no-ignore-removal", FLAG),
        ("-N", "--intent-to-add", FLAG),
        ("", "--refresh", FLAG),
        ("", "--ignore-errors", FLAG),
        ("", "--ignore-missing", FLAG),
        ("", "--renormalize", FLAG),
        ("", "--chmod", TEXT),
        ("", "--sparse", FLAG),
    ],
    refused: &[
        ("-p", "--patch", INTERACTIVE),
        ("-i", "--interactive", INTERACTIVE),
        ("-e", "--edit", EDITOR),
        ("", "--pathspec-from-file", NAMES_FILE),
    ],
    examples: Examples {
        allowed: &["git add -A", "git add -u src", "git add --chmod=+x run.sh"],
        refused: &[
            "git add -p",
            "git add --pathspec-from-file=list",
            "git add ../x",
        ],
    },
    ..Program::BASE
};

pub const COMMIT: Program = Program {
    name: "commit",
    options: &[
        ("-a", "--all", FLAG),
        ("-m", "--message", TEXT),
        ("-F", "--file", PATH),
        ("-C", "--reuse-message", TEXT),
        ("", "--amend", FLAG),
        ("", "--no-edit", FLAG),
        ("", "--allow-empty", FLAG),
        ("", "--allow-empty-message", FLAG),
        ("-s", "--signoff", FLAG),
        ("", "--no-signoff", FLAG),
        ("-n", "--no-verify", FLAG),
        ("", "--author", TEXT),
        ("", "--date", TEXT),
        ("-q", "--quiet", FLAG),
        ("-v", "--verbose", FLAG),
        ("", "--dry-run", FLAG),
        ("", "--short", FLAG),
        ("", "--porcelain", FLAG),
        ("", "--long", FLAG),
        ("-z", "", FLAG),
        ("", "--fixup", TEXT),
        ("", "--squash", TEXT),
        ("", "--cleanup", TEXT),
        ("", "--trailer", TEXT),
        ("-o", "--only", FLAG),
        ("-i", "--include", FLAG),
        ("", "--reset-author", FLAG),
        ("", "--no-post-rewrite", FLAG),
        ("", "--status", FLAG),
        ("", "--no-status", FLAG),
        ("", "--no-gpg-sign", FLAG),
        ("-u", "--untracked-files", OPT_TEXT),
    ],
    refused: &[
        ("-S", "--gpg-sign", SIGNS),
        ("-e", "--edit", EDITOR),
        ("-c", "--reedit-message", EDITOR),
        ("-p", "--patch", INTERACTIVE),
        ("-t", "--template", "reads a template into an editor"),
        ("", "--pathspec-from-file", NAMES_FILE),
    ],
    examples: Examples {
        allowed: &["git commit -m msg", "git commit -a --amend --no-edit"],
        refused: &[
            "git commit -S -m msg",
            "git commit -e",
            "git commit -F /etc/passwd",
        ],
    },
    ..Program::BASE
};

pub const CHECKOUT: Program = Program {
    name: "checkout",
    options: &[
        ("-q", "--quiet", FLAG),
        ("-f", "--force", FLAG),
        ("-b", "", TEXT),
        ("-B", "", TEXT),
        ("", "--detach", FLAG),
        ("", "--orphan", TEXT),
        ("-t", "", FLAG),
        ("", "--track", OPT_TEXT),
        ("", "--no-track", FLAG),
        ("-m", "--merge", FLAG),
        ("", "--conflict", TEXT),
        ("", "--ours", FLAG),
        ("", "--theirs", FLAG),
        ("", "--progress", FLAG),
        ("", "--no-progress", FLAG),
        ("", "--no-overlay", FLAG),
        ("", "--overlay", FLAG),
        ("", "--ignore-other-worktrees", FLAG),
    ],
    refused: &[
        ("-p", "--patch", INTERACTIVE),
        ("", "--recurse-submodules", SUBMODULE_WORK),
        ("", "--pathspec-from-file", NAMES_FILE),
    ],
    examples: Examples {
        allowed: &["git checkout -b feature", "git checkout -- a.rs"],
        refused: &["git checkout -p", "git checkout --recurse-submodules main"],
    },
    ..Program::BASE
};

pub const SWITCH: Program = Program {
    name: "switch",
    options: &[
        ("-c", "--create", TEXT),
        ("-C", "--force-create", TEXT),
        ("-d", "--detach", FLAG),
        ("", "--guess", FLAG),
        ("", "--no-guess", FLAG),
        ("-f", "--force", FLAG),
        ("", "--discard-changes", FLAG),
        ("-m", "--merge", FLAG),
        ("", "--conflict", TEXT),
        ("-q", "--quiet", FLAG),
        ("", "--progress", FLAG),
        ("", "--no-progress", FLAG),
        ("-t", "", FLAG),
        ("", "--track", OPT_TEXT),
        ("", "--no-track", FLAG),
        ("", "--orphan", TEXT),
        ("", "--ignore-other-worktrees", FLAG),
    ],
    refused: &[("", "--recurse-submodules", SUBMODULE_WORK)],
    examples: Examples {
        allowed: &["git switch -c feature", "git switch --detach HEAD~1"],
        refused: &["git switch --recurse-submodules main"],
    },
    ..Program::BASE
};

pub const RESTORE: Program = Program {
    name: "restore",
    options: &[
        ("-s", "--source", TEXT),
        ("-S", "--staged", FLAG),
        ("-W", "--worktree", FLAG),
        ("", "--ours", FLAG),
        ("", "--theirs", FLAG),
        ("-m", "--merge", FLAG),
        ("", "--conflict", TEXT),
        ("-q", "--quiet", FLAG),
        ("", "--progress", FLAG),
        ("", "--no-progress", FLAG),
        ("", "--ignore-unmerged", FLAG),
        ("", "--overlay", FLAG),
        ("", "--no-overlay", FLAG),
    ],
    refused: &[
        ("-p", "--patch", INTERACTIVE),
        ("", "--recurse-submodules", SUBMODULE_WORK),
        ("", "--pathspec-from-file", NAMES_FILE),
    ],
    examples: Examples {
        allowed: &["git restore --staged a.rs", "git restore -s HEAD~1 a.rs"],
        refused: &["git restore -p a.rs"],
    },
    ..Program::BASE
};

pub const RESET: Program = Program {
    name: "reset",
    options: &[
        ("", "--soft", FLAG),
        ("", "--mixed", FLAG),
        ("", "--hard", FLAG),
        ("", "--merge", FLAG),
        ("", "--keep", FLAG),
        ("-q", "--quiet", FLAG),
        ("", "--no-refresh", FLAG),
        ("", "--refresh", FLAG),
        ("-N", "--intent-to-add", FLAG),
    ],
    refused: &[
        ("-p", "--patch", INTERACTIVE),
        ("", "--recurse-submodules", SUBMODULE_WORK),
        ("", "--pathspec-from-file", NAMES_FILE),
    ],
    examples: Examples {
        allowed: &["git reset --hard HEAD~1", "git reset -q a.rs"],
        refused: &["git reset --patch"],
    },
    ..Program::BASE
};

pub const STASH: Program = Program {
    name: "stash",
    options: &[
        ("-m", "--message", TEXT),
        ("-u", "--include-untracked", FLAG),
        ("", "--no-include-untracked", FLAG),
        ("-a", "--all", FLAG),
        ("-k", "--keep-index", FLAG),
        ("", "--no-keep-index", FLAG),
        ("-S", "--staged", FLAG),
        ("-q", "--quiet", FLAG),
        ("", "--index", FLAG),
        ("", "--stat", FLAG),
        ("", "--name-only", FLAG),
    ],
    refused: &[
        ("-p", "--patch", INTERACTIVE),
        ("", "--pathspec-from-file", NAMES_FILE),
    ],
    examples: Examples {
        allowed: &["git stash -u", "git stash push --keep-index -m wip"],
        refused: &["git stash -p"],
    },
    ..Program::BASE
};

pub const RM: Program = Program {
    name: "rm",
    options: &[
        ("", "--cached", FLAG),
        ("-f", "--force", FLAG),
        ("-r", "", FLAG),
        ("-n", "--dry-run", FLAG),
        ("-q", "--quiet", FLAG),
        ("", "--ignore-unmatch", FLAG),
        ("", "--sparse", FLAG),
    ],
    refused: &[("", "--pathspec-from-file", NAMES_FILE)],
    examples: Examples {
        allowed: &["git rm --cached a.rs", "git rm -r -n src"],
        refused: &["git rm --pathspec-from-file=list"],
    },
    ..Program::BASE
};

pub const MV: Program = Program {
    name: "mv",
    options: &[
        ("-f", "--force", FLAG),
        ("-k", "", FLAG),
        ("-n", "--dry-run", FLAG),
        ("-v", "--verbose", FLAG),
    ],
    examples: Examples {
        allowed: &["git mv a.rs b.rs", "git mv -k a.rs src"],
        refused: &["git mv a.rs ../b.rs"],
    },
    ..Program::BASE
};

/// Options shared by the commands that make a merge-like commit.
const MERGE_LIKE_REFUSED: &[RefusedRow] = &[
    ("-S", "--gpg-sign", SIGNS),
    ("-e", "--edit", EDITOR),
    ("-s", "--strategy", STRATEGY),
];

/// The same for cherry-pick and revert, where `-s` is `--signoff`.
const PICK_REFUSED: &[RefusedRow] = &[
    ("-S", "--gpg-sign", SIGNS),
    ("-e", "--edit", EDITOR),
    ("", "--strategy", STRATEGY),
];

pub const MERGE: Program = Program {
    name: "merge",
    options: &[
        ("", "--no-ff", FLAG),
        ("", "--ff", FLAG),
        ("", "--ff-only", FLAG),
        ("", "--squash", FLAG),
        ("", "--no-squash", FLAG),
        ("", "--commit", FLAG),
        ("", "--no-commit", FLAG),
        ("-m", "", TEXT),
        ("-F", "--file", PATH),
        ("", "--no-edit", FLAG),
        ("", "--abort", FLAG),
        ("", "--continue", FLAG),
        ("", "--quit", FLAG),
        ("-X", "--strategy-option", TEXT),
        ("", "--stat", FLAG),
        ("-n", "--no-stat", FLAG),
        ("", "--log", OPT_TEXT),
        ("", "--no-log", FLAG),
        ("-q", "--quiet", FLAG),
        ("-v", "--verbose", FLAG),
        ("", "--allow-unrelated-histories", FLAG),
        ("", "--no-verify", FLAG),
        ("", "--signoff", FLAG),
        ("", "--no-signoff", FLAG),
        ("", "--no-gpg-sign", FLAG),
        ("", "--autostash", FLAG),
        ("", "--no-autostash", FLAG),
    ],
    refused: MERGE_LIKE_REFUSED,
    examples: Examples {
        allowed: &["git merge --no-ff feature", "git merge --abort"],
        refused: &["git merge -s ours feature", "git merge -S feature"],
    },
    ..Program::BASE
};

pub const CHERRY_PICK: Program = Program {
    name: "cherry-pick",
    options: &[
        ("-n", "--no-commit", FLAG),
        ("-x", "", FLAG),
        ("-s", "--signoff", FLAG),
        ("-m", "--mainline", TEXT),
        ("", "--ff", FLAG),
        ("", "--continue", FLAG),
        ("", "--abort", FLAG),
        ("", "--quit", FLAG),
        ("", "--skip", FLAG),
        ("", "--allow-empty", FLAG),
        ("", "--allow-empty-message", FLAG),
        ("", "--keep-redundant-commits", FLAG),
        ("-X", "--strategy-option", TEXT),
        ("", "--no-gpg-sign", FLAG),
    ],
    refused: PICK_REFUSED,
    examples: Examples {
        allowed: &["git cherry-pick -x abc123", "git cherry-pick --continue"],
        refused: &["git cherry-pick --strategy=ours abc123"],
    },
    ..Program::BASE
};

pub const REVERT: Program = Program {
    name: "revert",
    options: &[
        ("", "--no-edit", FLAG),
        ("-n", "--no-commit", FLAG),
        ("-m", "--mainline", TEXT),
        ("-s", "--signoff", FLAG),
        ("", "--continue", FLAG),
        ("", "--abort", FLAG),
        ("", "--quit", FLAG),
        ("", "--skip", FLAG),
        ("-X", "--strategy-option", TEXT),
        ("", "--no-gpg-sign", FLAG),
    ],
    refused: PICK_REFUSED,
    examples: Examples {
        allowed: &["git revert --no-edit HEAD"],
        refused: &["git revert -e HEAD"],
    },
    ..Program::BASE
};

pub const REBASE: Program = Program {
    name: "rebase",
    options: &[
        ("", "--continue", FLAG),
        ("", "--abort", FLAG),
        ("", "--skip", FLAG),
        ("", "--quit", FLAG),
        ("", "--onto", TEXT),
        ("", "--keep-base", FLAG),
        ("", "--root", FLAG),
        ("", "--autostash", FLAG),
        ("", "--no-autostash", FLAG),
        ("", "--autosquash", FLAG),
        ("", "--no-autosquash", FLAG),
        ("-q", "--quiet", FLAG),
        ("-v", "--verbose", FLAG),
        ("", "--stat", FLAG),
        ("-n", "--no-stat", FLAG),
        ("", "--no-verify", FLAG),
        ("", "--signoff", FLAG),
        ("", "--committer-date-is-author-date", FLAG),
        ("", "--ignore-date", FLAG),
        ("", "--reset-author-date", FLAG),
        ("", "--update-refs", FLAG),
        ("", "--no-update-refs", FLAG),
        ("-X", "--strategy-option", TEXT),
        ("", "--no-gpg-sign", FLAG),
        ("", "--empty", TEXT),
    ],
    refused: &[
        ("-x", "--exec", RUNS_PROGRAM),
        ("-i", "--interactive", INTERACTIVE),
        ("", "--edit-todo", EDITOR),
        ("-S", "--gpg-sign", SIGNS),
        ("-s", "--strategy", STRATEGY),
    ],
    examples: Examples {
        allowed: &["git rebase --onto main feature", "git rebase --continue"],
        refused: &["git rebase -i main", "git rebase --exec=make main"],
    },
    ..Program::BASE
};

pub const APPLY: Program = Program {
    name: "apply",
    options: &[
        ("", "--check", FLAG),
        ("", "--stat", FLAG),
        ("", "--numstat", FLAG),
        ("", "--summary", FLAG),
        ("", "--index", FLAG),
        ("", "--cached", FLAG),
        ("-R", "--reverse", FLAG),
        ("-3", "--3way", FLAG),
        ("", "--whitespace", TEXT),
        ("-p", "", OPT_TEXT),
        ("-C", "", OPT_TEXT),
        ("-v", "--verbose", FLAG),
        ("-q", "--quiet", FLAG),
        ("", "--unidiff-zero", FLAG),
        ("", "--reject", FLAG),
        ("", "--recount", FLAG),
        ("", "--allow-empty", FLAG),
        ("", "--ignore-space-change", FLAG),
        ("", "--ignore-whitespace", FLAG),
    ],
    refused: &[(
        "",
        "--directory",
        "moves where the patch applies; give paths inside the workspace",
    )],
    examples: Examples {
        allowed: &["git apply --check fix.patch", "git apply -R fix.patch"],
        refused: &["git apply --directory=x fix.patch"],
    },
    ..Program::BASE
};

pub const CLEAN: Program = Program {
    name: "clean",
    options: &[
        ("-n", "--dry-run", FLAG),
        ("-f", "--force", FLAG),
        ("-d", "", FLAG),
        ("-x", "", FLAG),
        ("-X", "", FLAG),
        ("-q", "--quiet", FLAG),
        ("-e", "--exclude", TEXT),
    ],
    refused: &[("-i", "--interactive", INTERACTIVE)],
    examples: Examples {
        allowed: &["git clean -n -d", "git clean -fdx"],
        refused: &["git clean -i"],
    },
    ..Program::BASE
};

pub const INIT: Program = Program {
    name: "init",
    options: &[
        ("-q", "--quiet", FLAG),
        ("-b", "--initial-branch", TEXT),
        ("", "--object-format", TEXT),
    ],
    refused: &[
        ("", "--template", COPIES_TEMPLATE),
        ("", "--separate-git-dir", MOVES_REPOSITORY),
        ("", "--bare", MAKES_BARE),
        ("", "--shared", "changes who may write the repository"),
    ],
    examples: Examples {
        allowed: &["git init -q", "git init -b main sub"],
        refused: &["git init --template=t", "git init --bare"],
    },
    ..Program::BASE
};

/// A remote's own programs, named on the command line.
const REMOTE_PROGRAM: &str = "names the program git runs for the other side";

pub const FETCH: Program = Program {
    name: "fetch",
    options: &[
        ("", "--all", FLAG),
        ("-p", "--prune", FLAG),
        ("-P", "--prune-tags", FLAG),
        ("-t", "--tags", FLAG),
        ("-n", "--no-tags", FLAG),
        ("-q", "--quiet", FLAG),
        ("-v", "--verbose", FLAG),
        ("", "--depth", TEXT),
        ("", "--deepen", TEXT),
        ("", "--shallow-since", TEXT),
        ("", "--unshallow", FLAG),
        ("", "--dry-run", FLAG),
        ("-f", "--force", FLAG),
        ("", "--no-write-fetch-head", FLAG),
        ("", "--progress", FLAG),
        ("", "--no-progress", FLAG),
    ],
    refused: &[
        ("", "--upload-pack", REMOTE_PROGRAM),
        ("", "--recurse-submodules", SUBMODULE_WORK),
        ("-o", "--server-option", SENDS_SERVER_OPTIONS),
    ],
    examples: Examples {
        allowed: &["git fetch --prune", "git fetch --depth 1 origin"],
        refused: &["git fetch --upload-pack=sh origin"],
    },
    ..Program::BASE
};

pub const PULL: Program = Program {
    name: "pull",
    options: &[
        ("-r", "", FLAG),
        ("", "--rebase", OPT_TEXT),
        ("", "--no-rebase", FLAG),
        ("", "--ff", FLAG),
        ("", "--no-ff", FLAG),
        ("", "--ff-only", FLAG),
        ("", "--squash", FLAG),
        ("", "--no-commit", FLAG),
        ("", "--no-edit", FLAG),
        ("-q", "--quiet", FLAG),
        ("-v", "--verbose", FLAG),
        ("", "--autostash", FLAG),
        ("", "--no-autostash", FLAG),
        ("", "--tags", FLAG),
        ("", "--no-tags", FLAG),
        ("", "--depth", TEXT),
        ("", "--allow-unrelated-histories", FLAG),
        ("", "--no-verify", FLAG),
        ("", "--no-gpg-sign", FLAG),
    ],
    refused: &[
        ("", "--upload-pack", REMOTE_PROGRAM),
        ("", "--recurse-submodules", SUBMODULE_WORK),
        ("-S", "--gpg-sign", SIGNS),
        ("-e", "--edit", EDITOR),
        ("-s", "--strategy", STRATEGY),
    ],
    examples: Examples {
        allowed: &["git pull --ff-only", "git pull --rebase=false origin"],
        refused: &["git pull -s ours"],
    },
    ..Program::BASE
};

pub const PUSH: Program = Program {
    name: "push",
    options: &[
        ("-u", "--set-upstream", FLAG),
        ("", "--tags", FLAG),
        ("", "--follow-tags", FLAG),
        ("-f", "--force", FLAG),
        ("", "--force-with-lease", OPT_TEXT),
        ("", "--force-if-includes", FLAG),
        ("-n", "--dry-run", FLAG),
        ("-q", "--quiet", FLAG),
        ("-v", "--verbose", FLAG),
        ("-d", "--delete", FLAG),
        ("", "--all", FLAG),
        ("", "--no-verify", FLAG),
        ("", "--porcelain", FLAG),
        ("", "--atomic", FLAG),
    ],
    refused: &[
        ("", "--receive-pack", REMOTE_PROGRAM),
        ("", "--exec", REMOTE_PROGRAM),
        ("", "--recurse-submodules", SUBMODULE_WORK),
        ("-o", "--push-option", SENDS_SERVER_OPTIONS),
        ("", "--signed", SIGNS),
    ],
    examples: Examples {
        allowed: &["git push -u origin main", "git push --force-with-lease"],
        refused: &[
            "git push --receive-pack=sh origin",
            "git push --signed origin",
        ],
    },
    ..Program::BASE
};

pub const CLONE: Program = Program {
    name: "clone",
    options: &[
        ("", "--depth", TEXT),
        ("-b", "--branch", TEXT),
        ("", "--single-branch", FLAG),
        ("", "--no-single-branch", FLAG),
        ("-n", "--no-checkout", FLAG),
        ("-q", "--quiet", FLAG),
        ("-v", "--verbose", FLAG),
        ("-o", "--origin", TEXT),
        ("", "--no-tags", FLAG),
        ("", "--shallow-since", TEXT),
        ("", "--progress", FLAG),
        ("", "--no-hardlinks", FLAG),
    ],
    refused: &[
        (
            "-c",
            "--config",
            "sets configuration, which can make git run programs",
        ),
        ("-u", "--upload-pack", REMOTE_PROGRAM),
        ("", "--template", COPIES_TEMPLATE),
        ("", "--recurse-submodules", SUBMODULE_WORK),
        ("", "--separate-git-dir", MOVES_REPOSITORY),
        ("", "--bare", MAKES_BARE),
        ("", "--mirror", MAKES_BARE),
        ("", "--reference", "borrows objects from another repository"),
        (
            "",
            "--filter",
            "makes a partial clone, which fetches objects later through its transport",
        ),
    ],
    examples: Examples {
        allowed: &["git clone --depth 1 repo dest"],
        refused: &[
            "git clone -c core.hooksPath=x repo dest",
            "git clone --bare repo dest",
        ],
    },
    ..Program::BASE
};

pub const BRANCH: Program = Program {
    name: "branch",
    options: &[
        ("-d", "--delete", FLAG),
        ("-D", "", FLAG),
        ("-m", "--move", FLAG),
        ("-M", "", FLAG),
        ("-c", "--copy", FLAG),
        ("-C", "", FLAG),
        ("-f", "--force", FLAG),
        ("-t", "", FLAG),
        ("", "--track", OPT_TEXT),
        ("", "--no-track", FLAG),
        ("-u", "--set-upstream-to", TEXT),
        ("", "--unset-upstream", FLAG),
        ("-a", "--all", FLAG),
        ("-r", "--remotes", FLAG),
        ("-l", "--list", FLAG),
        ("-v", "--verbose", FLAG),
        ("-vv", "", FLAG),
        ("-q", "--quiet", FLAG),
        ("", "--show-current", FLAG),
        ("", "--contains", TEXT),
        ("", "--no-contains", TEXT),
        ("", "--merged", TEXT),
        ("", "--no-merged", TEXT),
        ("", "--sort", TEXT),
        ("", "--format", TEXT),
    ],
    refused: &[("", "--edit-description", EDITOR)],
    examples: Examples {
        allowed: &[
            "git branch feature",
            "git branch -d old",
            "git branch -m old new",
        ],
        refused: &["git branch --edit-description"],
    },
    ..Program::BASE
};

pub const TAG: Program = Program {
    name: "tag",
    options: &[
        ("-a", "--annotate", FLAG),
        ("-m", "--message", TEXT),
        ("-F", "--file", PATH),
        ("-d", "--delete", FLAG),
        ("-f", "--force", FLAG),
        ("-l", "--list", FLAG),
        ("-n", "", OPT_TEXT),
        ("", "--contains", TEXT),
        ("", "--no-contains", TEXT),
        ("", "--merged", TEXT),
        ("", "--no-merged", TEXT),
        ("", "--points-at", TEXT),
        ("", "--sort", TEXT),
        ("", "--format", TEXT),
        ("", "--no-sign", FLAG),
    ],
    refused: &[
        ("-s", "--sign", SIGNS),
        ("-u", "--local-user", SIGNS),
        ("-v", "--verify", SIGNS),
        ("-e", "--edit", EDITOR),
    ],
    examples: Examples {
        allowed: &["git tag v1.0", "git tag -a v1.0 -m release"],
        refused: &["git tag -s v1.0", "git tag -u key v1.0"],
    },
    ..Program::BASE
};

/// `git config KEY VALUE` (with `--add` or `--replace-all` too) may not set
/// a key the configuration check refuses: the next line that runs git here
/// would be refused, and the user's own git, outside any sandbox, would run
/// what it names (`core.fsmonitor`, `core.hooksPath`). Nor may it move the
/// work tree or change remotes (a remote that is a path is a repository
/// whose own configuration `git push` would run).
fn config_setting_rules(parsed: &Parsed<'_>) -> Result<(), Refusal> {
    const NOT_SETTING: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "-l",
        "--list",
        "--unset",
        "--unset-all",
    ];
    if NOT_SETTING.iter().any(|option| parsed.has(option)) {
        return Ok(());
    }
    // git 2.46 and later also take a verb first (`git config set KEY
    // VALUE`); the verbs that set are read as such, renaming or removing a
    // whole section is refused (what it makes depends on the keys already
    // there), and the ones that only read or unset pass. The table stops at
    // the first operand, as git does, so the words after a verb are all
    // operands here; `git config set` reads its own options before its key
    // (`--` ends them), and rootbound has no table for those.
    let operands = &parsed.operands;
    let setting = match operands.first().copied() {
        Some("set") => match &operands[1..] {
            ["--", rest @ ..] => rest,
            [option, ..] if option.starts_with('-') => {
                return refuse(
                    *option,
                    "options of `git config set` are not accepted; give the key and value alone",
                );
            }
            rest => rest,
        },
        Some("get" | "list" | "unset") => return Ok(()),
        Some(verb @ ("rename-section" | "remove-section" | "edit")) => {
            return refuse(
                format!("git config {verb}"),
                "it changes whole sections (or opens an editor); set keys one by one",
            );
        }
        _ => &operands[..],
    };
    let [key, value, ..] = setting else {
        return Ok(());
    };
    if key.eq_ignore_ascii_case("core.worktree") {
        return refuse(
            format!("git config {key}"),
            "it moves the work tree your own git uses",
        );
    }
    let lower = key.to_ascii_lowercase();
    let section = lower.split('.').next().unwrap_or("");
    let name = lower.rsplit('.').next().unwrap_or("");
    if section == "remote" || (section == "branch" && name.ends_with("remote")) {
        return refuse(
            format!("git config {key}"),
            "it changes where git fetches and pushes; set remotes up yourself",
        );
    }
    match super::git_config::config_key_hazard(key, value) {
        Some(why) => refuse(
            format!("git config {key}"),
            format!("the key {why}; rootbound refuses to run git where it is set"),
        ),
        None => Ok(()),
    }
}

/// `git config` in the repository's own file: reading and setting keys,
/// never one the configuration check refuses ([`config_setting_rules`]); a
/// line that runs `git config` beside other git commands runs with nothing
/// writable.
pub const CONFIG: Program = Program {
    name: "config",
    options: &[
        ("", "--get", FLAG),
        ("", "--get-all", FLAG),
        ("", "--get-regexp", FLAG),
        ("-l", "--list", FLAG),
        ("", "--unset", FLAG),
        ("", "--unset-all", FLAG),
        ("", "--add", FLAG),
        ("", "--replace-all", FLAG),
        ("", "--local", FLAG),
        ("", "--type", TEXT),
        ("", "--bool", FLAG),
        ("", "--int", FLAG),
        ("-z", "--null", FLAG),
        ("", "--show-origin", FLAG),
        ("", "--show-scope", FLAG),
        ("", "--name-only", FLAG),
        ("", "--default", TEXT),
    ],
    refused: &[
        (
            "",
            "--global",
            "changes the user's configuration, which rootbound keeps out",
        ),
        ("", "--system", "changes the system's configuration"),
        ("-f", "--file", "reads or writes another configuration file"),
        ("", "--blob", "reads configuration from an object"),
        ("-e", "--edit", EDITOR),
        ("", "--includes", "reads included files"),
        ("", "--worktree", "writes the worktree's configuration file"),
    ],
    operands: Operands::Texts,
    // `PARSE_OPT_STOP_AT_NON_OPTION`: `git config core.x --get` sets
    // `core.x` to `--get`.
    options_end: OptionsEnd::FirstOperand,
    rules: Some(config_setting_rules),
    examples: Examples {
        allowed: &[
            "git config user.name me",
            "git config --get core.autocrlf",
            "git config --unset core.hooksPath",
        ],
        refused: &[
            "git config core.hooksPath hooks",
            "git config --global user.name me",
            "git config core.hooksPath --get",
        ],
    },
    ..Program::BASE
};
