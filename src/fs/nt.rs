//! The Windows calls the guard layer needs and std does not offer: open a
//! name relative to a directory's handle (`NtCreateFile` with a root
//! directory, Windows' `openat`), list a directory through its handle
//! (`NtQueryDirectoryFile`), rename a file by its handle into a directory's
//! handle (`FileRenameInformation` with a root directory, Windows'
//! `renameat`), and read the path a handle really has
//! (`GetFinalPathNameByHandleW`: long names, true case, every link
//! resolved). With these, nothing the guard checked is looked up by name
//! again, so a directory swapped for a junction after the check cannot
//! redirect an open, a create or a rename.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::windows::ffi::{OsStrExt, OsStringExt};
use std::os::windows::io::{AsRawHandle, FromRawHandle};

use windows_sys::Wdk::Foundation::OBJECT_ATTRIBUTES;
use windows_sys::Wdk::Storage::FileSystem::{
    FILE_FULL_DIR_INFORMATION, FILE_RENAME_INFORMATION, FILE_SYNCHRONOUS_IO_NONALERT,
    FileFullDirectoryInformation, FileRenameInformation, NtCreateFile, NtQueryDirectoryFile,
    NtSetInformationFile,
};
use windows_sys::Win32::Foundation::{
    HANDLE, NTSTATUS, OBJ_CASE_INSENSITIVE, RtlNtStatusToDosError, STATUS_NO_MORE_FILES,
    UNICODE_STRING,
};
use windows_sys::Win32::Storage::FileSystem::{
    FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_NORMAL, FILE_ATTRIBUTE_REPARSE_POINT, FILE_BASIC_INFO,
    FILE_DISPOSITION_INFO, FILE_NAME_NORMALIZED, FILE_SHARE_DELETE, FILE_SHARE_READ,
    FILE_SHARE_WRITE, FileBasicInfo, FileDispositionInfo, GetFinalPathNameByHandleW, SYNCHRONIZE,
    SetFileInformationByHandle, VOLUME_NAME_DOS,
};
use windows_sys::Win32::System::IO::IO_STATUS_BLOCK;

use super::winpath::{self, Names, WinPath};

pub use windows_sys::Wdk::Storage::FileSystem::{
    FILE_CREATE, FILE_DELETE_ON_CLOSE, FILE_DIRECTORY_FILE, FILE_NON_DIRECTORY_FILE, FILE_OPEN,
    FILE_OPEN_IF, FILE_OPEN_REPARSE_POINT,
};
pub use windows_sys::Win32::Storage::FileSystem::{
    DELETE, FILE_ADD_FILE, FILE_ADD_SUBDIRECTORY, FILE_ATTRIBUTE_ARCHIVE, FILE_ATTRIBUTE_HIDDEN,
    FILE_ATTRIBUTE_NOT_CONTENT_INDEXED, FILE_ATTRIBUTE_SYSTEM, FILE_GENERIC_READ,
    FILE_GENERIC_WRITE, FILE_LIST_DIRECTORY, FILE_READ_ATTRIBUTES, FILE_TRAVERSE,
};

/// Opened for others to read, write, rename and delete too, as std opens.
const SHARE_ALL: u32 = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;

/// A reparse tag whose target is another name (symlink, junction): bit 29.
const NAME_SURROGATE_BIT: u32 = 0x2000_0000;

/// Access to walk through and look at a directory.
pub const DIR_READ: u32 = FILE_LIST_DIRECTORY | FILE_TRAVERSE | FILE_READ_ATTRIBUTES;
/// Access to also create entries in a directory.
pub const DIR_WRITE: u32 = DIR_READ | FILE_ADD_FILE | FILE_ADD_SUBDIRECTORY;

fn nt_error(status: NTSTATUS) -> io::Error {
    // SAFETY: a pure table lookup.
    let code = unsafe { RtlNtStatusToDosError(status) };
    io::Error::from_raw_os_error(code as i32)
}

/// A name as NT takes it; one component only: a separator would make it a
/// path, and `:` would name a stream.
fn wide_name(name: &OsStr) -> io::Result<Vec<u16>> {
    let wide: Vec<u16> = name.encode_wide().collect();
    let forbidden = [u16::from(b'\\'), u16::from(b'/'), u16::from(b':'), 0];
    if wide.iter().any(|c| forbidden.contains(c)) || wide.len() > 32_767 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not a single file name"),
        ));
    }
    Ok(wide)
}

