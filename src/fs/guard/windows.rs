//! The guard on Windows.
//!
//! Resolution: a request path is parsed and checked by `fs/winpath.rs`
//! (drive and share forms, `..` applied to the spelling as Win32 does,
//! streams, device names, trailing dots and spaces refused). Where it really
//! is comes from the file system: the handle of what it opens names its
//! final path (`GetFinalPathNameByHandleW`: every link and junction
//! followed, long names instead of 8.3 ones, true case), and containment is
//! decided on that, case-insensitively. Only when something on the way is
//! missing are the names looked at one by one, to refuse a dangling link.
//!
//! Opens: each component is opened relative to its parent's handle
//! (`NtCreateFile` with a root directory) without following a reparse point
//! (`FILE_OPEN_REPARSE_POINT`); a symlink or junction met on the way fails
//! the open. The final handle's path must then be the one the guard
//! resolved: that also catches links Windows does not report as reparse
//! points (Wine shows a Unix symlink as the file or directory it leads to).
//! Writes create their directories, their temporary file and the rename
//! beneath verified handles (`fs/atomic.rs`), so nothing checked is looked
//! up by name again.

use std::ffi::OsStr;
use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::windows::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf, Prefix};
use std::time::SystemTime;

use windows_sys::Win32::Foundation::ERROR_DIRECTORY;
use windows_sys::Win32::Storage::FileSystem::{
    FILE_ATTRIBUTE_REPARSE_POINT, FILE_FLAG_BACKUP_SEMANTICS, FILE_SHARE_DELETE, FILE_SHARE_READ,
    FILE_SHARE_WRITE,
};

use super::{
    DirItem, EntryKind, Existence, Guard, OutsideWhy, ReadKind, Refusal, Resolved, Root, RootError,
    outside_error, read_bounded,
};
use crate::fs::nt;
use crate::fs::winpath::{self, Entry, Fault, Lookup, Names, Resolution, WinPath};

/// A directory handle: a starting point for relative opens.
pub type DirHandle = File;

/// Canonicalises a root and opens its handle.
pub(super) fn open_root(given: &Path) -> Result<Root, RootError> {
    let io_error = |e| RootError::Io(given.to_path_buf(), e);
    let canonical = std::fs::canonicalize(given).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => RootError::Missing(given.to_path_buf()),
        _ => RootError::Io(given.to_path_buf(), e),
    })?;
    let text = canonical.to_str().ok_or_else(|| {
        io_error(io::Error::new(
            io::ErrorKind::InvalidData,
            "the path is not valid Unicode",
        ))
    })?;
    let win = winpath::parse(text, None, Names::Reported)
        .map_err(|p| io_error(io::Error::other(p.message(text))))?;
    let dir = open_by_path(&win, false).map_err(io_error)?;
    if !dir.metadata().map_err(io_error)?.is_dir() {
        return Err(RootError::NotADirectory(given.to_path_buf()));
    }
    Ok(Root {
        path: PathBuf::from(win.display()),
        dir,
        win,
    })
}

/// Opens a path by name for looking at it (not its content); `follow`
/// decides whether a link at its end is followed.
fn open_by_path(path: &WinPath, follow: bool) -> io::Result<File> {
    use windows_sys::Win32::Storage::FileSystem::FILE_FLAG_OPEN_REPARSE_POINT;
    let mut flags = FILE_FLAG_BACKUP_SEMANTICS;
    if !follow {
        flags |= FILE_FLAG_OPEN_REPARSE_POINT;
    }
    OpenOptions::new()
        .access_mode(nt::DIR_READ)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)
        .custom_flags(flags)
        .open(path.verbatim())
}

/// A path as Windows compares it, if it is an absolute one.
fn win_path(path: &Path) -> Option<WinPath> {
    winpath::parse(path.to_str()?, None, Names::Reported).ok()
}

impl Root {
    /// Whether `path` is spelled beneath this root, by whole names compared
    /// as Windows compares them.
    pub(super) fn holds(&self, path: &Path) -> bool {
        win_path(path).is_some_and(|p| p.starts_with(&self.win))
    }
}

