//! Landlock: what the call's processes may read, run and write, by path.
//!
//! - Read and run: the roots, `--bash-read` directories, the system
//!   directories programs need, and a short list of files under `/etc`
//!   (never `/etc/shadow`, `/root`, `/home`, `/proc`).
//! - Write: nothing in read-only mode; the roots and the call's private
//!   temporary directory otherwise, and never a device node, FIFO or socket.
//! - No TCP bind or connect (ABI 4+); no signal to, and no abstract socket
//!   of, a process outside the call (ABI 6+).
//!
//! The paths are opened once, when the fork server starts; each call builds
//! its ruleset from those descriptors (and its fresh temporary directory),
//! and each command applies it before it executes its program, with two system
//! calls. The roots and `--bash-read` directories (canonical when the
//! server started) are opened without following a link anywhere on their
//! way; when the fork server opens them again (a new view's template), one
//! that is no longer the directory it was at start is left out.

use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope,
};

use super::error::{Error, Result};
use super::{Confinement, DEVICES, ETC_FILES, SYSTEM_DIRS, namespaces};

/// The Landlock ABI this kernel speaks (0: none).
pub fn kernel_abi() -> i32 {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION).
    let version = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, 0usize, 0usize, 1u32) };
    i32::try_from(version).unwrap_or(0).max(0)
}

/// A built ruleset.
#[derive(Debug)]
pub struct Rules {
    fd: OwnedFd,
}

impl Rules {
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// The paths a ruleset grants, each opened once (`O_PATH`) with the rights
/// it gets. A fork server opens them when it starts; each call then builds
/// its ruleset from these descriptors without looking a path up again.
#[derive(Debug)]
pub struct Opened {
    rules: Vec<(OwnedFd, BitFlags<AccessFs>)>,
}

fn handled() -> BitFlags<AccessFs> {
    AccessFs::from_all(ABI::V6)
}

/// Read (and run) rights.
fn read() -> BitFlags<AccessFs> {
    AccessFs::from_read(ABI::V6)
}

/// Every right but making device nodes, FIFOs and sockets.
fn write() -> BitFlags<AccessFs> {
    handled()
        & !(AccessFs::MakeChar | AccessFs::MakeBlock | AccessFs::MakeFifo | AccessFs::MakeSock)
}

/// A directory's device and inode.
type Identity = (u64, u64);

/// What each root and `--bash-read` directory was when the fork server
/// started: opened without following a link, its device and inode (None:
/// it could not be opened so, or was a link).
#[derive(Debug, Clone, Default)]
pub struct Started(Vec<(PathBuf, Option<Identity>)>);

impl Started {
    /// Looks at the roots and `--bash-read` directories of `confinement`.
    pub fn look(confinement: &Confinement) -> Started {
        Started(
            user_paths(confinement)
                .map(|path| (path.clone(), open_user_path(path).ok().map(|(_, id)| id)))
                .collect(),
        )
    }

    fn get(&self, path: &Path) -> Option<Identity> {
        self.0
            .iter()
            .find(|(p, _)| p == path)
            .and_then(|(_, id)| *id)
    }
}

/// The roots and `--bash-read` directories `confinement` grants (all it
/// grants but its temporary directory and the system's own paths).
fn user_paths(confinement: &Confinement) -> impl Iterator<Item = &PathBuf> {
    confinement
        .readable
        .iter()
        .chain(&confinement.writable)
        .filter(move |p| Some(*p) != confinement.temp.as_ref())
}

/// Opens a root or `--bash-read` directory (`O_PATH`) without following a
/// link anywhere on its way, the last component included; a link is
/// refused. Returns it with its device and inode.
fn open_user_path(path: &Path) -> Result<(OwnedFd, Identity)> {
    let opening = || format!("opening {}", path.display());
    let fd = namespaces::open_without_links(path).map_err(|e| Error::io(opening(), e))?;
    let st = rustix::fs::fstat(&fd).map_err(|e| Error::io(opening(), e))?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Symlink {
        return Err(Error::Unsafe {
            path: path.to_path_buf(),
            why: "a link",
        });
    }
    Ok((fd, (st.st_dev, st.st_ino)))
}

impl Opened {
    /// Opens every path `confinement` grants; paths that do not exist are
    /// left out (a system directory this machine lacks). The system's own
    /// paths are opened by name (`/bin -> usr/bin` is followed); the roots
    /// and `--bash-read` directories without following any link (see
    /// [`open_user_path`]), and, given `started`, only where each is still
    /// the directory it was then.
    pub fn open(confinement: &Confinement, started: Option<&Started>) -> Opened {
        let devices = AccessFs::ReadFile | AccessFs::WriteFile;
        let fixed = |list: &[&str]| list.iter().map(PathBuf::from).collect::<Vec<_>>();
        let mut opened = Opened { rules: Vec::new() };
        for (paths, access) in [
            (fixed(SYSTEM_DIRS), read()),
            (fixed(ETC_FILES), read()),
            (fixed(DEVICES), devices),
        ] {
            for path in paths {
                opened.add(&path, access);
            }
        }
        let lists = [
            (&confinement.readable, read()),
            (&confinement.writable, write()),
        ];
        for (path, access) in lists
            .into_iter()
            .flat_map(|(list, access)| list.iter().map(move |p| (p, access)))
        {
            if Some(path) == confinement.temp.as_ref() {
                // The call's temporary directory, made by the server: by name.
                opened.add(path, access);
                continue;
            }
            let (fd, now) = match open_user_path(path) {
                Ok(found) => found,
                Err(why) => {
                    // Not there as it was (or a link on its way): nothing
                    // to grant, and the view leaves it out too.
                    tracing::warn!("left {} out of the Landlock rules: {why}", path.display());
                    continue;
                }
            };
            // Fail closed: a root or --bash-read directory that is not the
            // directory (device and inode) the fork server started with is
            // left out of the ruleset, never granted in its place: a call
            // that swapped a directory on a nested root's way for a link,
            // or replaced a root, does not get the next view's rules to
            // grant what is there now. A server without a template always
            // behaved so: its descriptors were opened once, at start.
            if let Some(started) = started
                && started.get(path) != Some(now)
            {
                tracing::warn!(
                    "left {} out of the Landlock rules: not the directory the server started with",
                    path.display()
                );
                continue;
            }
            opened.push(fd, access);
        }
        opened
    }

