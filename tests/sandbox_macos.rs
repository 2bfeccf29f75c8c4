//! The bash sandbox on macOS (issue 26): every property `rootbound sandbox`
//! states there (`platform_statement` in src/shell/sandbox/mod.rs: the
//! profile of src/shell/sandbox/macos.rs under `sandbox-exec`) and
//! docs/security.md's macOS section claims, tested as tests/sandbox.rs
//! tests Linux's layers: the real binary over MCP, `--bash-mode
//! workspace-write`, a real shell, judged by effect. A marker absent and
//! bytes, mode, times, flags and xattrs unchanged outside the writable set;
//! a secret's content absent from the answer; listeners that heard nothing;
//! no process of the call left; protected files as they were and the
//! host's own git running nothing the call planted.
//!
//! Every call also does something that must work (a file written inside
//! the root, a word echoed), so a shell that did not start at all cannot
//! pass a test by doing nothing.
//!
//! Not tested, because the platform statement says it is not enforced: a
//! process that leaves the call's process group (`setsid`) outliving the
//! call, and a bound on processes or memory per call.
//!
//! These run only on a Mac: in the CI workflow's macos-14 and
//! macos-15-intel jobs. Here (Linux) they are compiled out, and
//! type-checked by clippy for aarch64-apple-darwin (.ci/cross.sh).
#![cfg(target_os = "macos")]

mod common;

use std::os::macos::fs::MetadataExt as _;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{BashAnswer, Scratch, Server, all_text};
use serde_json::json;

/// A number that sets this test process's markers and sleeps apart from
/// another run's.
fn token() -> u32 {
    std::process::id() % 100_000
}

/// `<tmp>/root` is the root, `<tmp>/outside` is not, `<tmp>/tmp` is the
/// server's TMPDIR (the call's private directory is made beneath it),
/// `<tmp>/marks` is where a program the host runs later would leave a mark.
struct Layout {
    tmp: Scratch,
}

impl Layout {
    fn new() -> Layout {
        let tmp = Scratch::new();
        tmp.file("root/inside.txt", "inside\n");
        tmp.file("outside/victim.txt", "victim\n");
        tmp.dir("tmp");
        tmp.dir("marks");
        tmp.dir("home");
        Layout { tmp }
    }

    fn root(&self) -> PathBuf {
        self.tmp.path.join("root")
    }

    fn outside(&self) -> PathBuf {
        self.tmp.path.join("outside")
    }

    fn marks(&self) -> PathBuf {
        self.tmp.path.join("marks")
    }

    /// The server's TMPDIR, spelled as macOS spells it by default:
    /// `/var/folders/...`, through the `/var` link (`/private/var`), not
    /// the canonical path. Seatbelt matches the path a link leads to.
    fn temp_base(&self) -> PathBuf {
        let canonical = self.tmp.path.join("tmp");
        match canonical.strip_prefix("/private/var") {
            Ok(rest) => Path::new("/var").join(rest),
            Err(_) => canonical,
        }
    }

    /// A server on the root in workspace-write mode, with `extra`
    /// arguments; no journal (on macOS it would go to the user's Library).
    async fn server(&self, extra: &[&str]) -> Server {
        let mut cmd = tokio::process::Command::new(common::BIN);
        cmd.arg("--root")
            .arg(self.root())
            .args(["--bash-mode", "workspace-write", "--no-journal"])
            .args(extra)
            .env("TMPDIR", self.temp_base())
            .env("RUST_LOG", "warn");
        serve(cmd).await
    }
}

async fn serve(cmd: tokio::process::Command) -> Server {
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn rootbound");
    Server {
        client: rmcp::ServiceExt::serve((), transport)
            .await
            .expect("MCP initialize"),
    }
}

/// Runs `command` as one bash call; the call itself must succeed (the
/// command's own exit code may be anything).
async fn sh(server: &Server, command: &str) -> BashAnswer {
    let result = server.call("bash", json!({"command": command})).await;
    let text = all_text(&result);
    assert_ne!(result.is_error, Some(true), "{command}: {text}");
    BashAnswer::parse(&text)
}

/// Runs `attack`, then `echo ran`: the answer's stdout must end with `ran`,
/// so the shell did start and go on past every refused step.
async fn attack(server: &Server, attack: &str) -> BashAnswer {
    let a = sh(server, &format!("{attack}; echo ran")).await;
    assert!(
        a.stdout.ends_with("ran"),
        "the shell did not run to its end: {a:?}"
    );
    a
}

