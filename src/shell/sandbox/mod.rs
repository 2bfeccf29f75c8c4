//! The bash sandbox: the boundary that confines a full shell, whatever the
//! policy let through.
//!
//! Every command line runs under a per-call **supervisor**: the server
//! starts its own binary again (`/proc/self/exe`, see [`supervisor`]), hands
//! it the checked plan, and the supervisor sets up the layers below, runs the
//! commands, and kills and reaps every descendant before it reports how the
//! commands ended. One file per layer:
//!
//! - [`namespaces`]: a user, mount and PID namespace. Everything is mounted
//!   read-only except the writable roots and the private temporary
//!   directory (so no metadata changes outside them); the supervisor's first
//!   child is the namespace's init, and when it dies the kernel kills every
//!   process left in the call, `setsid` or not. The namespace's `pid_max`
//!   bounds its processes.
//! - [`landlock`]: what may be read, run and written, by path; no device,
//!   FIFO or socket creation; no TCP; no signals or abstract sockets outside.
//! - [`seccomp`]: no sockets of any family, no mknod, no io_uring, no new
//!   namespaces or mounts, no metadata changes where no read-only mount
//!   stands in for it.
//! - [`limits`]: capabilities dropped, no new privileges, and resource
//!   limits (processes, address space, CPU time).
//!
//! Each layer is detected once ([`probe`]); a missing layer is logged and
//! shown by `rootbound sandbox`, never pretended.

pub mod error;
#[cfg(target_os = "linux")]
pub mod fork_server;
#[cfg(target_os = "linux")]
pub mod landlock;
#[cfg(target_os = "linux")]
mod launcher;
#[cfg(target_os = "linux")]
pub mod limits;
pub mod macos;
#[cfg(target_os = "linux")]
pub mod namespaces;
#[cfg(target_os = "linux")]
pub mod probe;
#[cfg(target_os = "linux")]
pub mod seccomp;
#[cfg(target_os = "linux")]
mod spawn;
#[cfg(target_os = "linux")]
pub mod supervisor;
#[cfg(unix)]
pub mod temp;
#[cfg(target_os = "linux")]
pub mod template;
pub mod toolchains;

#[cfg(target_os = "linux")]
use std::path::PathBuf;

#[cfg(target_os = "linux")]
use serde::{Deserialize, Serialize};

pub use error::Error;
#[cfg(target_os = "linux")]
pub use probe::Layers;

/// What a writable call may not change, bound in its mount namespace (see
/// `fs/protected.rs`): each of `pinned` onto itself (git directories and
/// `.git` entries: a mount point cannot be renamed, removed or replaced),
/// each of `read_only` read-only over itself (config, hooks, settings).
/// Parents come before their children.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Protect {
    pub pinned: Vec<std::path::PathBuf>,
    pub read_only: Vec<std::path::PathBuf>,
}

/// The argument that makes the binary a supervisor instead of a server.
pub const SUPERVISOR_ARG: &str = "__rootbound-sandbox-supervisor";

/// Takes back the default action for SIGCHLD. A client (or a shell's
/// `trap '' CHLD`) may start the server with it ignored, and an ignored
/// SIGCHLD survives exec: the kernel then reaps every child at once, so no
/// wait for the sandbox's probe, a supervisor or a command ever sees it
/// end. The probe failed, calls ran without their namespaces and filter,
/// and each lasted until its time limit. Called first thing by the server
/// and by every process it starts from its own binary.
#[cfg(unix)]
pub fn take_back_child_signals() {
    // SAFETY: sets one signal's disposition; no handler is installed.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
}

/// Marks every descriptor from `first` up close-on-exec. A client may
/// start the server with descriptors open that it forgot to close (a log
/// file, a socket, a pipe); they point outside every root, so no command may
/// inherit them. Called by the server at start, by the fork server, and by
/// each call's supervisor.
#[cfg(unix)]
pub fn close_on_exec_from(first: i32) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: close_range with CLOSE_RANGE_CLOEXEC only sets flags.
        let marked = unsafe {
            libc::syscall(
                libc::SYS_close_range,
                first as libc::c_uint,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            )
        };
        if marked == 0 {
            return;
        }
    }
    // Kernels without close_range's flag, and other Unix: the descriptors
    // the process has, as the kernel lists them.
    let listing = if cfg!(target_os = "linux") {
        "/proc/self/fd"
    } else {
        "/dev/fd"
    };
    let Ok(entries) = std::fs::read_dir(listing) else {
        return;
    };
    let open: Vec<i32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd >= first)
        .collect();
    for fd in open {
        // SAFETY: fcntl on a descriptor number; a closed one fails harmlessly.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

/// Runs the binary as a bash call's supervisor; returns its exit code.
/// Only Linux has supervisors; elsewhere the argument is refused.
pub fn run_supervisor(args: &[String]) -> i32 {
    #[cfg(target_os = "linux")]
    {
        supervisor::main(args)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = args;
        eprintln!("rootbound: {SUPERVISOR_ARG} exists only on Linux");
        1
    }
}

/// Processes (tasks, threads included) one call may have at once.
#[cfg(target_os = "linux")]
pub const MAX_TASKS: u64 = 512;
/// Address space of one process, in bytes.
#[cfg(target_os = "linux")]
pub const MAX_ADDRESS_SPACE: u64 = 16 << 30;
/// Size of a call's temporary file system, in bytes.
#[cfg(target_os = "linux")]
pub const TEMP_SIZE: u64 = 1 << 30;
/// Files and directories a call's temporary file system may hold: each
/// costs the host about 1.3 KB of kernel memory even when empty, which the
/// size bound does not count (about 85 MB at this bound).
#[cfg(target_os = "linux")]
pub const TEMP_INODES: u64 = 65_536;
/// System V shared memory one call may hold, in bytes: its IPC namespace's
/// `shmall`, and `shmmax` for one segment. Segments are not charged to any
/// process's address space, so without this a call could fill the host's
/// memory with detached segments.
#[cfg(target_os = "linux")]
pub const SHM_BYTES: u64 = 256 << 20;
/// Extra CPU seconds a process gets beyond the call's time limit.
#[cfg(unix)]
pub const CPU_GRACE_SECONDS: u64 = 5;

/// System directories a program may read and run from (on Linux; the
/// toolchain survey uses them everywhere it runs).
pub const SYSTEM_DIRS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/nix/store",
];