/// `path` relative to `base`, if it is spelled beneath it (names compared
/// as Windows compares them; `C:` and `\\?\C:` are the same drive).
pub(super) fn beneath<'a>(path: &'a Path, base: &Path) -> Option<&'a Path> {
    let mut rest = path.components();
    for wanted in base.components() {
        if !same_component(rest.next()?, wanted) {
            return None;
        }
    }
    Some(rest.as_path())
}

fn same_component(a: Component<'_>, b: Component<'_>) -> bool {
    match (a, b) {
        (Component::Prefix(a), Component::Prefix(b)) => same_prefix(a.kind(), b.kind()),
        (Component::Normal(a), Component::Normal(b)) => match (a.to_str(), b.to_str()) {
            (Some(a), Some(b)) => winpath::same_name(a, b),
            _ => a == b,
        },
        (a, b) => a == b,
    }
}

fn prefix_disk(p: Prefix<'_>) -> Option<u8> {
    match p {
        Prefix::Disk(l) | Prefix::VerbatimDisk(l) => Some(l.to_ascii_uppercase()),
        _ => None,
    }
}

fn prefix_share(p: Prefix<'_>) -> Option<(&OsStr, &OsStr)> {
    match p {
        Prefix::UNC(server, share) | Prefix::VerbatimUNC(server, share) => Some((server, share)),
        _ => None,
    }
}

fn same_prefix(a: Prefix<'_>, b: Prefix<'_>) -> bool {
    match (
        prefix_disk(a),
        prefix_disk(b),
        prefix_share(a),
        prefix_share(b),
    ) {
        (Some(x), Some(y), _, _) => x == y,
        (_, _, Some((s1, h1)), Some((s2, h2))) => {
            same_component(Component::Normal(s1), Component::Normal(s2))
                && same_component(Component::Normal(h1), Component::Normal(h2))
        }
        _ => a == b,
    }
}

/// Whether a path component is the name `wanted` to Windows.
pub(super) fn same_name(name: &OsStr, wanted: &str) -> bool {
    name.to_str()
        .is_some_and(|name| winpath::same_name(name, wanted))
}

/// The file system, as resolution asks it.
struct System;

impl Lookup for System {
    type Found = Metadata;

    fn final_path(&self, path: &WinPath) -> io::Result<(WinPath, Metadata)> {
        let file = open_by_path(path, true)?;
        let real = nt::final_path(&file)?;
        Ok((real, file.metadata()?))
    }

    fn is_dir(found: &Metadata) -> bool {
        found.is_dir()
    }

