//! The bash tool through the real binary (TOOLS.md 8, SECURITY.md 2): attacks
//! that try to create marker files inside and outside the root are refused
//! and leave no marker; time-outs and output caps kill the whole process
//! group; the environment is scrubbed; the sandbox holds in unrestricted mode.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{Scratch, Server, all_text};
use serde_json::json;

/// `<tmp>/root` is the root; `<tmp>/outside` is not.
struct Layout {
    tmp: Scratch,
}

impl Layout {
    fn new() -> Layout {
        let tmp = Scratch::new();
        tmp.file(
            "root/src/main.rs",
            "fn main() {\n    println!(\"hello\");\n}\n",
        );
        tmp.file("root/notes.txt", "alpha\nbeta\ngamma\n");
        tmp.file("outside/secret.txt", "TOP SECRET\n");
        tmp.file("root_evil/secret.txt", "EVIL SECRET\n");
        Layout { tmp }
    }
    fn root(&self) -> PathBuf {
        self.tmp.path.join("root")
    }
    fn outside(&self) -> PathBuf {
        self.tmp.path.join("outside")
    }
    async fn server(&self, extra: &[&str]) -> Server {
        Server::start(&[&self.root()], extra).await
    }
}

async fn bash(server: &Server, command: &str) -> (bool, String) {
    let result = server.call("bash", json!({"command": command})).await;
    (result.is_error == Some(true), all_text(&result))
}

#[tokio::test]
async fn allowed_commands_run_with_the_documented_result_format() {
    let l = Layout::new();
    let server = l.server(&[]).await;
    let (err, text) = bash(&server, "grep -n beta notes.txt").await;
    assert!(!err);
    assert_eq!(text, "2:beta\n[exit code: 0]");
    let (err, text) = bash(&server, "cat notes.txt | sort -r | head -n 1 && echo done").await;
    assert!(!err);
    assert_eq!(text, "gamma\ndone\n[exit code: 0]");
    // A non-zero exit is a normal result, with stderr under its own line.
    let (err, text) = bash(&server, "ls missing.txt").await;
    assert!(!err);
    assert!(
        text.contains("[stderr]\nls: cannot access 'missing.txt'"),
        "{text}"
    );
    assert!(text.ends_with("[exit code: 2]"), "{text}");
    let (_, text) = bash(&server, "false || echo recovered; echo after").await;
    assert_eq!(text, "recovered\nafter\n[exit code: 0]");
    let (_, text) = bash(&server, "true && false").await;
    assert_eq!(text, "[exit code: 1]");
    // Glob arguments are expanded by the server, inside the root.
    let (_, text) = bash(&server, "ls src/*.rs *.txt").await;
    assert_eq!(text, "notes.txt\nsrc/main.rs\n[exit code: 0]");
    let (_, text) = bash(&server, "pwd").await;
    assert_eq!(text, format!("{}\n[exit code: 0]", l.root().display()));
    let (_, text) = bash(
        &server,
        "ls nothing-here 2>/dev/null; echo x >/dev/null; ls nope 2>&1 | wc -l",
    )
    .await;
    assert_eq!(text, "1\n[exit code: 0]");
}

