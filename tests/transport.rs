//! The stdio transport under the inputs real clients produce: requests that
//! arrive in pieces while replies are going out, lines it cannot parse,
//! notifications before the session, probes that hang up, and clients that
//! send without reading.
// Builds Unix trees (symlinks, FIFOs, modes) or runs Unix programs; the
// Windows build is checked by the unit tests and the smoke test under Wine
// (.ci/cross.sh).
#![cfg(unix)]

mod common;

use std::io::{BufRead, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{BIN, RawSession, Scratch};
use serde_json::{Value, json};

/// Every split point of each request, with a reply going out while the
/// first piece waits: the ping's reply is read back before the rest is
/// sent, so the server has written it while holding half a request.
#[tokio::test]
async fn requests_split_at_every_byte_boundary_while_replies_go_out_are_all_answered() {
    let dir = Scratch::new();
    dir.file("a.txt", "first line\nsecond line\n");
    let mut raw = RawSession::start(&dir.path).await;
    let shapes: Vec<(&str, Value)> = vec![
        ("ping", json!({})),
        (
            "tools/call",
            json!({"name": "read_file", "arguments": {"path": "a.txt", "limit": 1}}),
        ),
        (
            "tools/call",
            json!({"name": "write_file", "arguments": {"file_path": "out/ü.txt", "content": "naïve ✓\n"}}),
        ),
        (
            "tools/call",
            json!({"name": "search_file_content", "arguments": {"pattern": "second"}}),
        ),
    ];
    let mut id = 1000;
    for (method, params) in &shapes {
        id += 1;
        let line =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let bytes = line.as_bytes();
        for split in 1..bytes.len() {
            let ping_id = -(split as i64);
            let mut first = json!({"jsonrpc": "2.0", "id": ping_id, "method": "ping"}).to_string();
            first.push('\n');
            raw.send_bytes(first.as_bytes()).await;
            raw.send_bytes(&bytes[..split]).await;
            let pong = raw.read_reply().await;
            assert_eq!(pong["id"], ping_id, "{pong}");
            raw.send_bytes(&bytes[split..]).await;
            raw.send_bytes(b"\n").await;
            let reply = raw.read_reply().await;
            assert_eq!(reply["id"], id, "split at byte {split} of {line}: {reply}");
            assert!(
                reply.get("result").is_some(),
                "split at byte {split}: {reply}"
            );
            assert_ne!(
                reply["result"]["isError"], true,
                "split at byte {split}: {reply}"
            );
        }
    }
    assert_eq!(
        std::fs::read_to_string(dir.path.join("out/ü.txt")).unwrap(),
        "naïve ✓\n"
    );
}

/// Large writes pipelined behind a slow call, each line far bigger than a
/// pipe buffer: every one is answered and lands on disk.
#[tokio::test]
async fn large_requests_sent_while_others_are_in_flight_are_all_answered() {
    let dir = Scratch::new();
    let mut raw = RawSession::start(&dir.path).await;
    let content = "0123456789abcdef".repeat(64 * 1024); // 1 MiB
    let mut batch = Vec::new();
    for i in 0..20 {
        let line = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "write_file",
                       "arguments": {"file_path": format!("big{i}.txt"), "content": content}}});
        batch.extend_from_slice(line.to_string().as_bytes());
        batch.push(b'\n');
    }
    // Written in uneven pieces, so lines straddle reads.
    for piece in batch.chunks(700_001) {
        raw.send_bytes(piece).await;
    }
    let mut answered = std::collections::BTreeSet::new();
    while answered.len() < 20 {
        let reply = raw.read_reply().await;
        assert_eq!(reply["result"]["isError"], false, "{}", &reply.to_string());
        answered.insert(reply["id"].as_i64().unwrap());
    }
    for i in 0..20 {
        let written = std::fs::read_to_string(dir.path.join(format!("big{i}.txt"))).unwrap();
        assert!(written == content, "big{i}.txt differs");
    }
}

