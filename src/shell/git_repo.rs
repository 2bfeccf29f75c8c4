//! Pinning git to a repository inside the roots.
//!
//! git finds its repository by walking up from the working directory, and a
//! directory that looks like a bare repository (`HEAD`, `config`, `objects/`,
//! `refs/`) counts, even one written at a root with the server's own
//! `write_file`. So git never searches: the server finds the nearest `.git`
//! at or above the directory git runs in, no higher than the root that holds
//! it, checks it through the path guard, and pins it with `GIT_DIR` and
//! `GIT_WORK_TREE`; `GIT_CEILING_DIRECTORIES` stops any search at the roots.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::refusal::{Refusal, refuse};
use crate::fs::guard::{Guard, Resolved};

/// Files git reads in its repository directory before it does anything:
/// each must be a regular file (or missing), since a FIFO would block git.
const GIT_READS: &[&str] = &[
    "config",
    "config.worktree",
    "HEAD",
    "index",
    "packed-refs",
    "info/attributes",
    "info/exclude",
    "objects/info/alternates",
];

/// The most of a `.git` or `commondir` pointer file that is read.
const MAX_POINTER_BYTES: u64 = 4096;

/// Where git must look, as environment variables for its process.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pin {
    /// The repository directory (`.git`, or where a `.git` file points).
    pub git_dir: Option<PathBuf>,
    /// The work tree: the directory holding `.git`.
    pub work_tree: Option<PathBuf>,
    /// A linked worktree's shared repository (its `commondir`), which holds
    /// the configuration.
    pub common_dir: Option<PathBuf>,
    /// `:`-joined parents of the roots.
    pub ceilings: String,
}

impl Pin {
    /// The environment variables that pin git.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![("GIT_CEILING_DIRECTORIES".to_string(), self.ceilings.clone())];
        if let (Some(dir), Some(tree)) = (&self.git_dir, &self.work_tree) {
            env.push(("GIT_DIR".into(), dir.display().to_string()));
            env.push(("GIT_WORK_TREE".into(), tree.display().to_string()));
            // With it set, git ignores `$GIT_DIR/commondir`: a `commondir`
            // made while the line runs (a new name, which no mount holds
            // read-only) cannot send git to another repository's config.
            let common = self.common_dir.as_ref().unwrap_or(dir);
            env.push(("GIT_COMMON_DIR".into(), common.display().to_string()));
        }
        env
    }
}

/// Finds the repository for a git command run in `dir` (absolute).
pub fn locate(guard: &Guard, dir: &Path) -> Result<Pin, Refusal> {
    let ceilings: Vec<String> = guard
        .roots()
        .map(|r| r.parent().unwrap_or(r).display().to_string())
        .collect();
    let mut pin = Pin {
        git_dir: None,
        work_tree: None,
        common_dir: None,
        ceilings: ceilings.join(":"),
    };
    let start = guard
        .resolve_absolute(dir)
        .map_err(|_| Refusal::new("git", "git's directory is not inside a workspace root"))?;
    let Some(root) = guard.containing_root(start.real()).map(Path::to_path_buf) else {
        return refuse("git", "git's directory is not inside a workspace root");
    };
    for top in start.real().ancestors() {
        if !top.starts_with(&root) {
            break;
        }
        let dot_git = top.join(".git");
        let Ok(found) = guard.resolve_absolute(&dot_git) else {
            return refuse(
                "git",
                format!(
                    "{} leads outside the workspace; git is not run there",
                    dot_git.display()
                ),
            );
        };
        let Some(meta) = found.metadata() else {
            continue;
        };
        let git_dir = if meta.is_dir() {
            found.real().to_path_buf()
        } else if meta.is_file() {
            follow_pointer(guard, &found, top)?
        } else {
            return refuse(
                "git",
                format!("{} is not a directory or a file", dot_git.display()),
            );
        };
        let common_dir = check_commondir(guard, &git_dir)?;
        for dir in std::iter::once(&git_dir).chain(&common_dir) {
            check_alternates(guard, dir)?;
        }
        for name in GIT_READS {
            let file = git_dir.join(name);
            match guard.resolve_absolute(&file) {
                Ok(r) if r.metadata().is_none_or(|m| m.is_file()) => {}
                _ => {
                    return refuse(
                        "git",
                        format!(
                            "{} is not a regular file inside the workspace; git would read it",
                            file.display()
                        ),
                    );
                }
            }
        }
        pin.git_dir = Some(git_dir);
        pin.work_tree = Some(top.to_path_buf());
        pin.common_dir = common_dir;
        return Ok(pin);
    }
    Ok(pin)
}

/// A git subcommand that writes may not name a path in the repository's own
/// directory (`git mv README .git/config`), nor in any `.git`: git's files
/// change through git's own commands, never as a command's operand.
pub fn refuse_paths_in_repository(
    guard: &Guard,
    pin: &Pin,
    cwd: &Path,
    paths: &[PathBuf],
) -> Result<(), Refusal> {
    let repository: Vec<&PathBuf> = pin.git_dir.iter().chain(&pin.common_dir).collect();
    for path in paths {
        let named_git = path
            .components()
            .any(|c| c.as_os_str().eq_ignore_ascii_case(".git"));
        let real = guard.resolve_absolute(&cwd.join(path)).ok();
        let inside = real
            .as_ref()
            .is_some_and(|r| repository.iter().any(|dir| r.real().starts_with(dir)));
        if named_git || inside {
            return refuse(
                path.display().to_string(),
                "the path is in the repository's own directory; git changes its own files \
                 through its own commands",
            );
        }
    }
    Ok(())
}

