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
//! these need (pytest; Rust and Node are on the machine).

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
