//! Shared harness: start the real `rootbound` binary, talk MCP to it with
//! rmcp's client, and read results.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

pub const BIN: &str = env!("CARGO_BIN_EXE_rootbound");

/// The state directory's parent for servers the harness starts (the journal
/// of edits goes beneath it, not into the user's own state directory).
pub const TEST_STATE_HOME: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-state");

/// A running server and the client session talking to it.
pub struct Server {
    pub client: RunningService<RoleClient, ()>,
}

impl Server {
    /// Starts the server with one `--root` per entry of `roots` and `extra`
    /// arguments.
    pub async fn start(roots: &[&Path], extra: &[&str]) -> Server {
        Server::start_as(&[], roots, extra, &[]).await
    }

    /// Starts the server through `wrapper` (a program and its arguments that
    /// run the binary, such as `setpriv` to run it as another user; empty:
    /// directly), with environment variables `env`.
    pub async fn start_as(
        wrapper: &[&str],
        roots: &[&Path],
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Server {
        let mut cmd = match wrapper.split_first() {
            Some((program, args)) => {
                let mut cmd = Command::new(program);
                cmd.args(args).arg(BIN);
                cmd
            }
            None => Command::new(BIN),
        };
        for root in roots {
            cmd.arg("--root").arg(root);
        }
        cmd.args(extra)
            .env("RUST_LOG", "warn")
            .env("XDG_STATE_HOME", TEST_STATE_HOME)
            .envs(env.iter().copied());
        let (transport, _stderr) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn rootbound");
        let client = ().serve(transport).await.expect("MCP initialize");
        Server { client }
    }

    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        self.try_call(tool, args)
            .await
            .unwrap_or_else(|e| panic!("{tool} failed at the protocol level: {e}"))
    }

    pub async fn try_call(&self, tool: &str, args: Value) -> Result<CallToolResult, ServiceError> {
        let Value::Object(args) = args else {
            panic!("arguments must be a JSON object")
        };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
        tokio::time::timeout(Duration::from_secs(60), self.client.call_tool(params))
            .await
            .expect("the server answered within 60 s")
    }

    /// Calls a tool and returns its only text block, asserting success.
    pub async fn ok_text(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args.clone()).await;
        assert_ne!(
            result.is_error,
            Some(true),
            "{tool} {args} failed: {}",
            all_text(&result)
        );
        all_text(&result)
    }

    /// Calls a tool and returns its error message, asserting failure.
    pub async fn err_text(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args.clone()).await;
        assert_eq!(
            result.is_error,
            Some(true),
            "{tool} {args} should have failed but returned: {}",
            all_text(&result)
        );
        all_text(&result)
    }

    /// The server still answers: a cheap call that must succeed.
    pub async fn assert_alive(&self) {
        let tools = self
            .client
            .list_all_tools()
            .await
            .expect("tools/list after the fault");
        assert!(!tools.is_empty());
    }
}

/// Every text block of a result, concatenated.
pub fn all_text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("")
}

/// A temporary directory with its canonical path (tests compare messages
/// that show canonical paths).
pub struct Scratch {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl Scratch {
    pub fn new() -> Scratch {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = std::fs::canonicalize(dir.path()).expect("canonicalize tempdir");
        Scratch { _dir: dir, path }
    }

    /// Creates `rel` (and its parents) holding `content`; returns its path.
    pub fn file(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parents");
        }
        std::fs::write(&path, content).expect("write fixture file");
        path
    }

    pub fn dir(&self, rel: &str) -> PathBuf {
        let path = self.path.join(rel);
        std::fs::create_dir_all(&path).expect("create dir");
        path
    }
}

/// A raw JSON-RPC line session with the binary, for input no SDK would send.
pub struct RawSession {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: BufReader<tokio::process::ChildStdout>,
}

impl RawSession {
    pub async fn start(root: &Path) -> RawSession {
        RawSession::start_with(root, &[], &[]).await
    }

