//! The agent's test loop through the real binary, for each toolchain the
//! machine has (issue: "the agent's test loop works in the sandbox, in one
//! step"): a small project made here, whose tests run through the bash
//! tool with only the README's option (`--bash-preset`) and no network.
//! For each: the tests pass; a failing test gives a non-zero status, also
//! behind `| tail`; a test that stops its child with SIGTERM finishes; a
//! variable set by assignment reaches the test; progress notifications
//! arrive during a 5-second test.
//!
//! A toolchain that is missing fails its test: `.ci/run` installs what
//! these need (pytest; Rust and Node are on the machine). Linux: where the
//! sandbox these claims rest on is built (macOS's is checked by hand).
#![cfg(target_os = "linux")]

mod common;

use std::time::{Duration, Instant};

use common::{BashAnswer, RawSession, Scratch};
use serde_json::{Value, json};

/// What one toolchain's project needs.
struct Project {
    preset: &'static str,
    /// The line that runs the tests, with `{env}` where an assignment goes.
    test: &'static str,
    /// A variable the project's tests check, and its value.
    env: (&'static str, &'static str),
    /// The file whose presence makes a test fail.
    fail_flag: &'static str,
    /// The file whose presence makes a test sleep 5 s, printing each second.
    slow_flag: &'static str,
}

