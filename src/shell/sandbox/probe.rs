//! Which sandbox layers this kernel provides, found by trying each one in a
//! throw-away child of a supervisor in probe mode, and the table of what is
//! enforced that `rootbound sandbox` prints and the start-up log sums up.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::error::Error;
use super::{MAX_TASKS, SUPERVISOR_ARG, landlock, namespaces, seccomp};

/// The layers this kernel provides to this process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layers {
    /// Landlock ABI version (0: none).
    pub landlock_abi: i32,
    /// The seccomp filters can be installed.
    pub seccomp: bool,
    /// An unprivileged user namespace could be made.
    pub user_ns: bool,
    /// A mount namespace whose mounts could be made read-only.
    pub mount_ns: bool,
    /// A PID namespace with its own init.
    pub pid_ns: bool,
    /// The PID namespace's own `pid_max` could be set (Linux 6.14+).
    pub pid_max: bool,
    /// The server runs as root.
    pub root: bool,
    /// The call's IPC namespace can be bounded from inside (Linux 5.19+
    /// in a user namespace); else System V IPC is refused by seccomp.
    #[serde(default)]
    pub ipc_limits: bool,
}

const USER: i32 = 1;
const MOUNT: i32 = 2;
const PID: i32 = 4;
const PID_MAX: i32 = 8;
const SECCOMP_OK: i32 = 16;
const IPC_LIMITS: i32 = 32;

/// Runs in the supervisor (single-threaded): tries each layer in a child.
pub fn probe_here() -> Layers {
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    // Both tests run at once: the first bash call waits for them.
    let namespaces = start_child(|| {
        let found = try_namespaces(true);
        if found == 0 && root {
            return try_namespaces(false);
        }
        found
    });
    let seccomp_works = start_child(|| {
        let Ok(filter) = seccomp::build(true, true) else {
            return 0;
        };
        // SAFETY: this child exits right after the test.
        if unsafe { seccomp::apply(&filter) }.is_err() {
            return 0;
        }
        // SAFETY: a socket call the filter must refuse.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
        if fd < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM) {
            SECCOMP_OK
        } else {
            0
        }
    });
    let (namespaces, seccomp_works) = (wait_child(namespaces), wait_child(seccomp_works));
    Layers {
        landlock_abi: landlock::kernel_abi(),
        seccomp: seccomp_works & SECCOMP_OK != 0,
        user_ns: namespaces & USER != 0,
        mount_ns: namespaces & MOUNT != 0,
        pid_ns: namespaces & PID != 0,
        pid_max: namespaces & PID_MAX != 0,
        root,
        ipc_limits: namespaces & IPC_LIMITS != 0 && namespaces & MOUNT != 0,
    }
}

/// Makes a process in new namespaces, as calls get them, and reports what
/// worked (0 if the namespaces could not be made).
fn try_namespaces(user: bool) -> i32 {
    let ids = namespaces::Ids::current();
    match namespaces::clone_call(Some(user)) {
        Ok(namespaces::Cloned::Child) => {
            let mut found = PID;
            if user {
                if namespaces::map_ids(ids).is_err() {
                    // SAFETY: leave the probe's child.
                    unsafe { libc::_exit(0) };
                }
                found |= USER;
            }
            if namespaces::set_pid_max(MAX_TASKS + 1).is_ok() {
                found |= PID_MAX;
            }
            if namespaces::mount_own_proc().is_ok() {
                if namespaces::limit_ipc().is_ok() {
                    found |= IPC_LIMITS;
                }
                if namespaces::enter_view(&[], &[]).is_ok() {
                    found |= MOUNT;
                }
            }
            // SAFETY: leave the probe's child with what it found.
            unsafe { libc::_exit(found) };
        }
        Ok(namespaces::Cloned::Parent(pidfd)) => {
            // SAFETY: siginfo_t is plain data, valid when all zero.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: waiting for our own child through its pidfd.
            unsafe {
                libc::waitid(
                    libc::P_PIDFD,
                    std::os::fd::AsRawFd::as_raw_fd(&pidfd) as libc::id_t,
                    &mut info,
                    libc::WEXITED,
                );
                if info.si_code == libc::CLD_EXITED {
                    info.si_status()
                } else {
                    0
                }
            }
        }
        Err(_) => 0,
    }
}

/// Runs `test` in a forked child and returns its exit code (0 if it died).
fn start_child(test: impl FnOnce() -> i32) -> libc::pid_t {
    // SAFETY: the probe runs in the single-threaded supervisor.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let code = test();
        // SAFETY: leave the child without running the parent's destructors.
        unsafe { libc::_exit(code) };
    }
    pid
}

