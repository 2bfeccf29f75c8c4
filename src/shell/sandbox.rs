//! The Landlock sandbox for commands `bash` runs (SECURITY.md 2).
//!
//! The ruleset is built once, in the server: read (and execute) access to
//! the roots and the system directories programs need; write access to
//! nothing in read-only mode, to the roots and a private temporary directory
//! otherwise; no TCP bind or connect (ABI 4+); no signals to, or abstract
//! sockets of, processes outside (ABI 6+). Each child applies it between
//! fork and exec with two raw system calls (`prctl(PR_SET_NO_NEW_PRIVS)` and
//! `landlock_restrict_self`), which is safe to do in a forked child.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};

/// System directories a program may read and execute from.
const SYSTEM_DIRS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix/store",
];
/// Device files programs open.
const READ_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/urandom",
    "/dev/random",
    "/dev/full",
];

/// A built ruleset, applied to each child.
#[derive(Debug)]
pub struct Sandbox {
    ruleset: OwnedFd,
    /// What the kernel gave, for the log.
    pub description: String,
}

impl Sandbox {
    /// Builds the ruleset. `writable` lists directories children may write
    /// (empty in read-only mode). None (with the reason) if the kernel has
    /// no Landlock.
    pub fn build(readable: &[PathBuf], writable: &[PathBuf]) -> Result<Sandbox, String> {
        let abi = ABI::V6;
        let fs_all = AccessFs::from_all(abi);
        let read = AccessFs::from_read(abi);
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(fs_all)
            .map_err(|e| e.to_string())?
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(|e| e.to_string())?
            .scope(Scope::AbstractUnixSocket | Scope::Signal)
            .map_err(|e| e.to_string())?
            .create()
            .map_err(|e| e.to_string())?;
        let existing = |paths: &[&str]| -> Vec<PathBuf> {
            paths
                .iter()
                .map(PathBuf::from)
                .filter(|p| p.exists())
                .collect()
        };
        ruleset = ruleset
            .add_rules(path_beneath_rules(existing(SYSTEM_DIRS), read))
            .map_err(|e| e.to_string())?
            .add_rules(path_beneath_rules(
                existing(READ_DEVICES),
                AccessFs::ReadFile | AccessFs::WriteFile,
            ))
            .map_err(|e| e.to_string())?
            .add_rules(path_beneath_rules(readable, read))
            .map_err(|e| e.to_string())?;
        if !writable.is_empty() {
            ruleset = ruleset
                .add_rules(path_beneath_rules(writable, fs_all))
                .map_err(|e| e.to_string())?;
        }
        let status = probe_status();
        let Some(fd): Option<OwnedFd> = ruleset.into() else {
            return Err("the kernel has no Landlock support".to_string());
        };
        Ok(Sandbox {
            ruleset: fd,
            description: status,
        })
    }

    /// The ruleset descriptor, for [`apply_in_child`].
    pub fn raw_fd(&self) -> RawFd {
        self.ruleset.as_raw_fd()
    }
}

/// Which Landlock features this kernel has, in words (for the start-up log).
fn probe_status() -> String {
    // landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    let version = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, 0usize, 0usize, 1u32) };
    match version {
        v if v >= 6 => format!(
            "Landlock ABI {v}: file-system, TCP and scope (signals, abstract sockets) restrictions"
        ),
        v if v >= 4 => format!("Landlock ABI {v}: file-system and TCP restrictions"),
        v if v >= 1 => {
            format!("Landlock ABI {v}: file-system restrictions only (no network restriction)")
        }
        _ => "no Landlock".to_string(),
    }
}

/// Applies the ruleset to the calling process. Only for a forked child,
/// before exec: it makes no allocation and calls only async-signal-safe
/// system calls.
///
/// # Safety
/// Must be called in a child between fork and exec (`pre_exec`).
pub unsafe fn apply_in_child(ruleset: RawFd) -> std::io::Result<()> {
    // SAFETY: plain system calls with integer arguments.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // The server ignores SIGXFSZ; commands get the default back.
        libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
    }
    Ok(())
}

/// A private temporary directory for commands that may write.
pub fn private_temp_dir() -> std::io::Result<PathBuf> {
    let base = std::env::temp_dir();
    for attempt in 0..100u32 {
        let dir = base.join(format!("rootbound-{}-{attempt}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
                return Ok(dir);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(
        "no free name for a temporary directory",
    ))
}
