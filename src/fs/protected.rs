//! What no call may leave behind in the roots: files that a program outside
//! the sandbox later runs or obeys with the user's full rights.
//!
//! The sandbox confines a command while it runs. It does not confine what
//! the command leaves for others: a `.git/hooks/pre-commit` runs at the
//! user's next `git commit`, a `core.fsmonitor` in a repository's config at
//! the next `git status` (editors run it in the background), and an MCP
//! server in `.gemini/settings.json` when Gemini CLI next starts there. So
//! these are protected, in every repository and wherever they sit in the
//! roots:
//!
//! - **git directories**, found by git's own rule and by content, never by
//!   the name `.git` alone: a directory holding a valid `HEAD` with
//!   `objects/` and `refs/`, or with a `commondir` file (a worktree's). In
//!   each: `config`, `config.worktree`, `hooks/`, `info/`, `commondir`,
//!   `gitdir`, and what its config makes configuration or hooks
//!   (`core.hooksPath`, `include.path`, `includeIf.*.path`) where that lies
//!   in the roots. The git directory itself, and every `.git` entry, may not
//!   be removed, renamed or replaced. Objects, refs, the index and logs stay
//!   writable, so git keeps working.
//! - **new repositories**: a `.git` (file or directory) or a git directory
//!   that was not there before the call.
//! - **the settings of agents, editors and git-hook managers**
//!   ([`SETTINGS`]), which run programs they name.
//!
//! How the sandbox uses this: before a writable call, [`Survey::take`] walks
//! the roots and lists what exists; the call's mount namespace binds each
//! protected entry read-only over itself and each git directory and `.git`
//! entry onto itself (a mount point cannot be renamed, removed or replaced).
//! After the call, [`Survey::check_after`] walks again: whatever protected
//! thing is new is moved aside (renamed with [`QUARANTINE_SUFFIX`], never
//! deleted, so nothing anyone wrote is lost), and where the kernel gave no
//! mount namespace, changed protected files are put back from copies taken
//! before. The write tools ask [`write_refusal`] before they write.
//!
//! `--unprotect PATH` lifts all of this at and below PATH.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

#[cfg(unix)]
mod survey;
#[cfg(unix)]
pub use survey::Survey;

/// Project settings that agents, editors and git-hook managers read and
/// that name programs to run, with why each is protected. Matched by the
/// entry's exact name anywhere in the roots.
pub const SETTINGS: &[(&str, &str)] = &[
    (
        ".env",
        "Gemini CLI loads it when it starts there, and what it sets (NODE_OPTIONS, say) \
         reaches every program it starts",
    ),
    (
        ".gemini",
        "Gemini CLI starts the MCP servers and runs the hooks its settings name",
    ),
    (
        ".vscode",
        "VS Code runs tasks and uses the programs its settings name",
    ),
    (
        ".idea",
        "JetBrains IDEs run the tools and configurations it names",
    ),
    (
        ".claude",
        "Claude Code runs the hooks and MCP servers its settings name",
    ),
    (
        ".cursor",
        "Cursor starts the MCP servers and hooks it names",
    ),
    (".codex", "Codex reads its configuration from it"),
    (".mcp.json", "MCP clients start the servers it names"),
    (
        ".zed",
        "Zed runs the tasks and language servers its settings name",
    ),
    (".helix", "Helix starts the language servers it names"),
    (
        ".devcontainer",
        "editors build and run the container it describes",
    ),
    (".continue", "Continue starts the MCP servers it names"),
    (
        ".windsurf",
        "Windsurf runs the workflows and hooks it names",
    ),
    (".roo", "Roo Code starts the MCP servers it names"),
    (".kiro", "Kiro runs the hooks and MCP servers it names"),
    (".amazonq", "Amazon Q starts the MCP servers it names"),
    (".nvim.lua", "Neovim runs it on opening the folder (exrc)"),
    (".nvimrc", "Neovim runs it on opening the folder (exrc)"),
    (
        ".exrc",
        "Vim and Neovim run it on opening the folder (exrc)",
    ),
    (
        ".pre-commit-config.yaml",
        "pre-commit runs the commands it names at the user's git commit",
    ),
    (
        "lefthook.yml",
        "lefthook runs the commands it names at the user's git commit",
    ),
    (
        ".lefthook.yml",
        "lefthook runs the commands it names at the user's git commit",
    ),
    (
        "lefthook.yaml",
        "lefthook runs the commands it names at the user's git commit",
    ),
    (
        ".lefthook.yaml",
        "lefthook runs the commands it names at the user's git commit",
    ),
    (
        "lefthook.json",
        "lefthook runs the commands it names at the user's git commit",
    ),
    (
        "lefthook.toml",
        "lefthook runs the commands it names at the user's git commit",
    ),
    (
        "lefthook-local.yml",
        "lefthook runs the commands it names at the user's git commit",
    ),
    (
        ".lefthook-local.yml",
        "lefthook runs the commands it names at the user's git commit",
    ),
    (
        ".husky",
        "husky's hooks run at the user's git commit, from here whatever core.hooksPath says",
    ),
    (
        ".devcontainer.json",
        "editors build and run the container it describes",
    ),
    (".vimrc", "Vim runs it on opening the folder (exrc)"),
    ("_vimrc", "Vim runs it on opening the folder (exrc)"),
    (".gvimrc", "gVim runs it on opening the folder (exrc)"),
    (
        ".qwen",
        "Qwen Code starts the MCP servers and hooks it names",
    ),
    (
        ".opencode",
        "opencode starts the MCP servers and runs the commands it names",
    ),
    ("opencode.json", "opencode starts the MCP servers it names"),
    (".crush", "Crush starts the MCP servers it names"),
    (
        ".aider.conf.yml",
        "aider runs the lint and test commands it names",
    ),
];

