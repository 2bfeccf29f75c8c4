//! Writing one file the way both write tools do: checked by the guard,
//! refused inside `.git`, held against other writers, read back exactly,
//! and committed atomically through a race-safe handle of its directory.
//!
//! Holding a file: every rootbound process takes an exclusive `flock` on
//! the file now at the target's name, without waiting (a busy lock is tried
//! again after a short sleep of the async task, up to [`PATIENCE`]), then
//! checks that the name still holds the file it locked. The rename of an
//! atomic write puts a new inode at the name, so a writer that waited on the
//! old inode sees that it lost the name and locks the new one. Whoever holds
//! the file at the name is the only rootbound writer of that name until its
//! rename; writers outside rootbound (editors, formatters) take no lock, and
//! the check just before the rename catches them (see `fs/atomic.rs`).
//! On Windows there is no such lock: the per-process lock and that check.

use std::ffi::OsString;
use std::fs::File;
pub use std::fs::Metadata;
use std::io::{self, Read};
use std::time::{Duration, Instant};

use crate::fs::atomic::{self, Previous, Replacing};
use crate::fs::guard::{DirHandle, Guard, Resolved, has_component};
use crate::text::exact::{DecodeError, TextFile};

/// Largest file the write tools read back for editing or diffing.
pub const MAX_EDIT_BYTES: u64 = 64 * 1024 * 1024;

/// A write target that passed the guard and the `.git` rule. Only
/// [`target`] and its kin make one: the fields are private.
#[derive(Debug, Clone)]
pub struct Target {
    resolved: Resolved,
    /// The absolute path as messages show it.
    abs: String,
}

impl Target {
    /// The path as the guard resolved it.
    pub fn resolved(&self) -> &Resolved {
        &self.resolved
    }

    /// The absolute path as messages show it.
    pub fn abs(&self) -> &str {
        &self.abs
    }

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
    target_with(guard, raw, false)
}

/// Resolves `raw` for writing a path the user approved writing once
/// although it is protected (docs/security.md, "Asking the user"): the
/// guard's rules hold, the `.git` and protected-set rules do not.
pub fn target_approved(guard: &Guard, raw: &str) -> Result<Target, TargetError> {
    target_with(guard, raw, true)
}

fn target_with(guard: &Guard, raw: &str, approved: bool) -> Result<Target, TargetError> {
    let resolved = guard.resolve(raw).map_err(TargetError::Refused)?;
    let abs = resolved.display().display().to_string();
    if !approved
        && (has_component(resolved.display(), ".git") || has_component(resolved.real(), ".git"))
    {
        return Err(TargetError::InsideGit(abs));
    }
    if resolved.is_dir() {
        return Err(TargetError::IsDirectory(abs));
    }
    if !approved
        && let Some(root) = guard.containing_root(resolved.real())
        && let Some(why) =
            crate::fs::protected::write_refusal(root, resolved.real(), guard.unprotected())
    {
        return Err(TargetError::Protected(abs, why));
    }
    Ok(Target { resolved, abs })
}

/// The current content of an existing target.
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

/// How long a write waits for another rootbound process's write of the
/// same file before it gives up (a write holds it for the time of one
/// read-modify-write, at most 64 MB).
pub const PATIENCE: Duration = Duration::from_secs(30);

/// Another process held the file for longer than [`PATIENCE`].
#[derive(Debug)]
pub struct Busy;

impl std::fmt::Display for Busy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("another process kept the file locked")
    }
}

impl std::error::Error for Busy {}

/// A target held for one read-modify-write: the directory it is in (None
/// when that does not exist yet: commit makes it) and the file now at its
/// name (None: no file there), locked against other rootbound writers until
/// this is dropped.
pub struct Held {
    dir: Option<(DirHandle, OsString)>,
    file: Option<(File, Metadata)>,
    /// Windows: the metadata of the held file once its handle is closed
    /// for the rename.
    closed: Option<Metadata>,
}

impl Held {
    /// The held file's metadata (None: a new file). Unused on Windows,
    /// whose writes keep no owner or attributes.
    #[cfg_attr(windows, allow(dead_code))]
    pub fn metadata(&self) -> Option<&Metadata> {
        self.file
            .as_ref()
            .map(|(_, metadata)| metadata)
            .or(self.closed.as_ref())
    }

