//! seccomp: system calls the call's processes may not make, as one
//! classic BPF filter laid out here.
//!
//! - `socket(2)` of every family: no network (inet, inet6, UDP, raw,
//!   netlink, packet) and no unix socket. `socketpair(2)` stays for stream
//!   and seqpacket pairs only (they are connected to each other and cannot
//!   be aimed anywhere; every other type is refused), and `bind(2)` and
//!   `connect(2)` are refused, so not even a socketpair can send a datagram
//!   to a path or listen on an abstract name.
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
//! preamble. x32 calls (x86-64 numbers with bit 30 set) are all absent: their
//! numbers lie in the unreviewed range.
//!
//! **Why it is laid out by hand.** The filter is installed at every bash
//! call, and the kernel pays for it there: it converts and compiles the
//! program, and then runs it once for every call number to find the
//! numbers it allows whatever their arguments (its filter cache), under a
//! lock. A list of comparisons is walked to its end for every allowed
//! number. seccompiler's filters were such lists: with its rules and a
//! number filter beside them, installing the two cost ~0.35-0.4 ms of
//! every call's start. Here the number is found by a balanced tree of
//! comparisons over the ranges of numbers that answer alike (about eight
//! tests for any number), and the few calls judged by their arguments get
//! a short block at their leaf. The test
//! `the_kernel_walks_few_instructions_for_any_number` keeps it so.

use std::collections::BTreeMap;

use super::error::{Error, Result};

/// One classic BPF instruction, as the kernel takes it.
type Instruction = libc::sock_filter;

/// The compiled filter: calls refused by their arguments or by number
/// (EPERM), and calls made absent (ENOSYS, so that callers with a
/// fallback, like glibc's `clone3` → `clone`, take it).
pub struct Filter {
    program: Vec<Instruction>,
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

/// One test of a call's argument, on its low 32 bits.
///
/// Only the low half is looked at: every argument tested is an `int`, a
/// `mode_t` or (`clone`'s flags) one whose bits in question are all in the
/// low half.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArgTest {
    /// Any of `bits` is set.
    AnyOf { index: u8, bits: u32 },
    /// The argument is `value`.
    Is { index: u8, value: u32 },
    /// The argument's `mask` bits are none of `allowed`.
    NoneOf {
        index: u8,
        mask: u32,
        allowed: &'static [u32],
    },
}

/// A call is refused when every test of one of its rules holds.
type Rule = Vec<ArgTest>;

/// The bits of `socketpair(2)`'s type argument that hold the type (the
/// rest are `SOCK_NONBLOCK` and `SOCK_CLOEXEC`).
const SOCKET_TYPE_MASK: u32 = 0xf;
/// `SO_PASSCRED` and `SO_PASSPIDFD` (asm-generic values, those of x86-64
/// and arm64).
const SO_PASSCRED: u32 = 16;
const SO_PASSPIDFD: u32 = 76;
/// Socket pairs a call may make: connected to each other, never aimed.
const ALLOWED_PAIR_TYPES: &[u32] = &[libc::SOCK_STREAM as u32, libc::SOCK_SEQPACKET as u32];

/// `O_TMPFILE` without its `O_DIRECTORY` part: an unnamed file that
/// `linkat` can give a name later, created with a mode like `O_CREAT`.
const O_TMPFILE_BIT: u32 = 0o20_000_000;

/// The set-user-ID and set-group-ID bits.
const SET_ID_BITS: u32 = libc::S_ISUID | libc::S_ISGID;

