//! seccomp: system calls the call's processes may not make, compiled by
//! rust-vmm's `seccompiler` (no hand-written BPF).
//!
//! - `socket(2)` of every family: no network (inet, inet6, UDP, raw,
//!   netlink, packet) and no unix socket. `socketpair(2)` stays for stream
//!   and seqpacket pairs only (they are connected to each other and cannot
//!   be aimed anywhere; every other type is refused), and `bind(2)` and `connect(2)` are refused, so not even
//!   a socketpair can send a datagram to a path or listen on an abstract
//!   name.
//! - `mknod`: no device nodes, FIFOs or sockets.
//! - Set-user-ID and set-group-ID bits: `chmod` to them, or a file created
//!   with them, is refused, so a call cannot leave a setuid program behind.
//! - `memfd_create` (its pages escape RLIMIT_AS), and asking a socket for
//!   credentials (it gives the socket an abstract name in the host's
//!   namespace).
//! - inotify (it reports the names of files in directories Landlock would
//!   not let the call list), file leases (they stall other processes'
//!   writes to a file the call can merely read), and `openat2` (its mode
//!   cannot be inspected).
//! - io_uring (its operations would bypass this filter), new namespaces,
//!   mounts, and the kernel's administrative calls.
//! - Every call newer than Linux 6.7 that nobody has reviewed (`listmount`,
//!   `statmount`, `file_setattr`, and whatever comes next): absent.
//! - SysV IPC and POSIX message queues, when no IPC namespace keeps them
//!   apart from the host's (`ipc_shared`).
//! - Metadata changes (mode, owner, times, xattrs) when `metadata` is set:
//!   in read-only mode, and wherever no read-only mount namespace stands in.
//!
//! Architectures other than the one compiled for are killed by the filter's
//! preamble; on x86-64 kernels that run x32 calls, the x32 numbers of the
//! refused calls are refused too.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The two filters: one answering EPERM, one ENOSYS (so that callers with a
/// fallback, like glibc's `clone3` → `clone`, take it).
pub struct Filters {
    pub denied: BpfProgram,
    pub missing: BpfProgram,
}

#[cfg(target_arch = "x86_64")]
const X32: i64 = 0x4000_0000;

/// Calls refused with EPERM whatever their arguments.
fn denied_calls(metadata: bool, ipc_shared: bool) -> Vec<i64> {
    let mut calls = vec![
        libc::SYS_socket,
        libc::SYS_bind,
        libc::SYS_connect,
        libc::SYS_mknodat,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_open_tree,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_kexec_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_acct,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_reboot,
        libc::SYS_syslog,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_quotactl,
        libc::SYS_vhangup,
        libc::SYS_fanotify_init,
    ];
    if ipc_shared {
        calls.extend([
            libc::SYS_msgget,
            libc::SYS_semget,
            libc::SYS_shmget,
            libc::SYS_mq_open,
            libc::SYS_mq_unlink,
        ]);
    }
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        libc::SYS_mknod,
        libc::SYS_kexec_file_load,
        libc::SYS_iopl,
        libc::SYS_ioperm,
    ]);
    if metadata {
        calls.extend([
            libc::SYS_fchmod,
            libc::SYS_fchmodat,
            libc::SYS_fchmodat2,
            libc::SYS_fchown,
            libc::SYS_fchownat,
            libc::SYS_utimensat,
            libc::SYS_setxattr,
            libc::SYS_lsetxattr,
            libc::SYS_fsetxattr,
            libc::SYS_removexattr,
            libc::SYS_lremovexattr,
            libc::SYS_fremovexattr,
            // setxattrat and removexattrat (Linux 6.13), the same number on
            // every architecture.
            463,
            466,
        ]);
        #[cfg(target_arch = "x86_64")]
        calls.extend([
            libc::SYS_chmod,
            libc::SYS_chown,
            libc::SYS_lchown,
            libc::SYS_utime,
            libc::SYS_utimes,
            libc::SYS_futimesat,
        ]);
    }
    calls
}