    /// How many other names the held file has (hard links), which keep the
    /// old content after an atomic write. Always 0 on Windows.
    pub fn other_links(&self) -> u64 {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            self.metadata().map_or(0, |m| m.nlink().saturating_sub(1))
        }
        #[cfg(not(unix))]
        0
    }

    /// Lets go of the file (and its lock) before holding it again.
    pub fn release(&mut self) {
        self.file = None;
        self.dir = None;
    }

    /// Reads the held file's bytes (None if there is no file).
    pub fn read(&mut self) -> io::Result<Option<Existing>> {
        let Some((file, metadata)) = &mut self.file else {
            return Ok(None);
        };
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
        // One byte past the limit tells a file that grew past it since the
        // check: refused, since writing back a cut read would lose its end.
        file.take(MAX_EDIT_BYTES + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > MAX_EDIT_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                format!(
                    "the file grew past {} MB while it was read; files over {} MB are not \
                     rewritten",
                    MAX_EDIT_BYTES / (1024 * 1024),
                    MAX_EDIT_BYTES / (1024 * 1024)
                ),
            ));
        }
        Ok(Some(Existing {
            bytes,
            metadata: metadata.clone(),
        }))
    }
}

/// Holds the target, waiting (asleep, never blocking a thread) while
/// another rootbound process holds it, for at most [`PATIENCE`]; then an
/// error carrying [`Busy`].
pub async fn hold(guard: &Guard, target: &Target) -> io::Result<Held> {
    let deadline = Instant::now() + PATIENCE;
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(held) = try_hold(guard, target)? {
            return Ok(held);
        }
        if Instant::now() >= deadline {
            return Err(io::Error::new(io::ErrorKind::WouldBlock, Busy));
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// One try at holding the target, without waiting: None when another
/// process holds it (or its file was just replaced: try again).
#[cfg(unix)]
pub fn try_hold(guard: &Guard, target: &Target) -> io::Result<Option<Held>> {
    use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags};
    use std::os::unix::fs::MetadataExt;

    // A FIFO, socket or device is refused without being opened, as reads
    // refuse them (a swap after this is caught below, once opened).
    if let Some(metadata) = target.resolved.metadata()
        && !metadata.is_file()
    {
        return Err(Guard::not_regular(metadata));
    }
    let (dir, name) = match guard.open_parent_dir(&target.resolved, false) {
        Ok(opened) => opened,
        // Its directory is missing, so is the file: commit makes both.
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Some(Held {
                dir: None,
                file: None,
                closed: None,
            }));
        }
        Err(e) => return Err(e),
    };
    // As the guard opens files: no symlink followed, never blocking.
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
    let fd = match rustix::fs::openat(&dir, &name, flags | OFlags::CLOEXEC, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => {
            return Ok(Some(Held {
                dir: Some((dir, name)),
                file: None,
                closed: None,
            }));
        }
        Err(e) => return Err(e.into()),
    };
    let file = File::from(fd);
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(Guard::not_regular(&metadata));
    }
    match rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) => return Ok(None),
        // A file system without locks (some network ones): the check
        // before the rename still keeps other writers' content.
        Err(e) => tracing::debug!("no lock on {}: {e}", target.abs),
    }
    // Locked: is it still the file at the name? A writer that held it may
    // have renamed a new file over it while we waited.
    match rustix::fs::statat(&dir, &name, AtFlags::SYMLINK_NOFOLLOW) {
        #[allow(
            clippy::unnecessary_cast,
            reason = "the field types differ by platform"
        )]
        Ok(now) if now.st_dev as u64 == metadata.dev() && now.st_ino as u64 == metadata.ino() => {
            Ok(Some(Held {
                dir: Some((dir, name)),
                file: Some((file, metadata)),
                closed: None,
            }))
        }
        Ok(_) | Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// One try at holding the target: on Windows, the file read through the