#[tokio::test]
async fn attacks_are_refused_and_leave_no_marker() {
    let l = Layout::new();
    let root = l.root();
    let outside = l.outside();
    let server = l.server(&[]).await;
    let inside_marker = root.join("pwned");
    let outside_marker = outside.join("pwned");
    let o = outside_marker.display().to_string();
    let attacks = vec![
        // Not on the allowlist, in every position.
        "touch pwned".to_string(),
        "ls; touch pwned".into(),
        "ls && touch pwned".into(),
        "false || touch pwned".into(),
        "ls | tee pwned".into(),
        "ls\ntouch pwned".into(),
        "ls\rtouch pwned".into(),
        format!("touch {o}"),
        // Substitutions and expansions.
        "echo $(touch pwned)".into(),
        "echo `touch pwned`".into(),
        "echo \"$(touch pwned)\"".into(),
        "echo ${IFS}pwned".into(),
        "echo $'\\x74ouch' pwned".into(),
        "cat <(touch pwned)".into(),
        "ls > pwned".into(),
        "ls >> pwned".into(),
        format!("echo x > {o}"),
        "ls 2> pwned".into(),
        "cat <<EOF\nx\nEOF".into(),
        "(touch pwned)".into(),
        "{ touch pwned; }".into(),
        "touch pwned &".into(),
        "X=1 touch pwned".into(),
        "t{o,}uch pwned".into(),
        // Quoting tricks and programs as paths or globs.
        "'touch' pwned".into(),
        "t\"ouch\" pwned".into(),
        "\\touch pwned".into(),
        "/usr/bin/touch pwned".into(),
        "./touch pwned".into(),
        "tou* pwned".into(),
        // Interpreters and wrappers.
        "sh -c 'touch pwned'".into(),
        "bash -c 'touch pwned'".into(),
        "env touch pwned".into(),
        "xargs touch".into(),
        "timeout 5 touch pwned".into(),
        "nice touch pwned".into(),
        "python3 -c 'open(\"pwned\",\"w\")'".into(),
        "perl -e 'open(F,\">pwned\")'".into(),
        "command touch pwned".into(),
        "exec touch pwned".into(),
        "sudo touch pwned".into(),
        // Dangerous flags of allowed programs.
        "find . -exec touch pwned ;".into(),
        "find . -execdir touch pwned ;".into(),
        "find . -fprint pwned".into(),
        "find . -delete".into(),
        "sort -o pwned notes.txt".into(),
        "sort --output=pwned notes.txt".into(),
        "tree -o pwned".into(),
        "xxd notes.txt pwned".into(),
        "uniq notes.txt pwned".into(),
        "rg --pre touch alpha".into(),
        "git -c core.pager='touch pwned' log".into(),
        "git -C .. status".into(),
        "git config core.pager touch".into(),
        "git commit -m x".into(),
        "git diff --output=pwned".into(),
        "git branch pwned".into(),
    ];
    for attack in &attacks {
        let (err, text) = bash(&server, attack).await;
        assert!(err, "not refused: {attack:?} -> {text}");
        assert!(text.starts_with("Command refused: `"), "{attack:?}: {text}");
        assert!(text.contains("mode allows:"), "{attack:?}: {text}");
    }
    assert!(!inside_marker.exists(), "a marker appeared inside the root");
    assert!(
        !outside_marker.exists(),
        "a marker appeared outside the root"
    );
    server.assert_alive().await;
}

#[tokio::test]
async fn paths_outside_the_roots_are_refused() {
    let l = Layout::new();
    let root = l.root();
    std::os::unix::fs::symlink(l.outside(), root.join("link_out")).unwrap();
    let server = l.server(&[]).await;
    let evil = format!("{}_evil/secret.txt", root.display());
    for command in [
        "cat /etc/passwd".to_string(),
        "cat ../outside/secret.txt".into(),
        format!("cat {}/secret.txt", l.outside().display()),
        format!("cat {evil}"),
        "cat link_out/secret.txt".into(),
        "ls ..".into(),
        "grep -r SECRET /".into(),
        "head --lines=1 ../outside/secret.txt".into(),
        "grep -f../outside/secret.txt notes.txt".into(),
        "cat link_*/*".into(),
        "cat ../*/secret.txt".into(),
        "git log -- ../outside".into(),
        "find .. -name secret.txt".into(),
    ] {
        let (err, text) = bash(&server, &command).await;
        assert!(err, "not refused: {command} -> {text}");
        assert!(!text.contains("SECRET"), "{command} leaked: {text}");
    }
}