/// Lines the transport cannot parse are answered with their own id when the
/// head of the line shows it.
#[tokio::test]
async fn unparsable_and_oversized_requests_are_answered_with_their_own_id() {
    let dir = Scratch::new();
    let mut raw = RawSession::start(&dir.path).await;

    // Not valid UTF-8.
    raw.send_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"tools/call\",\"params\":{\"name\":\"read_file\",\"arguments\":{\"path\":\"\xff\xfe\"}}}\n",
    )
    .await;
    let reply = raw.read_reply().await;
    assert_eq!(reply["id"], 21, "{reply}");
    assert_eq!(reply["error"]["code"], -32700, "{reply}");

    // Nested deeper than the parser goes.
    let mut deep = r#"{"jsonrpc":"2.0","id":"deep-22","method":"tools/call","params":{"name":"read_file","arguments":{"path":"#.to_string();
    deep.push_str(&"[".repeat(10_000));
    deep.push_str(&"]".repeat(10_000));
    deep.push_str("}}}");
    raw.send_line(&deep).await;
    let reply = raw.read_reply().await;
    assert_eq!(reply["id"], "deep-22", "{reply}");
    assert_eq!(reply["error"]["code"], -32700, "{reply}");

    // Longer than the 128 MiB limit.
    let mut huge = br#"{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"write_file","arguments":{"file_path":"huge.txt","content":""#.to_vec();
    huge.resize(huge.len() + 129 * 1024 * 1024, b'x');
    huge.extend_from_slice(b"\"}}}\n");
    raw.send_bytes(&huge).await;
    drop(huge);
    let reply = raw.read_reply().await;
    assert_eq!(reply["id"], 23, "{reply}");
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert!(!dir.path.join("huge.txt").exists());

    // No id anywhere: null, as JSON-RPC says.
    raw.send_line("{not json").await;
    let reply = raw.read_reply().await;
    assert!(reply["id"].is_null(), "{reply}");

    raw.assert_alive(24).await;
}

/// A server process driven line by line, without the harness's initialize.
struct Bare {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl Bare {
    fn start(root: &std::path::Path, log: &str) -> Bare {
        let mut child = Command::new(BIN)
            .arg("--root")
            .arg(root)
            .env("RUST_LOG", log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn rootbound");
        let stdin = child.stdin.take();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        Bare {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn reply(&mut self) -> Value {
        let mut line = String::new();
        assert!(self.stdout.read_line(&mut line).unwrap() > 0, "no reply");
        serde_json::from_str(&line).unwrap()
    }

    /// Closes stdin and returns the exit code and everything logged.
    fn hang_up(&mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the server did not exit within 20 s of its input closing"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut log = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            std::io::Read::read_to_string(&mut stderr, &mut log).unwrap();
        }
        (status.code(), log)
    }
}

impl Drop for Bare {
    /// A failed test must not leave a server running.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
           "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                      "clientInfo": {"name": "bare", "version": "0"}}})
}

#[test]
fn a_notification_before_the_first_request_is_dropped() {
    let dir = Scratch::new();
    let mut server = Bare::start(&dir.path, "warn");
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    server.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": 5}}),
    );
    server.send(initialize());
    assert_eq!(server.reply()["result"]["serverInfo"]["name"], "rootbound");
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    server.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let tools = server.reply();
    assert!(tools["result"]["tools"].is_array(), "{tools}");
    let (code, _) = server.hang_up();
    assert_eq!(code, Some(0));
}

#[test]
fn a_probe_that_hangs_up_after_discover_is_a_normal_exit() {
    let dir = Scratch::new();
    let mut server = Bare::start(&dir.path, "info");
    server.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}}),
    );
    let reply = server.reply();
    assert!(reply["result"]["supportedVersions"].is_array(), "{reply}");
    let (code, log) = server.hang_up();
    assert_eq!(code, Some(0), "{log}");
    assert!(!log.contains("ERROR"), "{log}");
}

/// Resident memory of a process, from /proc.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// A client that pipelines requests and reads no reply is held back by the
/// pipe: the server stops reading once its replies cannot be written, so its
/// memory stays flat, and every request is answered once the client reads.
#[test]
fn pipelined_requests_whose_replies_are_not_read_keep_memory_bounded() {
    const REQUESTS: usize = 100_000;
    let dir = Scratch::new();
    dir.file("a.txt", "small\n");
    let mut server = Bare::start(&dir.path, "warn");
    server.send(initialize());
    server.reply();
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let baseline = rss_kib(server.child.id());

    let mut stdin = server.stdin.take().unwrap();
    let sent = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (sent, done) = (sent.clone(), done.clone());
        std::thread::spawn(move || {
            for i in 0..REQUESTS {
                let line = json!({"jsonrpc": "2.0", "id": i + 10, "method": "tools/call",
                    "params": {"name": "read_file", "arguments": {"path": "a.txt"}}});
                if writeln!(stdin, "{line}").is_err() {
                    break;
                }
                sent.store(i + 1, Ordering::Relaxed);
            }
            done.store(true, Ordering::Relaxed);
        })
    };
    // Wait until the writer is stuck (or, without backpressure, finished).
    let mut last = 0;
    let mut still = 0;
    while !done.load(Ordering::Relaxed) && still < 10 {
        std::thread::sleep(Duration::from_millis(100));
        let now = sent.load(Ordering::Relaxed);
        still = if now == last { still + 1 } else { 0 };
        last = now;
    }
    let held = rss_kib(server.child.id());
    assert!(
        !done.load(Ordering::Relaxed),
        "all {REQUESTS} requests were taken in without a reply being read"
    );
    assert!(
        held < baseline + 32 * 1024,
        "RSS grew from {baseline} KiB to {held} KiB with {last} requests pending"
    );

    // Now read: every request is answered, in some order.
    let mut answered = 0;
    while answered < REQUESTS {
        let reply = server.reply();
        assert_eq!(reply["result"]["isError"], false, "{reply}");
        answered += 1;
    }
    writer.join().unwrap();
    let (code, _) = server.hang_up();
    assert_eq!(code, Some(0));
}