/// Calls refused with ENOSYS: callers treat them as absent and fall back
/// (glibc's `clone3` to `clone`, `tail -f` from inotify to polling).
fn missing_calls() -> Vec<i64> {
    let mut calls = vec![
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_clone3,
        libc::SYS_openat2,
        libc::SYS_inotify_init1,
        libc::SYS_inotify_add_watch,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.push(libc::SYS_inotify_init);
    // Memory in a memfd counts against no limit of the call's (not
    // RLIMIT_AS); the call's files in memory are its 1 GiB TMPDIR.
    calls.extend([libc::SYS_memfd_create, libc::SYS_memfd_secret]);
    calls.extend(
        (FIRST_UNREVIEWED..=LAST_REFUSED_NUMBER).filter(|n| !REVIEWED_NEWER_CALLS.contains(n)),
    );
    calls
}

/// Calls the kernel added from this number on (Linux 6.8's `statmount`;
/// numbers are the same on every architecture since 424) are refused unless
/// reviewed: a call added later, such as `listmount` (it lists the host's
/// mounts, paths included) or `file_setattr` (it changes a file's
/// attributes), is absent to the call until someone has looked at it.
const FIRST_UNREVIEWED: i64 = 457;
/// The end of the refused range, past the numbers used today, with room for
/// the calls of the coming years.
const LAST_REFUSED_NUMBER: i64 = 511;
/// Newer calls that were looked at and are harmless: `mseal` (seals the
/// caller's own memory), `getxattrat` and `listxattrat` (read what
/// `getxattr` and `listxattr` read).
const REVIEWED_NEWER_CALLS: &[i64] = &[462, 464, 465];

/// `rule` matches when argument `index`, masked with `bits`, equals `bits`.
fn bits_set(index: u8, bits: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(
        index,
        SeccompCmpArgLen::Qword,
        SeccompCmpOp::MaskedEq(bits),
        bits,
    )
    .map_err(|e| e.to_string())
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|e| e.to_string())
}

/// The bits of `socketpair(2)`'s type argument that hold the type (the
/// rest are `SOCK_NONBLOCK` and `SOCK_CLOEXEC`).
const SOCKET_TYPE_MASK: u64 = 0xf;
/// `SO_PASSCRED` and `SO_PASSPIDFD` (asm-generic values, those of x86-64
/// and arm64).
const SO_PASSCRED: u64 = 16;
const SO_PASSPIDFD: u64 = 76;
/// Socket pairs a call may make: connected to each other, never aimed.
const ALLOWED_PAIR_TYPES: &[u64] = &[libc::SOCK_STREAM as u64, libc::SOCK_SEQPACKET as u64];

/// `O_TMPFILE` without its `O_DIRECTORY` part: an unnamed file that
/// `linkat` can give a name later, created with a mode like `O_CREAT`.
const O_TMPFILE_BIT: u64 = 0o20_000_000;

/// Rules refusing a set-user-ID or set-group-ID mode in argument `mode`;
/// with `flags`, only when that argument creates a file (`O_CREAT` or
/// `O_TMPFILE`), since the mode is unused otherwise.
fn setid_rules(mode: u8, flags: Option<u8>) -> Result<Vec<SeccompRule>, String> {
    let mut rules = Vec::new();
    for bit in [libc::S_ISUID, libc::S_ISGID] {
        match flags {
            None => rules.push(rule(vec![bits_set(mode, u64::from(bit))?])?),
            Some(flags) => {
                for creating in [libc::O_CREAT as u64, O_TMPFILE_BIT] {
                    rules.push(rule(vec![
                        bits_set(mode, u64::from(bit))?,
                        bits_set(flags, creating)?,
                    ])?);
                }
            }
        }
    }
    Ok(rules)
}

/// `clone(2)` flags that would create namespaces.
const NAMESPACE_FLAGS: &[i32] = &[
    libc::CLONE_NEWNS,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWCGROUP,
];

fn target() -> Result<TargetArch, String> {
    std::env::consts::ARCH.try_into().map_err(|_| {
        format!(
            "seccomp filters are not built for {}",
            std::env::consts::ARCH
        )
    })
}

fn compile(rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32) -> Result<BpfProgram, String> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        target()?,
    )
    .map_err(|e| e.to_string())?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())
}

/// The refused calls: by number, and on x86-64 with x32 calls enabled by
/// their x32 number too.
struct Refused {
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    x32: bool,
}

