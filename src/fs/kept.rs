//! What a replaced file passes on to the file that replaces it (Unix): its
//! owner and group, its mode, and on Linux every extended attribute, which
//! is where POSIX ACLs (`system.posix_acl_access`), SELinux labels
//! (`security.selinux`) and file capabilities (`security.capability`) live.
//!
//! An atomic write makes a new inode, so none of this survives unless it is
//! copied. Who may read, write or run the file must not change because it
//! was edited: when something cannot be copied (another user's file while
//! we are not root, a `security.*` attribute we lack the privilege for), the
//! write is refused with [`NotKept`] rather than done with less or more
//! access than before. Set-id bits are the one exception: they are set, and
//! where the kernel clears them (a setgid file whose group we are not in)
//! that only narrows what running the file grants.
//!
//! Order matters: the content first (a write clears set-id bits and file
//! capabilities), then the owner (`fchown` clears set-id bits and file
//! capabilities too), then the mode, then the attributes.

use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;

use crate::fs::atomic::Previous;

/// Something of the old file that the new one could not be given.
#[derive(Debug)]
pub struct NotKept {
    /// What: "owner (user 1000, group 1000)", "extended attribute user.x".
    pub what: String,
    /// Why, as the system said it.
    pub cause: String,
}

impl std::fmt::Display for NotKept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "its {} cannot be kept ({})", self.what, self.cause)
    }
}

impl std::error::Error for NotKept {}

fn not_kept(what: impl Into<String>, cause: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        NotKept {
            what: what.into(),
            cause: cause.to_string(),
        },
    )
}

/// Gives `new` (the temporary file, content written) the owner, group, mode
/// and extended attributes of `previous`, then checks that it has them.
pub fn pass_on(previous: Previous<'_>, new: &File) -> io::Result<()> {
    let old = previous.metadata;
    let owner = || format!("owner (user {}, group {})", old.uid(), old.gid());
    let now = new.metadata()?;
    if now.uid() != old.uid() || now.gid() != old.gid() {
        rustix::fs::fchown(
            new,
            Some(rustix::fs::Uid::from_raw(old.uid())),
            Some(rustix::fs::Gid::from_raw(old.gid())),
        )
        .map_err(|e| not_kept(owner(), io::Error::from(e)))?;
    }
    let mode = old.mode() & 0o7777;
    rustix::fs::fchmod(new, rustix::fs::Mode::from_raw_mode(mode as _))
        .map_err(|e| not_kept(format!("mode {mode:04o}"), io::Error::from(e)))?;
    #[cfg(target_os = "linux")]
    if let Some(file) = previous.file {
        xattrs::copy(file, new)?;
    }

    let now = new.metadata()?;
    if now.uid() != old.uid() || now.gid() != old.gid() {
        return Err(not_kept(owner(), "the system did not keep it"));
    }
    if (now.mode() ^ old.mode()) & 0o777 != 0 {
        return Err(not_kept(
            format!("mode {mode:04o}"),
            format_args!("it became {:04o}", now.mode() & 0o7777),
        ));
    }
    if (now.mode() ^ old.mode()) & 0o7000 != 0 {
        tracing::debug!(
            "set-id bits of mode {mode:04o} not kept by the kernel: now {:04o}",
            now.mode() & 0o7777
        );
    }
    Ok(())
}

/// Extended attributes, through the open handles (never a path).
#[cfg(target_os = "linux")]
mod xattrs {
    use std::ffi::{CStr, CString};
    use std::fs::File;
    use std::io;

    use rustix::io::Errno;

    use super::not_kept;

    /// Makes `new`'s attributes those of `old`: each of `old`'s set where
    /// `new` lacks it or differs (a label the new file got already is left
    /// alone, which needs no privilege), and any `new` has that `old` has
    /// not removed (a default ACL of the directory, inherited by the new
    /// file, would otherwise change who may read it).
    pub fn copy(old: &File, new: &File) -> io::Result<()> {
        let wanted = names(old)?;
        let present = names(new)?;
        if wanted.is_empty() && present.is_empty() {
            return Ok(());
        }
        for name in present.iter().filter(|n| !wanted.contains(n)) {
            match rustix::fs::fremovexattr(new, name.as_c_str()) {
                Ok(()) | Err(Errno::NODATA) => {}
                Err(e) => {
                    return Err(not_kept(
                        format!("lack of the {}", shown(name)),
                        format_args!(
                            "the new file gets it from its directory and it cannot be removed: {}",
                            io::Error::from(e)
                        ),
                    ));
                }
            }
        }
        for name in &wanted {
            let Some(wanted_value) = value(old, name)? else {
                continue;
            };
            if value(new, name)?.as_deref() == Some(wanted_value.as_slice()) {
                continue;
            }
            rustix::fs::fsetxattr(
                new,
                name.as_c_str(),
                &wanted_value,
                rustix::fs::XattrFlags::empty(),
            )
            .map_err(|e| not_kept(shown(name), io::Error::from(e)))?;
        }
        Ok(())
    }

    /// How an attribute is named in a refusal.
    fn shown(name: &CStr) -> String {
        let name = name.to_string_lossy();
        match name.as_ref() {
            "system.posix_acl_access" => "POSIX ACL (system.posix_acl_access)".into(),
            _ => format!("extended attribute {name}"),
        }
    }

    /// The names of `file`'s attributes; none where the file system has no
    /// attributes at all.
    fn names(file: &File) -> io::Result<Vec<CString>> {
        let list = loop {
            let size = match rustix::fs::flistxattr_query(file) {
                Ok(0) | Err(Errno::NOTSUP) => return Ok(Vec::new()),
                Ok(size) => size,
                Err(e) => return Err(e.into()),
            };
            let mut list = vec![0u8; size];
            match rustix::fs::flistxattr(file, &mut list[..]) {
                Ok(len) => {
                    list.truncate(len);
                    break list;
                }
                // Grew since the query: ask again.
                Err(Errno::RANGE) => continue,
                Err(e) => return Err(e.into()),
            }
        };
        Ok(list
            .split(|&b| b == 0)
            .filter(|name| !name.is_empty())
            .filter_map(|name| CString::new(name).ok())
            .collect())
    }

    /// The value of attribute `name` of `file` (None: it has none).
    fn value(file: &File, name: &CStr) -> io::Result<Option<Vec<u8>>> {
        loop {
            let size = match rustix::fs::fgetxattr_query(file, name) {
                Ok(size) => size,
                Err(Errno::NODATA) => return Ok(None),
                Err(e) => return Err(e.into()),
            };
            if size == 0 {
                return Ok(Some(Vec::new()));
            }
            let mut value = vec![0u8; size];
            match rustix::fs::fgetxattr(file, name, &mut value[..]) {
                Ok(len) => {
                    value.truncate(len);
                    return Ok(Some(value));
                }
                Err(Errno::RANGE) => continue,
                Err(Errno::NODATA) => return Ok(None),
                Err(e) => return Err(e.into()),
            }
        }
    }
}
