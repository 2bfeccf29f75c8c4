//! Newline-delimited JSON-RPC over stdin/stdout, answering bad input.
//!
//! Why not rmcp's own stdio transport. Since 3.11 it keeps a partial line
//! across a cancelled read (so a request that arrives in pieces while
//! replies are written is no longer cut) and answers well-formed JSON of the
//! wrong shape with an invalid-request error. Two things it still does not
//! do, and this transport exists for them:
//!
//! - **Backpressure.** rmcp reads and starts every request as it comes. Here
//!   at most [`MAX_IN_FLIGHT`] requests are handled at once, counting each
//!   one until its reply has been written to stdout. Requests past that wait
//!   in a queue of at most [`MAX_WAITING`] requests, and the requests read
//!   and not yet answered hold at most [`MAX_PENDING_BYTES`] bytes, while
//!   notifications go on being read: a client with many slow requests out
//!   can still cancel them, and a cancelled request that is still waiting is
//!   dropped. When the queue is full too, the reader stops reading stdin, so
//!   a client that sends requests without reading replies is held back by
//!   the pipe instead of filling the server's memory.
//! - **Every request is answered, with its id.** rmcp ignores a line that is
//!   not JSON, drops one longer than its limit, and answers a wrong-shaped
//!   message without its id, so the client waiting on that id is left
//!   hanging. Here a line that is not JSON gets a parse error (`-32700`) and
//!   a message of the wrong shape an invalid-request error (`-32600`), each
//!   with the request's id whenever it can be found, even in a line that is
//!   too long, too deeply nested or not UTF-8.
//!
//! Stdin is read by a task of its own that owns the line being assembled,
//! and hands whole messages to the service through a bounded channel, which
//! loses nothing when the service drops a `receive()` it raced. Unknown
//! notifications are ignored, as the protocol asks, and so is any
//! notification that arrives before the session has started (rmcp would end
//! the session on it).

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{ClientRequest, GetMeta, JsonRpcMessage, ProtocolVersion, RequestId};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::io::{StdioReader, StdioWriter, stdio_pipes};
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore, mpsc};

/// Longest request line accepted; longer lines are answered with an error
/// and discarded without being held in memory.
pub const MAX_LINE_BYTES: usize = 128 * 1024 * 1024;

/// Requests handled at once (each counts until its reply is written). Past
/// this, stdin is not read until a reply goes out.
pub const MAX_IN_FLIGHT: usize = 64;

/// Requests waiting for a slot, at most; past that stdin is not read.
pub const MAX_WAITING: usize = 1024;

/// Bytes of requests read and not yet answered, waiting or in flight, at
/// most (a larger request waits until all others are answered); past that
/// stdin is not read.
pub const MAX_PENDING_BYTES: usize = 64 * 1024 * 1024;

/// Messages read ahead of the service loop.
const READ_AHEAD: usize = 16;

/// How much of the head of an unparsable or over-long line is kept and
/// scanned for its id.
const ID_SCAN_BYTES: usize = 64 * 1024;

/// The line buffer is given back to the allocator after a line longer than
/// this, so one large request does not pin its size for the whole session.
const KEPT_LINE_CAPACITY: usize = 1024 * 1024;

type Writer = Arc<Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

pub struct StdioTransport {
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    writer: Writer,
    in_flight: Arc<InFlight>,
    session_started: bool,
}

impl StdioTransport {
    /// Serves on this process's stdin and stdout. Must be called inside the
    /// Tokio runtime: it starts the task that reads stdin.
    pub fn open() -> StdioTransport {
        let (reader, writer): (StdioReader, StdioWriter) = stdio_pipes();
        StdioTransport::over(reader, writer)
    }

    /// Serves on any pair of byte streams.
    pub fn over<R, W>(reader: R, writer: W) -> StdioTransport
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let writer: Writer = Arc::new(Mutex::new(Box::new(writer)));
        let in_flight = Arc::new(InFlight::new(MAX_IN_FLIGHT));
        let (sender, incoming) = mpsc::channel(READ_AHEAD);
        let (to_admit, waiting) = mpsc::channel(MAX_WAITING);
        let queue = Arc::new(Waiting::default());
        let reader = Reader {
            lines: LineReader::new(BufReader::with_capacity(64 * 1024, reader)),
            sender: sender.clone(),
            to_admit,
            queue: queue.clone(),
            writer: writer.clone(),
            in_flight: in_flight.clone(),
        };
        let admitter = Admitter {
            waiting,
            queue,
            sender,
            in_flight: in_flight.clone(),
        };
        tokio::spawn(reader.run());
        tokio::spawn(admitter.run());
        StdioTransport {
            incoming,
            writer,
            in_flight,
            session_started: false,
        }
    }
}

