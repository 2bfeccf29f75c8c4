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
//! Architectures other than the one compiled for are killed by the filters'
//! preamble. x32 calls (x86-64 numbers with bit 30 set) are all absent: their
//! numbers lie in the unreviewed range.
//!
//! Two filters are installed. Calls refused by their arguments are
//! compiled by seccompiler from rules; calls refused by number alone, and
//! the range of unreviewed numbers, are one short filter laid out here (one
//! comparison per number; seccompiler spends several, and cannot say a
//! range). The kernel converts and compiles every filter at every install,
//! once per bash call, so their length is paid on every call: the numbers
//! as seccompiler rules, the range listed number by number and twice over
//! for x32, came to 940-1,900 instructions and ~0.2-0.35 ms per call.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The filters: calls refused by their arguments (EPERM), and calls refused
/// by number (EPERM, or ENOSYS so that callers with a fallback, like
/// glibc's `clone3` → `clone`, take it).
pub struct Filters {
    pub by_arguments: BpfProgram,
    pub by_number: BpfProgram,
}

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
            FCHMODAT2,
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
    calls
}

/// `fchmodat2` (Linux 6.6): the same number on every architecture, and not
/// in the libc crate for all of them.
const FCHMODAT2: i64 = 452;

/// Calls the kernel added from this number on (Linux 6.8's `statmount`;
/// numbers are the same on every architecture since 424) are refused unless
/// reviewed: a call added later, such as `listmount` (it lists the host's
/// mounts, paths included) or `file_setattr` (it changes a file's
/// attributes), is absent to the call until someone has looked at it. Every
/// number above, x32's included, is refused too.
const FIRST_UNREVIEWED: u32 = 457;
/// Newer calls that were looked at and are harmless: `mseal` (seals the
/// caller's own memory), `getxattrat` and `listxattrat` (read what
/// `getxattr` and `listxattr` read).
const REVIEWED_NEWER_CALLS: &[u32] = &[462, 464, 465];