/// Opens `name` relative to the directory `dir` (an empty name: `dir`
/// itself again, with other access). `disposition` is `FILE_OPEN`,
/// `FILE_CREATE` or `FILE_OPEN_IF`; `options` are `FILE_*` create options
/// (`FILE_OPEN_REPARSE_POINT` opens a link itself instead of following it).
/// Synchronous, shared like std's opens, case-insensitive like Win32.
pub fn open_relative(
    dir: &File,
    name: &OsStr,
    access: u32,
    disposition: u32,
    options: u32,
) -> io::Result<File> {
    let wide = wide_name(name)?;
    let bytes = u16::try_from(wide.len() * 2)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidFilename, "the name is too long"))?;
    let object_name = UNICODE_STRING {
        Length: bytes,
        MaximumLength: bytes,
        Buffer: wide.as_ptr().cast_mut(),
    };
    let attributes = OBJECT_ATTRIBUTES {
        Length: size_of::<OBJECT_ATTRIBUTES>() as u32,
        RootDirectory: dir.as_raw_handle() as HANDLE,
        ObjectName: &object_name,
        Attributes: OBJ_CASE_INSENSITIVE,
        SecurityDescriptor: std::ptr::null(),
        SecurityQualityOfService: std::ptr::null(),
    };
    let mut handle: HANDLE = std::ptr::null_mut();
    // SAFETY: plain data; zero is a valid bit pattern.
    let mut status_block: IO_STATUS_BLOCK = unsafe { std::mem::zeroed() };
    // SAFETY: every pointer is to a live local of the declared type; the
    // name buffer outlives the call.
    let status = unsafe {
        NtCreateFile(
            &mut handle,
            access | SYNCHRONIZE,
            &attributes,
            &mut status_block,
            std::ptr::null(),
            FILE_ATTRIBUTE_NORMAL,
            SHARE_ALL,
            disposition,
            options | FILE_SYNCHRONOUS_IO_NONALERT,
            std::ptr::null(),
            0,
        )
    };
    if status < 0 {
        return Err(nt_error(status));
    }
    // SAFETY: NtCreateFile succeeded, so `handle` is an open handle we own.
    Ok(unsafe { File::from_raw_handle(handle as _) })
}

/// The path the file system gives the object behind `file`: every link
/// resolved, long names (never 8.3), true case.
pub fn final_path(file: &File) -> io::Result<WinPath> {
    let mut buffer = vec![0u16; 512];
    loop {
        // SAFETY: the buffer is valid for `len` units.
        let written = unsafe {
            GetFinalPathNameByHandleW(
                file.as_raw_handle() as HANDLE,
                buffer.as_mut_ptr(),
                buffer.len() as u32,
                FILE_NAME_NORMALIZED | VOLUME_NAME_DOS,
            )
        } as usize;
        if written == 0 {
            return Err(io::Error::last_os_error());
        }
        if written < buffer.len() {
            buffer.truncate(written);
            break;
        }
        // Too small: `written` is the size needed, with the NUL.
        buffer.resize(written + 1, 0);
    }
    let text = String::from_utf16(&buffer).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "the path has a name that is not valid Unicode",
        )
    })?;
    winpath::parse(&text, None, Names::Reported)
        .map_err(|problem| io::Error::new(io::ErrorKind::InvalidData, problem.message(&text)))
}

/// Renames the file open as `file` to `name` in the directory `dir`,
/// replacing what is there when `replace` is set (a link there is replaced,
/// never followed). Neither the file nor the directory is looked up by path.
pub fn rename_into(file: &File, dir: &File, name: &OsStr, replace: bool) -> io::Result<()> {
    let wide = wide_name(name)?;
    let header = std::mem::offset_of!(FILE_RENAME_INFORMATION, FileName);
    let size = header + wide.len() * 2;
    // u64s: aligned for the structure's handle field.
    let mut buffer = vec![0u64; size.div_ceil(8)];
    let info = buffer.as_mut_ptr().cast::<FILE_RENAME_INFORMATION>();
    // SAFETY: the buffer is large enough and aligned for the header and the
    // name written after it.
    unsafe {
        (*info).Anonymous.ReplaceIfExists = replace;
        (*info).RootDirectory = dir.as_raw_handle() as HANDLE;
        (*info).FileNameLength = (wide.len() * 2) as u32;
        std::ptr::copy_nonoverlapping(
            wide.as_ptr(),
            buffer.as_mut_ptr().cast::<u8>().add(header).cast::<u16>(),
            wide.len(),
        );
    }
    // SAFETY: IO_STATUS_BLOCK is plain data, valid when all zero.
    let mut status_block: IO_STATUS_BLOCK = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `status_block` is a live local, and the buffer
    // holds a FILE_RENAME_INFORMATION of `size` bytes.
    let status = unsafe {
        NtSetInformationFile(
            file.as_raw_handle() as HANDLE,
            &mut status_block,
            buffer.as_ptr().cast(),
            size as u32,
            FileRenameInformation,
        )
    };
    if status < 0 {
        return Err(nt_error(status));
    }
    Ok(())
}