async fn write_line(writer: &Writer, mut bytes: Vec<u8>) -> std::io::Result<()> {
    bytes.push(b'\n');
    let mut out = writer.lock().await;
    out.write_all(&bytes).await?;
    out.flush().await
}

/// The requests being handled, each holding one of the semaphore's permits,
/// and the bytes it took in the queue, until its reply has been written.
struct InFlight {
    slots: Arc<Semaphore>,
    held: std::sync::Mutex<HashMap<RequestId, Vec<Held>>>,
}

/// What one request in flight holds.
struct Held {
    _slot: OwnedSemaphorePermit,
    _bytes: OwnedSemaphorePermit,
}

impl InFlight {
    fn new(limit: usize) -> InFlight {
        InFlight {
            slots: Arc::new(Semaphore::new(limit)),
            held: std::sync::Mutex::new(HashMap::new()),
        }
    }

    /// Waits for a free slot, then counts request `id` as in flight, with
    /// the bytes it holds.
    async fn admit(&self, id: RequestId, bytes: OwnedSemaphorePermit) {
        // The semaphore is never closed, so acquiring cannot fail.
        let Ok(slot) = self.slots.clone().acquire_owned().await else {
            return;
        };
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(id)
            .or_default()
            .push(Held {
                _slot: slot,
                _bytes: bytes,
            });
    }

    /// Request `id` is being handled now.
    fn holds(&self, id: &RequestId) -> bool {
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(id)
    }

    /// Request `id` is answered (or cancelled): its slot is free again.
    fn release(&self, id: &RequestId) {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(permits) = held.get_mut(id) {
            permits.pop();
            if permits.is_empty() {
                held.remove(id);
            }
        }
    }
}

/// Requests read but not yet admitted: whether each has been cancelled, and
/// the bytes they hold.
struct Waiting {
    cancelled: std::sync::Mutex<HashMap<RequestId, bool>>,
    bytes: Arc<Semaphore>,
    /// Held while a request leaves the queue for the service, and while a
    /// cancellation that bypasses the queue is sent: a cancellation never
    /// reaches the service before the request it cancels.
    handing_over: Mutex<()>,
}

impl Default for Waiting {
    fn default() -> Waiting {
        Waiting {
            cancelled: std::sync::Mutex::new(HashMap::new()),
            bytes: Arc::new(Semaphore::new(MAX_PENDING_BYTES)),
            handing_over: Mutex::new(()),
        }
    }
}

