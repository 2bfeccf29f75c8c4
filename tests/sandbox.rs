//! The bash sandbox alone (issue #8): every test runs a real shell, in
//! `--bash-mode workspace-write` through MCP or by driving the supervisor
//! directly with a read-only confinement, so no parser or policy stands in
//! the way. Each asserts an effect: a file's mode, owner, times and xattrs
//! unchanged; a listener that heard nothing; no node created; a process
//! outside still running; no process of the call left; no temporary
//! directory left.
//!
//! A property whose kernel mechanism is missing is skipped with the reason
//! printed; `rootbound sandbox` shows the same table. A skip fails instead
//! when the kernel, asked here without the server's probe, does offer the
//! mechanism, and always in CI (`ROOTBOUND_NO_SKIPS`).
// Builds Unix trees (symlinks, FIFOs, modes) or runs Unix programs; the
// Windows build is checked by the unit tests and the smoke test under Wine
// (.ci/cross.sh).
#![cfg(unix)]
// The Linux layers; macOS has its own profile tests (src/shell/sandbox/macos.rs).
#![cfg(target_os = "linux")]

mod common;

use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{BashAnswer, Scratch, Server, all_text};
use serde_json::{Value, json};

/// What this kernel provides, as the supervisor's probe reports it.
fn layers() -> Value {
    let out = std::process::Command::new(common::BIN)
        .args(["__rootbound-sandbox-supervisor", "probe"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

fn has(layer: &str) -> bool {
    let l = layers();
    match layer {
        "landlock" => l["landlock_abi"].as_i64().unwrap_or(0) >= 1,
        "landlock6" => l["landlock_abi"].as_i64().unwrap_or(0) >= 6,
        other => l[other].as_bool().unwrap_or(false),
    }
}

/// Whether this kernel offers `layer`, found out here without the
/// server's probe: if the probe and the kernel disagree, a test would skip
/// what it should test.
fn kernel_offers(layer: &str) -> bool {
    use std::os::unix::process::CommandExt;
    // A namespace is tried in a child of its own: a threaded test process
    // cannot enter a new user namespace.
    let unshare = |flags: libc::c_int| {
        let mut command = std::process::Command::new("/bin/true");
        // SAFETY: unshare with integer flags, in the child before exec.
        unsafe {
            command.pre_exec(move || {
                if libc::unshare(flags) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
        command.status().is_ok_and(|s| s.success())
    };
    // SAFETY: geteuid has no arguments.
    let root = unsafe { libc::geteuid() } == 0;
    let user = if root { 0 } else { libc::CLONE_NEWUSER };
    match layer {
        // SAFETY: the version query of landlock_create_ruleset.
        "landlock" => unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                1u32,
            ) >= 1
        },
        // With filters built in, a null filter is refused as a bad address.
        "seccomp" => {
            // SAFETY: PR_SET_SECCOMP with a null program fails before it
            // installs anything.
            let r = unsafe { libc::prctl(libc::PR_SET_SECCOMP, 2, 0, 0, 0) };
            r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EFAULT)
        }
        "user_ns" => unshare(libc::CLONE_NEWUSER),
        "mount_ns" => unshare(user | libc::CLONE_NEWNS),
        "pid_ns" => unshare(user | libc::CLONE_NEWPID),
        // A PID namespace's own pid_max came with Linux 6.14.
        "pid_max" => {
            let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
            let mut parts = release
                .trim()
                .split(['.', '-'])
                .map(|p| p.parse::<u32>().unwrap_or(0));
            let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
            (major, minor) >= (6, 14)
        }
        other => panic!("no independent check for layer {other}"),
    }
}

/// A test that cannot run here because the server's probe did not find
/// all of `layers`. It fails instead of passing when the kernel does offer
/// them all (the probe would be wrong, and the test skipped for nothing),
/// and when skips are failures (`.ci/run` sets ROOTBOUND_NO_SKIPS: a test
/// that passes because the kernel lacked something is a skip).
fn skip(test: &str, layers: &[&str], why: &str) {
    assert!(
        !layers.iter().all(|layer| kernel_offers(layer)),
        "{test}: this kernel offers {layers:?}, but the server's probe says it does not ({why})"
    );
    assert!(
        std::env::var_os("ROOTBOUND_NO_SKIPS").is_none(),
        "{test} cannot run here ({why}), and a skip is a failure in CI"
    );
    eprintln!("SKIPPED {test}: {why}");
}

/// The server's probe and this file's own look at the kernel agree on
/// every layer, so no test skips what this kernel could have tested.
#[test]
fn the_servers_probe_sees_every_layer_this_kernel_offers() {
    for layer in [
        "landlock", "seccomp", "user_ns", "mount_ns", "pid_ns", "pid_max",
    ] {
        assert_eq!(has(layer), kernel_offers(layer), "{layer}: {}", layers());
    }
}

/// `<tmp>/root` is the root, `<tmp>/outside` is not, `<tmp>/tmp` is the
/// server's TMPDIR (so its private directories can be counted).
struct Layout {
    tmp: Scratch,
}

impl Layout {
    fn new() -> Layout {
        let tmp = Scratch::new();
        tmp.file("root/inside.txt", "inside\n");
        tmp.file("outside/victim.txt", "victim\n");
        tmp.dir("tmp");
        Layout { tmp }
    }
    fn root(&self) -> PathBuf {
        self.tmp.path.join("root")
    }
    fn outside(&self) -> PathBuf {
        self.tmp.path.join("outside")
    }
    fn temp_base(&self) -> PathBuf {
        self.tmp.path.join("tmp")
    }
    async fn server(&self, extra: &[&str]) -> Server {
        self.server_started_with(extra, false).await
    }

    /// `ignoring_children`: the server starts with SIGCHLD ignored, as a
    /// client's `trap '' CHLD` would leave it (an ignored signal survives
    /// exec).
    async fn server_started_with(&self, extra: &[&str], ignoring_children: bool) -> Server {
        let mut cmd = tokio::process::Command::new(common::BIN);
        if ignoring_children {
            // SAFETY: sets one signal's disposition in the child before exec.
            unsafe {
                cmd.pre_exec(|| {
                    libc::signal(libc::SIGCHLD, libc::SIG_IGN);
                    Ok(())
                });
            }
        }
        cmd.arg("--root")
            .arg(self.root())
            .args(["--bash-mode", "workspace-write"])
            .args(extra)
            .env("TMPDIR", self.temp_base())
            .env("RUST_LOG", "warn");
        let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        Server {
            client: rmcp::ServiceExt::serve((), transport).await.unwrap(),
        }
    }
}

async fn sh(server: &Server, command: &str) -> BashAnswer {
    let result = server.call("bash", json!({"command": command})).await;
    let text = all_text(&result);
    assert_ne!(result.is_error, Some(true), "{command}: {text}");
    BashAnswer::parse(&text)
}

/// Runs `script` with bash under a supervisor started directly, with the
/// given confinement: nothing but the sandbox decides.
fn supervised(root: &Path, writable: &[&Path], read_only: bool, script: &str) -> (String, Value) {
    let request = json!({
        "steps": [{"stages": [{"argv": ["bash", "-c", script], "redirects": [], "env": []}],
                   "then": null}],
        "cwd": root,
        "env": [["PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]],
        "confinement": {
            "readable": [root], "writable": writable, "read_only": read_only,
            "layers": layers(), "max_tasks": 512, "cpu_seconds": 60,
            "address_space": 17179869184u64
        }
    });
    let scratch = Scratch::new();
    let request_file = scratch.file("request.json", request.to_string());
    let report_file = scratch.path.join("report.json");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "exec \"$0\" __rootbound-sandbox-supervisor run < '{}' 3> '{}'",
            request_file.display(),
            report_file.display()
        ))
        .arg(common::BIN)
        .output()
        .unwrap();
    let report = serde_json::from_str(&std::fs::read_to_string(&report_file).unwrap()).unwrap();
    (
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        report,
    )
}

/// Mode, owner, modification time, inode and xattrs of a file.
fn fingerprint(path: &Path) -> (u32, u32, i64, u64, Vec<u8>) {
    let meta = std::fs::symlink_metadata(path).unwrap();
    let mut names = vec![0u8; 4096];
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: listxattr into a buffer of the given size.
    let n = unsafe { libc::listxattr(c.as_ptr(), names.as_mut_ptr().cast(), names.len()) };
    names.truncate(n.max(0) as usize);
    (meta.mode(), meta.uid(), meta.mtime(), meta.ino(), names)
}

fn set_xattr(path: &Path, name: &str, value: &[u8]) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let n = std::ffi::CString::new(name).unwrap();
    // SAFETY: setxattr with valid C strings and a buffer.
    unsafe {
        libc::setxattr(
            c.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
}

/// Commands that try every way to change a file's metadata.
fn metadata_attacks(file: &Path, into: &Path) -> String {
    let f = file.display();
    let d = into.display();
    format!(
        "chmod 606 {f}; touch -d 2001-01-01 {f}; chown nobody {f}; chgrp nogroup {f}; \
         perl -e '($f, $n, $v) = (\"{f}\", \"user.pwned\", \"1\"); syscall(188, $f, $n, $v, 1, 0) == 0 or print \"setxattr: $!\\n\"'; \
         perl -e '($f, $n) = (\"{f}\", \"user.keep\"); syscall(197, $f, $n) == 0 or print \"removexattr: $!\\n\"'; \
         ln {f} {d}/hard-link; mv {f} {d}/moved; echo appended >> {f}; \
         perl -e 'utime 1, 1, \"{f}\" or print \"utime: $!\\n\"'; true"
    )
}

#[tokio::test]
async fn no_metadata_changes_outside_the_writable_set() {
    let l = Layout::new();
    let victim = l.outside().join("victim.txt");
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    set_xattr(&victim, "user.keep", b"kept");
    let before = fingerprint(&victim);
    let server = l.server(&[]).await;
    let a = sh(&server, &metadata_attacks(&victim, &l.root())).await;
    assert_eq!(fingerprint(&victim), before, "{a:?}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "victim\n");
    assert!(!l.root().join("hard-link").exists() && !l.root().join("moved").exists());
    // Inside the writable root the same commands work: the sandbox is not
    // refusing everything.
    let own = l.root().join("own.txt");
    std::fs::write(&own, "x").unwrap();
    let a = sh(&server, &format!("chmod 600 {}; echo ok", own.display())).await;
    assert_eq!(a.stdout, "ok");
    assert_eq!(std::fs::metadata(&own).unwrap().mode() & 0o777, 0o600);
}

/// What language runtimes read at start is in a call's view: OpenSSL's
/// configuration and the CA certificates (Node refuses to start without
/// the first); private keys beside them are not.
#[tokio::test]
async fn tls_configuration_and_certificates_are_readable_and_keys_absent() {
    let l = Layout::new();
    let server = l.server(&[]).await;
    let a = sh(
        &server,
        "head -c 1 /etc/ssl/openssl.cnf >/dev/null && echo config; \
         ls /etc/ssl/certs | wc -l; cat /etc/ssl/certs/*.pem | grep -c 'BEGIN CERTIFICATE'; \
         ls -d /etc/ssl/private 2>&1",
    )
    .await;
    let lines: Vec<&str> = a.stdout.lines().collect();
    assert_eq!(lines.first(), Some(&"config"), "{a:?}");
    let listed: usize = lines[1].trim().parse().unwrap();
    let certificates: usize = lines[2].trim().parse().unwrap();
    assert!(listed > 0 && certificates > 0, "{a:?}");
    assert!(lines[3].contains("No such file or directory"), "{a:?}");
}

/// A call's `/etc/passwd` and `/etc/group` are its own: the host's lines
/// for root, the server's user and nobody, not every account on the host;
/// readable (programs ask for their user's name) and read-only.
#[tokio::test]
async fn the_account_files_hold_root_the_user_and_nobody_only() {
    let l = Layout::new();
    let server = l.server(&[]).await;
    // SAFETY: getuid and getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    for (file, own) in [("/etc/passwd", uid), ("/etc/group", gid)] {
        let host = std::fs::read_to_string(file).unwrap();
        let a = sh(&server, &format!("cat {file}")).await;
        assert!(a.stdout.lines().any(|l| l.starts_with("root:")), "{a:?}");
        for line in a.stdout.lines() {
            let id: u32 = line.split(':').nth(2).unwrap().parse().unwrap();
            assert!([0, own, 65534].contains(&id), "{file}: {line}");
            assert!(host.lines().any(|h| h == line), "{file}: {line}");
        }
        let others = host
            .lines()
            .filter(|h| {
                h.split(':')
                    .nth(2)
                    .and_then(|id| id.parse::<u32>().ok())
                    .is_some_and(|id| ![0, own, 65534].contains(&id))
            })
            .count();
        assert!(others > 0, "the host's {file} has no other account to hide");
        let a = sh(&server, &format!("echo x >> {file}")).await;
        assert!(a.stderr.contains("Read-only file system"), "{a:?}");
    }
    let a = sh(&server, "whoami").await;
    assert!(!a.stdout.trim().is_empty(), "{a:?}");
}

/// The devices a call may use are the host's own nodes: a call may write
/// to them, never change their mode, owner, times or xattrs (a call of a
/// server run as root owns them, so only the mount can refuse).
#[tokio::test]
async fn the_hosts_devices_keep_their_metadata() {
    let l = Layout::new();
    let device = Path::new("/dev/full");
    let meta = std::fs::metadata(device).unwrap();
    let before = fingerprint(device);
    let server = l.server(&[]).await;
    let a = sh(
        &server,
        &format!(
            "{}; echo x > /dev/null && echo wrote",
            metadata_attacks(device, &l.root())
        ),
    )
    .await;
    let after = fingerprint(device);
    if after != before {
        // Put the host's device back before failing.
        std::fs::set_permissions(device, meta.permissions()).unwrap();
        std::os::unix::fs::chown(device, Some(meta.uid()), Some(meta.gid())).unwrap();
        let mtime = libc::timespec {
            tv_sec: meta.mtime(),
            tv_nsec: meta.mtime_nsec(),
        };
        let times = [mtime, mtime];
        let c = std::ffi::CString::new("/dev/full").unwrap();
        // SAFETY: utimensat with a valid C string and two timespecs.
        unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), 0) };
        panic!("{device:?} changed: {before:?} -> {after:?}: {a:?}");
    }
    assert!(
        a.stdout.ends_with("\nwrote"),
        "devices stay writable: {a:?}"
    );
    // The write reached the device: /dev/full refuses it as full.
    assert!(a.stderr.contains("No space left on device"), "{a:?}");
}

#[test]
fn read_only_confinement_changes_nothing_even_inside() {
    if !has("landlock") {
        return skip(
            "read_only_confinement",
            &["landlock"],
            "no Landlock on this kernel",
        );
    }
    let l = Layout::new();
    let file = l.root().join("inside.txt");
    set_xattr(&file, "user.keep", b"kept");
    let before = fingerprint(&file);
    let (out, report) = supervised(
        &l.root(),
        &[],
        true,
        &format!(
            "{}; rm -f {}; touch new.txt; true",
            metadata_attacks(&file, &l.root()),
            file.display()
        ),
    );
    assert_eq!(report["report"], json!({"Exited": 0}), "{out}");
    assert_eq!(fingerprint(&file), before, "{out}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "inside\n");
    assert!(!l.root().join("new.txt").exists());
    assert!(!l.root().join("hard-link").exists());
}

#[tokio::test]
async fn no_network_of_any_family() {
    if !has("seccomp") {
        return skip(
            "no_network_of_any_family",
            &["seccomp"],
            "seccomp is not available",
        );
    }
    let l = Layout::new();
    let server = l.server(&[]).await;
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let udp6 = std::net::UdpSocket::bind("[::1]:0").ok();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let socket_path = l.outside().join("service.sock");
    let unix = std::os::unix::net::UnixListener::bind(&socket_path).unwrap();
    unix.set_nonblocking(true).unwrap();
    let abstract_name = format!("rootbound-test-{}", std::process::id());
    let abstract_addr =
        <std::os::unix::net::SocketAddr as std::os::linux::net::SocketAddrExt>::from_abstract_name(
            abstract_name.as_bytes(),
        )
        .unwrap();
    let abstract_listener = std::os::unix::net::UnixListener::bind_addr(&abstract_addr).unwrap();
    abstract_listener.set_nonblocking(true).unwrap();
    let mut script = format!(
        "echo datagram > /dev/udp/127.0.0.1/{udp}; echo stream > /dev/tcp/127.0.0.1/{tcp}; \
         perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => \"{sock}\") and print \"unix-connected\\n\"'; \
         perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => \"\\0{abs}\") and print \"abstract-connected\\n\"'; \
         perl -e 'socket(S, 16, 3, 0) and print \"netlink-open\\n\"'; \
         perl -e 'socket(S, 2, 3, 1) and print \"raw-open\\n\"'; \
         perl -e 'socket(S, 17, 3, 768) and print \"packet-open\\n\"'; true",
        udp = udp.local_addr().unwrap().port(),
        tcp = tcp.local_addr().unwrap().port(),
        sock = socket_path.display(),
        abs = abstract_name,
    );
    if let Some(u6) = &udp6 {
        u6.set_nonblocking(true).unwrap();
        script.push_str(&format!(
            "; echo datagram6 > /dev/udp/::1/{}",
            u6.local_addr().unwrap().port()
        ));
    }
    let a = sh(&server, &script).await;
    std::thread::sleep(Duration::from_millis(200));
    let mut buf = [0u8; 64];
    assert!(udp.recv(&mut buf).is_err(), "a UDP datagram arrived: {a:?}");
    if let Some(u6) = &udp6 {
        assert!(u6.recv(&mut buf).is_err(), "a UDP6 datagram arrived");
    }
    assert!(tcp.accept().is_err(), "a TCP connection arrived");
    assert!(unix.accept().is_err(), "a unix connection arrived");
    assert!(
        abstract_listener.accept().is_err(),
        "an abstract connection arrived"
    );
    for token in [
        "unix-connected",
        "abstract-connected",
        "netlink-open",
        "raw-open",
        "packet-open",
    ] {
        assert!(!a.stdout.contains(token), "{token}: {a:?}");
    }
}

#[tokio::test]
async fn no_device_nodes_fifos_or_sockets_are_created() {
    let l = Layout::new();
    let server = l.server(&[]).await;
    let a = sh(
        &server,
        "mknod kmsg c 1 11; cat kmsg | head -c 100; mknod blk b 7 0; mkfifo fifo; \
         mknod fifo2 p; perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Local => \"sock\", Listen => 1)'; \
         ls",
    )
    .await;
    for name in ["kmsg", "blk", "fifo", "fifo2", "sock"] {
        assert!(
            std::fs::symlink_metadata(l.root().join(name)).is_err(),
            "{name} was created: {a:?}"
        );
    }
}

fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim().chars().next()
}

#[tokio::test]
async fn no_signal_or_trace_reaches_a_process_outside() {
    let l = Layout::new();
    let server = l.server(&[]).await;
    let mut outside = std::process::Command::new("sleep")
        .arg("600")
        .spawn()
        .unwrap();
    let pid = outside.id();
    let a = sh(
        &server,
        &format!(
            "kill -9 {pid}; kill -STOP {pid}; \
             perl -e 'syscall(101, 16, {pid}, 0, 0) == 0 and print \"attached\\n\"'; true"
        ),
    )
    .await;
    std::thread::sleep(Duration::from_millis(200));
    let state = process_state(pid);
    assert!(
        matches!(state, Some('S' | 'R')),
        "the outside process is {state:?}: {a:?}"
    );
    assert!(!a.stdout.contains("attached"), "{a:?}");
    outside.kill().unwrap();
    let _ = outside.wait();
}

/// Process ids whose command line contains `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmdline)
                .replace('\0', " ")
                .contains(needle)
        {
            found.push(pid);
        }
    }
    found
}