/// With every log level on, stdout still carries nothing but JSON-RPC: logs
/// go to stderr.
#[test]
fn stdout_carries_only_json_rpc_even_with_every_log_on() {
    let dir = Scratch::new();
    dir.file("a.txt", "x\n");
    let log = dir.path.join("server.log");
    let mut child = Command::new(BIN)
        .arg("--root")
        .arg(&dir.path)
        .env("RUST_LOG", "trace")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        let lines = [
            initialize(),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "read_file", "arguments": {"path": "a.txt"}}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "read_file", "arguments": {"path": "/etc/passwd"}}}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                   "params": {"name": "search_file_content", "arguments": {"pattern": "x"}}}),
        ];
        for line in lines {
            writeln!(stdin, "{line}").unwrap();
        }
        writeln!(stdin, "{{broken").unwrap();
    }
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let replies: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {l}")))
        .collect();
    assert!(replies.iter().all(|r| r["jsonrpc"] == "2.0"), "{stdout}");
    assert_eq!(replies.len(), 5, "{stdout}");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("TRACE") || logged.contains("DEBUG"),
        "{logged}"
    );
}

/// More slow requests than may be in flight, then a cancellation for each:
/// the cancellations are read although requests wait for a slot, the
/// waiting ones are dropped, and the next request is answered long before
/// the slow ones would have ended (bash's 60 s limit).
#[test]
fn cancellations_get_through_while_requests_wait_for_a_slot() {
    const SLOW: u64 = 100;
    let dir = Scratch::new();
    dir.file("a.txt", "small\n");
    let mut server = Bare::start(&dir.path, "error");
    server.send(initialize());
    server.reply();
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for i in 0..SLOW {
        server.send(
            json!({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
            "params": {"name": "bash", "arguments": {"command": "tail -f a.txt"}}}),
        );
    }
    for i in 0..SLOW {
        server.send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 100 + i, "reason": "test"}}),
        );
    }
    let asked = std::time::Instant::now();
    server.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}));
    loop {
        let reply = server.reply();
        if reply["id"] == 5 {
            assert!(reply["result"]["tools"].is_array(), "{reply}");
            break;
        }
    }
    assert!(
        asked.elapsed() < Duration::from_secs(20),
        "tools/list waited {:?} behind cancelled requests",
        asked.elapsed()
    );
    let (code, _) = server.hang_up();
    assert_eq!(code, Some(0));
}

/// A request whose id is still in use by another is answered with an error
/// at once, and does not cost a slot: after many such pairs, more requests
/// than may be in flight at once are all still answered.
#[test]
fn a_duplicate_id_is_refused_and_keeps_no_slot() {
    let dir = Scratch::new();
    let mut server = Bare::start(&dir.path, "error");
    server.send(initialize());
    server.reply();
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // A slow request, then another with its id. The slow one must still be
    // running when the second is read, on however loaded a machine; it is
    // cancelled at the end.
    server.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": "sleep 50"}}}));
    server.send(json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}));
    let reply = server.reply();
    assert_eq!(reply["id"], 7, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("in use")),
        "{reply}"
    );
    for round in 0..100 {
        server.send(json!({"jsonrpc": "2.0", "id": 1000 + round, "method": "ping"}));
        server.send(json!({"jsonrpc": "2.0", "id": 1000 + round, "method": "ping"}));
    }
    let mut answered = std::collections::HashMap::new();
    while answered.len() < 100 || answered.values().any(|n| *n < 2) {
        let reply = server.reply();
        if let Some(id) = reply["id"].as_i64().filter(|id| *id >= 1000) {
            *answered.entry(id).or_insert(0) += 1;
        }
    }
    // Slots are all free again: 70 more are answered.
    for id in 0..70 {
        server.send(json!({"jsonrpc": "2.0", "id": 5000 + id, "method": "ping"}));
    }
    let mut got = 0;
    while got < 70 {
        if server.reply()["id"].as_i64().is_some_and(|id| id >= 5000) {
            got += 1;
        }
    }
    server.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "test"}}),
    );
    let (code, _) = server.hang_up();
    assert_eq!(code, Some(0));
}