    /// Adds `path`, opened by name, with `access`.
    pub fn add(&mut self, path: &Path, access: BitFlags<AccessFs>) {
        use rustix::fs::{Mode, OFlags};
        if let Ok(fd) = rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()) {
            self.push(fd, access);
        }
    }

    /// Adds `fd` with `access` (a file gets the rights a file can have).
    fn push(&mut self, fd: OwnedFd, access: BitFlags<AccessFs>) {
        let is_dir = rustix::fs::fstat(&fd).is_ok_and(|st| {
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Directory
        });
        let access = if is_dir {
            access
        } else {
            access & AccessFs::from_file(ABI::V6)
        };
        // Kept above the descriptors a call's supervisor takes over (0 to
        // 3), since a fork server's descriptors outlive many calls.
        if let Ok(fd) = rustix::io::fcntl_dupfd_cloexec(&fd, 10) {
            self.rules.push((fd, access));
        }
    }

    /// How many paths are granted (tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.rules.len()
    }
}

/// Builds a ruleset from the opened paths, plus `writable` directories
/// opened now (a call's fresh temporary file system: a rule on the
/// directory it is mounted over would not reach into it).
/// `writable`: directories opened now (the call's fresh temporary file
/// system); `readable`: files opened now (the view's own account files).
pub fn build(opened: &Opened, writable: &[PathBuf], readable: &[&Path]) -> Result<Rules> {
    let text = Error::Landlock;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(handled())
        .map_err(text)?
        .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
        .map_err(text)?
        .scope(Scope::AbstractUnixSocket | Scope::Signal)
        .map_err(text)?
        .create()
        .map_err(text)?;
    for (fd, access) in &opened.rules {
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd.as_fd(), *access))
            .map_err(text)?;
    }
    let mut now = Opened { rules: Vec::new() };
    for dir in writable {
        now.add(dir, write());
    }
    for file in readable {
        now.add(file, read());
    }
    for (fd, access) in &now.rules {
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd.as_fd(), *access))
            .map_err(text)?;
    }
    let fd: Option<OwnedFd> = ruleset.into();
    let fd = fd.ok_or(Error::Unavailable("the kernel has no Landlock support"))?;
    Ok(Rules { fd })
}

/// Applies the ruleset to the calling process.
///
/// # Safety
/// Only in a child before exec: it makes system calls only.
pub unsafe fn restrict_self(ruleset: RawFd) -> std::io::Result<()> {
    // SAFETY: plain system calls with integer arguments.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn confinement(readable: &[&Path]) -> Confinement {
        Confinement {
            readable: readable.iter().map(|p| p.to_path_buf()).collect(),
            writable: Vec::new(),
            temp: None,
            read_only: true,
            layers: Default::default(),
            max_tasks: 1,
            cpu_seconds: 1,
            address_space: 1,
        }
    }

    /// A nested root whose way a call swapped for a link to `..` (which
    /// leads to a directory of the same name outside the roots), and a root
    /// replaced by another directory: opened again, neither is granted.
    #[test]
    fn a_root_not_the_one_the_server_started_with_is_left_out() {
        let tmp = tempfile::tempdir().unwrap();
        let d = std::fs::canonicalize(tmp.path()).unwrap();
        let (root, nested, other) = (d.join("r"), d.join("r/sub/shared"), d.join("o"));
        std::fs::create_dir_all(&nested).unwrap();
        std::fs::create_dir_all(d.join("shared")).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let none = Opened::open(&confinement(&[]), None).len();
        let c = confinement(&[&root, &nested, &other]);
        let started = Started::look(&c);
        assert_eq!(Opened::open(&c, Some(&started)).len(), none + 3);
        std::fs::rename(root.join("sub"), root.join("sub.old")).unwrap();
        std::os::unix::fs::symlink("..", root.join("sub")).unwrap();
        assert!(root.join("sub/shared").is_dir(), "the way leads outside");
        std::fs::rename(&other, d.join("o.old")).unwrap();
        std::fs::create_dir(&other).unwrap();
        assert_eq!(Opened::open(&c, Some(&started)).len(), none + 1);
        // Given no start to compare with, the link is still not followed.
        assert_eq!(Opened::open(&c, None).len(), none + 2);
        // Put back, the nested root is granted again.
        std::fs::remove_file(root.join("sub")).unwrap();
        std::fs::rename(root.join("sub.old"), root.join("sub")).unwrap();
        assert_eq!(Opened::open(&c, Some(&started)).len(), none + 2);
    }
}