#[tokio::test]
async fn no_descendant_outlives_the_call() {
    let l = Layout::new();
    let server = l.server(&["--bash-timeout", "2"]).await;
    let a = sh(
        &server,
        "sleep 7771 & setsid sleep 7772 & nohup sleep 7773 >/dev/null 2>&1 & \
         (sleep 7774 &); setsid bash -c 'sleep 7775 & disown' ; echo started",
    )
    .await;
    assert_eq!((a.exit_code(), a.stdout.as_str()), (Some(0), "started"));
    // After a time-out too, and with the answer saying so.
    let a = sh(&server, "setsid sleep 7776 & sleep 7777").await;
    assert_eq!(a.status, "[killed: timed out after 2s]");
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left: Vec<u32> = (7771..=7777)
            .flat_map(|n| processes_with(&format!("sleep {n}")))
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "survivors: {left:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn processes_per_call_are_bounded() {
    if !(has("pid_max") || has("user_ns") && !has("root")) {
        return skip(
            "processes_per_call_are_bounded",
            &["pid_max"],
            "neither a PID namespace pid_max (Linux 6.14+) nor a user namespace",
        );
    }
    let l = Layout::new();
    let server = l.server(&[]).await;
    let a = sh(
        &server,
        // perl keeps counting when a fork fails (bash gives up on the line).
        "perl -e 'my $n = 0; for (1..700) { my $p = fork; last unless defined $p; \
         if ($p == 0) { $0 = \"sleeper-6543\"; sleep 6543; exit } $n++ } print \"$n\\n\"'",
    )
    .await;
    let started: usize = a.stdout.trim().parse().unwrap();
    assert!((1..=512).contains(&started), "{started} processes: {a:?}");
    assert!(processes_with("sleeper-6543").is_empty());
}