impl Waiting {
    fn ids(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, bool>> {
        self.cancelled.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A message in the queue, which keeps the order the client sent.
enum Queued {
    /// A request on its way to a slot, with the bytes it holds.
    Request {
        id: RequestId,
        message: Box<RxJsonRpcMessage<RoleServer>>,
        bytes: OwnedSemaphorePermit,
    },
    /// A notification (not a cancellation), after the requests before it.
    Notification(Box<RxJsonRpcMessage<RoleServer>>),
}

/// The task that reads stdin: frames lines, answers what cannot be parsed,
/// queues requests and notifications for the [`Admitter`] in order, and
/// passes cancellations and responses straight on, so they are never
/// stuck behind requests waiting for a slot.
struct Reader<R> {
    lines: LineReader<R>,
    sender: mpsc::Sender<RxJsonRpcMessage<RoleServer>>,
    to_admit: mpsc::Sender<Queued>,
    queue: Arc<Waiting>,
    writer: Writer,
    in_flight: Arc<InFlight>,
}

/// The task that hands queued requests to the service, each once a slot is
/// free; one cancelled while it waited is dropped (a cancelled request gets
/// no reply).
struct Admitter {
    waiting: mpsc::Receiver<Queued>,
    queue: Arc<Waiting>,
    sender: mpsc::Sender<RxJsonRpcMessage<RoleServer>>,
    in_flight: Arc<InFlight>,
}

impl Admitter {
    async fn run(mut self) {
        while let Some(queued) = self.waiting.recv().await {
            let message = match queued {
                Queued::Notification(message) => message,
                Queued::Request { id, message, bytes } => {
                    self.in_flight.admit(id.clone(), bytes).await;
                    let _handing_over = self.queue.handing_over.lock().await;
                    let cancelled = self.queue.ids().remove(&id).unwrap_or(false);
                    if cancelled {
                        tracing::debug!("dropped request {id:?}, cancelled while it waited");
                        self.in_flight.release(&id);
                        continue;
                    }
                    if self.sender.send(*message).await.is_err() {
                        break;
                    }
                    continue;
                }
            };
            if self.sender.send(*message).await.is_err() {
                break;
            }
        }
    }
}

impl<R: AsyncBufRead + Unpin> Reader<R> {
    async fn run(mut self) {
        loop {
            let line = match self.lines.next_line().await {
                Ok(Some(line)) => line,
                Ok(None) => break,
                Err(e) => {
                    tracing::error!("reading stdin failed: {e}");
                    break;
                }
            };
            let (verdict, size) = match line {
                Line::Oversized(head) => (
                    Verdict::Answer {
                        id: recover_id(head),
                        code: -32600,
                        message: format!(
                            "Invalid Request: message longer than {MAX_LINE_BYTES} bytes was \
                             discarded"
                        ),
                    },
                    0,
                ),
                Line::Complete(bytes) => (judge(bytes), bytes.len()),
            };
            self.lines.shrink_if_large();
            match verdict {
                Verdict::Skip => {}
                Verdict::Answer { id, code, message } => {
                    let reply = json!({"jsonrpc": "2.0", "id": id.unwrap_or(Value::Null),
                                       "error": {"code": code, "message": message}});
                    let bytes = serde_json::to_vec(&reply).unwrap_or_default();
                    if let Err(e) = write_line(&self.writer, bytes).await {
                        tracing::warn!("could not write an error reply: {e}");
                    }
                }
                Verdict::Pass(message) => {
                    if !self.pass(message, size).await {
                        // The service has stopped listening.
                        break;
                    }
                }
            }
        }
    }

    /// Sends a request to the queue, and anything else on to the service.
    /// False when the service is gone.
    async fn pass(&mut self, message: Box<RxJsonRpcMessage<RoleServer>>, size: usize) -> bool {
        match message.as_ref() {
            JsonRpcMessage::Request(request) => {
                let id = request.id.clone();
                if self.queue.ids().contains_key(&id) || self.in_flight.holds(&id) {
                    // Its reply could not be told from the other's (and rmcp
                    // would drop one, keeping its slot for good).
                    let reply = json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": -32600, "message": format!(
                            "Invalid Request: id {id} is in use by a request not yet answered")}});
                    let bytes = serde_json::to_vec(&reply).unwrap_or_default();
                    return write_line(&self.writer, bytes).await.is_ok();
                }
                let share = u32::try_from(size.min(MAX_PENDING_BYTES)).unwrap_or(u32::MAX);
                // The semaphore is never closed.
                let Ok(bytes) = self.queue.bytes.clone().acquire_many_owned(share).await else {
                    return false;
                };
                self.queue.ids().insert(id.clone(), false);
                let queued = Queued::Request { id, message, bytes };
                self.to_admit.send(queued).await.is_ok()
            }
            JsonRpcMessage::Notification(notification) => {
                let rmcp::model::ClientNotification::CancelledNotification(c) =
                    &notification.notification
                else {
                    return self
                        .to_admit
                        .send(Queued::Notification(message))
                        .await
                        .is_ok();
                };
                let _handing_over = self.queue.handing_over.lock().await;
                if let Some(id) = &c.params.request_id {
                    if let Some(cancelled) = self.queue.ids().get_mut(id) {
                        // Still waiting: the admitter drops it.
                        *cancelled = true;
                        return true;
                    }
                    // rmcp drops the reply of a cancelled request.
                    self.in_flight.release(id);
                }
                self.sender.send(*message).await.is_ok()
            }
            // Responses to the server's own requests: a handler may be
            // waiting for one while holding a slot.
            _ => self.sender.send(*message).await.is_ok(),
        }
    }
}

/// What to do with one line.
enum Verdict {
    Skip,
    Answer {
        id: Option<Value>,
        code: i64,
        message: String,
    },
    Pass(Box<RxJsonRpcMessage<RoleServer>>),
}