/// Names that end so are settings too: VS Code opens a `*.code-workspace`
/// and runs the tasks it names.
const SETTINGS_SUFFIXES: &[(&str, &str)] = &[(
    ".code-workspace",
    "VS Code runs the tasks and uses the programs a workspace file names",
)];

/// Renamed entries end with this: git, editors and agents ignore it.
#[cfg_attr(not(unix), allow(dead_code))]
pub const QUARANTINE_SUFFIX: &str = ".rootbound-quarantine";

/// Paths at and below which nothing is protected (`--unprotect`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unprotected(pub Vec<PathBuf>);

impl Unprotected {
    pub fn covers(&self, path: &Path) -> bool {
        self.0.iter().any(|p| path.starts_with(p))
    }
}

/// Whether the file systems here take names in any letter case for the
/// same file: macOS (APFS and HFS+ by default) and Windows (NTFS) do, so
/// `.GEMINI/settings.json` there is what Gemini CLI reads. Linux's do not.
const NAMES_IGNORE_CASE: bool = cfg!(any(target_os = "macos", windows));

/// Whether entry `name` is `protected` as this platform's file systems
/// compare names.
pub(super) fn is_named(name: &OsStr, protected: &str) -> bool {
    bytes_named(name.as_encoded_bytes(), protected)
}

fn bytes_named(name: &[u8], protected: &str) -> bool {
    if NAMES_IGNORE_CASE {
        name.eq_ignore_ascii_case(protected.as_bytes())
    } else {
        name == protected.as_bytes()
    }
}

/// Why an entry is protected, for messages.
pub fn settings_reason(name: &OsStr) -> Option<&'static str> {
    SETTINGS
        .iter()
        .find(|(n, _)| is_named(name, n))
        .or_else(|| {
            let name = name.as_encoded_bytes();
            SETTINGS_SUFFIXES.iter().find(|(suffix, _)| {
                name.len() > suffix.len() && bytes_named(&name[name.len() - suffix.len()..], suffix)
            })
        })
        .map(|(_, why)| *why)
}