#[tokio::test]
async fn memory_and_cpu_time_are_bounded_per_process() {
    let l = Layout::new();
    let server = l.server(&["--bash-timeout", "10"]).await;
    let a = sh(
        &server,
        "perl -e '$x = \"a\" x (20 * 1024**3); print \"huge-allocated\\n\"'; \
         perl -e '$x = \"a\" x (64 * 1024**2); print \"small-allocated\\n\"'; ulimit -t; ulimit -v",
    )
    .await;
    assert!(!a.stdout.contains("huge-allocated"), "{a:?}");
    assert!(a.stdout.contains("small-allocated"), "{a:?}");
    let limits: Vec<&str> = a.stdout.lines().rev().take(2).collect();
    assert_eq!(limits, [(16u64 << 20).to_string().as_str(), "15"], "{a:?}");
}

#[tokio::test]
async fn path_is_fixed_and_nothing_in_a_root_runs_from_it() {
    let l = Layout::new();
    let marker = l.outside().join("planted-ran");
    let planted = l.tmp.file(
        "root/tree",
        format!("#!/bin/sh\ntouch {}\n", marker.display()),
    );
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The server's own PATH names the root and has an empty entry.
    let mut cmd = tokio::process::Command::new(common::BIN);
    cmd.arg("--root")
        .arg(l.root())
        .env("PATH", format!("{}::/usr/bin:/bin", l.root().display()));
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .spawn()
        .unwrap();
    let server = Server {
        client: rmcp::ServiceExt::serve((), transport).await.unwrap(),
    };
    // `tree` is on the read-only allowlist but not installed here.
    let _ = server.call("bash", json!({"command": "tree"})).await;
    assert!(!marker.exists(), "a program in the root ran through PATH");
    let full_shell = l.server(&[]).await;
    // The system's directories, after those of the toolchains found (from
    // the server's PATH and the usual install places, never a root).
    let path = sh(&full_shell, "echo $PATH").await.stdout;
    assert!(
        path.ends_with("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
        "{path}"
    );
    for dir in path.split(':') {
        assert!(dir.starts_with('/'), "{path}");
        assert!(!std::path::Path::new(dir).starts_with(l.root()), "{path}");
    }
    // A server whose PATH names its root finds nothing there.
    let mut cmd = tokio::process::Command::new(common::BIN);
    cmd.args(["--bash-mode", "workspace-write", "--root"])
        .arg(l.root())
        .env("PATH", format!("{}:/usr/bin:/bin", l.root().display()));
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .spawn()
        .unwrap();
    let server = Server {
        client: rmcp::ServiceExt::serve((), transport).await.unwrap(),
    };
    let path = sh(&server, "echo $PATH").await.stdout;
    assert!(!path.contains(&l.root().display().to_string()), "{path}");
}

#[tokio::test]
async fn system_secrets_are_unreadable_even_as_root() {
    if !has("landlock") {
        return skip(
            "system_secrets_are_unreadable",
            &["landlock"],
            "no Landlock on this kernel",
        );
    }
    let l = Layout::new();
    let server = l.server(&[]).await;
    let a = sh(
        &server,
        "cat /etc/shadow; cat /etc/gshadow; ls /root; ls /home; cat /proc/1/environ; \
         cat /proc/self/environ; ls /tmp; cat /etc/passwd | head -1",
    )
    .await;
    // The one readable file proves the command ran.
    assert!(a.stdout.starts_with("root:x:0:0:"), "{a:?}");
    assert_eq!(a.stdout.lines().count(), 1, "{a:?}");
    // Refused by Landlock, or absent from the call's file system view.
    assert!(
        a.stderr.contains("/etc/shadow: Permission denied")
            || a.stderr.contains("/etc/shadow: No such file or directory"),
        "{a:?}"
    );
}

/// The call's file system holds only the roots, the system directories, the
/// named `/etc` files, its devices, its `/proc` and its temporary directory:
/// any other path does not exist, so not even its size, owner or times can
/// be asked, and a link in a root that leads out leads nowhere.
#[tokio::test]
async fn outside_paths_do_not_exist_inside_a_call() {
    if !has("mount_ns") {
        return skip(
            "outside_paths_do_not_exist",
            &["mount_ns"],
            "no mount namespace",
        );
    }
    let l = Layout::new();
    std::os::unix::fs::symlink(l.outside(), l.root().join("out")).unwrap();
    for mode in ["workspace-write", "read-only"] {
        let server = if mode == "workspace-write" {
            l.server(&[]).await
        } else {
            Server::start(&[&l.root()], &["--bash-mode", mode]).await
        };
        let victim = l.outside().join("victim.txt");
        let command = if mode == "workspace-write" {
            format!(
                "stat -c %s {v}; stat -c %s /srv /opt /etc/hostname; ls -l out/; cat out/victim.txt; \
                 stat -c %s /usr/bin/env >/dev/null && echo system-visible",
                v = victim.display()
            )
        } else {
            "ls -l out/".to_string()
        };
        let result = server.call("bash", json!({"command": command})).await;
        let a = BashAnswer::parse(&all_text(&result));
        assert!(
            !a.stdout.contains('7'),
            "{mode}: the outside size showed: {a:?}"
        );
        assert!(
            !a.stdout.contains("victim"),
            "{mode}: an outside name showed: {a:?}"
        );
        if mode == "workspace-write" {
            assert!(a.stdout.contains("system-visible"), "{a:?}");
            for path in [
                victim.display().to_string(),
                "/srv".into(),
                "/etc/hostname".into(),
            ] {
                assert!(
                    a.stderr
                        .contains(&format!("'{path}': No such file or directory")),
                    "{path}: {a:?}"
                );
            }
        }
    }
}

/// A root inside a root, whose way a concurrent call swaps for a link to
/// outside while another call builds its view: the second call's view must
/// not mount the outside directory at the nested root's path (Landlock
/// alone would still refuse its contents; the view must not even show it).
#[tokio::test]
async fn a_nested_roots_way_swapped_for_a_link_brings_nothing_from_outside() {
    if !has("mount_ns") {
        return skip(
            "a_nested_roots_way_swapped",
            &["mount_ns"],
            "no mount namespace",
        );
    }
    let tmp = Scratch::new();
    let root = tmp.dir("d/r");
    let nested = tmp.dir("d/r/sub/shared");
    tmp.file("d/shared/secret", "SECRET\n");
    let outside = tmp.path.join("d/shared");
    let server = nested_roots_server(&root, &nested).await;
    let probe = format!(
        "stat -c %i {o}; cat {o}/secret; echo pwned > {o}/marker",
        o = outside.display()
    );
    let (_, a) = probe_while_the_way_is_swapped(&server, &probe).await;
    assert!(
        !a.stdout.contains("SECRET"),
        "the outside file was read: {a:?}"
    );
    assert!(
        !outside.join("marker").exists(),
        "the call wrote outside the roots"
    );
    assert!(
        a.stderr.contains(&format!(
            "'{}': No such file or directory",
            outside.display()
        )),
        "the outside directory is in the view: {a:?}"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("secret")).unwrap(),
        "SECRET\n"
    );
}