/// The rule refusing a set-user-ID or set-group-ID mode in argument
/// `mode`; with `flags`, only when that argument creates a file (`O_CREAT`
/// or `O_TMPFILE`), since the mode is unused otherwise.
fn setid_rule(mode: u8, flags: Option<u8>) -> Vec<Rule> {
    let mut rule = vec![ArgTest::AnyOf {
        index: mode,
        bits: SET_ID_BITS,
    }];
    if let Some(flags) = flags {
        rule.push(ArgTest::AnyOf {
            index: flags,
            bits: libc::O_CREAT as u32 | O_TMPFILE_BIT,
        });
    }
    vec![rule]
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

/// Calls refused by their arguments, and their rules. `metadata`: mode
/// changes are refused by number instead.
fn argument_rules(metadata: bool) -> BTreeMap<i64, Vec<Rule>> {
    let mut rules: BTreeMap<i64, Vec<Rule>> = BTreeMap::new();
    let namespaces = NAMESPACE_FLAGS
        .iter()
        .fold(0, |all, flag| all | *flag as u32);
    rules.insert(
        libc::SYS_clone,
        vec![vec![ArgTest::AnyOf {
            index: 0,
            bits: namespaces,
        }]],
    );
    // Only stream and seqpacket pairs: a datagram pair could be aimed at a
    // path, and so could any other type the kernel turns into one (it
    // takes SOCK_RAW for SOCK_DGRAM). Every other value of the type's four
    // bits is refused, so a type added later is refused too.
    rules.insert(
        libc::SYS_socketpair,
        vec![vec![ArgTest::NoneOf {
            index: 1,
            mask: SOCKET_TYPE_MASK,
            allowed: ALLOWED_PAIR_TYPES,
        }]],
    );
    rules.insert(
        libc::SYS_fcntl,
        vec![vec![ArgTest::Is {
            index: 1,
            value: libc::F_SETLEASE as u32,
        }]],
    );
    // Asking for credentials on a socket makes the kernel give it an
    // abstract name of its own on first send (autobind), in the host's
    // namespace: a call could use up those names.
    rules.insert(
        libc::SYS_setsockopt,
        [SO_PASSCRED, SO_PASSPIDFD]
            .into_iter()
            .map(|option| {
                vec![
                    ArgTest::Is {
                        index: 1,
                        value: libc::SOL_SOCKET as u32,
                    },
                    ArgTest::Is {
                        index: 2,
                        value: option,
                    },
                ]
            })
            .collect(),
    );
    if !metadata {
        // Metadata calls are allowed (inside the writable set), but never
        // to set-ID bits.
        rules.insert(libc::SYS_fchmod, setid_rule(1, None));
        rules.insert(libc::SYS_fchmodat, setid_rule(2, None));
        rules.insert(FCHMODAT2, setid_rule(2, None));
        #[cfg(target_arch = "x86_64")]
        rules.insert(libc::SYS_chmod, setid_rule(1, None));
    }
    rules.insert(libc::SYS_openat, setid_rule(3, Some(2)));
    #[cfg(target_arch = "x86_64")]
    {
        rules.insert(libc::SYS_open, setid_rule(2, Some(1)));
        rules.insert(libc::SYS_creat, setid_rule(1, None));
    }
    rules
}

/// The audit architecture of the calls the filter judges.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

#[cfg(not(target_endian = "little"))]
compile_error!("the filter reads an argument's low half at its first four bytes");

/// Offsets into `struct seccomp_data`.
const NR_OFFSET: u32 = 0;
const ARCH_OFFSET: u32 = 4;
/// The low half of argument `index`.
fn argument_offset(index: u8) -> u32 {
    16 + 8 * u32::from(index)
}

const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const DENY: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
const ABSENT: u32 = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;

/// What a range of call numbers gets.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Answer {
    /// This action, whatever the arguments.
    Always(u32),
    /// EPERM when one of these rules holds, else allowed.
    Rules(Vec<Rule>),
}

fn load(offset: u32) -> Instruction {
    Instruction {
        code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
        jt: 0,
        jf: 0,
        k: offset,
    }
}

fn ret(action: u32) -> Instruction {
    Instruction {
        code: (libc::BPF_RET | libc::BPF_K) as u16,
        jt: 0,
        jf: 0,
        k: action,
    }
}

fn jump(operation: u32, k: u32, jt: usize, jf: usize) -> Result<Instruction> {
    let offset = |n: usize| {
        u8::try_from(n).map_err(|_| Error::Filter(format!("a jump of {n} instructions").into()))
    };
    Ok(Instruction {
        code: (libc::BPF_JMP | operation | libc::BPF_K) as u16,
        jt: offset(jt)?,
        jf: offset(jf)?,
        k,
    })
}

impl ArgTest {
    fn index(&self) -> u8 {
        match self {
            ArgTest::AnyOf { index, .. }
            | ArgTest::Is { index, .. }
            | ArgTest::NoneOf { index, .. } => *index,
        }
    }

    /// Its length in instructions, the argument's load included.
    fn length(&self) -> usize {
        match self {
            ArgTest::AnyOf { .. } | ArgTest::Is { .. } => 2,
            ArgTest::NoneOf { allowed, .. } => 2 + allowed.len(),
        }
    }