#[tokio::test]
async fn git_configuration_cannot_run_programs() {
    let l = Layout::new();
    let root = l.root();
    let marker = l.outside().join("git-ran");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(&root)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .unwrap();
        assert!(status.status.success(), "git {args:?}: {status:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "init"]);
    let m = marker.display();
    for (key, value) in [
        ("core.fsmonitor", format!("touch {m}")),
        ("core.pager", format!("touch {m}")),
        ("diff.external", format!("touch {m}")),
        ("core.hooksPath", "hooks".to_string()),
    ] {
        git(&["config", key, &value]);
    }
    std::fs::create_dir_all(root.join("hooks")).unwrap();
    std::fs::write(root.join("notes.txt"), "changed\n").unwrap();
    let server = l.server(&[]).await;
    for command in ["git status", "git diff", "git log -p -n 1", "git show HEAD"] {
        let (err, text) = bash(&server, command).await;
        assert!(!err, "{command}: {text}");
        assert!(text.ends_with("[exit code: 0]"), "{command}: {text}");
    }
    assert!(
        !marker.exists(),
        "the repository's git configuration ran a program"
    );
    // A filter driver cannot be switched off from the command line: refused.
    git(&["config", "filter.evil.clean", &format!("touch {m}")]);
    let (err, text) = bash(&server, "git status").await;
    assert!(err && text.contains("filter"), "{text}");
    assert!(!marker.exists());
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
async fn a_time_out_kills_the_command_and_its_children() {
    let l = Layout::new();
    let follow = "follow-me-7d3a.log";
    l.tmp.file(&format!("root/{follow}"), "line\n");
    let server = l
        .server(&["--bash-timeout", "1", "--bash-allow", "sh"])
        .await;
    let started = std::time::Instant::now();
    let (err, text) = bash(&server, &format!("tail -f {follow}")).await;
    assert!(!err);
    assert!(text.ends_with("[killed: timed out after 1s]"), "{text}");
    assert!(text.starts_with("line\n"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(10));
    // A shell (allowed here) that starts children: all of them die.
    let (_, text) = bash(
        &server,
        "sh -c 'sleep 3127 & sleep 3128 & sleep 3129; echo never'",
    )
    .await;
    assert!(text.ends_with("[killed: timed out after 1s]"), "{text}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    for needle in [follow, "sleep 3127", "sleep 3128", "sleep 3129"] {
        assert_eq!(
            processes_with(needle),
            Vec::<u32>::new(),
            "{needle} survived"
        );
    }
}

#[tokio::test]
async fn an_endless_producer_is_stopped_at_the_output_cap() {
    let l = Layout::new();
    let server = l.server(&["--bash-allow", "yes"]).await;
    let started = std::time::Instant::now();
    let (err, text) = bash(&server, "yes rootbound-output-cap").await;
    assert!(!err);
    assert!(
        text.ends_with("[killed: the output passed 1 MB; narrow the command]"),
        "{}",
        &text[text.len() - 200..]
    );
    assert!(text.contains("characters left out"), "{}", &text[..200]);
    assert!(text.starts_with("rootbound-output-cap\n"));
    assert!(text.chars().count() < 10_500);
    assert!(started.elapsed() < Duration::from_secs(20));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(processes_with("rootbound-output-cap"), Vec::<u32>::new());
}

#[tokio::test]
async fn the_environment_is_scrubbed() {
    let l = Layout::new();
    let mut cmd = tokio::process::Command::new(common::BIN);
    cmd.arg("--root")
        .arg(l.root())
        .args(["--bash-allow", "printenv"])
        .env("ROOTBOUND_TEST_SECRET", "hunter2-secret")
        .env("AWS_SECRET_ACCESS_KEY", "aws-secret-value");
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .spawn()
        .unwrap();
    let client = rmcp::ServiceExt::serve((), transport).await.unwrap();
    let server = Server { client };
    let (err, text) = bash(&server, "printenv").await;
    assert!(!err, "{text}");
    assert!(
        !text.contains("hunter2") && !text.contains("aws-secret"),
        "{text}"
    );
    assert!(
        text.contains("TERM=dumb") && text.contains("PAGER=cat") && text.contains("PATH="),
        "{text}"
    );
}

#[tokio::test]
async fn modes_off_and_read_only() {
    let l = Layout::new();
    let server = l.server(&["--bash-mode", "off"]).await;
    let tools = server.client.list_all_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.name != "bash"));
    // --read-only forces read-only bash; with --bash-allow it is a start-up error.
    let output = std::process::Command::new(common::BIN)
        .args(["--read-only", "--bash-allow", "make", "tools"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("--read-only conflicts with --bash-allow")
    );
    let output = std::process::Command::new(common::BIN)
        .args(["--read-only", "--bash-mode", "unrestricted", "tools"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

/// Whether this kernel enforces Landlock (the sandbox tests need it).
fn landlock_available(root: &Path) -> bool {
    rootbound::Sandbox::build(&[root.to_path_buf()], &[]).is_ok()
}

#[tokio::test]
async fn unrestricted_mode_is_still_confined_by_the_sandbox() {
    let l = Layout::new();
    let root = l.root();
    if !landlock_available(&root) {
        eprintln!(
            "SKIPPED unrestricted_mode_is_still_confined_by_the_sandbox: this kernel has no Landlock"
        );
        return;
    }
    let server = l.server(&["--bash-mode", "unrestricted"]).await;
    // A real shell runs the line: writes inside the root work.
    let (err, text) = bash(
        &server,
        "echo inside > made-inside.txt && cat made-inside.txt",
    )
    .await;
    assert!(!err, "{text}");
    assert_eq!(text, "inside\n[exit code: 0]");
    // Writes outside fail, and nothing appears there.
    let target = l.outside().join("made-outside.txt");
    let (_, text) = bash(&server, &format!("echo outside > {}", target.display())).await;
    assert!(!text.ends_with("[exit code: 0]"), "{text}");
    assert!(!target.exists());
    // Reading outside the roots and system directories fails too.
    let (_, text) = bash(
        &server,
        &format!("cat {}/secret.txt", l.outside().display()),
    )
    .await;
    assert!(!text.contains("TOP SECRET"), "{text}");
    // No TCP connection leaves the sandbox.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let (_, text) = bash(&server, &format!("echo hi > /dev/tcp/127.0.0.1/{port}")).await;
    assert!(!text.ends_with("[exit code: 0]"), "{text}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(listener.accept().is_err(), "a connection got through");
}