/// Runs `command` through bash with a progress token; the answer and the
/// progress messages that came before it.
async fn bash(session: &mut RawSession, id: i64, command: &str) -> (BashAnswer, Vec<String>) {
    let msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "bash", "arguments": {"command": command, "timeout": 300},
        "_meta": {"progressToken": format!("t{id}")}}});
    session.send_line(&msg.to_string()).await;
    let mut progress = Vec::new();
    loop {
        let reply: Value = session.read_reply().await;
        if reply["method"] == "notifications/progress" {
            assert_eq!(reply["params"]["progressToken"], format!("t{id}"));
            progress.push(
                reply["params"]["message"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            );
            continue;
        }
        if reply["id"] == id {
            let text = reply["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_else(|| panic!("no text: {reply}"))
                .to_string();
            return (BashAnswer::parse(&text), progress);
        }
    }
}

fn show(answer: &BashAnswer) -> String {
    format!(
        "status {}\nnotes {:?}\nstdout:\n{}\nstderr:\n{}",
        answer.status, answer.notes, answer.stdout, answer.stderr
    )
}

async fn run_the_loop(dir: &Scratch, project: &Project) {
    let mut session = RawSession::start_with(
        &dir.path,
        &["--bash-preset", project.preset, "--bash-timeout", "120"],
        &[],
    )
    .await;
    let line = |env: &str| project.test.replace("{env}", env);
    let (name, value) = project.env;
    let assigned = format!("{name}={value}");

    // Green, with the variable set by assignment (a test checks it).
    let started = Instant::now();
    let (answer, _) = bash(&mut session, 1, &line(&assigned)).await;
    assert_eq!(answer.exit_code(), Some(0), "{}", show(&answer));
    eprintln!("{}: green in {:?}", project.preset, started.elapsed());
    // Without it, the check fails: the assignment is what reached the test.
    let (answer, _) = bash(&mut session, 2, &line("")).await;
    assert_ne!(answer.exit_code(), Some(0), "{}", show(&answer));

    // A failing test: a non-zero status, and behind `| tail` the status
    // line names the stage that failed.
    dir.file(project.fail_flag, "");
    let (answer, _) = bash(&mut session, 3, &line(&assigned)).await;
    assert!(
        answer.exit_code().is_some_and(|c| c != 0),
        "{}",
        show(&answer)
    );
    let piped = format!("{} 2>&1 | tail -5", line(&assigned));
    let (answer, _) = bash(&mut session, 4, &piped).await;
    assert!(
        answer
            .status
            .starts_with("[exit code: 0; earlier stage failed: "),
        "{}",
        show(&answer)
    );
    std::fs::remove_file(dir.path.join(project.fail_flag)).unwrap();

    // A 5-second test: progress arrives while it runs, with its output.
    dir.file(project.slow_flag, "");
    let started = Instant::now();
    let (answer, progress) = bash(&mut session, 5, &line(&assigned)).await;
    assert_eq!(answer.exit_code(), Some(0), "{}", show(&answer));
    assert!(started.elapsed() >= Duration::from_secs(5));
    assert!(progress.len() >= 3, "{progress:?}");
    assert!(
        progress.iter().any(|m| m.contains("slow step")),
        "no output line in {progress:?}"
    );
    std::fs::remove_file(dir.path.join(project.slow_flag)).unwrap();
}

#[tokio::test]
async fn rust_tests_run_green_fail_red_and_report_progress() {
    let dir = Scratch::new();
    dir.file(
        "Cargo.toml",
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    dir.file(
        "src/lib.rs",
        r#"
pub fn add(a: i32, b: i32) -> i32 { a + b }

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::process::Command;
    use std::time::{Duration, Instant};

    #[test]
    fn adds() { assert_eq!(super::add(2, 2), 4); }

    #[test]
    fn sees_the_assignment() { assert_eq!(std::env::var("RUST_BACKTRACE").as_deref(), Ok("1")); }

    #[test]
    fn fails_when_asked() { assert!(!Path::new("fail.flag").exists(), "asked to fail"); }

    #[test]
    fn stops_its_child_with_sigterm() {
        let started = Instant::now();
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
        assert!(killed.success());
        let status = child.wait().unwrap();
        assert!(!status.success());
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn slow_when_asked() {
        if Path::new("slow.flag").exists() {
            for i in 0..5 {
                println!("slow step {i}");
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    }
}
"#,
    );
    run_the_loop(
        &dir,
        &Project {
            preset: "rust",
            test: "{env} cargo test -- --nocapture",
            env: ("RUST_BACKTRACE", "1"),
            fail_flag: "fail.flag",
            slow_flag: "slow.flag",
        },
    )
    .await;
}

#[tokio::test]
async fn node_tests_run_green_fail_red_and_report_progress() {
    let dir = Scratch::new();
    dir.file(
        "package.json",
        r#"{"name": "tiny", "version": "1.0.0", "scripts": {"test": "node --test"}}"#,
    );
    dir.file(
        "tiny.test.js",
        r#"
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const { spawn } = require('node:child_process');

test('adds', () => assert.strictEqual(1 + 1, 2));
test('sees the assignment', () => assert.strictEqual(process.env.NODE_ENV, 'test'));
test('fails when asked', () => assert.ok(!fs.existsSync('fail.flag'), 'asked to fail'));
test('stops its child with SIGTERM', async () => {
  const child = spawn('sleep', ['30']);
  const ended = new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal)));
  child.kill('SIGTERM');
  assert.strictEqual(await ended, 'SIGTERM');
});
test('slow when asked', async () => {
  if (!fs.existsSync('slow.flag')) return;
  for (let i = 0; i < 5; i++) {
    console.log(`slow step ${i}`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
});
"#,
    );
    run_the_loop(
        &dir,
        &Project {
            preset: "node",
            test: "{env} npm test",
            env: ("NODE_ENV", "test"),
            fail_flag: "fail.flag",
            slow_flag: "slow.flag",
        },
    )
    .await;
}

#[tokio::test]
async fn python_tests_run_green_fail_red_and_report_progress() {
    let dir = Scratch::new();
    dir.file(
        "test_tiny.py",
        r#"
import os, subprocess, sys, time

def test_adds():
    assert 1 + 1 == 2

def test_sees_the_assignment():
    assert os.environ.get("PYTHONHASHSEED") == "0"

def test_fails_when_asked():
    assert not os.path.exists("fail.flag"), "asked to fail"

def test_stops_its_child_with_sigterm():
    started = time.monotonic()
    child = subprocess.Popen(["sleep", "30"])
    child.terminate()
    assert child.wait(timeout=10) == -15
    assert time.monotonic() - started < 10

def test_slow_when_asked():
    if os.path.exists("slow.flag"):
        for i in range(5):
            print(f"slow step {i}", flush=True)
            time.sleep(1)
"#,
    );
    run_the_loop(
        &dir,
        &Project {
            preset: "python",
            test: "{env} pytest -s -q -p no:cacheprovider",
            env: ("PYTHONHASHSEED", "0"),
            fail_flag: "fail.flag",
            slow_flag: "slow.flag",
        },
    )
    .await;
}

// What the attacks on this feature tried, by effect.

/// A GNU message catalog (`.mo`) translating `from` to `to`.
fn message_catalog(from: &str, to: &str) -> Vec<u8> {
    let header = 28u32;
    let originals = header;
    let translations = originals + 8;
    let from_at = translations + 8;
    let to_at = from_at + from.len() as u32 + 1;
    let mut mo = Vec::new();
    for word in [0x9504_12de_u32, 0, 1, originals, translations, 0, 0] {
        mo.extend(word.to_le_bytes());
    }
    for (len, at) in [(from.len(), from_at), (to.len(), to_at)] {
        mo.extend((len as u32).to_le_bytes());
        mo.extend(at.to_le_bytes());
    }
    for text in [from, to] {
        mo.extend(text.as_bytes());
        mo.push(0);
    }
    mo
}

#[tokio::test]
async fn a_locale_variable_cannot_load_a_catalog_from_a_root() {
    let dir = Scratch::new();
    let catalog = message_catalog("cannot access %s", "PLANTED-CATALOG %s");
    dir.file("loc/LC_MESSAGES/coreutils.mo", &catalog);
    let server = common::Server::start(&[&dir.path], &["--bash-allow", "cargo test"]).await;
    let up = "../".repeat(8);
    for name in ["LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"] {
        let line = format!(
            "{name}={up}{}/loc ls missing-file",
            dir.path.display().to_string().trim_start_matches('/')
        );
        let text = common::all_text(&server.call("bash", json!({"command": line})).await);
        assert!(!text.contains("PLANTED-CATALOG"), "{name}: {text}");
    }
}

#[tokio::test]
async fn git_runs_with_no_assignment_its_configuration_check_did_not_see() {
    let dir = Scratch::new();
    let marker = dir.path.join("filter-ran");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(&dir.path)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    dir.file(
        "evil.sh",
        format!("#!/bin/sh\ntouch {}\ncat\n", marker.display()),
    );
    std::fs::set_permissions(
        dir.path.join("evil.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    dir.file(".gitattributes", "* filter=evil\n");
    dir.file(
        "evil.cfg",
        format!(
            "[filter \"evil\"]\n\tclean = {}/evil.sh\n",
            dir.path.display()
        ),
    );
    dir.file("a.txt", "a\n");
    let server = common::Server::start(
        &[&dir.path],
        &[
            "--bash-allow",
            "git add",
            "--bash-env",
            "GIT_CONFIG_GLOBAL",
            "--bash-env",
            "GIT_CONFIG_PARAMETERS",
        ],
    )
    .await;
    for line in [
        format!(
            "GIT_CONFIG_GLOBAL={}/evil.cfg git add a.txt",
            dir.path.display()
        ),
        format!(
            "GIT_CONFIG_PARAMETERS=\"'filter.evil.clean'='{}/evil.sh'\" git add a.txt",
            dir.path.display()
        ),
    ] {
        let text = common::all_text(&server.call("bash", json!({"command": line})).await);
        assert!(!marker.exists(), "{line}: {text}");
    }
}

#[tokio::test]
async fn no_toolchain_makes_the_home_or_a_credential_readable() {
    let dir = Scratch::new();
    let home = Scratch::new();
    home.file("bin/mytool", "#!/bin/sh\necho mytool\n");
    std::fs::set_permissions(
        home.path.join("bin/mytool"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    home.file(
        ".cargo/credentials.toml",
        "token = \"SECRET-CARGO-TOKEN\"\n",
    );
    home.file(".ssh/id_ed25519", "SECRET-SSH-KEY\n");
    let path = format!("{}/bin:/usr/bin:/bin", home.path.display());
    let home_text = home.path.display().to_string();
    let server = common::Server::start_as(
        &[],
        &[&dir.path],
        &["--bash-allow", "mytool", "--bash-allow", "python3 -c"],
        &[("HOME", home_text.as_str()), ("PATH", path.as_str())],
    )
    .await;
    let text = common::all_text(&server.call("bash", json!({"command": "mytool"})).await);
    assert!(text.contains("mytool"), "the toolchain was found: {text}");
    for secret in [".cargo/credentials.toml", ".ssh/id_ed25519"] {
        let line = format!(
            "python3 -c \"print(open('{}/{secret}').read())\"",
            home.path.display()
        );
        let text = common::all_text(&server.call("bash", json!({"command": line})).await);
        assert!(!text.contains("SECRET"), "{secret}: {text}");
    }
}