impl Refused {
    fn new(x32: bool) -> Refused {
        Refused {
            rules: BTreeMap::new(),
            x32,
        }
    }

    fn add(&mut self, call: i64, conditions: Vec<SeccompRule>) {
        #[cfg(target_arch = "x86_64")]
        if self.x32 {
            self.rules.insert(call | X32, conditions.clone());
        }
        self.rules.insert(call, conditions);
    }
}

/// Builds both filters. `metadata`: refuse metadata changes everywhere.
/// `ipc_shared`: the call shares the host's IPC namespace. `x32`: the
/// kernel runs x32 calls.
pub fn build(metadata: bool, ipc_shared: bool, x32: bool) -> Result<Filters, String> {
    let mut denied = Refused::new(x32);
    for call in denied_calls(metadata, ipc_shared) {
        denied.add(call, Vec::new());
    }
    let mut namespace_rules = Vec::new();
    for flag in NAMESPACE_FLAGS {
        namespace_rules.push(rule(vec![bits_set(0, *flag as u32 as u64)?])?);
    }
    denied.add(libc::SYS_clone, namespace_rules);
    // Only stream and seqpacket pairs: a datagram pair could be aimed at a
    // path, and so could any other type the kernel turns into one (it
    // takes SOCK_RAW for SOCK_DGRAM). The rules refuse every other value of
    // the type's four bits, so a type added later is refused too.
    let mut pair_rules = Vec::new();
    for kind in 0..=SOCKET_TYPE_MASK {
        if ALLOWED_PAIR_TYPES.contains(&kind) {
            continue;
        }
        let other = SeccompCondition::new(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(SOCKET_TYPE_MASK),
            kind,
        )
        .map_err(|e| e.to_string())?;
        pair_rules.push(rule(vec![other])?);
    }
    denied.add(libc::SYS_socketpair, pair_rules);
    let lease = SeccompCondition::new(
        1,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Eq,
        libc::F_SETLEASE as u64,
    )
    .map_err(|e| e.to_string())?;
    denied.add(libc::SYS_fcntl, vec![rule(vec![lease])?]);
    // Asking for credentials on a socket makes the kernel give it an
    // abstract name of its own on first send (autobind), in the host's
    // namespace: a call could use up those names.
    let mut credential_rules = Vec::new();
    for option in [SO_PASSCRED, SO_PASSPIDFD] {
        let level = SeccompCondition::new(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            libc::SOL_SOCKET as u64,
        )
        .map_err(|e| e.to_string())?;
        let name = SeccompCondition::new(2, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, option)
            .map_err(|e| e.to_string())?;
        credential_rules.push(rule(vec![level, name])?);
    }
    denied.add(libc::SYS_setsockopt, credential_rules);
    if !metadata {
        // Metadata calls are allowed (inside the writable set), but never
        // to set-ID bits.
        denied.add(libc::SYS_fchmod, setid_rules(1, None)?);
        denied.add(libc::SYS_fchmodat, setid_rules(2, None)?);
        denied.add(libc::SYS_fchmodat2, setid_rules(2, None)?);
        #[cfg(target_arch = "x86_64")]
        denied.add(libc::SYS_chmod, setid_rules(1, None)?);
    }
    denied.add(libc::SYS_openat, setid_rules(3, Some(2))?);
    #[cfg(target_arch = "x86_64")]
    {
        denied.add(libc::SYS_open, setid_rules(2, Some(1))?);
        denied.add(libc::SYS_creat, setid_rules(1, None)?);
    }
    let mut missing = Refused::new(x32);
    for call in missing_calls() {
        missing.add(call, Vec::new());
    }
    Ok(Filters {
        denied: compile(denied.rules, libc::EPERM)?,
        missing: compile(missing.rules, libc::ENOSYS)?,
    })
}

/// Installs both filters on the calling process (no new privileges first).
///
/// # Safety
/// Only in a child between fork and exec.
pub unsafe fn apply(filters: &Filters) -> std::io::Result<()> {
    for program in [&filters.denied, &filters.missing] {
        seccompiler::apply_filter(program).map_err(std::io::Error::other)?;
    }
    Ok(())
}