/// The exit code of a test started by [`start_child`]; 0 if it could not
/// start or did not exit.
fn wait_child(pid: libc::pid_t) -> i32 {
    if pid < 0 {
        return 0;
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
        return 0;
    }
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        0
    }
}

/// Runs the probe in a supervisor process started from `exe`.
pub fn probe(exe: &Path) -> Result<Layers, Error> {
    let mut child = Command::new(exe)
        .args([SUPERVISOR_ARG, "probe"])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| Error::io("starting the sandbox probe", e))?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(2));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::gone("the sandbox probe did not finish"));
            }
        }
    };
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = stdout.read_to_string(&mut out);
    }
    if !status.success() {
        return Err(Error::Reported(format!(
            "the sandbox probe failed ({status})"
        )));
    }
    serde_json::from_str(&out)
        .map_err(|e| Error::Reported(format!("the sandbox probe answered badly: {e}")))
}

/// One row of the property table.
pub struct Property {
    pub property: &'static str,
    pub mechanism: String,
    pub enforced: bool,
}

/// Each property the sandbox promises, the mechanism that gives it on this
/// kernel, and whether it is enforced.
pub fn properties(layers: &Layers) -> Vec<Property> {
    let ll = |min: i32, what: &str| {
        (layers.landlock_abi >= min)
            .then(|| format!("Landlock ABI {} ({what})", layers.landlock_abi))
    };
    let join = |parts: Vec<Option<String>>| -> (String, bool) {
        let parts: Vec<String> = parts.into_iter().flatten().collect();
        let enforced = !parts.is_empty();
        (
            if enforced {
                parts.join(" + ")
            } else {
                "nothing on this kernel".to_string()
            },
            enforced,
        )
    };
    let seccomp = |what: &str| layers.seccomp.then(|| format!("seccomp ({what})"));
    let rows: Vec<(&'static str, (String, bool))> = vec![
        (
            "no write outside the writable set (nothing in read-only mode)",
            join(vec![
                ll(1, "write rights on the writable set only"),
                layers
                    .mount_ns
                    .then(|| "read-only mount namespace".to_string()),
            ]),
        ),
        (
            "no metadata change (mode, owner, times, xattrs) outside the writable set",
            join(vec![
                layers
                    .mount_ns
                    .then(|| "read-only mount namespace".to_string()),
                layers.seccomp.then(|| {
                    if layers.mount_ns {
                        "seccomp (read-only mode: every metadata call)".to_string()
                    } else {
                        "seccomp (every metadata call, since no mount namespace)".to_string()
                    }
                }),
            ]),
        ),
        (
            "no network of any family (inet, inet6, UDP, raw, netlink)",
            join(vec![seccomp("socket() refused"), ll(4, "no TCP")]),
        ),
        (
            "no unix-socket connect to a path outside the roots",
            join(vec![seccomp(
                "socket, bind and connect refused; socket pairs only of stream or seqpacket type",
            )]),
        ),
        (
            "no abstract unix sockets",
            join(vec![
                seccomp("socket, bind and connect refused"),
                ll(6, "scoped"),
            ]),
        ),
        (
            "no SysV IPC or POSIX message queue shared with the host",
            join(vec![
                layers.pid_ns.then(|| "IPC namespace".to_string()),
                (!layers.pid_ns && layers.seccomp)
                    .then(|| "seccomp (msgget, semget, shmget, mq_open refused)".to_string()),
            ]),
        ),
        (
            "no path outside can be looked up (no existence, size, owner or times)",
            join(vec![layers.mount_ns.then(|| {
                "a new root holding only the roots, system directories, named /etc files and \
                 devices"
                    .to_string()
            })]),
        ),
        (
            "System V shared memory and message queues bounded per call",
            join(vec![
                (layers.pid_ns && layers.ipc_limits).then(|| {
                    format!(
                        "IPC namespace limits ({} MiB of shared memory, 64 segments, 16 queues)",
                        super::SHM_BYTES >> 20
                    )
                }),
                (!(layers.pid_ns && layers.ipc_limits) && layers.seccomp)
                    .then(|| "seccomp (msgget, semget, shmget, mq_open refused)".to_string()),
            ]),
        ),
        (
            "the private temporary directory is bounded in bytes and in files",
            join(vec![layers.mount_ns.then(|| {
                format!(
                    "tmpfs of {} MiB and {} files",
                    super::TEMP_SIZE >> 20,
                    super::TEMP_INODES
                )
            })]),
        ),
        (
            "commands start with no signal blocked or ignored",
            (
                "signal mask and dispositions reset before every exec".to_string(),
                true,
            ),
        ),
        (
            "no set-user-ID or set-group-ID file created",
            join(vec![
                seccomp("chmod and create with those bits refused"),
                layers
                    .mount_ns
                    .then(|| "writable set mounted nosuid".to_string()),
            ]),
        ),
        (
            "no watching or leasing files (inotify, F_SETLEASE)",
            join(vec![seccomp("inotify and leases refused")]),
        ),
        (
            "no device nodes, FIFOs or sockets created",
            join(vec![
                ll(1, "no make-char/block/fifo/sock right"),
                seccomp("mknod refused"),
                Some("capabilities dropped".to_string()),
            ]),
        ),
        (
            "no signal to, or trace of, a process outside the call",
            join(vec![
                ll(6, "signals scoped"),
                layers
                    .pid_ns
                    .then(|| "PID namespace with its own /proc".to_string()),
            ]),
        ),
        (
            "no descendant alive after the call",
            (
                if layers.pid_ns {
                    "PID namespace (its init's death kills the call)".to_string()
                } else {
                    "subreaper supervisor kills and reaps every descendant".to_string()
                },
                true,
            ),
        ),
        (
            "bounded processes per call",
            join(vec![
                (layers.pid_max)
                    .then(|| format!("PID namespace pid_max ({})", (MAX_TASKS + 1).max(301))),
                (!layers.root && layers.user_ns)
                    .then(|| format!("RLIMIT_NPROC {MAX_TASKS} in the user namespace")),
            ]),
        ),
        (
            "bounded memory and CPU time per process",
            ("RLIMIT_AS and RLIMIT_CPU".to_string(), true),
        ),
        (
            "the call's processes are the first the out-of-memory killer ends",
            ("oom_score_adj 1000".to_string(), true),
        ),
        (
            "no descriptor the server inherited reaches a command",
            (
                "close-on-exec in the server, the fork server and each supervisor".to_string(),
                true,
            ),
        ),
        (
            "no system call newer than the filter's review (listmount, ...)",
            join(vec![seccomp("absent from number 457 on, unless reviewed")]),
        ),
        (
            "a fixed PATH and an allowlisted environment",
            ("set by the server".to_string(), true),
        ),
        (
            "reads only the roots, system directories and named /etc files",
            join(vec![
                ll(1, "read rights by path"),
                layers
                    .mount_ns
                    .then(|| "/root and /home covered unless a root lies there".to_string()),
            ]),
        ),
        (
            "no privileges: capabilities dropped, no new privileges",
            (
                "capset, bounding set, securebits, no_new_privs".to_string(),
                true,
            ),
        ),
        (
            "no hook, git config, repository or agent setting left to run later",
            (
                if layers.mount_ns && layers.pid_ns {
                    "read-only bind mounts over each one, and the roots checked after the call \
                     (new ones renamed aside)"
                        .to_string()
                } else {
                    "the roots checked after the call only: new ones renamed aside, changed ones \
                     put back from copies (no mount namespace to bind them read-only)"
                        .to_string()
                },
                true,
            ),
        ),
        (
            "the private temporary directory is removed after the call",
            (
                "removed by the server; a killed server's by the next one".to_string(),
                true,
            ),
        ),
    ];
    rows.into_iter()
        .map(|(property, (mechanism, enforced))| Property {
            property,
            mechanism,
            enforced,
        })
        .collect()
}