/// Runs `probe` while another call has swapped the nested root's way
/// (`sub`) for a link to `..`: the probe starts, and builds its view, while
/// the swap is in place; the swap is undone after. The answers of the
/// swap and of the probe.
async fn probe_while_the_way_is_swapped(server: &Server, probe: &str) -> (BashAnswer, BashAnswer) {
    let swap = "mv sub sub.old && ln -s .. sub && sleep 4; rm sub; mv sub.old sub";
    let (swapped, probed) = tokio::join!(server.call("bash", json!({"command": swap})), async {
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        server.call("bash", json!({"command": probe})).await
    });
    (
        BashAnswer::parse(&all_text(&swapped)),
        BashAnswer::parse(&all_text(&probed)),
    )
}

/// A server of `--root root --root nested`, workspace-write.
async fn nested_roots_server(root: &Path, nested: &Path) -> Server {
    let mut cmd = tokio::process::Command::new(common::BIN);
    cmd.arg("--root")
        .arg(root)
        .arg("--root")
        .arg(nested)
        .args(["--bash-mode", "workspace-write"])
        .env("RUST_LOG", "error");
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    Server {
        client: rmcp::ServiceExt::serve((), transport).await.unwrap(),
    }
}

/// The same attack on the view built once: the fork server's template is
/// built (by the first call) while the nested root's way is a directory;
/// the swap makes the next call's view stale, and the template and the
/// Landlock rules are made again while the way is a link to `..`. Neither
/// follows it: the call that runs then, going through the link or by the
/// outside path, reads, lists and writes nothing outside. (Its check of
/// what it left behind cannot list the nested root then, so the server
/// refuses writing calls afterwards: the way put back is tested on
/// Landlock's rules alone, in `sandbox/landlock.rs`.)
#[tokio::test]
async fn a_nested_roots_way_swapped_while_the_view_is_built_once_grants_nothing_outside() {
    if !has("mount_ns") {
        return skip("swapped_template", &["mount_ns"], "no mount namespace");
    }
    let tmp = Scratch::new();
    let root = tmp.dir("d/r");
    let nested = tmp.dir("d/r/sub/shared");
    tmp.file("d/r/sub/shared/own", "OWN\n");
    tmp.file("d/shared/secret", "SECRET\n");
    let outside = tmp.path.join("d/shared");
    let server = nested_roots_server(&root, &nested).await;
    // The template is built now, from the roots as they are.
    let a = sh(&server, "cat sub/shared/own").await;
    assert_eq!(a.stdout, "OWN", "{a:?}");
    let probe = format!(
        "cat sub/shared/secret {o}/secret; echo pwned > sub/shared/marker; \
         echo pwned > {o}/marker; ls -a sub/shared {o}",
        o = outside.display()
    );
    let (s, a) = probe_while_the_way_is_swapped(&server, &probe).await;
    assert!(
        !a.stdout.contains("SECRET"),
        "the outside file was read: {a:?}"
    );
    assert!(
        !a.stdout.contains("secret"),
        "the outside directory was listed: {a:?}"
    );
    assert!(
        !outside.join("marker").exists(),
        "the call wrote outside the roots: {a:?}"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("secret")).unwrap(),
        "SECRET\n"
    );
    assert_eq!(s.exit_code(), Some(0), "{s:?}");
}

#[tokio::test]
async fn the_private_temporary_directory_is_removed() {
    let l = Layout::new();
    let server = l.server(&["--bash-timeout", "1"]).await;
    let a = sh(
        &server,
        "echo kept > $TMPDIR/f && cat $TMPDIR/f && echo $TMPDIR",
    )
    .await;
    assert!(a.stdout.starts_with("kept\n"), "{a:?}");
    let used = PathBuf::from(a.stdout.lines().nth(1).unwrap());
    assert!(used.starts_with(l.temp_base()), "{used:?}");
    // Each call starts with an empty directory: nothing of the last one.
    let a = sh(&server, "ls -A $TMPDIR; touch $TMPDIR/g; sleep 30").await;
    assert!(a.status.starts_with("[killed: timed out"), "{a:?}");
    assert_eq!(a.stdout, "", "{a:?}");
    // Whatever the calls wrote is gone: while the server runs, only its
    // own directory is there, with its lock and the empty mount point.
    let user_dir = only_entry(&l.temp_base());
    let server_dir = only_entry(&user_dir);
    let mut inside: Vec<String> = std::fs::read_dir(&server_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    inside.sort();
    assert_eq!(inside, ["lock", "tmp"]);
    assert_eq!(
        std::fs::read_dir(server_dir.join("tmp")).unwrap().count(),
        0
    );
    // When the server ends, nothing is left.
    drop(server);
    let deadline = Instant::now() + Duration::from_secs(5);
    while user_dir.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!user_dir.exists(), "left behind after the server ended");
}

fn only_entry(dir: &Path) -> PathBuf {
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries.into_iter().next().unwrap()
}