/// Everything a file shows: content, mode, owner, modification time, inode,
/// BSD flags and the names of its extended attributes.
#[derive(Debug, PartialEq, Eq)]
struct Fingerprint {
    content: Vec<u8>,
    mode: u32,
    uid: u32,
    mtime: i64,
    ino: u64,
    flags: u32,
    xattrs: Vec<u8>,
}

fn fingerprint(path: &Path) -> Fingerprint {
    let meta = std::fs::symlink_metadata(path).unwrap();
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let mut names = vec![0u8; 4096];
    // SAFETY: listxattr into a buffer of the given size; no options.
    let n = unsafe { libc::listxattr(c.as_ptr(), names.as_mut_ptr().cast(), names.len(), 0) };
    names.truncate(n.max(0) as usize);
    Fingerprint {
        content: std::fs::read(path).unwrap(),
        mode: meta.mode(),
        uid: meta.uid(),
        mtime: meta.mtime(),
        ino: meta.ino(),
        flags: meta.st_flags(),
        xattrs: names,
    }
}

fn set_xattr(path: &Path, name: &str, value: &[u8]) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let n = std::ffi::CString::new(name).unwrap();
    // SAFETY: setxattr with valid C strings and a buffer; position 0, no
    // options.
    let r = unsafe {
        libc::setxattr(
            c.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
            0,
        )
    };
    assert_eq!(r, 0, "setxattr: {}", std::io::Error::last_os_error());
}

/// The process ids whose command line holds `needle`, as `ps` lists them.
fn processes_with(needle: &str) -> Vec<i32> {
    let out = std::process::Command::new("/bin/ps")
        .args(["-axo", "pid=,command="])
        .output()
        .expect("run ps");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let (pid, command) = line.trim_start().split_once(' ')?;
            command.contains(needle).then(|| pid.parse().ok())?
        })
        .collect()
}