    /// Its code, placed at `at` in a block: it goes on to `holds` or
    /// `fails` (both later in the block).
    fn code(&self, at: usize, holds: usize, fails: usize) -> Result<Vec<Instruction>> {
        let mut code = vec![load(argument_offset(self.index()))];
        // The offset from the instruction after the one about to be added.
        let to = |target: usize, code: &Vec<Instruction>| target - (at + code.len() + 1);
        // One comparison that goes to `holds` or `fails`.
        let decide = |operation, k, code: &Vec<Instruction>| {
            jump(operation, k, to(holds, code), to(fails, code))
        };
        match *self {
            ArgTest::AnyOf { bits, .. } => code.push(decide(libc::BPF_JSET, bits, &code)?),
            ArgTest::Is { value, .. } => code.push(decide(libc::BPF_JEQ, value, &code)?),
            ArgTest::NoneOf { mask, allowed, .. } => {
                code.push(Instruction {
                    code: (libc::BPF_ALU | libc::BPF_AND | libc::BPF_K) as u16,
                    jt: 0,
                    jf: 0,
                    k: mask,
                });
                for (k, value) in allowed.iter().enumerate() {
                    let otherwise = if k + 1 == allowed.len() {
                        to(holds, &code)
                    } else {
                        0
                    };
                    code.push(jump(libc::BPF_JEQ, *value, to(fails, &code), otherwise)?);
                }
            }
        }
        Ok(code)
    }
}

/// The code of a leaf: its action, or its rules followed by an allow and
/// a refusal.
fn leaf(answer: &Answer) -> Result<Vec<Instruction>> {
    let rules = match answer {
        Answer::Always(action) => return Ok(vec![ret(*action)]),
        Answer::Rules(rules) => rules,
    };
    let rule_length = |rule: &Rule| rule.iter().map(ArgTest::length).sum::<usize>();
    let allow_at: usize = rules.iter().map(rule_length).sum();
    let deny_at = allow_at + 1;
    let mut code = Vec::with_capacity(deny_at + 1);
    for rule in rules {
        let next_rule = code.len() + rule_length(rule);
        for (k, test) in rule.iter().enumerate() {
            let at = code.len();
            let holds = if k + 1 == rule.len() {
                deny_at
            } else {
                at + test.length()
            };
            code.extend(test.code(at, holds, next_rule)?);
        }
    }
    code.push(ret(ALLOW));
    code.push(ret(DENY));
    Ok(code)
}

/// The code that finds the range a call number (in the accumulator) lies
/// in: `ranges` are (first number, answer), sorted, the first from 0.
fn tree(ranges: &[(u32, Answer)]) -> Result<Vec<Instruction>> {
    if let [(_, answer)] = ranges {
        return leaf(answer);
    }
    let (lower, upper) = ranges.split_at(ranges.len() / 2);
    let lower = tree(lower)?;
    let upper_code = tree(upper)?;
    let mut code = Vec::with_capacity(lower.len() + upper_code.len() + 2);
    let from = upper[0].0;
    if lower.len() <= usize::from(u8::MAX) {
        code.push(jump(libc::BPF_JGE, from, lower.len(), 0)?);
    } else {
        // Too far for a conditional jump: it skips over a long jump.
        code.push(jump(libc::BPF_JGE, from, 0, 1)?);
        code.push(Instruction {
            code: (libc::BPF_JMP | libc::BPF_JA) as u16,
            jt: 0,
            jf: 0,
            k: u32::try_from(lower.len()).map_err(|_| Error::Filter("a filter too long".into()))?,
        });
    }
    code.extend(lower);
    code.extend(upper_code);
    Ok(code)
}

/// Every call number's answer, as ranges of numbers answered alike.
fn ranges(metadata: bool, ipc_shared: bool) -> Result<Vec<(u32, Answer)>> {
    let number = |call: i64| {
        u32::try_from(call).map_err(|_| Error::Filter(format!("call number {call}").into()))
    };
    let mut named: BTreeMap<u32, Answer> = BTreeMap::new();
    for call in REVIEWED_NEWER_CALLS {
        named.insert(*call, Answer::Always(ALLOW));
    }
    for (call, rules) in argument_rules(metadata) {
        named.insert(number(call)?, Answer::Rules(rules));
    }
    // A number refused outright needs no rules.
    for call in missing_calls() {
        named.insert(number(call)?, Answer::Always(ABSENT));
    }
    for call in denied_calls(metadata, ipc_shared) {
        named.insert(number(call)?, Answer::Always(DENY));
    }
    let unnamed = |nr: u32| Answer::Always(if nr < FIRST_UNREVIEWED { ALLOW } else { ABSENT });
    // Where an answer may change: at each named number, after it, and at
    // the first unreviewed one.
    let mut starts: Vec<u32> = vec![0, FIRST_UNREVIEWED];
    for nr in named.keys() {
        starts.push(*nr);
        starts.extend(nr.checked_add(1));
    }
    starts.sort_unstable();
    starts.dedup();
    let mut ranges: Vec<(u32, Answer)> = Vec::new();
    for start in starts {
        let answer = named.get(&start).cloned().unwrap_or_else(|| unnamed(start));
        if ranges.last().is_none_or(|(_, last)| *last != answer) {
            ranges.push((start, answer));
        }
    }
    Ok(ranges)
}

