//! Long work through the real binary: progress notifications for a search
//! that carries a progress token, and a cancelled search that leaves the
//! session working.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{BIN, Scratch};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RoleClient};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::json;

/// A client that records the progress notifications it receives.
#[derive(Clone, Default)]
struct Recorder {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }
}

/// A tree with many files, so a search visits enough of them to report.
fn tree() -> Scratch {
    let dir = Scratch::new();
    let text = "alpha beta gamma delta\n".repeat(200);
    for i in 0..400 {
        dir.file(&format!("d{}/f{i:03}.txt", i % 10), &text);
    }
    dir
}

fn search_request(args: serde_json::Value) -> ClientRequest {
    let serde_json::Value::Object(args) = args else {
        unreachable!()
    };
    ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("search_file_content").with_arguments(args),
    ))
}

#[tokio::test]
async fn a_search_reports_progress_against_the_request_token() {
    let dir = tree();
    let recorder = Recorder::default();
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.arg("--root").arg(&dir.path);
    let client = recorder
        .clone()
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap();
    let handle = client
        .send_cancellable_request(
            search_request(json!({"pattern": "zzz_absent", "names_only": true})),
            PeerRequestOptions::with_timeout(Duration::from_secs(60)),
        )
        .await
        .unwrap();
    let token = handle.progress_token.clone();
    let reply = handle.await_response().await.unwrap();
    assert!(
        format!("{reply:?}").contains("No matches found"),
        "{reply:?}"
    );
    // Notifications may trail the reply by a moment.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let seen = recorder.progress.lock().unwrap().clone();
    assert!(!seen.is_empty(), "no progress notification");
    for p in &seen {
        assert_eq!(p.progress_token, token);
        assert!(p.progress > 0.0);
        assert!(
            p.message
                .as_deref()
                .unwrap_or("")
                .contains("files searched"),
            "{p:?}"
        );
    }
}

#[tokio::test]
async fn a_cancelled_search_leaves_the_session_working() {
    let dir = tree();
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.arg("--root").arg(&dir.path);
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    for _ in 0..5 {
        let handle = client
            .send_cancellable_request(
                search_request(json!({"pattern": "a.*b.*c", "total_max_matches": 1000000})),
                PeerRequestOptions::no_options(),
            )
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        handle.cancel(Some("test".into())).await.unwrap();
    }
    // The server still answers, promptly and correctly.
    let params = CallToolRequestParams::new("search_file_content").with_arguments(
        json!({"pattern": "gamma", "path": "d0/f000.txt", "total_max_matches": 1})
            .as_object()
            .cloned()
            .unwrap(),
    );
    let result = tokio::time::timeout(Duration::from_secs(10), client.call_tool(params))
        .await
        .expect("answered after the cancellations")
        .unwrap();
    assert!(common::all_text(&result).starts_with("Found 1 match for pattern \"gamma\""));
}
