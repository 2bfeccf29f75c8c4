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
];

/// Renamed entries end with this: git, editors and agents ignore it.
pub const QUARANTINE_SUFFIX: &str = ".rootbound-quarantine";

/// Paths at and below which nothing is protected (`--unprotect`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unprotected(pub Vec<PathBuf>);

impl Unprotected {
    pub fn covers(&self, path: &Path) -> bool {
        self.0.iter().any(|p| path.starts_with(p))
    }
}

/// Why an entry is protected, for messages.
pub fn settings_reason(name: &OsStr) -> Option<&'static str> {
    SETTINGS
        .iter()
        .find(|(n, _)| OsStr::new(n) == name)
        .map(|(_, why)| *why)
}

/// Whether `head`'s bytes are a `HEAD` git accepts: a symbolic ref into
/// `refs/`, or an object name.
fn valid_head(head: &[u8]) -> bool {
    let text = head.strip_suffix(b"\n").unwrap_or(head);
    if let Some(target) = text.strip_prefix(b"ref:") {
        return target.trim_ascii_start().starts_with(b"refs/");
    }
    matches!(text.len(), 40 | 64) && text.iter().all(u8::is_ascii_hexdigit)
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

/// Whether `dir` is a git directory by git's rule, given its entries.
fn is_git_dir(dir: &Path, entries: &HashMap<OsString, Kind>) -> bool {
    let has = |name: &str, kind: Kind| entries.get(OsStr::new(name)) == Some(&kind);
    let head = match entries.get(OsStr::new("HEAD")) {
        Some(Kind::File) => read_small(&dir.join("HEAD"), 4096).is_some_and(|h| valid_head(&h)),
        Some(Kind::Link) => std::fs::read_link(dir.join("HEAD"))
            .is_ok_and(|t| t.as_os_str().as_encoded_bytes().starts_with(b"refs/")),
        _ => false,
    };
    head && ((has("objects", Kind::Dir) && has("refs", Kind::Dir)) || has("commondir", Kind::File))
}

/// The type of a directory entry, as listed (links never followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    File,
    Dir,
    Link,
    Other,
}

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
        if name == ".git" {
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
        let Ok(entries) = list(dir) else {
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
    }
    None
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
    let creates_dir = rest.len() > 1;
    let has = |name: &str, want_dir: bool| {
        entries.get(OsStr::new(name)).is_some_and(|k| {
            if want_dir {
                *k == Kind::Dir
            } else {
                matches!(k, Kind::File | Kind::Link)
            }
        }) || (first == name && creates_dir == want_dir)
    };
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
    fn heads_are_read_as_git_reads_them() {
        assert!(valid_head(b"ref: refs/heads/main\n"));
        assert!(valid_head(b"ref:refs/heads/main"));
        assert!(valid_head(&[b'a'; 40]));
        assert!(!valid_head(b"ref: heads/main\n"));
        assert!(!valid_head(b"hello\n"));
    }
}