/// Builds the filter. `metadata`: refuse metadata changes everywhere.
/// `ipc_shared`: the call shares the host's IPC namespace.
pub fn build(metadata: bool, ipc_shared: bool) -> Result<Filter> {
    let mut program = vec![
        load(ARCH_OFFSET),
        jump(libc::BPF_JEQ, AUDIT_ARCH, 1, 0)?,
        ret(libc::SECCOMP_RET_KILL_PROCESS),
        load(NR_OFFSET),
    ];
    program.extend(tree(&ranges(metadata, ipc_shared)?)?);
    if program.len() > usize::from(libc::BPF_MAXINSNS as u16) {
        return Err(Error::Filter(
            format!("a filter of {} instructions", program.len()).into(),
        ));
    }
    Ok(Filter { program })
}

/// Installs the filter on the calling thread, and so on every process it
/// forks from then on (no new privileges first).
///
/// # Safety
/// Only on a thread that does nothing after it but what the filter's
/// processes may do: the launcher's thread, or a child between fork and
/// exec.
pub unsafe fn apply(filter: &Filter) -> std::io::Result<()> {
    let program = libc::sock_fprog {
        len: u16::try_from(filter.program.len()).map_err(std::io::Error::other)?,
        filter: filter.program.as_ptr().cast_mut(),
    };
    // SAFETY: prctl with integer arguments; seccomp reads `program`, which
    // points at `filter`'s instructions and outlives the call.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0,
            &raw const program,
        ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The errno of `syscall(nr)` with six zero arguments (0 when it
    /// succeeded), in a child with the filter installed or without it. All
    /// six are given: one left out is whatever its register held.
    fn errno_in_child(nr: i64, filters: Option<&Filter>) -> i32 {
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
                let errno = if libc::syscall(nr, 0, 0, 0, 0, 0, 0) < 0 {
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
        // The calls refused by number or made absent by name.
        assert_eq!(
            errno_in_child(libc::SYS_socket, Some(&filters)),
            libc::EPERM
        );
        assert_eq!(
            errno_in_child(libc::SYS_memfd_create, Some(&filters)),
            libc::ENOSYS
        );
    }

    /// Runs a classic BPF program on a call with number `nr`, architecture
    /// `arch` and arguments `args`, as the kernel would. Also returns how
    /// many instructions ran before the first that reads an argument (the
    /// kernel's walk when it prepares its cache stops there).
    fn run(program: &[Instruction], nr: u32, arch: u32, args: [u64; 6]) -> (u32, usize) {
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
        let (mut steps, mut walked) = (0, None);
        loop {
            let insn = &program[pc];
            let code = u32::from(insn.code);
            pc += 1;
            steps += 1;
            match code {
                c if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS => {
                    if insn.k >= 16 && walked.is_none() {
                        walked = Some(steps);
                    }
                    a = word(insn.k)
                }
                c if c == libc::BPF_ALU | libc::BPF_AND | libc::BPF_K => a &= insn.k,
                c if c == libc::BPF_RET | libc::BPF_K => return (insn.k, walked.unwrap_or(steps)),
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

    fn verdict(filter: &Filter, nr: u32, arch: u32, args: [u64; 6]) -> u32 {
        run(&filter.program, nr, arch, args).0
    }

    /// Numbers worth trying: every one up to 2,048, x32's, the largest.
    fn numbers() -> impl Iterator<Item = u32> {
        (0..2048u32).chain([0x4000_0000 | 39, 0x4000_0000 | 41, u32::MAX])
    }

    #[test]
    fn the_kernel_walks_few_instructions_for_any_number() {
        // At every install the kernel runs the filter for each number it
        // knows: a long walk there is paid on every bash call.
        for (metadata, ipc_shared) in [(true, true), (true, false), (false, false)] {
            let filter = build(metadata, ipc_shared).unwrap();
            let longest = numbers()
                .map(|nr| run(&filter.program, nr, AUDIT_ARCH, [0; 6]).1)
                .max()
                .unwrap();
            assert!(longest <= 16, "{longest} instructions before an answer");
        }
    }

    #[test]
    fn far_jumps_are_laid_out_right() {
        // More ranges than a conditional jump can skip: the long jumps.
        let ranges: Vec<(u32, Answer)> = (0..600u32)
            .map(|n| (n, Answer::Always(if n % 2 == 0 { ALLOW } else { DENY })))
            .collect();
        let mut program = vec![load(NR_OFFSET)];
        program.extend(tree(&ranges).unwrap());
        let long_jump = (libc::BPF_JMP | libc::BPF_JA) as u16;
        assert!(program.iter().any(|i| i.code == long_jump));
        for nr in 0..700u32 {
            let expected = if nr >= 599 || nr % 2 == 1 {
                DENY
            } else {
                ALLOW
            };
            assert_eq!(run(&program, nr, AUDIT_ARCH, [0; 6]).0, expected, "{nr}");
        }
    }

    #[test]
    fn every_call_number_gets_the_intended_answer() {
        let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
        let enosys = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
        for (metadata, ipc_shared) in [(true, true), (true, false), (false, false)] {
            let filters = build(metadata, ipc_shared).unwrap();
            let denied = denied_calls(metadata, ipc_shared);
            let missing = missing_calls();
            for nr in numbers() {
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
            let allow = libc::SECCOMP_RET_ALLOW;
            let cases: &[(i64, [u64; 6], u32)] = &[
                // A seqpacket pair, non-blocking; a raw one.
                (
                    libc::SYS_socketpair,
                    [
                        unix,
                        (libc::SOCK_SEQPACKET | libc::SOCK_NONBLOCK) as u64,
                        0,
                        0,
                        0,
                        0,
                    ],
                    allow,
                ),
                (
                    libc::SYS_socketpair,
                    [unix, libc::SOCK_RAW as u64, 0, 0, 0, 0],
                    eperm,
                ),
                // A set-group-ID file made unnamed; a setuid mode on a file
                // only opened (unused, so allowed).
                (
                    libc::SYS_openat,
                    [0, 0, u64::from(O_TMPFILE_BIT), 0o2755, 0, 0],
                    eperm,
                ),
                (libc::SYS_openat, [0, 0, 0, 0o4755, 0, 0], allow),
                // A network namespace beside a plain child; a plain child.
                (
                    libc::SYS_clone,
                    [(libc::CLONE_NEWNET | libc::SIGCHLD) as u64, 0, 0, 0, 0, 0],
                    eperm,
                ),
                (
                    libc::SYS_clone,
                    [libc::SIGCHLD as u64, 0, 0, 0, 0, 0],
                    allow,
                ),
                // Credentials asked of a socket; another option.
                (
                    libc::SYS_setsockopt,
                    [3, libc::SOL_SOCKET as u64, u64::from(SO_PASSCRED), 0, 0, 0],
                    eperm,
                ),
                (
                    libc::SYS_setsockopt,
                    [
                        3,
                        libc::SOL_SOCKET as u64,
                        libc::SO_REUSEADDR as u64,
                        0,
                        0,
                        0,
                    ],
                    allow,
                ),
                (
                    libc::SYS_fcntl,
                    [3, libc::F_GETFL as u64, 0, 0, 0, 0],
                    allow,
                ),
                // Modes: refused outright with `metadata`, else only set-ID.
                (libc::SYS_fchmod, [3, 0o2755, 0, 0, 0, 0], eperm),
                (
                    libc::SYS_fchmodat,
                    [3, 0, 0o755, 0, 0, 0],
                    if metadata { eperm } else { allow },
                ),
            ];
            for (call, args, expected) in cases {
                assert_eq!(
                    verdict(&filters, *call as u32, AUDIT_ARCH, *args),
                    *expected,
                    "call {call} with {args:?} (metadata {metadata})"
                );
            }
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn numbers_written_out_are_the_kernels() {
        assert_eq!(FCHMODAT2, libc::SYS_fchmodat2);
    }

    #[test]
    fn the_filters_stay_short() {
        // The kernel converts and compiles the filter at every call's
        // start: a long one is paid for on every bash call.
        for (metadata, ipc_shared) in [(true, true), (false, false)] {
            let total = build(metadata, ipc_shared).unwrap().program.len();
            assert!(total < 400, "{total} instructions");
        }
    }
}