/// guard; writers in this process are kept apart by `atomic::PathLocks`,
/// other writers by the check before the rename.
#[cfg(windows)]
pub fn try_hold(guard: &Guard, target: &Target) -> io::Result<Option<Held>> {
    let file = match guard.open_read(&target.resolved) {
        Ok(opened) => Some(opened),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    Ok(Some(Held {
        dir: None,
        file,
        closed: None,
    }))
}

/// Writes `bytes` to the held target atomically, creating missing parent
/// directories beneath the root. An existing file passes on its owner,
/// mode and attributes, must be writable by us, and must still be the file
/// that was held and read ([`atomic::is_changed`] tells the error). Ok: the
/// new file's metadata.
pub fn commit(
    guard: &Guard,
    target: &Target,
    bytes: &[u8],
    held: &mut Held,
) -> io::Result<Metadata> {
    commit_with_mode(guard, target, bytes, held, None)
}

/// Like [`commit`]; a new file gets the permission bits `new_mode` (Unix)
/// instead of the defaults (an undo bringing a deleted file back).
pub fn commit_with_mode(
    guard: &Guard,
    target: &Target,
    bytes: &[u8],
    held: &mut Held,
    new_mode: Option<u32>,
) -> io::Result<Metadata> {
    // Windows cannot rename over a file that is open, so the held handle
    // is closed first (it holds no lock there); its metadata is kept for
    // the check before the rename.
    #[cfg(windows)]
    if let Some((file, metadata)) = held.file.take() {
        drop(file);
        held.closed = Some(metadata);
    }
    let opened;
    let (dir, name) = match &held.dir {
        Some((dir, name)) => (dir, name),
        None => {
            opened = guard.open_parent_dir(&target.resolved, true)?;
            (&opened.0, &opened.1)
        }
    };
    let previous = held
        .file
        .as_ref()
        .map(|(file, metadata)| Previous {
            file: Some(file),
            metadata,
        })
        .or_else(|| {
            held.closed.as_ref().map(|metadata| Previous {
                file: None,
                metadata,
            })
        });
    if let Some(previous) = previous {
        atomic::check_writable(dir, name, previous.metadata)?;
    }
    if let Some(parent) = target.resolved.real().parent() {
        atomic::sweep_stale_temps(dir, parent);
    }
    let replacing = previous.map_or(Replacing::Nothing, Replacing::Read);
    match new_mode {
        #[cfg(unix)]
        Some(mode) if matches!(replacing, Replacing::Nothing) => {
            atomic::write_with(dir, name, replacing, |file| {
                use std::io::Write;
                use std::os::unix::fs::PermissionsExt;
                file.write_all(bytes)?;
                file.set_permissions(std::fs::Permissions::from_mode(mode & 0o777))
            })
        }
        _ => atomic::write(dir, name, bytes, replacing),
    }
}

/// Removes the held file, if the name still holds it (else an error that
/// [`atomic::is_changed`] tells): undoing the edit that created it.
pub fn remove(guard: &Guard, target: &Target, held: &mut Held) -> io::Result<()> {
    #[cfg(windows)]
    if let Some((file, metadata)) = held.file.take() {
        drop(file);
        held.closed = Some(metadata);
    }
    let Some(metadata) = held.metadata().cloned() else {
        return Ok(());
    };
    let opened;
    let (dir, name) = match &held.dir {
        Some((dir, name)) => (dir, name),
        None => {
            opened = guard.open_parent_dir(&target.resolved, false)?;
            (&opened.0, &opened.1)
        }
    };
    // A file made read-only is left alone, as writes leave it.
    atomic::check_writable(dir, name, &metadata)?;
    atomic::remove_read(dir, name, &metadata)
}

/// Unix permission bits, where there are any.
pub fn mode_bits(metadata: &Metadata) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(metadata.mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        None
    }
}

/// Which version of a file a session saw: what tells a later change by
/// anyone (an editor's save makes a new inode, a rewrite in place moves the
/// change time, and the modification time or the size).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileVersion {
    size: u64,
    modified: Option<std::time::SystemTime>,
    /// Device, inode, and change time (which no one can set back: a
    /// rewrite that restores the size and modification time still moves it).
    #[cfg(unix)]
    inode: (u64, u64, i64, i64),
    #[cfg(windows)]
    created: Option<std::time::SystemTime>,
}

impl FileVersion {
    pub fn of(metadata: &Metadata) -> FileVersion {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        FileVersion {
            size: metadata.len(),
            modified: metadata.modified().ok(),
            #[cfg(unix)]
            inode: (
                metadata.dev(),
                metadata.ino(),
                metadata.ctime(),
                metadata.ctime_nsec(),
            ),
            #[cfg(windows)]
            created: metadata.created().ok(),
        }
    }

    pub fn size(&self) -> u64 {
        self.size
    }
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
    #[cfg(unix)]
    if let Some(not_kept) = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<crate::fs::kept::NotKept>())
    {
        return format!(
            "Refusing to write {abs}: {not_kept}. Writing it without that would change who may \
             read, write or run the file, so it was left as it was."
        );
    }
    if atomic::is_changed(e) {
        return format!(
            "Refusing to write {abs}: it changed on disk after it was read (another program or \
             server wrote it), and writing now would throw that change away. Nothing was \
             written. Read the file again and retry."
        );
    }
    if e.get_ref().is_some_and(|inner| inner.is::<Busy>()) {
        return format!(
            "Cannot write {abs}: another process kept it locked for {} s while writing it. \
             Nothing was written; try again.",
            PATIENCE.as_secs()
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