/// Reads a small file without following a final link and without blocking
/// (a FIFO answers at once). None if it is not a readable regular file.
fn read_small(path: &Path, max: u64) -> Option<Vec<u8>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > max {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// Whether `dir` may be a git directory, given its entries: looser than
/// git, never stricter. Any `HEAD` counts, whatever it holds (git trims and
/// reads what it likes of it, so a check of its content can be fooled),
/// with `objects` and `refs` of any type (git follows links to them), or a
/// `commondir` (a worktree's); and every directory named `.git` is one.
fn is_git_dir(dir: &Path, entries: &HashMap<OsString, Kind>) -> bool {
    let present = |name: &str| entries.contains_key(OsStr::new(name));
    if dir.file_name().is_some_and(|name| is_named(name, ".git")) {
        return true;
    }
    present("HEAD") && ((present("objects") && present("refs")) || present("commondir"))
}

/// The paths a git config names as hooks or further configuration, as
/// written (`core.hooksPath`, `include.path`, `includeIf.<cond>.path`).
/// A plain reading of git's syntax: sections, keys, quoted values.
pub(super) fn config_paths(text: &str) -> Vec<(String, String)> {
    let mut section = String::new();
    let mut found = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix('[') {
            let Some(end) = rest.find(']') else { continue };
            let header = &rest[..end];
            let (name, sub) = match header.split_once(char::is_whitespace) {
                Some((name, sub)) => (name, sub.trim().trim_matches('"')),
                None => (header, ""),
            };
            section = if sub.is_empty() {
                name.to_ascii_lowercase()
            } else {
                format!("{}.{sub}", name.to_ascii_lowercase())
            };
            // `[core] hooksPath = x` on the header's line.
            let after = rest[end + 1..].trim();
            if after.is_empty() {
                continue;
            }
            push_setting(&section, after, &mut found);
            continue;
        }
        push_setting(&section, line, &mut found);
    }
    found
}

fn push_setting(section: &str, line: &str, found: &mut Vec<(String, String)>) {
    let Some((key, value)) = line.split_once('=') else {
        return;
    };
    let key = key.trim().to_ascii_lowercase();
    let value = value
        .split(['#', ';'])
        .next()
        .unwrap_or("")
        .trim()
        .trim_matches('"');
    let wanted = (section == "core" && key == "hookspath")
        || ((section == "include" || section.starts_with("includeif.")) && key == "path");
    if wanted && !value.is_empty() {
        found.push((format!("{section}.{key}"), value.to_string()));
    }
}

/// Where a config's path value leads: `core.hooksPath` relative to the
/// directory hooks run in (the work tree: the directory holding a `.git`
/// directory; a bare repository's own directory), an include relative to
/// the directory of the config file that names it (`config_dir`).
pub(super) fn config_target(git_dir: &Path, config_dir: &Path, key: &str, value: &str) -> PathBuf {
    let value = Path::new(value);
    if value.is_absolute() {
        return value.to_path_buf();
    }
    let base = if key == "core.hookspath" {
        if git_dir.file_name() == Some(OsStr::new(".git")) {
            git_dir.parent().unwrap_or(git_dir)
        } else {
            git_dir
        }
    } else {
        config_dir
    };
    let mut out = base.to_path_buf();
    for part in value.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::Normal(p) => out.push(p),
            _ => {}
        }
    }
    out
}

/// The git directory a `.git` file points to (`gitdir: <path>`, relative
/// to the file's directory), or a `commondir` file to (relative to its git
/// directory).
pub(super) fn pointed_dir(base: &Path, text: &[u8]) -> Option<PathBuf> {
    let text = std::str::from_utf8(text).ok()?.trim();
    let text = text.strip_prefix("gitdir:").unwrap_or(text).trim();
    if text.is_empty() {
        return None;
    }
    let mut out = if Path::new(text).is_absolute() {
        PathBuf::new()
    } else {
        base.to_path_buf()
    };
    for part in Path::new(text).components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// The type of a directory entry, as listed (links never followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    File,
    Dir,
    Link,
    Other,
}

#[cfg(unix)]
fn list(dir: &Path) -> io::Result<HashMap<OsString, Kind>> {
    let mut entries = HashMap::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = match entry.file_type() {
            Ok(t) if t.is_symlink() => Kind::Link,
            Ok(t) if t.is_dir() => Kind::Dir,
            Ok(t) if t.is_file() => Kind::File,
            _ => Kind::Other,
        };
        entries.insert(entry.file_name(), kind);
    }
    Ok(entries)
}