/// A server killed before it cleaned up leaves its directory; the next
/// server removes it, and touches nothing else: not the user's own
/// directories named like the old scheme, not a live server's directory
/// (its lock is held, whatever its process id looks like).
#[tokio::test]
async fn temporary_directories_of_dead_servers_are_removed_by_the_next_server() {
    let l = Layout::new();
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    let user_dir = l.temp_base().join(format!("rootbound-{euid}"));
    std::fs::create_dir_all(&user_dir).unwrap();
    std::fs::set_permissions(&user_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let stale = user_dir.join("2147483-1");
    std::fs::create_dir_all(stale.join("call-0/inner")).unwrap();
    std::fs::write(stale.join("lock"), "").unwrap();
    // A live server in another PID namespace: a pid that does not exist
    // here, but its lock is held.
    let live = user_dir.join("2147484-1");
    std::fs::create_dir_all(&live).unwrap();
    let held = std::fs::File::create(live.join("lock")).unwrap();
    // SAFETY: flock on a descriptor we own.
    let locked = unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&held), libc::LOCK_EX) };
    assert_eq!(locked, 0);
    let users_data = l.temp_base().join("rootbound-3999999-mydata");
    std::fs::create_dir_all(&users_data).unwrap();
    std::fs::write(users_data.join("notes.txt"), "mine").unwrap();
    let server = l.server(&[]).await;
    sh(&server, "true").await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while stale.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !stale.exists(),
        "the dead server's directory is still there"
    );
    assert!(
        live.join("lock").exists(),
        "a live server's directory was removed"
    );
    assert_eq!(
        std::fs::read_to_string(users_data.join("notes.txt")).unwrap(),
        "mine"
    );
}

#[tokio::test]
async fn a_fifo_in_git_files_hangs_neither_the_server_nor_the_call() {
    let l = Layout::new();
    let root = l.root();
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(ok.success());
    let mkfifo = |p: &Path| {
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    };
    std::fs::remove_file(root.join(".git/config")).unwrap();
    mkfifo(&root.join(".git/config"));
    // Read-only mode: git's configuration is a FIFO, refused at once.
    let mut cmd = tokio::process::Command::new(common::BIN);
    cmd.arg("--root").arg(&root).args(["--bash-timeout", "3"]);
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .spawn()
        .unwrap();
    let server = Server {
        client: rmcp::ServiceExt::serve((), transport).await.unwrap(),
    };
    let started = Instant::now();
    let result = server.call("bash", json!({"command": "git status"})).await;
    assert_eq!(result.is_error, Some(true), "{}", all_text(&result));
    assert!(all_text(&result).contains("not a regular file"));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // A FIFO .gitignore: git blocks on it, the call ends at its time limit,
    // and the server answers meanwhile.
    std::fs::remove_file(root.join(".git/config")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
    mkfifo(&root.join(".gitignore"));
    let (call, other) = tokio::join!(
        server.call("bash", json!({"command": "git status"})),
        async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let t = Instant::now();
            server.assert_alive().await;
            t.elapsed()
        }
    );
    let a = BashAnswer::parse(&all_text(&call));
    assert_eq!(a.status, "[killed: timed out after 3s]", "{a:?}");
    assert!(
        other < Duration::from_secs(2),
        "tools/list waited {other:?}"
    );
}

#[test]
fn the_sandbox_subcommand_prints_the_property_table() {
    let out = std::process::Command::new(common::BIN)
        .arg("sandbox")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for property in [
        "no metadata change",
        "no network of any family",
        "no descendant alive after the call",
        "bounded processes per call",
        "reads only the roots",
    ] {
        assert!(text.contains(property), "{text}");
    }
    let _ = std::io::stderr().write_all(text.as_bytes());
}

// --- Regressions from the attack on 7de31a8 ------------------------------

/// A unix datagram socket outside the roots, for a call to try to reach.
fn datagram_listener(path: &Path) -> std::os::unix::net::UnixDatagram {
    let listener = std::os::unix::net::UnixDatagram::bind(path).unwrap();
    listener.set_nonblocking(true).unwrap();
    listener
}

/// Nothing arrived at `listener` (given the call's datagrams time to land).
fn assert_heard_nothing(listener: &std::os::unix::net::UnixDatagram, call: &BashAnswer) {
    std::thread::sleep(Duration::from_millis(200));
    let mut buf = [0u8; 64];
    assert!(
        listener.recv(&mut buf).is_err(),
        "a datagram arrived: {call:?}"
    );
}

#[tokio::test]
async fn no_datagram_reaches_an_outside_unix_socket_and_no_abstract_name_is_bound() {
    if !has("seccomp") {
        return skip(
            "no_datagram_reaches",
            &["seccomp"],
            "seccomp is not available",
        );
    }
    let l = Layout::new();
    let path = l.outside().join("dgram.sock");
    let listener = datagram_listener(&path);
    let name = format!("rootbound-inside-{}", std::process::id());
    let server = l.server(&[]).await;
    let script = format!(
        "perl -MSocket -e 'socketpair(my $a, my $b, AF_UNIX, SOCK_DGRAM, 0) or print \"no-dgram-pair\\n\"; \
         send($a, \"MARKER-41234\", 0, pack_sockaddr_un(\"{p}\")); \
         socketpair(my $c, my $d, AF_UNIX, SOCK_STREAM, 0) or die; \
         bind($c, pack_sockaddr_un(\"\\0{name}\")) and print \"abstract-bound\\n\"; \
         connect($c, pack_sockaddr_un(\"{p}\")) and print \"connected\\n\"'",
        p = path.display()
    );
    let a = sh(&server, &script).await;
    assert_heard_nothing(&listener, &a);
    assert!(a.stdout.contains("no-dgram-pair"), "{a:?}");
    assert!(
        !a.stdout.contains("abstract-bound") && !a.stdout.contains("connected"),
        "{a:?}"
    );
}

fn msg_queue(key: i32, create: bool) -> i32 {
    // SAFETY: msgget with a key and flags.
    unsafe { libc::msgget(key, if create { libc::IPC_CREAT | 0o600 } else { 0 }) }
}

#[tokio::test]
async fn ipc_objects_are_not_shared_with_the_host() {
    let l = Layout::new();
    let server = l.server(&[]).await;
    let inside_key = 0x5242_0000 + (std::process::id() as i32 & 0xffff);
    let host_key = inside_key + 0x1_0000;
    let host_queue = msg_queue(host_key, true);
    assert!(host_queue >= 0);
    let a = sh(
        &server,
        &format!(
            "perl -e 'use IPC::SysV qw(IPC_CREAT); my $q = msgget({inside_key}, IPC_CREAT | 0600); \
             defined $q and print \"made\\n\"; defined msgget({host_key}, 0) and print \"host-visible\\n\"'"
        ),
    )
    .await;
    assert!(!a.stdout.contains("host-visible"), "{a:?}");
    // What the call made is gone with it, and never was the host's.
    assert_eq!(msg_queue(inside_key, false), -1, "{a:?}");
    // SAFETY: removing the queue this test made.
    unsafe { libc::msgctl(host_queue, libc::IPC_RMID, std::ptr::null_mut()) };
}

#[tokio::test]
async fn no_inotify_no_leases_and_no_setid_files() {
    if !has("seccomp") {
        return skip(
            "no_inotify_no_leases",
            &["seccomp"],
            "seccomp is not available",
        );
    }
    let l = Layout::new();
    let lease_target = l.outside().join("victim.txt");
    let server = l.server(&[]).await;
    let a = sh(
        &server,
        &format!(
            "perl -e 'syscall(294, 0) >= 0 and print \"inotify-open\\n\"'; \
             perl -e 'open(F, \"<\", \"{lease}\") or die; fcntl(F, 1024, 0) and print \"leased\\n\"'; \
             cp /usr/bin/id id-suid; chmod 4755 id-suid; chmod g+s id-suid; \
             perl -e 'sysopen(F, \"made-suid\", 0101, 04755) and print \"created\\n\"'; true",
            lease = lease_target.display()
        ),
    )
    .await;
    for token in ["inotify-open", "leased", "created"] {
        assert!(!a.stdout.contains(token), "{token}: {a:?}");
    }
    let mode = std::fs::metadata(l.root().join("id-suid")).unwrap().mode();
    assert_eq!(mode & 0o6000, 0, "set-ID bits were set: {mode:o}");
    assert!(!l.root().join("made-suid").exists());
}

#[tokio::test]
async fn host_processes_and_home_directories_cannot_be_looked_up() {
    if !has("mount_ns") || !has("pid_ns") {
        return skip(
            "host_processes_and_home",
            &["mount_ns", "pid_ns"],
            "no mount or PID namespace",
        );
    }
    let l = Layout::new();
    let server = l.server(&[]).await;
    let mut outside = std::process::Command::new("sleep")
        .arg("600")
        .spawn()
        .unwrap();
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    let probe = home.join(format!(".rootbound-probe-{}", std::process::id()));
    let made = std::fs::write(&probe, "x").is_ok();
    let a = sh(
        &server,
        &format!(
            "stat -c %n /proc/{pid}; stat -c %n {probe}; true",
            pid = outside.id(),
            probe = probe.display()
        ),
    )
    .await;
    outside.kill().unwrap();
    let _ = outside.wait();
    if made {
        std::fs::remove_file(&probe).unwrap();
        if home.starts_with("/root") || home.starts_with("/home") {
            assert!(!a.stdout.contains(".rootbound-probe"), "{a:?}");
        }
    }
    assert!(
        !a.stdout.contains(&format!("/proc/{}", outside.id())),
        "{a:?}"
    );
}