/// The files (and few directories) under `/etc` that the loader, locale,
/// name service, `file`, git and language runtimes need (Node and Python
/// read OpenSSL's configuration and the CA certificates at start; Debian's
/// `java` and others are links through `/etc/alternatives`, and the JVM
/// reads its security configuration from `/etc/java-N-openjdk`). Never
/// `shadow`, keys (`/etc/ssl/private`) or credentials.
#[cfg(target_os = "linux")]
pub const ETC_FILES: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/ld.so.preload",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/locale.alias",
    "/etc/locale.conf",
    "/etc/default/locale",
    "/etc/mime.types",
    "/etc/magic",
    "/etc/magic.mime",
    "/etc/inputrc",
    "/etc/terminfo",
    "/etc/os-release",
    "/etc/lsb-release",
    "/etc/debian_version",
    "/etc/perl",
    "/etc/ssl/openssl.cnf",
    "/etc/ssl/certs",
    "/etc/ca-certificates",
    "/etc/ca-certificates.conf",
    "/etc/pki/tls/openssl.cnf",
    "/etc/pki/tls/certs",
    "/etc/pki/ca-trust/extracted",
    "/etc/crypto-policies",
    "/etc/alternatives",
    // The JVM's configuration (Debian links $JAVA_HOME/conf here; without
    // it, java stops at its first use of java.security).
    "/etc/java-8-openjdk",
    "/etc/java-11-openjdk",
    "/etc/java-17-openjdk",
    "/etc/java-21-openjdk",
    "/etc/java-25-openjdk",
    "/etc/java",
];

/// Device files programs read and write.
#[cfg(target_os = "linux")]
pub const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// What one call's commands may touch, and which layers enforce it.
#[cfg(target_os = "linux")]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confinement {
    /// Readable (and executable): the roots and `--bash-read` directories.
    pub readable: Vec<PathBuf>,
    /// Writable: nothing in read-only mode; the roots and the call's private
    /// temporary directory otherwise.
    pub writable: Vec<PathBuf>,
    /// The call's temporary directory (`TMPDIR`; also in `writable`). With
    /// a mount namespace, a fresh file system in memory is mounted on it for
    /// each call and vanishes with the call.
    pub temp: Option<PathBuf>,
    /// Read-only mode: no metadata change anywhere.
    pub read_only: bool,
    /// The layers to set up; the supervisor fails closed if one fails.
    pub layers: Layers,
    pub max_tasks: u64,
    pub cpu_seconds: u64,
    pub address_space: u64,
}

/// What `rootbound sandbox` says where the Linux layers are not available.
#[cfg(not(target_os = "linux"))]
pub fn platform_statement() -> &'static str {
    if cfg!(target_os = "macos") {
        "macOS: every command runs under sandbox-exec with a profile made from the roots and \
         the mode: deny by default; read and run the roots, --bash-read directories and the \
         system's own directories; write the roots and a private temporary directory only in \
         the writable modes, never a set-ID file; no network of any kind. Not enforced here: \
         a process that leaves its process group (setsid) can outlive the call, still inside \
         the sandbox (what stays in the group is killed when the line ends); no bound on \
         processes or memory. Each process's CPU time is bounded (the time limit plus 5 \
         seconds) and it dumps no core.\n"
    } else if cfg!(windows) {
        "Windows: NO sandbox. bash is off unless --bash-mode unrestricted is given; then the \
         line runs in one `bash -c` process with the server's own rights: it can read, write \
         and delete anything the server's user can, and use the network. Enforced: the time \
         limit and the output cap (past either the process is killed; processes it started \
         may outlive the call) and a cleaned environment. The file tools stay confined to \
         the roots by the path guard.\n"
    } else {
        "This platform has no sandbox layer rootbound can use: commands run with the \
         server's own rights, after the policy's checks; the time limit and the output cap \
         still apply.\n"
    }
}
