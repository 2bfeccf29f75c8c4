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
//! and each command applies it between fork and exec, with two system
//! calls.

use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope,
};

use super::{Confinement, DEVICES, ETC_FILES, SYSTEM_DIRS};

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

impl Opened {
    /// Opens every path `confinement` grants; paths that do not exist are
    /// left out (a system directory this machine lacks).
    pub fn open(confinement: &Confinement) -> Opened {
        let devices = AccessFs::ReadFile | AccessFs::WriteFile;
        let fixed = |list: &[&str]| list.iter().map(PathBuf::from).collect::<Vec<_>>();
        let mut opened = Opened { rules: Vec::new() };
        for (paths, access) in [
            (fixed(SYSTEM_DIRS), read()),
            (fixed(ETC_FILES), read()),
            (fixed(DEVICES), devices),
            (confinement.readable.clone(), read()),
            (confinement.writable.clone(), write()),
        ] {
            for path in paths {
                opened.add(&path, access);
            }
        }
        opened
    }

    /// Adds `path` with `access` (a file gets the rights a file can have).
    pub fn add(&mut self, path: &std::path::Path, access: BitFlags<AccessFs>) {
        use rustix::fs::{Mode, OFlags};
        let Ok(fd) = rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()) else {
            return;
        };
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
}

/// Builds a ruleset from the opened paths, plus `writable` directories
/// opened now (a call's fresh temporary file system: a rule on the
/// directory it is mounted over would not reach into it).
pub fn build(opened: &Opened, writable: &[PathBuf]) -> Result<Rules, String> {
    let text = |e: landlock::RulesetError| e.to_string();
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
    for (fd, access) in &now.rules {
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd.as_fd(), *access))
            .map_err(text)?;
    }
    let fd: Option<OwnedFd> = ruleset.into();
    let fd = fd.ok_or("the kernel has no Landlock support")?;
    Ok(Rules { fd })
}

/// Applies the ruleset to the calling process.
///
/// # Safety
/// Only in a child between fork and exec: it makes system calls only.
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