#[test]
fn an_unprivileged_server_removes_a_temporary_directory_made_unwritable() {
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let l = Layout::new();
    let mut command = std::process::Command::new(common::BIN);
    command
        .arg("--root")
        .arg(l.root())
        .args(["--bash-mode", "workspace-write", "call", "bash"])
        .arg(r#"{"command":"mkdir -p $TMPDIR/d/e && touch $TMPDIR/d/e/f && chmod 000 $TMPDIR/d"}"#)
        .env("TMPDIR", l.temp_base());
    if root {
        // As root the removal would succeed anyway; run as nobody.
        for dir in [&l.tmp.path, &l.root(), &l.temp_base()] {
            std::process::Command::new("chown")
                .args(["65534:65534"])
                .arg(dir)
                .status()
                .unwrap();
        }
        std::os::unix::process::CommandExt::uid(&mut command, 65534);
        std::os::unix::process::CommandExt::gid(&mut command, 65534);
    }
    let out = command.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let left: Vec<_> = std::fs::read_dir(l.temp_base())
        .unwrap()
        .flatten()
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

// --- Regressions from the second attack, on 5d6caac ------------------------

/// Every socket-pair type but stream and seqpacket is refused: the kernel
/// turns `SOCK_RAW` into a datagram socket that `sendto` can aim at a path.
#[tokio::test]
async fn no_socket_pair_type_can_aim_a_datagram_outside() {
    if !has("seccomp") {
        return skip(
            "no_socket_pair_type",
            &["seccomp"],
            "seccomp is not available",
        );
    }
    let l = Layout::new();
    let path = l.outside().join("pairs.sock");
    let listener = datagram_listener(&path);
    let server = l.server(&[]).await;
    let script = format!(
        "perl -MSocket -e 'for my $t (0..15) {{ socketpair(my $a, my $b, AF_UNIX, $t, 0) or next; \
         print \"pair-$t\\n\"; send($a, \"MARKER-$t\", 0, pack_sockaddr_un(\"{p}\")); }}'",
        p = path.display()
    );
    let a = sh(&server, &script).await;
    assert_heard_nothing(&listener, &a);
    // Stream (1) and seqpacket (5) pairs still work; nothing else opens.
    assert_eq!(a.stdout, "pair-1\npair-5", "{a:?}");
}

/// A descriptor the client left open when it started the server (here a
/// file outside the roots, as descriptor 7) reaches no command.
#[tokio::test]
async fn descriptors_the_server_inherited_reach_no_command() {
    let l = Layout::new();
    let leaked = l.outside().join("leaked.txt");
    let file = std::fs::File::create(&leaked).unwrap();
    let raw = std::os::fd::AsRawFd::as_raw_fd(&file);
    let mut cmd = tokio::process::Command::new(common::BIN);
    cmd.arg("--root")
        .arg(l.root())
        .args(["--bash-mode", "workspace-write"])
        .env("TMPDIR", l.temp_base())
        .env("RUST_LOG", "warn");
    // SAFETY: dup2 in the child before exec; the copy has no close-on-exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::dup2(raw, 7) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let server = Server {
        client: rmcp::ServiceExt::serve((), transport).await.unwrap(),
    };
    drop(file);
    let a = sh(
        &server,
        "for fd in $(seq 3 300); do { echo LEAKED-$fd >&$fd; } 2>/dev/null; done; echo done",
    )
    .await;
    assert_eq!(a.stdout, "done", "{a:?}");
    assert_eq!(std::fs::read_to_string(&leaked).unwrap(), "", "{a:?}");
}

fn tools_call(id: i64, command: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "bash", "arguments": {"command": command}}})
    .to_string()
}

fn cancel(id: i64) -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
           "params": {"requestId": id, "reason": "test"}})
    .to_string()
}

