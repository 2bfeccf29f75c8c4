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
//! The ruleset is built in the supervisor and applied in each command
//! between fork and exec, with two system calls.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, path_beneath_rules,
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

fn existing(paths: &[&str]) -> Vec<PathBuf> {
    paths
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.symlink_metadata().is_ok())
        .collect()
}

/// Builds the ruleset for `confinement`.
pub fn build(confinement: &Confinement) -> Result<Rules, String> {
    let abi = ABI::V6;
    let all = AccessFs::from_all(abi);
    let read = AccessFs::from_read(abi);
    let special =
        AccessFs::MakeChar | AccessFs::MakeBlock | AccessFs::MakeFifo | AccessFs::MakeSock;
    let write = all & !special;
    let text = |e: landlock::RulesetError| e.to_string();
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .map_err(text)?
        .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
        .map_err(text)?
        .scope(Scope::AbstractUnixSocket | Scope::Signal)
        .map_err(text)?
        .create()
        .map_err(text)?
        .add_rules(path_beneath_rules(existing(SYSTEM_DIRS), read))
        .map_err(text)?
        .add_rules(path_beneath_rules(existing(ETC_FILES), read))
        .map_err(text)?
        .add_rules(path_beneath_rules(
            existing(DEVICES),
            AccessFs::ReadFile | AccessFs::WriteFile,
        ))
        .map_err(text)?
        .add_rules(path_beneath_rules(&confinement.readable, read))
        .map_err(text)?;
    if !confinement.writable.is_empty() {
        ruleset = ruleset
            .add_rules(path_beneath_rules(&confinement.writable, write))
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
