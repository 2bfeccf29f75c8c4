//! Newline-delimited JSON-RPC over stdin/stdout, answering bad input.
//!
//! rmcp's own stdio transport silently drops a line that is not JSON. We
//! answer it with a JSON-RPC parse error (`-32700`, id null) and a JSON
//! message of the wrong shape with an invalid-request error (`-32600`), so a
//! client or a person typing into the pipe learns what went wrong, and the
//! session carries on either way. Unknown notifications are ignored, as the
//! protocol asks.

use std::sync::Arc;

use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::io::{StdioReader, StdioWriter, stdio_pipes};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// Longest request line accepted; longer lines are answered with an error
/// and discarded without being held in memory.
pub const MAX_LINE_BYTES: usize = 128 * 1024 * 1024;

pub struct StdioTransport {
    reader: BufReader<StdioReader>,
    writer: Arc<Mutex<StdioWriter>>,
    line: Vec<u8>,
}

impl StdioTransport {
    /// Must be called inside the Tokio runtime.
    pub fn open() -> StdioTransport {
        let (reader, writer) = stdio_pipes();
        StdioTransport {
            reader: BufReader::with_capacity(64 * 1024, reader),
            writer: Arc::new(Mutex::new(writer)),
            line: Vec::with_capacity(64 * 1024),
        }
    }

    async fn write_line(writer: &Mutex<StdioWriter>, mut bytes: Vec<u8>) -> std::io::Result<()> {
        bytes.push(b'\n');
        let mut out = writer.lock().await;
        out.write_all(&bytes).await?;
        out.flush().await
    }

    async fn send_error(&self, id: Value, code: i64, message: String) {
        let reply =
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        let bytes = serde_json::to_vec(&reply).unwrap_or_default();
        if let Err(e) = Self::write_line(&self.writer, bytes).await {
            tracing::warn!("could not write an error reply: {e}");
        }
    }

    /// Reads one line into `self.line`. Ok(false) at end of input. A line
    /// over the limit is consumed, answered, and reported as empty.
    async fn read_line(&mut self) -> std::io::Result<bool> {
        self.line.clear();
        let mut oversized = false;
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                return Ok(!self.line.is_empty() || oversized);
            }
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |i| i + 1);
            if !oversized {
                if self.line.len() + take > MAX_LINE_BYTES {
                    oversized = true;
                    self.line.clear();
                } else {
                    self.line.extend_from_slice(&available[..take]);
                }
            }
            self.reader.consume(take);
            if newline.is_some() {
                break;
            }
        }
        if oversized {
            self.line.clear();
            self.send_error(
                Value::Null,
                -32600,
                format!(
                    "Invalid Request: message longer than {MAX_LINE_BYTES} bytes was discarded"
                ),
            )
            .await;
        }
        Ok(true)
    }
}

impl Transport<RoleServer> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        let bytes = serde_json::to_vec(&item);
        async move {
            let bytes = bytes.map_err(std::io::Error::other)?;
            Self::write_line(&writer, bytes).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_line().await {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    tracing::error!("reading stdin failed: {e}");
                    return None;
                }
            }
            let line = trim_line(&self.line);
            if line.is_empty() {
                continue;
            }
            let error = match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
                Ok(message) => return Some(message),
                Err(e) => e,
            };
            match serde_json::from_slice::<Value>(line) {
                Err(e) => {
                    self.send_error(Value::Null, -32700, format!("Parse error: {e}"))
                        .await;
                }
                Ok(value) => {
                    let id = value.get("id").cloned();
                    match id {
                        // A notification we do not understand: ignore it.
                        None if value.get("method").is_some() => {
                            tracing::debug!("ignoring an unknown notification: {error}");
                        }
                        id => {
                            let id = id.unwrap_or(Value::Null);
                            self.send_error(id, -32600, format!("Invalid Request: {error}"))
                                .await;
                        }
                    }
                }
            }
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