/// Parses one complete line, or says how to answer it.
fn judge(line: &[u8]) -> Verdict {
    let line = trim_line(line);
    if line.is_empty() {
        return Verdict::Skip;
    }
    let error = match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
        Ok(message) => return Verdict::Pass(Box::new(message)),
        Err(e) => e,
    };
    match serde_json::from_slice::<Value>(line) {
        // Not JSON (or not UTF-8, or nested too deeply to parse): the id may
        // still be readable in the line's head.
        Err(e) => Verdict::Answer {
            id: recover_id(line),
            code: -32700,
            message: format!("Parse error: {e}"),
        },
        Ok(value) => match value.get("id").cloned() {
            // A notification we do not understand: ignore it.
            None if value.get("method").is_some() => {
                tracing::debug!("ignoring an unknown notification: {error}");
                Verdict::Skip
            }
            id => Verdict::Answer {
                id,
                code: -32600,
                message: format!("Invalid Request: {error}"),
            },
        },
    }
}

/// A line from stdin: whole, or (over [`MAX_LINE_BYTES`]) only its head.
enum Line<'a> {
    Complete(&'a [u8]),
    Oversized(&'a [u8]),
}

/// Splits a byte stream into lines. The partial line lives here, in the
/// reader task, never in a future that can be dropped.
struct LineReader<R> {
    reader: R,
    line: Vec<u8>,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    fn new(reader: R) -> LineReader<R> {
        LineReader {
            reader,
            line: Vec::with_capacity(64 * 1024),
        }
    }

    /// The next line, without its newline handling (see [`trim_line`]).
    /// Ok(None) at the end of input. An over-long line is read to its end
    /// but only its head is kept.
    async fn next_line(&mut self) -> std::io::Result<Option<Line<'_>>> {
        self.line.clear();
        let mut oversized = false;
        let mut any = false;
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                if !any {
                    return Ok(None);
                }
                break;
            }
            any = true;
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |i| i + 1);
            if !oversized && self.line.len() + take > MAX_LINE_BYTES {
                oversized = true;
                self.line.truncate(ID_SCAN_BYTES);
            }
            let keep = if oversized {
                take.min(ID_SCAN_BYTES.saturating_sub(self.line.len()))
            } else {
                take
            };
            self.line.extend_from_slice(&available[..keep]);
            self.reader.consume(take);
            if newline.is_some() {
                break;
            }
        }
        Ok(Some(if oversized {
            Line::Oversized(&self.line)
        } else {
            Line::Complete(&self.line)
        }))
    }

    fn shrink_if_large(&mut self) {
        if self.line.capacity() > KEPT_LINE_CAPACITY {
            self.line = Vec::with_capacity(64 * 1024);
        }
    }
}

/// Whether a request (arriving before the session started) starts it, as
/// rmcp decides: `initialize` does, and so does any request other than ping
/// and `server/discover` that carries the inline protocol metadata of the
/// 2026-07-28 protocol.
fn starts_session(request: &ClientRequest) -> bool {
    match request {
        ClientRequest::InitializeRequest(_) => true,
        ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => false,
        other => {
            let meta = other.get_meta();
            meta.protocol_version().is_some()
                && meta
                    .missing_required_keys(&ProtocolVersion::V_2026_07_28)
                    .is_empty()
        }
    }
}

impl Transport<RoleServer> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        let in_flight = self.in_flight.clone();
        let answers = match &item {
            JsonRpcMessage::Response(response) => Some(response.id.clone()),
            JsonRpcMessage::Error(error) => error.id.clone(),
            _ => None,
        };
        let bytes = super::json::encode(item);
        async move {
            let written = match bytes {
                Ok(bytes) => write_line(&writer, bytes).await,
                Err(e) => Err(std::io::Error::other(e)),
            };
            // Only now, with the reply out of memory, may another request in.
            if let Some(id) = answers {
                in_flight.release(&id);
            }
            written
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // The only await: dropping it loses nothing (see the module doc).
            let message = self.incoming.recv().await?;
            if !self.session_started {
                match &message {
                    JsonRpcMessage::Notification(n) => {
                        tracing::debug!(
                            "dropping a notification that arrived before the session started: {:?}",
                            n.notification
                        );
                        continue;
                    }
                    JsonRpcMessage::Request(r) if starts_session(&r.request) => {
                        self.session_started = true;
                    }
                    _ => {}
                }
            }
            return Some(message);
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.flush().await
    }
}

/// Strips the newline, a carriage return and a UTF-8 byte-order mark.
fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    line.trim_ascii()
}