/// A cancelled call is stopped: its processes are gone and write nothing
/// more, and it no longer holds one of the turns.
#[tokio::test]
async fn a_cancelled_call_is_stopped() {
    let l = Layout::new();
    let root = l.root();
    let mut session = common::RawSession::start_with(
        &root,
        &["--bash-mode", "workspace-write", "--bash-timeout", "30"],
        &[("TMPDIR", &l.temp_base())],
    )
    .await;
    let token = format!("7661{}", std::process::id() % 1000);
    for id in 1..=6 {
        let line = format!("touch started-{id}; sleep {token}{id}; touch late-{id}");
        session.send_line(&tools_call(id, &line)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while (1..=4).any(|id| !root.join(format!("started-{id}")).exists()) {
        assert!(Instant::now() < deadline, "the calls did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for id in 1..=6 {
        session.send_line(&cancel(id)).await;
    }
    // The cancelled calls free their turns: a new call runs at once.
    let reply = session
        .request(
            7,
            "tools/call",
            json!({"name": "bash", "arguments": {"command": "echo fresh"}}),
        )
        .await;
    assert!(reply.to_string().contains("fresh"), "{reply}");
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(processes_with(&format!("sleep {token}")), Vec::<u32>::new());
    for id in 1..=6 {
        assert!(
            !root.join(format!("late-{id}")).exists(),
            "call {id} ran on"
        );
    }
    session.assert_alive(8).await;
}

/// Cancellations at every moment around a supervisor's start never leave
/// the fork server's answers out of step: the time limit still stops the
/// call it belongs to, and nothing a cancelled call started is left.
#[tokio::test]
async fn cancellations_at_any_moment_leave_the_time_limit_working() {
    let l = Layout::new();
    let mut session = common::RawSession::start_with(
        &l.root(),
        &["--bash-mode", "workspace-write", "--bash-timeout", "2"],
        &[("TMPDIR", &l.temp_base())],
    )
    .await;
    let token = format!("4444{}", std::process::id() % 1000);
    for id in 1..=40 {
        session
            .send_line(&tools_call(id, &format!("sleep {token}")))
            .await;
        tokio::time::sleep(Duration::from_micros(100 * (id as u64 % 30))).await;
        session.send_line(&cancel(id)).await;
    }
    let reply = session
        .request(
            100,
            "tools/call",
            json!({"name": "bash", "arguments": {"command": format!("sleep {token}9")}}),
        )
        .await;
    assert!(reply.to_string().contains("timed out after 2s"), "{reply}");
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(processes_with(&format!("sleep {token}")), Vec::<u32>::new());
    session.assert_alive(101).await;
}

/// System calls newer than the filter's review (here `listmount`, which
/// lists the host's mounts with their paths) are absent to a call.
#[tokio::test]
async fn unreviewed_new_system_calls_are_absent() {
    if !has("seccomp") {
        return skip(
            "unreviewed_new_system_calls",
            &["seccomp"],
            "seccomp is not available",
        );
    }
    let l = Layout::new();
    let server = l.server(&[]).await;
    // With a null request the kernel would answer EFAULT; the filter
    // answers ENOSYS before the kernel looks.
    let a = sh(
        &server,
        "perl -e 'for my $n (457, 458, 469, 500, 4000, 1073741863) { my $r = syscall($n, 0, 0, 0, 0); \
         print \"$n:\", $! + 0, \"\\n\" }'",
    )
    .await;
    // 1073741863 is getpid by its x32 number (x86-64; elsewhere just a
    // number far above the range).
    let enosys = libc::ENOSYS;
    assert_eq!(
        a.stdout,
        format!(
            "457:{enosys}\n458:{enosys}\n469:{enosys}\n500:{enosys}\n4000:{enosys}\n1073741863:{enosys}"
        ),
        "{a:?}"
    );
}

/// Starts `command` as a call of `server` without waiting for it, then
/// waits (at most 10 s) until at least `count` processes whose command line holds
/// `needle` run, and returns the call and their pids.
async fn call_in_background(
    server: Server,
    command: String,
    needle: &str,
    count: usize,
) -> (tokio::task::JoinHandle<BashAnswer>, Vec<u32>) {
    let running = tokio::spawn(async move { sh(&server, &command).await });
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let pids = processes_with(needle);
        if pids.len() >= count {
            return (running, pids);
        }
        assert!(
            Instant::now() < deadline,
            "the call's processes never showed"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Should memory run out, the out-of-memory killer picks a call's
/// processes before anything of the host's: read from the host's /proc
/// while the call runs.
#[tokio::test]
async fn the_calls_processes_are_the_first_the_oom_killer_picks() {
    let l = Layout::new();
    let token = format!("3133{}", std::process::id() % 1000);
    let (running, pids) = call_in_background(
        l.server(&[]).await,
        format!("sleep 2.{token}"),
        &format!("sleep 2.{token}"),
        1,
    )
    .await;
    let pid = pids[0];
    let score = std::fs::read_to_string(format!("/proc/{pid}/oom_score_adj")).unwrap();
    assert_eq!(score.trim(), "1000");
    let own = std::fs::read_to_string("/proc/self/oom_score_adj").unwrap();
    assert_ne!(own.trim(), "1000", "the test itself must not start at 1000");
    running.abort();
}

/// Every process of a call, the shell and what it starts, holds no
/// capability and can gain none: each set is empty (the bounding set
/// included, which the call's supervisor empties for all its commands),
/// no new privileges, and a seccomp filter. Read from outside, in the
/// host's /proc.
#[tokio::test]
async fn a_calls_processes_hold_no_capability_and_can_gain_none() {
    let l = Layout::new();
    let token = format!("3134{}", std::process::id() % 1000);
    // The shell (its command line names them too) and both sleeps.
    let (running, pids) = call_in_background(
        l.server(&[]).await,
        format!("sleep 3.{token} & sleep 3.{token}; wait"),
        &format!("sleep 3.{token}"),
        3,
    )
    .await;
    for pid in pids {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(&format!("{name}:")))
                .unwrap_or_else(|| panic!("{name} missing in {status}"))
                .trim()
                .to_string()
        };
        for set in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
            assert_eq!(field(set), "0000000000000000", "{set} of {pid}");
        }
        assert_eq!(field("NoNewPrivs"), "1", "{pid}");
        assert_eq!(field("Seccomp"), "2", "{pid}");
    }
    running.abort();
}

/// Memory a call cannot hold outside its limits: no memfd (its pages count
/// against no RLIMIT_AS). And no abstract name in the host's namespace
/// from a socket asked for credentials (autobind).
#[tokio::test]
async fn no_memfd_and_no_autobound_abstract_names() {
    if !has("seccomp") {
        return skip("no_memfd", &["seccomp"], "seccomp is not available");
    }
    let l = Layout::new();
    let server = l.server(&[]).await;
    let a = sh(
        &server,
        "python3 -c \"import os\ntry:\n os.memfd_create('x'); print('memfd')\nexcept OSError as e: print('no-memfd', e.errno)\"",
    )
    .await;
    assert_eq!(a.stdout, format!("no-memfd {}", libc::ENOSYS), "{a:?}");
    let names = || -> std::collections::HashSet<String> {
        std::fs::read_to_string("/proc/net/unix")
            .unwrap()
            .lines()
            .filter_map(|l| l.split_whitespace().nth(7))
            .filter(|n| n.starts_with('@'))
            .map(str::to_string)
            .collect()
    };
    let before = names();
    // The names are looked at while the socket is still open.
    let server = std::sync::Arc::new(server);
    let running = {
        let server = server.clone();
        tokio::spawn(async move {
            sh(
                &server,
                "perl -MSocket -e 'socketpair(my $a, my $b, AF_UNIX, SOCK_SEQPACKET, 0) or die; \
                 setsockopt($a, SOL_SOCKET, SO_PASSCRED, 1) or print \"no-passcred\\n\"; \
                 send($a, \"x\", 0); sleep 2'",
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let appeared: Vec<String> = names().difference(&before).cloned().collect();
    let a = running.await.unwrap();
    assert!(appeared.is_empty(), "new abstract names: {appeared:?}");
    assert_eq!(a.stdout, "no-passcred", "{a:?}");
}

/// Host memory of one kind, from `/proc/meminfo`, in bytes.
fn meminfo(field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap()
        * 1024
}

/// System V shared memory is charged to no process's address space: a call
/// that fills detached segments would press on the host's memory with no
/// limit. Its IPC namespace holds 256 MiB at most (or, where it cannot be
/// bounded, seccomp refuses the calls). Judged by the host's own `Shmem`
/// while the segments exist.
#[tokio::test]
async fn shared_memory_is_bounded_per_call() {
    let l = Layout::new();
    let server = std::sync::Arc::new(l.server(&[]).await);
    let before = meminfo("Shmem");
    let call = tokio::spawn({
        let server = server.clone();
        async move {
            sh(
                &server,
                "perl -e 'use IPC::SysV qw(IPC_PRIVATE IPC_CREAT); my $n = 0; \
                 my $chunk = \"\\x01\" x (1 << 20); for (1 .. 16) { \
                 my $id = shmget(IPC_PRIVATE, 128 << 20, IPC_CREAT | 0600); last unless defined $id; \
                 for my $k (0 .. 127) { shmwrite($id, $chunk, $k << 20, 1 << 20) or die \"write: $!\" } \
                 $n++ } print \"segments $n\\n\"; sleep 3'",
            )
            .await
        }
    });
    let mut peak = before;
    while !call.is_finished() {
        peak = peak.max(meminfo("Shmem"));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let a = call.await.unwrap();
    assert_eq!(a.exit_code(), Some(0), "{a:?}");
    let made: u64 = a
        .stdout
        .trim()
        .strip_prefix("segments ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{a:?}"));
    assert!(made <= 2, "{made} segments of 128 MiB were filled: {a:?}");
    // Other programs on the machine move Shmem a little; 16 segments
    // would have added 2 GiB.
    let grew = peak.saturating_sub(before);
    assert!(grew < 400 << 20, "host Shmem grew by {} MiB", grew >> 20);
}

/// Each empty file costs the host kernel memory that a byte bound does not
/// count: the call's temporary file system holds 65,536 files at most.
#[tokio::test]
async fn the_temporary_directory_is_bounded_in_files() {
    if !has("mount_ns") {
        return skip(
            "the_temporary_directory_is_bounded_in_files",
            &["mount_ns"],
            "no mount namespace",
        );
    }
    let l = Layout::new();
    let server = l.server(&[]).await;
    let a = sh(
        &server,
        "perl -e 'my $n = 0; for (1 .. 100000) { open(my $f, \">\", \"$ENV{TMPDIR}/f$_\") or last; $n++ } print \"files $n\\n\"'",
    )
    .await;
    let made: u64 = a
        .stdout
        .trim()
        .strip_prefix("files ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{a:?}"));
    assert!(made < 65_536, "{made} files were made: {a:?}");
}

/// Commands start with nothing blocked or ignored, as a shell starts them:
/// `kill -TERM` ends a child at once, and `kill -TERM 0` ends the line's
/// own process group, never the call's supervisor.
#[tokio::test]
async fn commands_start_with_default_signal_handling() {
    let l = Layout::new();
    let server = l.server(&[]).await;
    let started = Instant::now();
    let a = sh(&server, "sleep 30 & kill -TERM $!; wait $!; echo status $?").await;
    assert_eq!(a.stdout.trim(), "status 143", "{a:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "{a:?}");
    // Blocked: TERM, CHLD, PIPE; then whether SIGPIPE is ignored.
    let a = sh(
        &server,
        "perl -MPOSIX -e '$o = POSIX::SigSet->new; sigprocmask(SIG_BLOCK, POSIX::SigSet->new, $o); \
         print join(\",\", map { $o->ismember($_) } (SIGTERM, SIGCHLD, SIGPIPE)), \" \", \
         ($SIG{PIPE} // \"default\"), \"\\n\"'",
    )
    .await;
    assert_eq!(a.stdout.trim(), "0,0,0 default", "{a:?}");
    let a = sh(&server, "kill -TERM 0").await;
    assert_eq!(a.status, "[killed by signal SIGTERM]", "{a:?}");
}

/// A server started with SIGCHLD ignored takes the default back: the
/// kernel would otherwise reap every child at once, the sandbox's probe
/// would not finish, and calls would run without their namespaces and
/// filter until their time limit.
#[tokio::test]
async fn a_server_started_with_child_signals_ignored_still_confines_and_ends_calls() {
    let l = Layout::new();
    let server = l.server_started_with(&[], true).await;
    let started = Instant::now();
    let a = sh(&server, "echo quick; bash -c 'echo pid $$'").await;
    assert_eq!(a.status, "[exit code: 0]", "{a:?}");
    // In the call's own PID namespace a shell's pid is small.
    let pid: u32 = a
        .stdout
        .lines()
        .find_map(|line| line.strip_prefix("pid "))
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("{a:?}"));
    assert!(a.stdout.starts_with("quick\n") && pid < 100, "{a:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "{a:?}");
    let probe = std::process::Command::new(common::BIN)
        .arg("sandbox")
        .output()
        .unwrap();
    let mut ignoring = std::process::Command::new(common::BIN);
    ignoring.arg("sandbox");
    // SAFETY: sets one signal's disposition in the child before exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut ignoring, || {
            libc::signal(libc::SIGCHLD, libc::SIG_IGN);
            Ok(())
        });
    }
    let ignoring = ignoring.output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&ignoring.stdout),
        String::from_utf8_lossy(&probe.stdout)
    );
}

/// Swaps two directories' names at once (`renameat2` with
/// `RENAME_EXCHANGE`): the path is never missing.
fn exchange(a: &Path, b: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let a = std::ffi::CString::new(a.as_os_str().as_bytes()).unwrap();
    let b = std::ffi::CString::new(b.as_os_str().as_bytes()).unwrap();
    // SAFETY: two NUL-terminated paths; renameat2 reads them only.
    let done = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    assert_eq!(done, 0, "{}", std::io::Error::last_os_error());
}

/// A root swapped with another directory back and forth while calls make
/// the fork server build its view again, ending with the other directory
/// in its place: no later call's view holds the root swapped away, and no
/// write lands in it. The view records a root as the directory its mount
/// was copied from; recorded from the host before the build, a swap there
/// and back during it left the view holding the other directory unseen (in
/// 300 such trials, 84 of 600 later calls saw the root swapped away and 14
/// wrote into it).
#[tokio::test]
async fn a_root_swapped_back_and_forth_during_a_rebuild_is_never_the_one_swapped_away() {
    if !has("mount_ns") {
        skip(
            "root_swapped_back_and_forth",
            &["mount_ns"],
            "no mount namespace: calls see the host's tree",
        );
        return;
    }
    let l = Layout::new();
    let root = l.root();
    let other = l.tmp.path.join("other");
    std::fs::create_dir(&other).unwrap();
    let server = l.server(&[]).await;
    swap_back_and_forth_during_rebuilds(&server, &root, &other, &root, &other).await;
}

/// The same with a root inside a `--bash-read` directory, whose directory
/// on the way is swapped: beneath a directory the view shows live, the
/// root's mount moves with the directory the host renames. Recorded by a
/// look at its path inside the view, a swap between the mount and the look
/// left the root swapped away writable at its new name (6-14 of 600 later
/// calls wrote into it).
#[tokio::test]
async fn a_root_in_a_read_directory_swapped_back_and_forth_is_never_the_one_swapped_away() {
    if !has("mount_ns") {
        skip(
            "nested_root_swapped_back_and_forth",
            &["mount_ns"],
            "no mount namespace: calls see the host's tree",
        );
        return;
    }
    let l = Layout::new();
    let read = l.tmp.path.join("read");
    let (way, other_way) = (read.join("s"), read.join("s.alt"));
    std::fs::create_dir_all(way.join("r")).unwrap();
    std::fs::create_dir_all(other_way.join("r")).unwrap();
    let nested = way.join("r");
    let server = l
        .server(&[
            "--bash-read",
            read.to_str().unwrap(),
            "--root",
            nested.to_str().unwrap(),
        ])
        .await;
    swap_back_and_forth_during_rebuilds(&server, &way, &other_way, &nested, &other_way.join("r"))
        .await;
}

/// Swaps `a` and `b` an odd number of times, quickly, while one or two
/// calls make the fork server build its view again; then checks that the
/// view neither shows the directory that was at `root` (its inode, seen
/// from inside) nor takes a write through `swapped_away`, where the host
/// now has it; then swaps back. 100 seeded trials.
async fn swap_back_and_forth_during_rebuilds(
    server: &Server,
    a: &Path,
    b: &Path,
    root: &Path,
    swapped_away: &Path,
) {
    let original = std::fs::metadata(root).unwrap().ino();
    sh(server, "true").await;
    // A small generator of its own, seeded: the same swaps every run.
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |below: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % below
    };
    for trial in 0..100 {
        let swaps = 2 * (3 + next(18)) + 1;
        let gap_us = [50, 300, 1000, 2000][next(4) as usize];
        let pauses: Vec<u64> = (0..swaps).map(|_| next(gap_us + 1)).collect();
        let (from, to) = (a.to_path_buf(), b.to_path_buf());
        let swapper = std::thread::spawn(move || {
            for pause in pauses {
                exchange(&from, &to);
                std::thread::sleep(Duration::from_micros(pause));
            }
        });
        tokio::time::sleep(Duration::from_micros(next(3000))).await;
        let true_line = json!({"command": "true"});
        if next(3) == 0 {
            tokio::join!(
                server.call("bash", true_line.clone()),
                server.call("bash", true_line)
            );
        } else {
            server.call("bash", true_line).await;
        }
        swapper.join().unwrap();
        // An odd number of swaps: the other directory is at the root's path.
        assert_ne!(std::fs::metadata(root).unwrap().ino(), original);
        tokio::time::sleep(Duration::from_millis([5, 80][next(2) as usize])).await;
        for check in 0..2 {
            let name = format!("w_{trial}_{check}");
            // Written by the root's path and by where the host now has the
            // root swapped away: neither may land in it.
            let line = format!(
                "stat -c INO=%i {root}; echo x > {root}/{name}a; echo x > {away}/{name}b",
                root = root.display(),
                away = swapped_away.display()
            );
            let text = all_text(&server.call("bash", json!({"command": line})).await);
            assert!(
                !text.lines().any(|line| line == format!("INO={original}")),
                "trial {trial}: the view holds the root swapped away: {text}"
            );
            for written in [format!("{name}a"), format!("{name}b")] {
                assert!(
                    !swapped_away.join(&written).exists(),
                    "trial {trial}: {written} landed in the root swapped away: {text}"
                );
            }
            tokio::time::sleep(Duration::from_millis(60)).await;
        }
        exchange(a, b);
        // What the calls wrote in the directory now at the root's path.
        for entry in std::fs::read_dir(root).unwrap().flatten() {
            if entry.file_name().to_string_lossy().starts_with("w_") {
                std::fs::remove_file(entry.path()).unwrap();
            }
        }
        server.call("bash", json!({"command": "true"})).await;
    }
}