/// Reads a small pointer file through the guard (regular files only, never
/// blocking, bounded).
fn read_pointer(guard: &Guard, path: &Path) -> Result<String, Refusal> {
    let unreadable =
        |why: String| Refusal::new("git", format!("{} cannot be read ({why})", path.display()));
    let resolved = guard
        .resolve_absolute(path)
        .map_err(|_| unreadable("it leads outside the workspace".into()))?;
    let (file, _) = guard
        .open_read(&resolved)
        .map_err(|e| unreadable(e.to_string()))?;
    let mut text = String::new();
    file.take(MAX_POINTER_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| unreadable(e.to_string()))?;
    Ok(text.trim().to_string())
}

/// A `.git` file (`gitdir: PATH`), as worktrees and submodules have.
fn follow_pointer(guard: &Guard, found: &Resolved, top: &Path) -> Result<PathBuf, Refusal> {
    let text = read_pointer(guard, found.real())?;
    let Some(target) = text.strip_prefix("gitdir:").map(str::trim) else {
        return refuse(
            "git",
            format!("{} is not a gitdir pointer", found.display().display()),
        );
    };
    let target = top.join(target);
    match guard.resolve_absolute(&target) {
        Ok(r) if r.is_dir() => Ok(r.real().to_path_buf()),
        _ => refuse(
            "git",
            format!(
                "{} points to a repository outside the workspace; git is not run there",
                found.display().display()
            ),
        ),
    }
}

/// A worktree's `commondir` names the shared repository, which must be
/// inside the roots too. Returns it, if there is one.
fn check_commondir(guard: &Guard, git_dir: &Path) -> Result<Option<PathBuf>, Refusal> {
    let pointer = git_dir.join("commondir");
    match guard.resolve_absolute(&pointer) {
        Ok(r) if !r.exists() => return Ok(None),
        Ok(_) => {}
        Err(_) => {
            return refuse(
                "git",
                format!("{} leads outside the workspace", pointer.display()),
            );
        }
    }
    let target = git_dir.join(read_pointer(guard, &pointer)?);
    match guard.resolve_absolute(&target) {
        Ok(r) if r.is_dir() => Ok(Some(r.real().to_path_buf())),
        _ => refuse(
            "git",
            format!(
                "{} points to a repository outside the workspace; git is not run there",
                pointer.display()
            ),
        ),
    }
}

/// `objects/info/alternates` lends a repository the objects of others; each
/// must lie inside the roots, or git would read outside them.
fn check_alternates(guard: &Guard, git_dir: &Path) -> Result<(), Refusal> {
    let objects = git_dir.join("objects");
    let list = objects.join("info/alternates");
    match guard.resolve_absolute(&list) {
        Ok(r) if !r.exists() => return Ok(()),
        // Read whole or not at all: a line past the cut would go unchecked.
        Ok(r) if r.metadata().is_some_and(|m| m.len() > MAX_POINTER_BYTES) => {
            return refuse("git", format!("{} is too long to check", list.display()));
        }
        Ok(_) => {}
        Err(_) => {
            return refuse(
                "git",
                format!("{} leads outside the workspace", list.display()),
            );
        }
    }
    for line in read_pointer(guard, &list)?.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let inside = guard
            .resolve_absolute(&objects.join(line))
            .is_ok_and(|r| r.is_dir());
        if !inside {
            return refuse(
                "git",
                format!(
                    "{} borrows objects from outside the workspace ({line}); git is not run there",
                    list.display()
                ),
            );
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_repository_inside_the_root_is_pinned() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("sub/nested/.git")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        let guard = Guard::new(&[&root]).unwrap();
        let pin = locate(&guard, &root.join("src")).unwrap();
        assert_eq!(pin.git_dir, Some(root.join(".git")));
        assert_eq!(pin.work_tree, Some(root.clone()));
        assert_eq!(pin.ceilings, base.display().to_string());
        let nested = locate(&guard, &root.join("sub/nested")).unwrap();
        assert_eq!(nested.git_dir, Some(root.join("sub/nested/.git")));
    }

    #[test]
    fn nothing_above_the_root_and_nothing_outside_is_used() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(base.join(".git")).unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(&root).unwrap();
        let guard = Guard::new(&[&root]).unwrap();
        // The repository above the root is not found; git will find none.
        let pin = locate(&guard, &root).unwrap();
        assert_eq!(pin.git_dir, None);
        assert!(
            !pin.env().iter().any(|(k, _)| k == "GIT_DIR"),
            "{:?}",
            pin.env()
        );
        // A .git file pointing outside is refused.
        std::fs::create_dir_all(base.join("elsewhere")).unwrap();
        std::fs::write(
            root.join(".git"),
            format!("gitdir: {}\n", base.join("elsewhere").display()),
        )
        .unwrap();
        assert!(locate(&guard, &root).is_err());
        // A .git link out is refused.
        std::fs::remove_file(root.join(".git")).unwrap();
        std::os::unix::fs::symlink(base.join(".git"), root.join(".git")).unwrap();
        assert!(locate(&guard, &root).is_err());
    }

    #[test]
    fn a_fifo_as_git_config_is_refused_without_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        let fifo = std::ffi::CString::new(root.join(".git/config").display().to_string()).unwrap();
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let guard = Guard::new(&[&root]).unwrap();
        let e = locate(&guard, &root).unwrap_err();
        assert!(e.reason.contains("not a regular file"), "{e:?}");
    }

    #[test]
    fn a_fifo_as_git_file_does_not_block() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let fifo = std::ffi::CString::new(root.join(".git").display().to_string()).unwrap();
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let guard = Guard::new(&[&root]).unwrap();
        assert!(locate(&guard, &root).is_err());
    }
}