/// Why a write tool may not write `real` (a real path inside `root`), or
/// None. Refused: any component that is a `.git` or a protected setting,
/// anything inside a git directory, and a file that would make a directory
/// a git directory (`HEAD` beside `objects/` and `refs/`, or inside
/// them beside a `HEAD`).
pub fn write_refusal(root: &Path, real: &Path, unprotected: &Unprotected) -> Option<String> {
    if unprotected.covers(real) {
        return None;
    }
    let rel = real.strip_prefix(root).ok()?;
    for part in rel.components() {
        let name = part.as_os_str();
        if is_named(name, ".git") {
            return Some(
                ".git is git's own; git runs its hooks and obeys its config outside \
                         the sandbox"
                    .into(),
            );
        }
        if let Some(why) = settings_reason(name) {
            return Some(format!("{} is protected: {why}", name.to_string_lossy()));
        }
    }
    // Every directory from the root down to the target's parent.
    let mut dir = root.to_path_buf();
    let mut dirs = vec![dir.clone()];
    let parts: Vec<_> = rel.components().collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        dir.push(part);
        dirs.push(dir.clone());
    }
    for (k, dir) in dirs.iter().enumerate() {
        let Ok(entries) = probe(dir) else {
            // Missing: the write creates it, and the rest, fresh.
            let entries = HashMap::new();
            if would_be_git_dir(&entries, &parts[k..]) {
                return Some(new_repository_reason(dir));
            }
            continue;
        };
        if is_git_dir(dir, &entries) {
            return Some(format!(
                "{} is a git directory; git runs its hooks and obeys its config outside the \
                 sandbox",
                dir.display()
            ));
        }
        if would_be_git_dir(&entries, &parts[k..]) {
            return Some(new_repository_reason(dir));
        }
        if entries.contains_key(OsStr::new(".git"))
            && let Some(why) = named_by_config(dir, real)
        {
            return Some(why);
        }
    }
    None
}

/// Why `real` is refused as what the config of the repository whose work
/// tree is `work_tree` makes hooks or configuration (`core.hooksPath`,
/// `include.path`), in its git directory or its common directory.
fn named_by_config(work_tree: &Path, real: &Path) -> Option<String> {
    let dot_git = work_tree.join(".git");
    let git_dir = if dot_git.is_dir() {
        dot_git
    } else {
        pointed_dir(work_tree, &read_small(&dot_git, 4096)?)?
    };
    let common =
        read_small(&git_dir.join("commondir"), 4096).and_then(|text| pointed_dir(&git_dir, &text));
    for dir in std::iter::once(git_dir.clone()).chain(common) {
        let Some(bytes) = read_small(&dir.join("config"), 1 << 20) else {
            continue;
        };
        for (key, value) in config_paths(&String::from_utf8_lossy(&bytes)) {
            if real.starts_with(config_target(&git_dir, &dir, &key, &value)) {
                return Some(format!(
                    "the repository's {key} names it: git runs or obeys what is there outside \
                     the sandbox"
                ));
            }
        }
    }
    None
}

/// The type of `path` itself (a link is not followed), if it exists.
fn kind_of(path: &Path) -> Option<Kind> {
    let t = std::fs::symlink_metadata(path).ok()?.file_type();
    Some(if t.is_symlink() {
        Kind::Link
    } else if t.is_dir() {
        Kind::Dir
    } else if t.is_file() {
        Kind::File
    } else {
        Kind::Other
    })
}

/// The entries of `dir` that the write rule looks at (what makes a git
/// directory, and `.git`), each looked up by name: a write checks every
/// directory above its target, and listing each one whole would cost a
/// read of every name in it. Err if `dir` is not there.
fn probe(dir: &Path) -> io::Result<HashMap<OsString, Kind>> {
    std::fs::symlink_metadata(dir)?;
    let mut found = HashMap::new();
    for name in ["HEAD", "objects", "refs", "commondir", ".git"] {
        if let Some(kind) = kind_of(&dir.join(name)) {
            found.insert(OsString::from(name), kind);
        }
    }
    Ok(found)
}

fn new_repository_reason(dir: &Path) -> String {
    format!(
        "the write would make {} a git repository, whose configuration and hooks git runs \
         outside the sandbox",
        dir.display()
    )
}