/// The `id` of a JSON-RPC message that could not be parsed, read from the
/// head of its line: the top-level object's `"id"` member, if it comes
/// within the first [`ID_SCAN_BYTES`] bytes and is a number or a string.
/// Other members are skipped without being parsed, so a value that is not
/// UTF-8, too deep or cut off does not stop the scan.
pub fn recover_id(line: &[u8]) -> Option<Value> {
    let line = trim_line(&line[..line.len().min(ID_SCAN_BYTES)]);
    let mut scan = Scan { bytes: line, at: 0 };
    scan.expect(b'{')?;
    loop {
        let key = scan.string()?;
        scan.expect(b':')?;
        if key == b"\"id\"" {
            return scan.id_value();
        }
        scan.skip_value()?;
        scan.expect(b',')?;
    }
}

/// A cursor over the bytes of a line, for [`recover_id`].
struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    fn skip_space(&mut self) {
        while self
            .bytes
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        {
            self.at += 1;
        }
    }

    /// Skips blanks, then consumes `byte`.
    fn expect(&mut self, byte: u8) -> Option<()> {
        self.skip_space();
        (self.bytes.get(self.at) == Some(&byte)).then(|| self.at += 1)
    }

    /// A string token, quotes included, escapes left as written.
    fn string(&mut self) -> Option<&'a [u8]> {
        self.skip_space();
        let start = self.at;
        if self.bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        self.at += 1;
        loop {
            match self.bytes.get(self.at)? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return Some(&self.bytes[start..self.at]);
                }
                _ => self.at += 1,
            }
        }
    }

    /// Skips one value of any kind, nesting counted, not recursed.
    fn skip_value(&mut self) -> Option<()> {
        self.skip_space();
        let mut depth = 0usize;
        loop {
            match *self.bytes.get(self.at)? {
                b'"' => {
                    self.string()?;
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.at += 1;
                }
                b'}' | b']' if depth > 0 => {
                    depth -= 1;
                    self.at += 1;
                }
                // The end of the enclosing object: the value was a scalar.
                b',' | b'}' | b']' => return Some(()),
                _ => self.at += 1,
            }
            if depth == 0 {
                self.skip_space();
                if matches!(self.bytes.get(self.at), Some(b',' | b'}' | b']')) {
                    return Some(());
                }
            }
        }
    }

    /// A request id: a JSON number or string (validated by serde_json).
    fn id_value(&mut self) -> Option<Value> {
        self.skip_space();
        let raw = if self.bytes.get(self.at) == Some(&b'"') {
            self.string()?
        } else {
            let start = self.at;
            while self
                .bytes
                .get(self.at)
                .is_some_and(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
            {
                self.at += 1;
            }
            &self.bytes[start..self.at]
        };
        match serde_json::from_slice::<Value>(raw).ok()? {
            id @ (Value::Number(_) | Value::String(_)) => Some(id),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_recovered_from_lines_that_do_not_parse() {
        let cases: &[(&[u8], Option<Value>)] = &[
            (
                br#"{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":"#,
                Some(json!(7)),
            ),
            (
                br#"{"method":"x","params":{"p":"\xff\xfe"},"id":"abc"}"#,
                Some(json!("abc")),
            ),
            (
                br#" {"params":[[[[{"k":"v,}]"}]]]],"id":-3}"#,
                Some(json!(-3)),
            ),
            (br#"{"params":{"id":5},"id":6}"#, Some(json!(6))),
            (br#"{"a":"quote \" inside","id":8}"#, Some(json!(8))),
            (
                br#"{"a":true,"b":null,"c":1.5e3,"id":"9"}"#,
                Some(json!("9")),
            ),
            (br#"{"id":null}"#, None),
            (br#"{"id":{"x":1}}"#, None),
            (br#"{"method":"x"}"#, None),
            (b"not json at all", None),
            (br#"["id",1]"#, None),
            (br#"{"id":"\xff"}"#, None),
        ];
        for (line, want) in cases {
            assert_eq!(recover_id(line), *want, "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn a_deeply_nested_line_still_gives_its_id() {
        let mut line = br#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":"#.to_vec();
        line.extend(std::iter::repeat_n(b'[', 100_000));
        line.extend(std::iter::repeat_n(b']', 100_000));
        line.push(b'}');
        assert!(serde_json::from_slice::<Value>(&line).is_err());
        assert_eq!(recover_id(&line), Some(json!(41)));
        // An id after a long enough value is out of reach: answered with null.
        let mut late = br#"{"params":""#.to_vec();
        late.extend(std::iter::repeat_n(b'x', ID_SCAN_BYTES));
        late.extend(br#"","id":1}"#);
        assert_eq!(recover_id(&late), None);
    }
}
