//! No privileges and bounded resources for each command: the call's
//! supervisor empties the bounding set for all its commands before the call
//! comes (root gets none back on exec); before it executes its program, each command
//! drops the capabilities it still has, no new privileges can be gained,
//! and resource limits bound processes, address space, CPU time and core
//! dumps.
//!
//! Without this, a command running as root (or with a user namespace's
//! capabilities) could change the owner, mode and times of any file it can
//! reach, or make device nodes.

use super::Confinement;

/// The limits one command gets.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_tasks: u64,
    pub cpu_seconds: u64,
    pub address_space: u64,
}

impl Limits {
    pub fn of(confinement: &Confinement) -> Limits {
        Limits {
            max_tasks: confinement.max_tasks,
            cpu_seconds: confinement.cpu_seconds,
            address_space: confinement.address_space,
        }
    }
}

/// Lowers a limit to `soft`/`hard`, never raising it above what it is
/// (raising needs a capability the server may not have, and is never the
/// point).
fn set_limit(resource: libc::__rlimit_resource_t, soft: u64, hard: u64) -> std::io::Result<()> {
    let mut current = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit with valid structs.
    unsafe {
        if libc::getrlimit(resource, &mut current) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let hard = hard.min(current.rlim_max);
        let limit = libc::rlimit {
            rlim_cur: soft.min(hard),
            rlim_max: hard,
        };
        if libc::setrlimit(resource, &limit) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Sets every signal back to its default action, then unblocks them all.
/// The supervisor blocks SIGTERM and SIGCHLD for itself and ignores
/// SIGPIPE, and a blocked or ignored signal survives `exec`: a command
/// must start as a shell would start it, or `kill -TERM`, `timeout` and
/// test runners that stop their children do nothing until the time limit.
/// Dispositions go first: a child that shares its parent's memory must not
/// run one of the parent's handlers.
///
/// # Safety
/// Only in a child before `exec`: it makes async-signal-safe calls only.
pub unsafe fn reset_signals() -> std::io::Result<()> {
    // The kernel's own calls, not libc's wrappers: glibc keeps signals 32
    // and 33 for itself and will not touch them, and one ignored by
    // whoever started the server would still be ignored in the command.
    // All zeros is the kernel's `struct sigaction` for SIG_DFL with no
    // flags and an empty mask, whatever its layout; 8 bytes of sigset.
    let default_action = [0u64; 4];
    let empty_set = 0u64;
    // SAFETY: rt_sigaction and rt_sigprocmask on this thread, with
    // buffers that outlive the calls.
    unsafe {
        // SIGKILL and SIGSTOP fail harmlessly.
        for signal in 1..=64 {
            libc::syscall(
                libc::SYS_rt_sigaction,
                signal,
                default_action.as_ptr(),
                std::ptr::null_mut::<u64>(),
                8usize,
            );
        }
        if libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &empty_set,
            std::ptr::null_mut::<u64>(),
            8usize,
        ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Takes from every process this one will start the capabilities an
/// `exec` could give them: the bounding set is emptied, root gets none back
/// on exec (locked), and no ambient capability can be raised. This process
/// keeps its own, which it needs until its commands start; each command
/// then drops those too ([`apply`]). Done once per call's supervisor, before
/// its call comes, rather than in each command: each of the 64 drops
/// commits a new set of credentials, and together they were a tenth of a
/// call's start.
///
/// Fails quietly without CAP_SETPCAP (an unprivileged server with no user
/// namespace): its commands then have no capabilities to lose anyway.
pub fn drop_for_descendants() {
    // SAFETY: prctl with integer arguments.
    unsafe {
        // Root keeps no capability across exec, and cannot turn that off.
        const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
        const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
        const SECBIT_NO_SETUID_FIXUP: libc::c_ulong = 1 << 2;
        const SECBIT_NO_SETUID_FIXUP_LOCKED: libc::c_ulong = 1 << 3;
        const SECBIT_NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
        const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;
        let bits = SECBIT_NOROOT
            | SECBIT_NOROOT_LOCKED
            | SECBIT_NO_SETUID_FIXUP
            | SECBIT_NO_SETUID_FIXUP_LOCKED
            | SECBIT_NO_CAP_AMBIENT_RAISE
            | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
        // Fails without CAP_SETPCAP (an unprivileged server with no user
        // namespace): it then has no capabilities to drop anyway.
        libc::prctl(libc::PR_SET_SECUREBITS, bits);
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap);
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
    }
}

/// Applies the resource limits and drops every capability this process
/// still has (the bounding set went earlier: [`drop_for_descendants`]).
///
/// # Safety
/// Only in a child before exec: it makes system calls only.
pub unsafe fn apply(limits: &Limits) -> std::io::Result<()> {
    set_limit(libc::RLIMIT_NPROC, limits.max_tasks, limits.max_tasks)?;
    set_limit(libc::RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 5)?;
    set_limit(libc::RLIMIT_AS, limits.address_space, limits.address_space)?;
    set_limit(libc::RLIMIT_CORE, 0, 0)?;
    // SAFETY: capset and prctl with valid arguments.
    unsafe {
        #[repr(C)]
        struct CapHeader {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        struct CapData {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
        let header = CapHeader {
            version: LINUX_CAPABILITY_VERSION_3,
            pid: 0,
        };
        let data = [
            CapData {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
            CapData {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
        ];
        if libc::syscall(libc::SYS_capset, &header, data.as_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // The server ignores SIGXFSZ (a file-size limit fails its write
        // instead of killing it); commands get the default back.
        libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
    }
    Ok(())
}