/// Marks the file open as `file` for deletion when its last handle closes
/// (it must be open with `DELETE` access).
pub fn delete_when_closed(file: &File) -> io::Result<()> {
    let info = FILE_DISPOSITION_INFO { DeleteFile: true };
    // SAFETY: `info` is a live local of the size given.
    let done = unsafe {
        SetFileInformationByHandle(
            file.as_raw_handle() as HANDLE,
            FileDispositionInfo,
            (&raw const info).cast(),
            size_of::<FILE_DISPOSITION_INFO>() as u32,
        )
    };
    if done == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sets the attributes (hidden, system, ...) of the file open as `file`,
/// leaving its times alone. It must be open with `FILE_WRITE_ATTRIBUTES`.
pub fn set_attributes(file: &File, attributes: u32) -> io::Result<()> {
    let info = FILE_BASIC_INFO {
        CreationTime: 0,
        LastAccessTime: 0,
        LastWriteTime: 0,
        ChangeTime: 0,
        // Zero would mean "leave as they are".
        FileAttributes: if attributes == 0 {
            FILE_ATTRIBUTE_NORMAL
        } else {
            attributes
        },
    };
    // SAFETY: `info` is a live local of the size given.
    let done = unsafe {
        SetFileInformationByHandle(
            file.as_raw_handle() as HANDLE,
            FileBasicInfo,
            (&raw const info).cast(),
            size_of::<FILE_BASIC_INFO>() as u32,
        )
    };
    if done == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// One entry of a directory listed through its handle.
#[derive(Debug, Clone)]
pub struct RawEntry {
    pub name: OsString,
    pub attributes: u32,
    /// The reparse tag, for entries that are reparse points.
    pub reparse_tag: u32,
}

impl RawEntry {
    /// A symbolic link or a junction: a reparse point naming another path.
    pub fn is_link(&self) -> bool {
        self.attributes & FILE_ATTRIBUTE_REPARSE_POINT != 0
            && self.reparse_tag & NAME_SURROGATE_BIT != 0
    }

    pub fn is_dir(&self) -> bool {
        self.attributes & FILE_ATTRIBUTE_DIRECTORY != 0
    }
}

/// The entries of a directory, read through its handle (which must be open
/// with `FILE_LIST_DIRECTORY`), without `.` and `..`.
pub struct RawEntries {
    dir: File,
    /// u64s: entries are 8-byte aligned.
    buffer: Vec<u64>,
    /// Where the next unread entry starts in the buffer, if any.
    next: Option<usize>,
    first: bool,
    done: bool,
}

impl RawEntries {
    /// The directory's handle, for lookups relative to it.
    pub fn dir(&self) -> &File {
        &self.dir
    }

    pub fn new(dir: File) -> RawEntries {
        RawEntries {
            dir,
            buffer: vec![0u64; 8 * 1024],
            next: None,
            first: true,
            done: false,
        }
    }

    /// Reads the next batch of entries into the buffer; false at the end.
    fn refill(&mut self) -> io::Result<bool> {
        // SAFETY: plain data; zero is a valid bit pattern.
        let mut status_block: IO_STATUS_BLOCK = unsafe { std::mem::zeroed() };
        // SAFETY: the buffer is valid for its length in bytes; the handle is
        // synchronous, so no event or completion routine is needed.
        let status = unsafe {
            NtQueryDirectoryFile(
                self.dir.as_raw_handle() as HANDLE,
                std::ptr::null_mut(),
                None,
                std::ptr::null(),
                &mut status_block,
                self.buffer.as_mut_ptr().cast(),
                (self.buffer.len() * 8) as u32,
                FileFullDirectoryInformation,
                false,
                std::ptr::null(),
                self.first,
            )
        };
        self.first = false;
        if status == STATUS_NO_MORE_FILES {
            return Ok(false);
        }
        if status < 0 {
            return Err(nt_error(status));
        }
        Ok(status_block.Information != 0)
    }

    /// The entry at `offset` in the buffer, and where the next one starts.
    fn entry_at(&self, offset: usize) -> (RawEntry, Option<usize>) {
        let base = self.buffer.as_ptr().cast::<u8>();
        // SAFETY: the kernel wrote whole, aligned entries within the buffer,
        // each followed by its name of `FileNameLength` bytes.
        unsafe {
            let info = base.add(offset).cast::<FILE_FULL_DIR_INFORMATION>();
            let name_ptr = base
                .add(offset + std::mem::offset_of!(FILE_FULL_DIR_INFORMATION, FileName))
                .cast::<u16>();
            let name_len = (*info).FileNameLength as usize / 2;
            let name = std::slice::from_raw_parts(name_ptr, name_len);
            let step = (*info).NextEntryOffset as usize;
            let entry = RawEntry {
                name: OsString::from_wide(name),
                attributes: (*info).FileAttributes,
                reparse_tag: (*info).EaSize,
            };
            (entry, (step != 0).then_some(offset + step))
        }
    }
}

impl Iterator for RawEntries {
    type Item = io::Result<RawEntry>;

    fn next(&mut self) -> Option<io::Result<RawEntry>> {
        loop {
            if let Some(offset) = self.next {
                let (entry, next) = self.entry_at(offset);
                self.next = next;
                if entry.name == "." || entry.name == ".." {
                    continue;
                }
                return Some(Ok(entry));
            }
            if self.done {
                return None;
            }
            match self.refill() {
                Ok(true) => self.next = Some(0),
                Ok(false) => {
                    self.done = true;
                    return None;
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}