/// Whether writing the file `rest` (relative to `dir`) makes `dir` hold a
/// `HEAD` with `objects/` and `refs/`, counting what the write creates.
fn would_be_git_dir(entries: &HashMap<OsString, Kind>, rest: &[std::path::Component<'_>]) -> bool {
    let Some(first) = rest.first().map(|c| c.as_os_str()) else {
        return false;
    };
    // As loose as `is_git_dir`: any type counts.
    let has = |name: &str, _dir: bool| entries.contains_key(OsStr::new(name)) || first == name;
    let touches = ["HEAD", "objects", "refs", "commondir"]
        .iter()
        .any(|n| first == *n);
    touches
        && has("HEAD", false)
        && ((has("objects", true) && has("refs", true)) || has("commondir", false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_git_directory_is_taken_more_loosely_than_git_takes_it() {
        let entries = |names: &[(&str, Kind)]| -> HashMap<OsString, Kind> {
            names.iter().map(|(n, k)| (OsString::from(n), *k)).collect()
        };
        let d = Path::new("/r/x");
        // Whatever HEAD holds, and objects and refs as links too.
        assert!(is_git_dir(
            d,
            &entries(&[
                ("HEAD", Kind::File),
                ("objects", Kind::Link),
                ("refs", Kind::Link)
            ])
        ));
        assert!(is_git_dir(
            d,
            &entries(&[("HEAD", Kind::Link), ("commondir", Kind::File)])
        ));
        assert!(!is_git_dir(
            d,
            &entries(&[("HEAD", Kind::File), ("objects", Kind::Dir)])
        ));
        // Every `.git` directory, even one with nothing left in it.
        assert!(is_git_dir(Path::new("/r/.git"), &entries(&[])));
    }

    #[test]
    fn protected_names_match_as_the_platforms_file_systems_compare_them() {
        for (name, protected) in [
            (".gemini", true),
            (".git", true),
            ("x.code-workspace", true),
        ] {
            assert_eq!(
                settings_reason(OsStr::new(name)).is_some() || is_named(OsStr::new(name), ".git"),
                protected,
                "{name}"
            );
        }
        // On macOS and Windows `.GEMINI` is the folder Gemini CLI reads.
        for name in [".GEMINI", ".VSCode", ".MCP.json", "X.Code-Workspace"] {
            assert_eq!(
                settings_reason(OsStr::new(name)).is_some(),
                NAMES_IGNORE_CASE,
                "{name}"
            );
        }
        assert_eq!(is_named(OsStr::new(".GIT"), ".git"), NAMES_IGNORE_CASE);
        let root = Path::new("/r");
        assert_eq!(
            write_refusal(
                root,
                Path::new("/r/.Gemini/settings.json"),
                &Unprotected::default()
            )
            .is_some(),
            NAMES_IGNORE_CASE
        );
    }

    #[test]
    fn config_paths_are_found_in_every_spelling() {
        let text = "[core]\n\thooksPath = .husky\n[Include]\n\tpath = \"../x.cfg\" # c\n\
                    [includeIf \"gitdir:/a/\"]\n\tpath=y\n[core] HooksPath=z\n[user]\n\tpath = no\n";
        let got: Vec<String> = config_paths(text).into_iter().map(|(_, v)| v).collect();
        assert_eq!(got, [".husky", "../x.cfg", "y", "z"]);
    }

    // Unix spellings of absolute paths.
    #[cfg(unix)]
    #[test]
    fn hooks_resolve_against_the_work_tree_and_includes_against_their_config() {
        let g = Path::new("/r/p/.git");
        let hooks = |git: &Path, v: &str| config_target(git, git, "core.hookspath", v);
        assert_eq!(hooks(g, ".husky"), Path::new("/r/p/.husky"));
        assert_eq!(hooks(Path::new("/r/bare"), "h"), Path::new("/r/bare/h"));
        assert_eq!(hooks(g, "/abs/h"), Path::new("/abs/h"));
        let include = config_target(g, g, "include.path", "../project.gitconfig");
        assert_eq!(include, Path::new("/r/p/project.gitconfig"));
        let local = config_target(g, g, "include.path", "local.gitconfig");
        assert_eq!(local, Path::new("/r/p/.git/local.gitconfig"));
    }

    #[cfg(unix)]
    #[test]
    fn pointers_resolve_against_their_directory() {
        let base = Path::new("/r/wt");
        assert_eq!(
            pointed_dir(base, b"gitdir: ../meta\n"),
            Some(PathBuf::from("/r/meta"))
        );
        assert_eq!(pointed_dir(base, b"../../x\n"), Some(PathBuf::from("/x")));
        assert_eq!(
            pointed_dir(base, b"gitdir: /abs/g"),
            Some(PathBuf::from("/abs/g"))
        );
        assert_eq!(pointed_dir(base, b"  \n"), None);
    }
}