/// Waits up to `within` for no process to hold `needle`; kills (by id)
/// and names those still there.
fn survivors(needle: &str, within: Duration) -> Vec<i32> {
    let deadline = Instant::now() + within;
    loop {
        let left = processes_with(needle);
        if left.is_empty() || Instant::now() >= deadline {
            for pid in &left {
                // SAFETY: kill(2) on a process this test's call started
                // (its command line holds this run's token).
                unsafe { libc::kill(*pid, libc::SIGKILL) };
            }
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What `rootbound sandbox` says on macOS: the profile's properties, and
/// plainly what is not enforced.
#[test]
fn the_sandbox_subcommand_states_what_macos_enforces_and_what_not() {
    let out = std::process::Command::new(common::BIN)
        .args(["--bash-mode", "workspace-write", "sandbox"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for said in [
        "bash mode: workspace-write",
        "sandbox-exec",
        "deny by default",
        "never a set-ID file",
        "no network of any kind",
        "Not enforced here",
        "setsid",
    ] {
        assert!(text.contains(said), "{said}: {text}");
    }
}

/// No write outside the writable set: not beside the root, not in its
/// parent, not in the user's home, not in /tmp; no metadata change of an
/// outside file (mode, owner, times, flags, xattrs, a rename, a removal);
/// no write through a symlink or a hard link made inside the root.
#[tokio::test]
async fn no_write_outside_the_writable_set() {
    let l = Layout::new();
    let victim = l.outside().join("victim.txt");
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    set_xattr(&victim, "com.rootbound.keep", b"kept");
    let before = fingerprint(&victim);
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap();
    let home_dir = tempfile::Builder::new()
        .prefix(".rootbound-sandbox-test")
        .tempdir_in(&home)
        .unwrap();
    let in_home = std::fs::canonicalize(home_dir.path()).unwrap();
    let in_tmp = PathBuf::from(format!("/private/tmp/rootbound-sandbox-marker-{}", token()));
    let markers = [
        l.outside().join("new.txt"),
        l.tmp.path.join("beside-the-root.txt"),
        in_home.join("marker"),
        in_tmp.clone(),
        l.outside().join("made-dir"),
    ];
    let server = l.server(&[]).await;
    let v = victim.display();
    let script = format!(
        "echo pwned > {new}; echo pwned > ../beside-the-root.txt; echo pwned > {home}; \
         echo pwned > {tmp}; mkdir {dir}; echo pwned >> {v}; cp /etc/hosts {v}; \
         chmod 606 {v}; touch -t 200101010000 {v}; chown nobody {v}; chflags uchg {v}; \
         xattr -w com.rootbound.pwned 1 {v}; xattr -d com.rootbound.keep {v}; \
         mv {v} moved.txt; rm -f {v}; \
         ln -s {v} link-out; echo pwned >> link-out; \
         ln {v} hard-out; echo pwned >> hard-out; \
         echo mine > own.txt",
        new = markers[0].display(),
        home = markers[2].display(),
        tmp = in_tmp.display(),
        dir = markers[4].display(),
    );
    let a = attack(&server, &script).await;
    // A second call through what the first one left inside the root.
    attack(
        &server,
        "echo pwned >> link-out; echo pwned >> hard-out; cat /dev/null > hard-out",
    )
    .await;
    let leaked: Vec<&PathBuf> = markers
        .iter()
        .filter(|m| std::fs::symlink_metadata(m).is_ok())
        .collect();
    let _ = std::fs::remove_file(&in_tmp);
    assert!(leaked.is_empty(), "written outside: {leaked:?}\n{a:?}");
    assert_eq!(fingerprint(&victim), before, "{a:?}");
    assert!(!l.root().join("moved.txt").exists(), "{a:?}");
    // Inside the root the same commands work: the sandbox is not simply
    // refusing everything.
    assert_eq!(
        std::fs::read_to_string(l.root().join("own.txt")).unwrap(),
        "mine\n"
    );
    let own = l.root().join("own.txt");
    let a = attack(
        &server,
        "chmod 600 own.txt && touch -t 200101010000 own.txt",
    )
    .await;
    assert_eq!(
        std::fs::metadata(&own).unwrap().mode() & 0o777,
        0o600,
        "{a:?}"
    );
}

/// No read outside the roots: a file beside the root, a key in a
/// directory under the user's home, and (where there is one) a file in
/// `~/.ssh`; not by `cat`, not by a copy into the root, not through a
/// symlink or a hard link made inside the root, not by listing the outside
/// directory.
#[tokio::test]
async fn no_read_of_home_ssh_or_a_file_outside_the_roots() {
    let l = Layout::new();
    let beside = format!("BESIDE-SECRET-{}", token());
    let secret = l.tmp.file("outside/secret.txt", &beside);
    // Named by no command: it shows only if the directory is listed.
    let canary_name = format!("listing-canary-{}.txt", token());
    l.tmp.file(&format!("outside/{canary_name}"), "canary\n");
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap();
    let keys = tempfile::Builder::new()
        .prefix(".rootbound-sandbox-test")
        .tempdir_in(&home)
        .unwrap();
    let key_text = format!("HOME-KEY-SECRET-{}", token());
    let key = std::fs::canonicalize(keys.path())
        .unwrap()
        .join("id_ed25519");
    std::fs::write(&key, &key_text).unwrap();
    // The user's real ~/.ssh, where it exists: a file of ours, removed
    // afterwards (none is made where there is no ~/.ssh).
    let ssh_text = format!("SSH-DIR-SECRET-{}", token());
    let ssh_dir = home.join(".ssh");
    let ssh_file = ssh_dir
        .is_dir()
        .then(|| ssh_dir.join(format!("rootbound-sandbox-test-{}", token())));
    if let Some(file) = &ssh_file {
        std::fs::write(file, &ssh_text).unwrap();
    }
    let mut targets = vec![secret.clone(), key.clone()];
    targets.extend(ssh_file.iter().cloned());
    let server = l.server(&[]).await;
    let mut script = String::new();
    for (k, target) in targets.iter().enumerate() {
        let t = target.display();
        script.push_str(&format!(
            "cat {t}; head -c 100 {t}; cp {t} copy-{k}; ln -s {t} link-{k}; cat link-{k}; \
             ln {t} hard-{k}; cat hard-{k}; "
        ));
    }
    script.push_str(&format!(
        "ls -la {outside}; ls {ssh}; cat inside.txt",
        outside = l.outside().display(),
        ssh = ssh_dir.display()
    ));
    let a = attack(&server, &script).await;
    if let Some(file) = &ssh_file {
        let _ = std::fs::remove_file(file);
    }
    let seen = format!("{}\n{}", a.stdout, a.stderr);
    for text in [&beside, &key_text, &ssh_text] {
        assert!(!seen.contains(text.as_str()), "{text} was read: {a:?}");
    }
    assert!(
        !seen.contains(&canary_name),
        "the outside was listed: {a:?}"
    );
    // What the call left inside the root holds none of it either: no copy,
    // and no hard link (the read tools would read through one later). Its
    // symlinks are not followed here: the host may read where they lead.
    for entry in std::fs::read_dir(l.root()).unwrap().flatten() {
        if entry.file_type().is_ok_and(|t| t.is_symlink()) {
            continue;
        }
        if let Ok(content) = std::fs::read(entry.path()) {
            let content = String::from_utf8_lossy(&content);
            for text in [&beside, &key_text, &ssh_text] {
                assert!(
                    !content.contains(text.as_str()),
                    "{} holds {text}",
                    entry.path().display()
                );
            }
        }
    }
    // Reading inside the root works.
    assert!(a.stdout.contains("inside"), "{a:?}");
}

/// No network of any kind: TCP and UDP to loopback (v4 and v6), by bash's
/// own `/dev/tcp`, `nc`, `curl` and perl; no connection to a unix stream
/// or datagram socket outside the roots. Each listener hears nothing.
#[tokio::test]
async fn no_network_of_any_kind() {
    let l = Layout::new();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let tcp6 = std::net::TcpListener::bind("[::1]:0").ok();
    let udp6 = std::net::UdpSocket::bind("[::1]:0").ok();
    let stream_path = l.outside().join("s.sock");
    let unix = std::os::unix::net::UnixListener::bind(&stream_path).unwrap();
    unix.set_nonblocking(true).unwrap();
    let dgram_path = l.outside().join("d.sock");
    let dgram = std::os::unix::net::UnixDatagram::bind(&dgram_path).unwrap();
    dgram.set_nonblocking(true).unwrap();
    let (tp, up) = (
        tcp.local_addr().unwrap().port(),
        udp.local_addr().unwrap().port(),
    );
    let mut script = format!(
        "echo stream > /dev/tcp/127.0.0.1/{tp}; echo datagram > /dev/udp/127.0.0.1/{up}; \
         nc -z -w 2 127.0.0.1 {tp}; echo datagram | nc -u -w 1 127.0.0.1 {up}; \
         curl -s -m 3 http://127.0.0.1:{tp}/; \
         perl -MIO::Socket::INET -e 'IO::Socket::INET->new(PeerAddr => \"127.0.0.1:{tp}\") and print \"tcp-connected\\n\"'; \
         echo unix | nc -U -w 1 {s}; \
         perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => \"{s}\") and print \"unix-connected\\n\"'; \
         perl -MSocket -e 'socket(my $d, AF_UNIX, SOCK_DGRAM, 0) or exit; \
         send($d, \"datagram\", 0, pack_sockaddr_un(\"{d}\")) and print \"unix-sent\\n\"'",
        s = stream_path.display(),
        d = dgram_path.display(),
    );
    if let Some(t6) = &tcp6 {
        t6.set_nonblocking(true).unwrap();
        script.push_str(&format!(
            "; echo stream6 > /dev/tcp/::1/{}",
            t6.local_addr().unwrap().port()
        ));
    }
    if let Some(u6) = &udp6 {
        u6.set_nonblocking(true).unwrap();
        script.push_str(&format!(
            "; echo datagram6 > /dev/udp/::1/{}",
            u6.local_addr().unwrap().port()
        ));
    }
    let server = l.server(&[]).await;
    let a = attack(&server, &script).await;
    std::thread::sleep(Duration::from_millis(300));
    let mut buf = [0u8; 64];
    assert!(tcp.accept().is_err(), "a TCP connection arrived: {a:?}");
    assert!(udp.recv(&mut buf).is_err(), "a UDP datagram arrived: {a:?}");
    if let Some(t6) = &tcp6 {
        assert!(t6.accept().is_err(), "a TCP6 connection arrived: {a:?}");
    }
    if let Some(u6) = &udp6 {
        assert!(u6.recv(&mut buf).is_err(), "a UDP6 datagram arrived: {a:?}");
    }
    assert!(unix.accept().is_err(), "a unix connection arrived: {a:?}");
    assert!(
        dgram.recv(&mut buf).is_err(),
        "a unix datagram arrived: {a:?}"
    );
    for said in ["tcp-connected", "unix-connected", "unix-sent"] {
        assert!(!a.stdout.contains(said), "{said}: {a:?}");
    }
}

/// No process of the call is left after it, however it ends: a normal end
/// with background processes still running (plain, `nohup`, in a
/// subshell), and a time-out. (One that calls `setsid` may outlive the
/// call, as `rootbound sandbox` says; that is not tested.)
#[tokio::test]
async fn no_process_of_the_calls_group_is_left_after_the_call() {
    let l = Layout::new();
    let server = l.server(&["--bash-timeout", "3"]).await;
    let n = token();
    let a = sh(
        &server,
        &format!(
            "sleep 7771{n} >/dev/null 2>&1 & nohup sleep 7772{n} >/dev/null 2>&1 & \
             (sleep 7773{n} >/dev/null 2>&1 &); echo started"
        ),
    )
    .await;
    assert_eq!(
        (a.exit_code(), a.stdout.as_str()),
        (Some(0), "started"),
        "{a:?}"
    );
    let left: Vec<i32> = (7771..=7773)
        .flat_map(|k| survivors(&format!("sleep {k}{n}"), Duration::from_secs(3)))
        .collect();
    assert!(left.is_empty(), "left after a normal end: {left:?}");
    // A time-out, with the answer saying so.
    let a = sh(
        &server,
        &format!("sleep 7774{n} >/dev/null 2>&1 & sleep 7775{n}"),
    )
    .await;
    assert_eq!(a.status, "[killed: timed out after 3s]", "{a:?}");
    let left: Vec<i32> = (7774..=7775)
        .flat_map(|k| survivors(&format!("sleep {k}{n}"), Duration::from_secs(3)))
        .collect();
    assert!(left.is_empty(), "left after a time-out: {left:?}");
}

fn tools_call(id: i64, command: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "bash", "arguments": {"command": command}}})
    .to_string()
}

/// A call the client cancels is stopped: its processes are gone and write
/// nothing more.
#[tokio::test]
async fn a_cancelled_call_leaves_no_process() {
    let l = Layout::new();
    let root = l.root();
    let tmp = l.temp_base();
    let mut session = common::RawSession::start_with(
        &root,
        &[
            "--bash-mode",
            "workspace-write",
            "--no-journal",
            "--bash-timeout",
            "30",
        ],
        &[("TMPDIR", tmp.as_path())],
    )
    .await;
    let n = token();
    session
        .send_line(&tools_call(
            1,
            &format!("touch started; sleep 7776{n} >/dev/null 2>&1 & sleep 7777{n}; touch late"),
        ))
        .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !root.join("started").exists() {
        assert!(Instant::now() < deadline, "the call did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 1, "reason": "test"}});
    session.send_line(&cancel.to_string()).await;
    session.assert_alive(2).await;
    let left: Vec<i32> = (7776..=7777)
        .flat_map(|k| survivors(&format!("sleep {k}{n}"), Duration::from_secs(4)))
        .collect();
    assert!(left.is_empty(), "left after a cancel: {left:?}");
    assert!(!root.join("late").exists(), "the cancelled call ran on");
}

/// The host's git, as the user runs it: their rights, no sandbox, a home of
/// the test's own.
fn host_git(l: &Layout, args: &[&str]) -> std::process::Output {
    common::host_git(&l.root(), &l.tmp.path.join("home"), args)
}

/// What a command leaves behind (docs/security.md): on macOS no mount
/// stands in the way, so the check after the call puts protected files
/// back from their copies and renames new ones aside. After a call that
/// writes git's config and a hook and agents' and editors' settings, every
/// protected file is byte for byte what it was, the new ones are gone from
/// their names, and the host's own `git status` and `git commit` run
/// nothing the call planted.
#[tokio::test]
async fn protected_paths_are_as_they_were_after_the_call() {
    let l = Layout::new();
    assert!(host_git(&l, &["init", "-q"]).status.success());
    host_git(&l, &["add", "inside.txt"]);
    assert!(
        host_git(&l, &["commit", "-q", "-m", "first"])
            .status
            .success()
    );
    l.tmp
        .file("root/.gemini/settings.json", "{\"theme\": \"mine\"}\n");
    l.tmp.file("root/.vscode/settings.json", "{}\n");
    let git_dir = l.root().join(".git");
    let kept = [
        git_dir.join("config"),
        git_dir.join("HEAD"),
        l.root().join(".gemini/settings.json"),
        l.root().join(".vscode/settings.json"),
    ];
    let before: Vec<Vec<u8>> = kept.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let hooks_before: Vec<_> = std::fs::read_dir(git_dir.join("hooks"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    let m = l.marks();
    let m = m.display();
    let server = l.server(&[]).await;
    let a = attack(
        &server,
        &format!(
            "printf '[core]\\n\\tfsmonitor = touch {m}/fsmonitor; false\\n' >> .git/config; \
             printf '#!/bin/sh\\ntouch {m}/hook\\n' > .git/hooks/pre-commit; \
             chmod +x .git/hooks/pre-commit; \
             printf '#!/bin/sh\\ntouch {m}/hook2\\n' > .git/hooks/post-commit; \
             chmod +x .git/hooks/post-commit; \
             echo '{{\"mcpServers\":{{\"x\":{{\"command\":\"touch\",\"args\":[\"{m}/gemini\"]}}}}}}' \
             > .gemini/settings.json; \
             echo '{{\"task\": \"touch {m}/vscode\"}}' > .vscode/settings.json; \
             mkdir -p .claude && echo '{{}}' > .claude/settings.json; echo '{{}}' > .mcp.json; \
             echo mine > own.txt"
        ),
    )
    .await;
    for (path, bytes) in kept.iter().zip(&before) {
        assert_eq!(
            &std::fs::read(path).unwrap(),
            bytes,
            "{} changed: {a:?}",
            path.display()
        );
    }
    let hooks_after: Vec<_> = std::fs::read_dir(git_dir.join("hooks"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|name| !name.to_string_lossy().contains(".rootbound-quarantine"))
        .collect();
    assert_eq!(hooks_after.len(), hooks_before.len(), "{a:?}");
    for new in [".claude", ".mcp.json"] {
        assert!(
            std::fs::symlink_metadata(l.root().join(new)).is_err(),
            "{new} is still there: {a:?}"
        );
    }
    assert!(
        a.notes.iter().any(|n| n.contains("renamed to"))
            && a.notes.iter().any(|n| n.contains("put back")),
        "the answer does not say what was undone: {a:?}"
    );
    // The call's own work inside the root stays.
    assert_eq!(
        std::fs::read_to_string(l.root().join("own.txt")).unwrap(),
        "mine\n"
    );
    // The user's session afterwards runs nothing the call planted.
    host_git(&l, &["status"]);
    std::fs::write(l.root().join("inside.txt"), "changed by the user\n").unwrap();
    let commit = host_git(&l, &["commit", "-q", "-a", "-m", "the user's commit"]);
    assert!(commit.status.success(), "{commit:?}");
    let marks: Vec<_> = std::fs::read_dir(l.marks())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        marks.is_empty(),
        "the host ran what the call left: {marks:?}"
    );
}

/// macOS's file systems ignore letter case by default: `.Gemini/` is
/// `.gemini/` to Gemini CLI, `.VSCode/` is `.vscode/` to VS Code. What a
/// call or a write tool leaves under any spelling of a protected name must
/// be undone or refused like the name itself: judged by what the canonical
/// spelling holds afterwards (on a case-sensitive volume the other
/// spellings are other files, which no agent reads, and pass).
#[tokio::test]
async fn protected_names_hold_in_any_letter_case() {
    let l = Layout::new();
    l.tmp.file("root/.vscode/settings.json", "{}\n");
    let m = l.marks();
    let planted = format!(
        "{{\"mcpServers\":{{\"x\":{{\"command\":\"touch\",\"args\":[\"{}/gemini\"]}}}}}}",
        m.display()
    );
    let server = l.server(&[]).await;
    let a = attack(
        &server,
        &format!(
            "mkdir -p .Gemini && echo '{planted}' > .Gemini/settings.json; \
             mkdir -p .VSCode && echo '{{}}' > .VSCode/tasks.json; echo '{{}}' > .MCP.json"
        ),
    )
    .await;
    for name in [".gemini/settings.json", ".vscode/tasks.json", ".mcp.json"] {
        assert!(
            std::fs::symlink_metadata(l.root().join(name)).is_err(),
            "{name} holds what the call wrote under another spelling: {a:?}"
        );
    }
    // The write tools, under another spelling of a protected directory
    // that exists (read first, as a model would) and of one that does
    // not.
    server
        .call("read_file", json!({"path": ".VSCODE/settings.json"}))
        .await;
    let result = server
        .call(
            "write_file",
            json!({"file_path": ".VSCODE/settings.json", "content": "{\"evil\": true}\n"}),
        )
        .await;
    assert_eq!(
        std::fs::read_to_string(l.root().join(".vscode/settings.json")).unwrap(),
        "{}\n",
        "write_file changed .vscode/settings.json as .VSCODE/settings.json: {}",
        all_text(&result)
    );
    let result = server
        .call(
            "write_file",
            json!({"file_path": ".GEMINI/settings.json", "content": planted}),
        )
        .await;
    assert!(
        std::fs::read_to_string(l.root().join(".gemini/settings.json"))
            .map_or(true, |text| !text.contains("mcpServers")),
        "write_file wrote .gemini/settings.json as .GEMINI/settings.json: {}",
        all_text(&result)
    );
}

/// Never a set-ID file, even inside the root: neither by chmod nor by
/// creating one with those bits.
#[tokio::test]
async fn no_set_id_file_is_made() {
    let l = Layout::new();
    let server = l.server(&[]).await;
    let a = attack(
        &server,
        "cp /bin/echo id-copy; chmod 4755 id-copy; chmod g+s id-copy; chmod u+s id-copy; \
         perl -MFcntl -e 'sysopen(F, \"made-setid\", O_CREAT | O_WRONLY, 06755)'",
    )
    .await;
    let copy = l.root().join("id-copy");
    let mode = std::fs::metadata(&copy)
        .unwrap_or_else(|e| panic!("the copy was not made ({e}): {a:?}"))
        .mode();
    assert_eq!(mode & 0o6000, 0, "set-ID bits were set: {mode:o}: {a:?}");
    if let Ok(meta) = std::fs::metadata(l.root().join("made-setid")) {
        assert_eq!(meta.mode() & 0o6000, 0, "made with set-ID bits: {a:?}");
    }
}

/// A descriptor the client left open when it started the server (a file
/// outside the roots, as descriptor 7) reaches no command.
#[tokio::test]
async fn descriptors_the_server_inherited_reach_no_command() {
    let l = Layout::new();
    let leaked = l.outside().join("leaked.txt");
    let file = std::fs::File::create(&leaked).unwrap();
    let raw = std::os::fd::AsRawFd::as_raw_fd(&file);
    let mut cmd = tokio::process::Command::new(common::BIN);
    cmd.arg("--root")
        .arg(l.root())
        .args(["--bash-mode", "workspace-write", "--no-journal"])
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
    let server = serve(cmd).await;
    drop(file);
    let a = sh(
        &server,
        "for fd in $(seq 3 300); do { echo LEAKED-$fd >&$fd; } 2>/dev/null; done; echo done",
    )
    .await;
    assert_eq!(a.stdout, "done", "{a:?}");
    assert_eq!(std::fs::read_to_string(&leaked).unwrap(), "", "{a:?}");
}

/// Each process gets the call's time limit plus 5 seconds of CPU, and no
/// core dumps.
#[tokio::test]
async fn cpu_time_and_core_dumps_are_limited_per_process() {
    let l = Layout::new();
    let server = l.server(&["--bash-timeout", "7"]).await;
    let a = sh(&server, "ulimit -t; ulimit -c").await;
    assert_eq!(a.stdout, "12\n0", "{a:?}");
}

/// The call's private temporary directory is `TMPDIR`, beneath the
/// server's own, writable (with TMPDIR spelled as macOS spells it by
/// default, through the `/var` link), and gone after the call.
#[tokio::test]
async fn the_private_temporary_directory_is_writable_and_removed() {
    let l = Layout::new();
    let server = l.server(&[]).await;
    let a = sh(
        &server,
        "echo \"$TMPDIR\"; echo x > \"$TMPDIR/f\" && echo wrote",
    )
    .await;
    let mut lines = a.stdout.lines();
    let dir = PathBuf::from(lines.next().unwrap_or_default());
    assert!(
        dir.starts_with(l.temp_base()),
        "{} is not beneath {}",
        dir.display(),
        l.temp_base().display()
    );
    assert_eq!(lines.next(), Some("wrote"), "TMPDIR is not writable: {a:?}");
    assert!(!dir.exists(), "{} is left after the call", dir.display());
}