/// The property table as text.
pub fn table(layers: &Layers) -> String {
    let rows = properties(layers);
    let width = rows.iter().map(|r| r.property.len()).max().unwrap_or(0);
    let mut out = format!("{:width$}  enforced  mechanism\n", "property");
    for row in rows {
        out.push_str(&format!(
            "{:width$}  {:8}  {}\n",
            row.property,
            if row.enforced { "yes" } else { "NO" },
            row.mechanism
        ));
    }
    out
}

/// One line for the start-up log.
pub fn summary(layers: &Layers) -> String {
    let mut parts = Vec::new();
    if layers.landlock_abi > 0 {
        parts.push(format!("Landlock ABI {}", layers.landlock_abi));
    }
    if layers.seccomp {
        parts.push("seccomp".to_string());
    }
    let ns: Vec<&str> = [
        (layers.user_ns, "user"),
        (layers.mount_ns, "mount"),
        (layers.pid_ns, "PID"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    if !ns.is_empty() {
        parts.push(format!("{} namespaces", ns.join("+")));
    }
    let missing: Vec<&str> = properties(layers)
        .into_iter()
        .filter(|p| !p.enforced)
        .map(|p| p.property)
        .collect();
    let mut line = if parts.is_empty() {
        "no kernel sandbox layer is available".to_string()
    } else {
        parts.join(", ")
    };
    if !missing.is_empty() {
        line.push_str(&format!("; NOT enforced: {}", missing.join("; ")));
    }
    line
}