    /// A session with more arguments and environment variables.
    pub async fn start_with(root: &Path, args: &[&str], env: &[(&str, &Path)]) -> RawSession {
        let mut child = Command::new(BIN)
            .arg("--root")
            .arg(root)
            .args(args)
            .env("XDG_STATE_HOME", TEST_STATE_HOME)
            .envs(env.iter().copied())
            .env("RUST_LOG", "error")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn rootbound");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut session = RawSession {
            child,
            stdin,
            stdout,
        };
        let init = serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw-test", "version": "0"}}
        });
        session.send_line(&init.to_string()).await;
        let reply = session.read_reply().await;
        assert_eq!(
            reply["result"]["serverInfo"]["name"], "rootbound",
            "{reply}"
        );
        session
            .send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        session
    }

    pub async fn send_line(&mut self, line: &str) {
        self.send_bytes(line.as_bytes()).await;
        self.send_bytes(b"\n").await;
    }

    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).await.expect("write to server");
        self.stdin.flush().await.expect("flush to server");
    }

    /// The next JSON line from the server (notifications included).
    pub async fn read_reply(&mut self) -> Value {
        let mut line = String::new();
        let read = tokio::time::timeout(Duration::from_secs(20), self.stdout.read_line(&mut line))
            .await
            .expect("the server replied within 20 s")
            .expect("read from server");
        assert!(read > 0, "the server closed its output");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Sends a request with `id` and returns the reply with that id.
    pub async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        let msg =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&msg.to_string()).await;
        loop {
            let reply = self.read_reply().await;
            if reply["id"] == id {
                return reply;
            }
        }
    }

    pub async fn assert_alive(&mut self, id: i64) {
        let reply = self.request(id, "tools/list", serde_json::json!({})).await;
        assert!(reply["result"]["tools"].is_array(), "{reply}");
    }

    /// The server's process id (for its memory in /proc).
    pub fn pid(&self) -> u32 {
        self.child.id().expect("the server is running")
    }

    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

/// A bash answer, read: the status line, notes, and each stream.
#[derive(Debug, Default)]
pub struct BashAnswer {
    pub status: String,
    pub notes: Vec<String>,
    pub stdout: String,
    pub stderr: String,
}

impl BashAnswer {
    /// Reads `[status]`, `[note: ...]` lines, then sections headed
    /// `[stdout B...]` and `[stderr B...]` where B is the call's boundary.
    pub fn parse(text: &str) -> BashAnswer {
        let mut answer = BashAnswer::default();
        let mut lines = text.split('\n').peekable();
        answer.status = lines.next().unwrap_or("").to_string();
        while let Some(line) = lines.next_if(|l| l.starts_with("[note: ")) {
            answer.notes.push(line.to_string());
        }
        let rest: Vec<&str> = lines.collect();
        let Some(first) = rest.first() else {
            return answer;
        };
        // The boundary is the second word of the first header.
        let boundary = first
            .trim_start_matches('[')
            .split([' ', ']', ':'])
            .nth(1)
            .unwrap_or("")
            .to_string();
        let (mut out, mut err): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
        let mut in_stderr = None;
        for line in rest {
            if line.starts_with(&format!("[stdout {boundary}")) {
                in_stderr = Some(false);
            } else if line.starts_with(&format!("[stderr {boundary}")) {
                in_stderr = Some(true);
            } else if let Some(to_err) = in_stderr {
                if to_err {
                    err.push(line)
                } else {
                    out.push(line)
                }
            }
        }
        answer.stdout = out.join("\n");
        answer.stderr = err.join("\n");
        answer
    }

    pub fn exit_code(&self) -> Option<i32> {
        self.status
            .strip_prefix("[exit code: ")?
            .strip_suffix(']')?
            .parse()
            .ok()
    }
}

/// The host's own git, as the user would run it in `cwd` after the calls:
/// no system configuration, `home` as its HOME (the test's, not the
/// user's), an identity for commits, and nothing pinned by the test's
/// environment.
pub fn host_git(cwd: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("git")
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "u")
        .env("GIT_AUTHOR_EMAIL", "u@example.com")
        .env("GIT_COMMITTER_NAME", "u")
        .env("GIT_COMMITTER_EMAIL", "u@example.com")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(Stdio::null())
        .output()
        .expect("run git")
}