    fn entry(&self, path: &WinPath) -> io::Result<Option<Entry>> {
        match std::fs::symlink_metadata(path.verbatim()) {
            Ok(m) if m.file_type().is_symlink() => Ok(Some(Entry::Link)),
            Ok(m) if m.is_dir() => Ok(Some(Entry::Directory)),
            Ok(_) => Ok(Some(Entry::File)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl Guard {
    fn primary_win(&self) -> Option<&WinPath> {
        Some(&self.primary.win)
    }

    fn root_holding(&self, path: &WinPath) -> Option<super::RootId> {
        self.roots
            .iter()
            .filter(|r| path.starts_with(&r.win))
            .max_by_key(|r| r.win.names().len())
            .map(|r| super::RootId(r.clone()))
    }

    pub(super) fn sys_resolve_absolute(&self, absolute: &Path) -> Result<Resolved, Refusal> {
        let text = absolute
            .to_str()
            .ok_or_else(|| Refusal::Invalid("The path is not valid Unicode.".into()))?;
        let spelled = winpath::parse(text, self.primary_win(), Names::Reported)
            .map_err(|p| Refusal::Invalid(p.message(text)))?;
        let display = PathBuf::from(spelled.display());
        let outside = |why| Refusal::Outside {
            display: display.clone(),
            why,
        };
        let (real, existence) = match winpath::resolve(&spelled, &System) {
            Ok(Resolution::Exists { real, found }) => (real, Existence::Exists(found)),
            Ok(Resolution::Missing { real }) => (real, Existence::Missing),
            Err(Fault::Dangles) => return Err(outside(OutsideWhy::SymlinkDangles)),
            Err(Fault::Loops) => return Err(outside(OutsideWhy::SymlinkLoops)),
            Err(Fault::Io(e)) => {
                return Err(Refusal::Unresolvable {
                    display,
                    reason: e.to_string(),
                });
            }
        };
        let Some(root) = self.root_holding(&real) else {
            // Spelled inside a root but really outside: only a link on the
            // way can do that.
            let why = if self.root_holding(&spelled).is_some() {
                OutsideWhy::SymlinkLeaves
            } else {
                OutsideWhy::Resolved
            };
            return Err(outside(why));
        };
        Ok(Resolved {
            display,
            real: PathBuf::from(real.display()),
            root,
            existence,
        })
    }

    /// Makes a decoded request path absolute against the primary root,
    /// refusing what Windows would not open as spelled.
    /// Whether there is an entry at `path` (a link counts as itself).
    /// Windows resolves `..` on the spelling, so no outside directory is
    /// looked at on the way; the entry itself is asked for by path.
    pub(super) fn sys_has_entry(&self, path: &Path) -> bool {
        std::fs::symlink_metadata(path).is_ok()
    }

    pub(super) fn sys_absolute(&self, decoded: &str) -> Result<PathBuf, Refusal> {
        let spelled = winpath::from_uri_path(decoded);
        let path = winpath::parse(spelled, self.primary_win(), Names::Request)
            .map_err(|p| Refusal::Invalid(p.message(decoded)))?;
        Ok(PathBuf::from(path.display()))
    }

    /// Opens the directory `names` beneath `root` for adding entries, one
    /// component at a time relative to its parent's handle, never through a
    /// link, each checked to be where the guard expects; creates missing
    /// ones when `create` is set.
    pub(super) fn sys_open_dir_chain(
        &self,
        root: &Root,
        names: &[&OsStr],
        create: bool,
    ) -> io::Result<File> {
        let mut dir = nt::open_relative(
            &root.dir,
            OsStr::new(""),
            nt::DIR_WRITE,
            nt::FILE_OPEN,
            nt::FILE_DIRECTORY_FILE,
        )?;
        let mut expected = root.win.clone();
        for &name in names {
            let disposition = if create {
                nt::FILE_OPEN_IF
            } else {
                nt::FILE_OPEN
            };
            let next = nt::open_relative(
                &dir,
                name,
                nt::DIR_WRITE,
                disposition,
                nt::FILE_DIRECTORY_FILE | nt::FILE_OPEN_REPARSE_POINT,
            )?;
            expected = expected.join(&name.to_string_lossy());
            // Checked before anything is created beneath it.
            refuse_links(&next.metadata()?)?;
            verify(&next, &expected)?;
            dir = next;
        }
        Ok(dir)
    }

    /// Opens `rel` beneath `root`: one component at a time relative to its
    /// parent's handle, never through a link, and the result checked to be
    /// where the guard expects.
    pub(super) fn sys_open_beneath(
        &self,
        root: &Root,
        rel: &Path,
        kind: ReadKind,
    ) -> io::Result<File> {
        let mut names = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(n) => names.push(n),
                Component::CurDir => {}
                _ => return Err(outside_error()),
            }
        }
        open_stepwise(&root.dir, &root.win, &names, kind)
    }
}

/// Opens `names` beneath the directory `start` (whose real path is
/// `start_path`) for `kind`, following no link, then checks the result's
/// final path.
fn open_stepwise(
    start: &File,
    start_path: &WinPath,
    names: &[&OsStr],
    kind: ReadKind,
) -> io::Result<File> {
    let (access, options) = match kind {
        ReadKind::File => (nt::FILE_GENERIC_READ, 0),
        ReadKind::Directory => (nt::DIR_READ, nt::FILE_DIRECTORY_FILE),
    };
    let mut expected = start_path.clone();
    let Some((last, through)) = names.split_last() else {
        let file = nt::open_relative(start, OsStr::new(""), access, nt::FILE_OPEN, options)?;
        verify(&file, &expected)?;
        return Ok(file);
    };
    let mut dir: Option<File> = None;
    for &name in through {
        let parent = dir.as_ref().unwrap_or(start);
        let next = nt::open_relative(
            parent,
            name,
            nt::DIR_READ,
            nt::FILE_OPEN,
            nt::FILE_DIRECTORY_FILE | nt::FILE_OPEN_REPARSE_POINT,
        )?;
        refuse_links(&next.metadata()?)?;
        expected = expected.join(&name.to_string_lossy());
        dir = Some(next);
    }
    let parent = dir.as_ref().unwrap_or(start);
    let mut file = nt::open_relative(
        parent,
        last,
        access,
        nt::FILE_OPEN,
        options | nt::FILE_OPEN_REPARSE_POINT,
    )?;
    let meta = file.metadata()?;
    refuse_links(&meta)?;
    if meta.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        // A reparse point that names no other path (a deduplicated or cloud
        // file): its content comes through its file system filter, which
        // an open of the reparse point itself would bypass.
        file = nt::open_relative(parent, last, access, nt::FILE_OPEN, options)?;
    }
    verify(&file, &expected.join(&last.to_string_lossy()))?;
    Ok(file)
}

/// A symlink or junction where none may be followed.
fn refuse_links(meta: &Metadata) -> io::Result<()> {
    if meta.file_type().is_symlink() {
        return Err(link_error());
    }
    Ok(())
}

/// The open reached something other than what the guard resolved: a link
/// on the way (one Windows did not report as a reparse point), or a swap
/// since the check. Reported like a link, so walkers resolve again.
fn verify(file: &File, expected: &WinPath) -> io::Result<()> {
    if nt::final_path(file)?.same(expected) {
        Ok(())
    } else {
        Err(link_error())
    }
}

fn link_error() -> io::Error {
    io::Error::from_raw_os_error(winpath::LOOP_ERROR)
}

/// The error of an open that met a link where none may be followed.
pub(super) fn is_link_error(e: &io::Error) -> bool {
    e.raw_os_error() == Some(winpath::LOOP_ERROR)
}

/// The error of a path that goes through a file as if it were a directory.
pub(super) fn is_not_dir_error(e: &io::Error) -> bool {
    e.raw_os_error() == Some(ERROR_DIRECTORY as i32) || e.kind() == io::ErrorKind::NotADirectory
}

/// The error of a path that names a directory where a file is needed.
pub(super) fn is_a_directory_error() -> io::Error {
    io::Error::new(io::ErrorKind::IsADirectory, "the path is a directory")
}

pub(super) fn not_regular(meta: &Metadata) -> io::Error {
    let what = if meta.is_dir() {
        "a directory"
    } else if meta.file_type().is_symlink() {
        "a link"
    } else {
        "not a regular file"
    };
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("it is {what}, which is never opened"),
    )
}

