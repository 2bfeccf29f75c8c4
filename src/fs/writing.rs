//! Writing one file the way both write tools do: checked by the guard,
//! refused inside `.git`, serialised per file, read back exactly, and
//! committed atomically through a race-safe handle of its directory.

use std::fs::Metadata;
use std::io::{self, Read};

use crate::fs::atomic;
use crate::fs::guard::{Guard, Resolved, has_component};
use crate::text::exact::{DecodeError, TextFile};

/// Largest file the write tools read back for editing or diffing.
pub const MAX_EDIT_BYTES: u64 = 64 * 1024 * 1024;

/// A write target that passed the guard and the `.git` rule.
#[derive(Debug, Clone)]
pub struct Target {
    pub resolved: Resolved,
    /// The absolute path as messages show it.
    pub abs: String,
}

impl Target {
    /// Size of the file being replaced (0 for a new file): what reading it
    /// back costs.
    pub fn existing_size(&self) -> u64 {
        self.resolved.metadata().map_or(0, Metadata::len)
    }
}

/// Why a target cannot be written.
#[derive(Debug)]
pub enum TargetError {
    Refused(crate::fs::guard::Refusal),
    InsideGit(String),
    /// A file that git, an editor or an agent would run or obey outside
    /// the sandbox (see `fs/protected.rs`): the path, and why.
    Protected(String, String),
    IsDirectory(String),
}

/// Resolves `raw` for writing.
pub fn target(guard: &Guard, raw: &str) -> Result<Target, TargetError> {
    let resolved = guard.resolve(raw).map_err(TargetError::Refused)?;
    let abs = resolved.display().display().to_string();
    if has_component(resolved.display(), ".git") || has_component(resolved.real(), ".git") {
        return Err(TargetError::InsideGit(abs));
    }
    if resolved.is_dir() {
        return Err(TargetError::IsDirectory(abs));
    }
    if let Some(root) = guard.containing_root(resolved.real())
        && let Some(why) =
            crate::fs::protected::write_refusal(root, resolved.real(), guard.unprotected())
    {
        return Err(TargetError::Protected(abs, why));
    }
    Ok(Target { resolved, abs })
}

/// The current content of an existing target, read through the guard.
pub struct Existing {
    pub bytes: Vec<u8>,
    pub metadata: Metadata,
}

impl Existing {
    /// The content as text, decoded exactly (consumes the bytes).
    pub fn decode(self, target: &Target) -> (Metadata, Result<TextFile, DecodeError>) {
        let Existing { bytes, metadata } = self;
        (metadata, TextFile::decode(target.resolved.real(), bytes))
    }
}

/// Reads the target's current bytes (None if it does not exist).
pub fn read_existing(guard: &Guard, target: &Target) -> io::Result<Option<Existing>> {
    if !target.resolved.exists() {
        return Ok(None);
    }
    let (mut file, metadata) = guard.open_read(&target.resolved)?;
    if metadata.len() > MAX_EDIT_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!(
                "the file is {} MB; files over {} MB are not rewritten",
                metadata.len() / (1024 * 1024),
                MAX_EDIT_BYTES / (1024 * 1024)
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.read_to_end(&mut bytes)?;
    Ok(Some(Existing { bytes, metadata }))
}

/// Writes `bytes` to the target atomically, creating missing parent
/// directories beneath the root. An existing file keeps its permission bits
/// and must be writable by us.
pub fn commit(
    guard: &Guard,
    target: &Target,
    bytes: &[u8],
    previous: Option<&Metadata>,
) -> io::Result<()> {
    let (dir, name) = guard.open_parent_dir(&target.resolved, true)?;
    if let Some(previous) = previous {
        atomic::check_writable(&dir, &name, previous)?;
    }
    if let Some(parent) = target.resolved.real().parent() {
        atomic::sweep_stale_temps(&dir, parent);
    }
    atomic::write(&dir, &name, bytes, previous)
}

/// A clear message for a failed write of `abs`.
pub fn write_error_message(abs: &str, e: &io::Error) -> String {
    if let Some(denied) = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<atomic::ModeDeniesWriting>())
    {
        return format!(
            "Cannot write {abs}: the file is read-only ({}), so it is left as it is, \
             whoever the server runs as. If it is meant to be edited, make it writable first.",
            denied.shown
        );
    }
    match e.kind() {
        io::ErrorKind::PermissionDenied => {
            format!(
                "Permission denied: cannot write {abs}. Check the file's and directory's permissions."
            )
        }
        io::ErrorKind::StorageFull => {
            format!("No space left on the device: cannot write {abs}. The file was left as it was.")
        }
        io::ErrorKind::ReadOnlyFilesystem => format!("Read-only file system: cannot write {abs}."),
        io::ErrorKind::NotADirectory => {
            format!("Cannot write {abs}: a part of its path is a file, not a directory.")
        }
        _ => format!("Cannot write {abs}: {e}. The file was left as it was."),
    }
}