/// Each call's file system view is a copy of one the fork server built
/// once; a root replaced by another directory of the same name while the
/// server runs makes it build the view again, so the next call never
/// reaches the old one. Landlock grants a root only while it is the
/// directory the server started with: the new one is left out of its rules
/// (fail closed), so where Landlock is, the call can neither read nor write
/// it; put back, the old one is granted again.
#[tokio::test]
async fn a_root_replaced_while_the_server_runs_is_never_the_old_one_nor_granted() {
    if !has("mount_ns") {
        skip(
            "root_replaced",
            &["mount_ns"],
            "no mount namespace: calls see the host's tree",
        );
        return;
    }
    let landlock = has("landlock");
    let l = Layout::new();
    let server = l.server(&[]).await;
    let a = sh(&server, "cat inside.txt && echo old > written.txt").await;
    assert_eq!(a.stdout, "inside", "{a:?}");
    // Idle for a while, the fork server has placed its watches: this
    // replacement is seen by them. The one further down comes right after
    // a call, before the new view's watches are placed, and is seen by
    // looking at the sources.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let root = l.root();
    let old = l.tmp.path.join("root.old");
    std::fs::rename(&root, &old).unwrap();
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("inside.txt"), "new\n").unwrap();
    let a = sh(&server, "cat inside.txt; echo new > written.txt; ls").await;
    if landlock {
        assert_eq!(a.stdout, "", "{a:?}");
        assert!(a.stderr.contains("Permission denied"), "{a:?}");
        assert!(!root.join("written.txt").exists(), "{a:?}");
    } else {
        assert_eq!(a.stdout, "new\ninside.txt\nwritten.txt", "{a:?}");
        assert_eq!(
            std::fs::read_to_string(root.join("written.txt")).unwrap(),
            "new\n"
        );
    }
    assert_eq!(
        std::fs::read_to_string(old.join("written.txt")).unwrap(),
        "old\n"
    );
    // The old root put back is the one the server started with.
    std::fs::rename(&root, l.tmp.path.join("root.new")).unwrap();
    std::fs::rename(&old, &root).unwrap();
    let a = sh(&server, "cat written.txt && echo again > written.txt && ls").await;
    assert_eq!(a.stdout, "old\ninside.txt\nwritten.txt", "{a:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("written.txt")).unwrap(),
        "again\n"
    );
}