/// Opens an absolute path (above every root) for reading, following no
/// link in any component; regular files only.
pub(super) fn open_absolute_no_symlinks(path: &Path) -> io::Result<(File, Metadata)> {
    let win = win_path(path).ok_or_else(outside_error)?;
    let top = win.prefix_root();
    let start = open_by_path(&top, false)?;
    let start_path = nt::final_path(&start)?;
    let names: Vec<&OsStr> = win.names().iter().map(OsStr::new).collect();
    let file = open_stepwise(&start, &start_path, &names, ReadKind::File)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    Ok((file, meta))
}

/// The entries of a directory opened by [`Guard::read_dir`], without `.`
/// and `..`, read through its handle.
pub struct DirEntries {
    inner: nt::RawEntries,
}

impl DirEntries {
    pub(super) fn new(dir: File) -> io::Result<DirEntries> {
        Ok(DirEntries {
            inner: nt::RawEntries::new(dir),
        })
    }

    /// The type and size of entry `name`, opened relative to the listed
    /// directory's handle with no link followed: never by path.
    pub fn stat_entry(&self, name: &OsStr) -> Option<(EntryKind, u64)> {
        let file = nt::open_relative(
            self.inner.dir(),
            name,
            nt::FILE_READ_ATTRIBUTES,
            nt::FILE_OPEN,
            nt::FILE_OPEN_REPARSE_POINT,
        )
        .ok()?;
        let meta = file.metadata().ok()?;
        let kind = if meta.file_type().is_symlink() {
            EntryKind::Symlink
        } else if meta.is_dir() {
            EntryKind::Directory
        } else {
            EntryKind::File
        };
        Some((kind, meta.len()))
    }
}

