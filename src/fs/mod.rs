//! The guard layer: the only code that touches the file system. The path
//! guard decides and opens; atomic writes, reading and writing build on it.

pub mod atomic;
#[cfg(unix)]
pub mod dir_locks;
pub mod guard;
pub mod journal;
#[cfg(unix)]
pub mod kept;
#[cfg(windows)]
pub(crate) mod nt;
pub mod protected;
pub mod reading;
// Windows path rules, compiled everywhere so their tests run on every
// platform; only the Windows guard uses them.
#[cfg_attr(not(windows), allow(dead_code))]
pub mod winpath;
pub mod write_gate;
pub mod writing;

/// The canonical form of a directory named on the command line (`--root`
/// is canonicalised by the guard; this serves `--bash-read` and
/// `--bash-path`). Err if it does not exist or is not a directory.
pub fn canonical_dir(path: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    let canonical = std::fs::canonicalize(path)?;
    if !canonical.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "not a directory",
        ));
    }
    // Windows answers `\\?\C:\dir`; people read and write `C:\dir`.
    #[cfg(windows)]
    let canonical = canonical
        .to_str()
        .and_then(|text| winpath::parse(text, None, winpath::Names::Reported).ok())
        .map_or(canonical.clone(), |p| std::path::PathBuf::from(p.display()));
    Ok(canonical)
}

/// Builds the small tree the bash fuzz target plans against (see
/// `shell::fuzzing`): files for globs, a git repository, a link out.
pub(crate) fn fuzz_fixture(root: &std::path::Path) -> std::io::Result<()> {
    let outside = root.with_file_name("outside");
    std::fs::create_dir_all(root.join("src"))?;
    std::fs::create_dir_all(root.join(".git"))?;
    std::fs::create_dir_all(&outside)?;
    for (name, text) in [
        ("a.txt", "alpha\n"),
        ("b.txt", "beta\n"),
        ("src/m.rs", "fn main() {}\n"),
        (".git/config", "[core]\n\tbare = false\n"),
        (".git/HEAD", "ref: refs/heads/main\n"),
    ] {
        std::fs::write(root.join(name), text)?;
    }
    std::fs::write(outside.join("secret"), "secret\n")?;
    #[cfg(unix)]
    let linked = std::os::unix::fs::symlink(&outside, root.join("link_out"));
    // Windows may not let this process make links; the fixture works without.
    #[cfg(windows)]
    let linked: std::io::Result<()> =
        std::os::windows::fs::symlink_dir(&outside, root.join("link_out")).or(Ok(()));
    match linked {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
        _ => Ok(()),
    }
}

/// The canonical form of a file path named on the command line (`rootbound
/// history` and `undo`): of the file, or of its directory when the file is
/// gone (an edit may be undone after a delete).
pub fn canonical_path(path: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    match std::fs::canonicalize(path) {
        Ok(canonical) => Ok(canonical),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
                return Err(e);
            };
            let parent = if parent.as_os_str().is_empty() {
                std::path::Path::new(".")
            } else {
                parent
            };
            Ok(std::fs::canonicalize(parent)?.join(name))
        }
        Err(e) => Err(e),
    }
}
