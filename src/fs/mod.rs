//! The guard layer: the only code that touches the file system. The path
//! guard decides and opens; atomic writes, reading and writing build on it.

pub mod atomic;
pub mod guard;
pub mod reading;
pub mod writing;

/// The metadata type the guard hands out, named here so that code outside
/// this layer needs no `std::fs` (see `tests/tidy.rs`).
pub use std::fs::Metadata;

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
    Ok(canonical)
}