fn entry_kind(entry: &nt::RawEntry) -> EntryKind {
    if entry.is_link() {
        EntryKind::Symlink
    } else if entry.is_dir() {
        EntryKind::Directory
    } else {
        EntryKind::File
    }
}

impl Iterator for DirEntries {
    type Item = io::Result<DirItem>;

    fn next(&mut self) -> Option<io::Result<DirItem>> {
        Some(self.inner.next()?.map(|entry| DirItem {
            kind: entry_kind(&entry),
            name: entry.name,
        }))
    }
}

/// A directory listed by [`Guard::list_walked_dir`]: its entries, and its
/// handle for looking at them.
pub struct Listing {
    dir: File,
    /// Where the directory really is, to check what is opened beneath it.
    path: WinPath,
    items: Vec<DirItem>,
}

impl Listing {
    /// The entries listed, with their types; a link's own type, not its
    /// target's.
    pub fn entries(&self) -> impl Iterator<Item = (&OsStr, EntryKind)> {
        self.items
            .iter()
            .map(|item| (item.name.as_os_str(), item.kind))
    }

    pub(super) fn from_dir(dir: File) -> io::Result<Listing> {
        let path = nt::final_path(&dir)?;
        let items = DirEntries::new(dir.try_clone()?)?.collect::<io::Result<Vec<DirItem>>>()?;
        Ok(Listing { dir, path, items })
    }

    /// The type of entry `name` (a link is not followed).
    pub fn kind_of(&self, name: &OsStr) -> Option<EntryKind> {
        Some(self.stat(name)?.0)
    }

    /// When entry `name` was last modified (a link itself, not followed).
    pub fn modified(&self, name: &OsStr) -> Option<SystemTime> {
        self.stat(name)?.1
    }

    /// Opens the entry `name` (a regular file) for reading, beneath the
    /// listed directory's handle with no link followed.
    pub fn open_file(&self, name: &OsStr) -> io::Result<(File, Metadata)> {
        let file = open_stepwise(&self.dir, &self.path, &[name], ReadKind::File)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(not_regular(&meta));
        }
        Ok((file, meta))
    }

    /// Lists the subdirectory `name` of this listed directory, opened
    /// beneath its handle with no link followed.
    pub fn list_child(&self, name: &OsStr) -> io::Result<Listing> {
        let dir = open_stepwise(&self.dir, &self.path, &[name], ReadKind::Directory)?;
        Listing::from_dir(dir)
    }

    /// The batch size of the Unix listing. A Windows listing is read whole,
    /// so here it only lets shared tests build directories bigger than a
    /// batch.
    pub const BATCH: usize = 8192;

    /// A Windows listing is read whole, so it is always complete; the
    /// batching of the Unix listing bounds memory on huge directories, which
    /// this port does not do yet.
    pub fn is_complete(&self) -> bool {
        true
    }

    /// Never anything left to hand over: the listing is read whole.
    pub fn split_rest(&mut self) -> io::Result<Option<Listing>> {
        Ok(None)
    }

    /// There is never a next batch: the listing is read whole.
    pub fn next_batch(&mut self) -> io::Result<bool> {
        Ok(false)
    }

    /// Reads the entry `name` as one of the server's own files (an ignore
    /// file), relative to the listed directory's handle: no link followed,
    /// at most `max_bytes`.
    pub fn read_own_file(&self, name: &OsStr, max_bytes: u64) -> io::Result<Option<Vec<u8>>> {
        let file = match open_stepwise(&self.dir, &self.path, &[name], ReadKind::File) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        read_bounded(file, max_bytes).map(Some)
    }

    fn stat(&self, name: &OsStr) -> Option<(EntryKind, Option<SystemTime>)> {
        let file = nt::open_relative(
            &self.dir,
            name,
            nt::FILE_READ_ATTRIBUTES,
            nt::FILE_OPEN,
            nt::FILE_OPEN_REPARSE_POINT,
        )
        .ok()?;
        let meta = file.metadata().ok()?;
        let kind = if meta.file_type().is_symlink() {
            EntryKind::Symlink
        } else if meta.is_dir() {
            EntryKind::Directory
        } else {
            EntryKind::File
        };
        Some((kind, meta.modified().ok()))
    }
}