/// `rule` matches when argument `index`, masked with `bits`, equals `bits`.
///
/// Only the argument's low 32 bits are compared: every argument this is used
/// for is an `int`, a `mode_t` or (`clone`'s flags) one whose bits in
/// question are all in the low half, and a 64-bit comparison would double
/// the filter's length, which every bash call pays for when the filter is
/// installed.
fn bits_set(index: u8, bits: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(
        index,
        SeccompCmpArgLen::Dword,
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

/// The audit architecture of the calls the filters judge.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// Where a comparison in [`by_number_filter`] leads when it holds.
#[derive(Clone, Copy)]
enum Outcome {
    Allow,
    Denied,
    Missing,
}

/// The filter of calls refused by number, in classic BPF:
///
/// 1. another architecture's calls kill the process (as in seccompiler's
///    filters);
/// 2. each `denied` number answers EPERM, each `missing` number ENOSYS;
/// 3. the [`REVIEWED_NEWER_CALLS`] are allowed;
/// 4. every other number from [`FIRST_UNREVIEWED`] up (x32's included)
///    answers ENOSYS;
/// 5. anything else is allowed (the other filter still judges it).
///
/// Every comparison jumps forward to one of the three returns at the end,
/// so the layout is a list; offsets are computed, not written.
fn by_number_filter(denied: &[i64], missing: &[i64]) -> Result<BpfProgram, String> {
    // Offsets into `struct seccomp_data`.
    const NR: u32 = 0;
    const ARCH: u32 = 4;
    let load = |offset: u32| seccompiler::sock_filter {
        code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
        jt: 0,
        jf: 0,
        k: offset,
    };
    let ret = |action: u32| seccompiler::sock_filter {
        code: (libc::BPF_RET | libc::BPF_K) as u16,
        jt: 0,
        jf: 0,
        k: action,
    };
    let number = |call: i64| u32::try_from(call).map_err(|_| format!("call number {call}"));
    // The comparisons after the preamble: (operation, value, outcome).
    let mut tests = Vec::new();
    for call in denied {
        tests.push((libc::BPF_JEQ, number(*call)?, Outcome::Denied));
    }
    for call in missing {
        tests.push((libc::BPF_JEQ, number(*call)?, Outcome::Missing));
    }
    for call in REVIEWED_NEWER_CALLS {
        tests.push((libc::BPF_JEQ, *call, Outcome::Allow));
    }
    tests.push((libc::BPF_JGE, FIRST_UNREVIEWED, Outcome::Missing));
    let mut program = vec![
        load(ARCH),
        seccompiler::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 1,
            jf: 0,
            k: AUDIT_ARCH,
        },
        ret(libc::SECCOMP_RET_KILL_PROCESS),
        load(NR),
    ];
    // The returns follow the comparisons: allow, EPERM, ENOSYS.
    let first_return = program.len() + tests.len();
    for (operation, value, outcome) in tests {
        let target = first_return + outcome as usize;
        let offset = target - (program.len() + 1);
        program.push(seccompiler::sock_filter {
            code: (libc::BPF_JMP | operation | libc::BPF_K) as u16,
            jt: u8::try_from(offset).map_err(|_| "too many calls refused by number".to_string())?,
            jf: 0,
            k: value,
        });
    }
    program.push(ret(libc::SECCOMP_RET_ALLOW));
    program.push(ret(libc::SECCOMP_RET_ERRNO | libc::EPERM as u32));
    program.push(ret(libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32));
    Ok(program)
}

/// Builds the filters. `metadata`: refuse metadata changes everywhere.
/// `ipc_shared`: the call shares the host's IPC namespace.
pub fn build(metadata: bool, ipc_shared: bool) -> Result<Filters, String> {
    let mut denied: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let mut namespace_rules = Vec::new();
    for flag in NAMESPACE_FLAGS {
        namespace_rules.push(rule(vec![bits_set(0, *flag as u32 as u64)?])?);
    }
    denied.insert(libc::SYS_clone, namespace_rules);
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
    denied.insert(libc::SYS_socketpair, pair_rules);
    let lease = SeccompCondition::new(
        1,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Eq,
        libc::F_SETLEASE as u64,
    )
    .map_err(|e| e.to_string())?;
    denied.insert(libc::SYS_fcntl, vec![rule(vec![lease])?]);
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
    denied.insert(libc::SYS_setsockopt, credential_rules);
    if !metadata {
        // Metadata calls are allowed (inside the writable set), but never
        // to set-ID bits.
        denied.insert(libc::SYS_fchmod, setid_rules(1, None)?);
        denied.insert(libc::SYS_fchmodat, setid_rules(2, None)?);
        denied.insert(FCHMODAT2, setid_rules(2, None)?);
        #[cfg(target_arch = "x86_64")]
        denied.insert(libc::SYS_chmod, setid_rules(1, None)?);
    }
    denied.insert(libc::SYS_openat, setid_rules(3, Some(2))?);
    #[cfg(target_arch = "x86_64")]
    {
        denied.insert(libc::SYS_open, setid_rules(2, Some(1))?);
        denied.insert(libc::SYS_creat, setid_rules(1, None)?);
    }
    Ok(Filters {
        by_arguments: compile(denied, libc::EPERM)?,
        by_number: by_number_filter(&denied_calls(metadata, ipc_shared), &missing_calls())?,
    })
}

/// Installs the filters on the calling process (no new privileges first).
///
/// # Safety
/// Only in a child between fork and exec.
pub unsafe fn apply(filters: &Filters) -> std::io::Result<()> {
    for program in [&filters.by_arguments, &filters.by_number] {
        seccompiler::apply_filter(program).map_err(std::io::Error::other)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The errno of `syscall(nr, 0, 0, 0, 0)` (0 when it succeeded), in a
    /// child with the filters installed or without them.
    fn errno_in_child(nr: i64, filters: Option<&Filters>) -> i32 {
        // SAFETY: the child makes system calls only and leaves by _exit.
        unsafe {
            let pid = libc::fork();
            assert!(pid >= 0);
            if pid == 0 {
                libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
                if let Some(filters) = filters
                    && apply(filters).is_err()
                {
                    libc::_exit(255);
                }
                let errno = if libc::syscall(nr, 0, 0, 0, 0) < 0 {
                    *libc::__errno_location()
                } else {
                    0
                };
                libc::_exit(errno);
            }
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            assert!(libc::WIFEXITED(status), "the child was killed: {status}");
            let code = libc::WEXITSTATUS(status);
            assert_ne!(code, 255, "the filters could not be installed");
            code
        }
    }

    #[test]
    fn the_range_filter_refuses_every_unreviewed_number_and_passes_the_rest() {
        let filters = build(false, false).unwrap();
        // Unreviewed numbers, far ones and (on x86-64) an x32 call: absent.
        let absent = [457, 458, 463, 469, 511, 512, 4000, i64::from(u32::MAX >> 1)];
        // On x86-64, getpid by its x32 number; elsewhere one more far number.
        let absent = absent.into_iter().chain([libc::SYS_getpid | 0x4000_0000]);
        for nr in absent {
            assert_eq!(
                errno_in_child(nr, Some(&filters)),
                libc::ENOSYS,
                "call {nr}"
            );
        }
        // Reviewed new calls and ordinary ones answer as the kernel does.
        for nr in [462, 464, 465, libc::SYS_getppid, libc::SYS_close, 456] {
            assert_eq!(
                errno_in_child(nr, Some(&filters)),
                errno_in_child(nr, None),
                "call {nr}"
            );
        }
        // The rule-based filters still stand beside it.
        assert_eq!(
            errno_in_child(libc::SYS_socket, Some(&filters)),
            libc::EPERM
        );
        assert_eq!(
            errno_in_child(libc::SYS_memfd_create, Some(&filters)),
            libc::ENOSYS
        );
    }

    /// Runs a classic BPF program (the instructions seccompiler and
    /// [`by_number_filter`] use) on a call with number `nr`, architecture
    /// `arch` and arguments `args`, as the kernel would.
    fn run(program: &BpfProgram, nr: u32, arch: u32, args: [u64; 6]) -> u32 {
        let word = |offset: u32| -> u32 {
            match offset {
                0 => nr,
                4 => arch,
                16..=63 if offset.is_multiple_of(4) => {
                    let arg = args[(offset as usize - 16) / 8];
                    if offset.is_multiple_of(8) {
                        arg as u32
                    } else {
                        (arg >> 32) as u32
                    }
                }
                _ => panic!("load from offset {offset}"),
            }
        };
        let (mut pc, mut a) = (0usize, 0u32);
        loop {
            let insn = &program[pc];
            let code = u32::from(insn.code);
            pc += 1;
            match code {
                c if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS => a = word(insn.k),
                c if c == libc::BPF_ALU | libc::BPF_AND | libc::BPF_K => a &= insn.k,
                c if c == libc::BPF_RET | libc::BPF_K => return insn.k,
                c if c == libc::BPF_JMP | libc::BPF_JA => pc += insn.k as usize,
                c if c & 0x07 == libc::BPF_JMP && c & 0x08 == libc::BPF_K => {
                    let holds = match c & 0xf0 {
                        x if x == libc::BPF_JEQ => a == insn.k,
                        x if x == libc::BPF_JGE => a >= insn.k,
                        x if x == libc::BPF_JGT => a > insn.k,
                        x if x == libc::BPF_JSET => a & insn.k != 0,
                        _ => panic!("jump {code:#x}"),
                    };
                    pc += usize::from(if holds { insn.jt } else { insn.jf });
                }
                _ => panic!("instruction {code:#x}"),
            }
        }
    }

    /// What the kernel makes of both filters: the action of highest
    /// precedence; among equals, the last installed filter's.
    fn verdict(filters: &Filters, nr: u32, arch: u32, args: [u64; 6]) -> u32 {
        let rank = |action: u32| (action & libc::SECCOMP_RET_ACTION_FULL) as i32;
        let mut verdict = libc::SECCOMP_RET_ALLOW;
        for program in [&filters.by_arguments, &filters.by_number] {
            let action = run(program, nr, arch, args);
            if rank(action) <= rank(verdict) {
                verdict = action;
            }
        }
        verdict
    }

    #[test]
    fn every_call_number_gets_the_intended_answer() {
        let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
        let enosys = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
        for (metadata, ipc_shared) in [(true, true), (true, false), (false, false)] {
            let filters = build(metadata, ipc_shared).unwrap();
            let denied = denied_calls(metadata, ipc_shared);
            let missing = missing_calls();
            let numbers = (0..2048u32).chain([0x4000_0000 | 39, 0x4000_0000 | 41, u32::MAX]);
            for nr in numbers {
                let call = i64::from(nr);
                let expected = if denied.contains(&call) || call == libc::SYS_socketpair {
                    // socketpair with type 0: not a stream or seqpacket pair.
                    eperm
                } else if missing.contains(&call)
                    || (nr >= FIRST_UNREVIEWED && !REVIEWED_NEWER_CALLS.contains(&nr))
                {
                    enosys
                } else {
                    libc::SECCOMP_RET_ALLOW
                };
                assert_eq!(
                    verdict(&filters, nr, AUDIT_ARCH, [0; 6]),
                    expected,
                    "call {nr} (metadata {metadata}, ipc shared {ipc_shared})"
                );
            }
            // The calls that matter most, named here rather than taken
            // from the lists the filters are built from.
            for call in [
                libc::SYS_socket,
                libc::SYS_connect,
                libc::SYS_bind,
                libc::SYS_mknodat,
                libc::SYS_mount,
                libc::SYS_unshare,
                libc::SYS_setns,
                libc::SYS_bpf,
                libc::SYS_perf_event_open,
                libc::SYS_userfaultfd,
                libc::SYS_keyctl,
                libc::SYS_open_by_handle_at,
            ] {
                assert_eq!(
                    verdict(&filters, call as u32, AUDIT_ARCH, [0; 6]),
                    eperm,
                    "call {call}"
                );
            }
            for call in [
                libc::SYS_io_uring_setup,
                libc::SYS_memfd_create,
                libc::SYS_clone3,
                libc::SYS_openat2,
                457,
                458,
            ] {
                assert_eq!(
                    verdict(&filters, call as u32, AUDIT_ARCH, [0; 6]),
                    enosys,
                    "call {call}"
                );
            }
            // Another architecture's calls kill the process.
            let kill = libc::SECCOMP_RET_KILL_PROCESS;
            assert_eq!(verdict(&filters, 39, 0x4000_0003, [0; 6]), kill);
            // Argument rules: a datagram pair, a setuid file created, a
            // namespace cloned, a lease taken; and their harmless forms.
            let pair = libc::SYS_socketpair as u32;
            let unix = libc::AF_UNIX as u64;
            let stream = (libc::SOCK_STREAM | libc::SOCK_CLOEXEC) as u64;
            assert_eq!(
                verdict(&filters, pair, AUDIT_ARCH, [unix, stream, 0, 0, 0, 0]),
                libc::SECCOMP_RET_ALLOW
            );
            assert_eq!(
                verdict(
                    &filters,
                    pair,
                    AUDIT_ARCH,
                    [unix, libc::SOCK_DGRAM as u64, 0, 0, 0, 0]
                ),
                eperm
            );
            let openat = libc::SYS_openat as u32;
            let create = libc::O_CREAT as u64;
            assert_eq!(
                verdict(&filters, openat, AUDIT_ARCH, [0, 0, create, 0o4755, 0, 0]),
                eperm
            );
            assert_eq!(
                verdict(&filters, openat, AUDIT_ARCH, [0, 0, create, 0o755, 0, 0]),
                libc::SECCOMP_RET_ALLOW
            );
            let clone = libc::SYS_clone as u32;
            let newuser = libc::CLONE_NEWUSER as u64;
            assert_eq!(
                verdict(&filters, clone, AUDIT_ARCH, [newuser, 0, 0, 0, 0, 0]),
                eperm
            );
            let fcntl = libc::SYS_fcntl as u32;
            let lease = libc::F_SETLEASE as u64;
            assert_eq!(
                verdict(&filters, fcntl, AUDIT_ARCH, [3, lease, 0, 0, 0, 0]),
                eperm
            );
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn numbers_written_out_are_the_kernels() {
        assert_eq!(FCHMODAT2, libc::SYS_fchmodat2);
    }

    #[test]
    fn the_filters_stay_short() {
        // The kernel converts and compiles each filter at every call's
        // start: a long one is paid for on every bash call.
        let filters = build(true, true).unwrap();
        let total = filters.by_arguments.len() + filters.by_number.len();
        assert!(total < 500, "{total} instructions");
    }
}
