//! The MCP surface through the real binary: initialize, tools/list (flat
//! schemas, titles, annotations), argument errors, protocol faults, and that
//! the server survives every bad input.

mod common;

use common::{RawSession, Scratch, Server, all_text};
use serde_json::{Value, json};

/// Keywords a published schema may contain (docs/tools.md).
const ALLOWED: &[&str] = &[
    "type",
    "properties",
    "required",
    "description",
    "items",
    "minimum",
    "minItems",
    "default",
    "enum",
];

/// Walks a schema node; fails on any keyword outside the portable subset
/// and on any property without a description.
fn assert_portable(tool: &str, node: &Value, at: &str) {
    let obj = node
        .as_object()
        .unwrap_or_else(|| panic!("{tool} {at}: not an object"));
    for (key, value) in obj {
        assert!(
            ALLOWED.contains(&key.as_str()),
            "{tool} {at}: forbidden keyword {key}"
        );
        if key == "type" {
            assert!(
                value.is_string(),
                "{tool} {at}: type must be one string, got {value}"
            );
        }
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            let desc = prop
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("");
            assert!(
                !desc.trim().is_empty(),
                "{tool}: parameter {name} has no description"
            );
            assert_portable(tool, prop, &format!("{at}/{name}"));
        }
    }
    if let Some(items) = obj.get("items") {
        assert_portable(tool, items, &format!("{at}/items"));
    }
}

#[tokio::test]
async fn initialize_reports_name_version_and_instructions() {
    let dir = Scratch::new();
    let server = Server::start(&[&dir.path], &[]).await;
    let info = server
        .client
        .peer_info()
        .expect("server info after initialize");
    let implementation = info.server_info.clone().expect("serverInfo");
    assert_eq!(implementation.name, "rootbound");
    assert_eq!(implementation.version, env!("CARGO_PKG_VERSION"));
    let instructions = info.instructions.clone().unwrap_or_default();
    assert!(
        instructions.contains(&dir.path.display().to_string()),
        "{instructions}"
    );
    assert!(info.capabilities.tools.is_some());
}

#[tokio::test]
async fn every_tool_has_a_flat_documented_schema_title_and_annotations() {
    let dir = Scratch::new();
    let server = Server::start(&[&dir.path], &[]).await;
    let tools = server.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for expected in [
        "read_file",
        "write_file",
        "replace",
        "list_directory",
        "glob",
        "search_file_content",
        "read_many_files",
        "file_read",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    for tool in &tools {
        let schema = Value::Object(tool.input_schema.as_ref().clone());
        assert_eq!(schema["type"], "object", "{}", tool.name);
        assert_portable(&tool.name, &schema, "");
        // Every required parameter is a declared property.
        for req in schema["required"].as_array().into_iter().flatten() {
            let name = req.as_str().unwrap();
            assert!(
                schema["properties"].get(name).is_some(),
                "{}: {name}",
                tool.name
            );
        }
        assert!(
            tool.title.as_deref().is_some_and(|t| !t.is_empty()),
            "{} has no title",
            tool.name
        );
        assert!(
            tool.description.as_deref().is_some_and(|d| d.len() > 40),
            "{}",
            tool.name
        );
        let ann = tool
            .annotations
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no annotations", tool.name));
        assert_eq!(ann.open_world_hint, Some(false), "{}", tool.name);
        // bash too: this server's bash mode is the default, read-only
        // (`bash_annotations_follow_the_mode` tries the others).
        let read_only = matches!(
            tool.name.as_ref(),
            "read_file"
                | "list_directory"
                | "glob"
                | "search_file_content"
                | "read_many_files"
                | "file_read"
                | "bash"
        );
        assert_eq!(ann.read_only_hint, Some(read_only), "{}", tool.name);
        if matches!(tool.name.as_ref(), "write_file" | "replace") {
            assert_eq!(ann.destructive_hint, Some(true), "{}", tool.name);
        }
    }
}

#[tokio::test]
async fn read_file_schema_documents_defaults_and_minimums() {
    let dir = Scratch::new();
    dir.file("a.txt", "hello\n");
    let server = Server::start(&[&dir.path], &[]).await;
    let tools = server.client.list_all_tools().await.unwrap();
    let read = tools.iter().find(|t| t.name == "read_file").unwrap();
    let schema = Value::Object(read.input_schema.as_ref().clone());
    assert_eq!(schema["required"], json!(["path"]));
    assert_eq!(schema["properties"]["offset"]["default"], 0);
    assert_eq!(schema["properties"]["limit"]["default"], 2000);
    // As in Gemini CLI, offset and limit carry no `minimum`: read_file's own
    // messages answer a bad value, in Gemini CLI's words.
    assert!(schema["properties"]["offset"].get("minimum").is_none());
    assert_eq!(
        server
            .err_text("read_file", json!({"path": "a.txt", "offset": -1}))
            .await,
        "Offset must be a non-negative number"
    );
    assert_eq!(
        server
            .err_text("read_file", json!({"path": "a.txt", "limit": 0}))
            .await,
        "Limit must be a positive number"
    );
    // Aliases are accepted but not published.
    assert!(schema["properties"].get("file_path").is_none());
    assert!(schema["properties"].get("start_line").is_none());
    // The newer range has minimums, checked by the validator.
    assert_eq!(
        server
            .err_text("read_file", json!({"path": "a.txt", "start_line": 0}))
            .await,
        "params/start_line must be >= 1"
    );
}

#[tokio::test]
async fn argument_errors_are_tool_errors_in_gemini_cli_words() {
    let dir = Scratch::new();
    dir.file("a.txt", "hello\n");
    let server = Server::start(&[&dir.path], &[]).await;
    assert_eq!(
        server.err_text("read_file", json!({})).await,
        "params must have required property 'path'"
    );
    assert_eq!(
        server.err_text("read_file", json!({"path": 42})).await,
        "params/path must be string"
    );
    assert_eq!(
        server
            .err_text("read_file", json!({"path": "a.txt", "offset": "3"}))
            .await,
        "params/offset must be integer"
    );
    assert_eq!(
        server
            .err_text("read_file", json!({"path": "a.txt", "limit": 2.5}))
            .await,
        "params/limit must be integer"
    );
    assert_eq!(
        server
            .err_text("file_read", json!({"path": ["a.txt"]}))
            .await,
        "params/path must be string"
    );
    assert_eq!(
        server
            .err_text("read_file", json!({"path": "a.txt", "start_line": "x"}))
            .await,
        "params/start_line must be integer"
    );
    // Unknown extra parameters are ignored; integral floats are integers.
    assert_eq!(
        server
            .ok_text(
                "read_file",
                json!({"path": "a.txt", "bogus": true, "limit": 5.0})
            )
            .await,
        "hello\n"
    );
}

#[tokio::test]
async fn unknown_tool_is_a_json_rpc_error_listing_the_tools() {
    let dir = Scratch::new();
    let server = Server::start(&[&dir.path], &[]).await;
    let err = server
        .try_call("no_such_tool", json!({}))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("no_such_tool"), "{text}");
    assert!(text.contains("read_file"), "{text}");
    match err {
        rmcp::service::ServiceError::McpError(data) => assert_eq!(data.code.0, -32602),
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
    server.assert_alive().await;
}

#[tokio::test]
async fn malformed_input_gets_error_replies_and_the_server_keeps_going() {
    let dir = Scratch::new();
    dir.file("a.txt", "alive\n");
    let mut raw = RawSession::start(&dir.path).await;

    raw.send_line("{this is not json").await;
    let reply = raw.read_reply().await;
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert!(reply["id"].is_null());

    raw.send_line(r#"{"jsonrpc":"2.0","id":7,"shape":"wrong"}"#)
        .await;
    let reply = raw.read_reply().await;
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(reply["id"], 7);

    let reply = raw.request(8, "no/such/method", json!({})).await;
    assert_eq!(reply["error"]["code"], -32601, "{reply}");

    // Binary garbage, a huge string argument, and a wrong-typed argument.
    raw.send_bytes(b"\x00\xff\xfe garbage \x01\n").await;
    let reply = raw.read_reply().await;
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    let huge = "x".repeat(3_000_000);
    let reply = raw
        .request(
            9,
            "tools/call",
            json!({"name": "read_file", "arguments": {"path": huge}}),
        )
        .await;
    assert_eq!(
        reply["result"]["isError"],
        true,
        "{}",
        &reply.to_string()[..200]
    );
    let reply = raw
        .request(
            10,
            "tools/call",
            json!({"name": "read_file", "arguments": {"path": {"x": 1}}}),
        )
        .await;
    assert_eq!(
        reply["result"]["content"][0]["text"],
        "params/path must be string"
    );
    let reply = raw
        .request(
            11,
            "tools/call",
            json!({"name": "read_file", "arguments": "not an object"}),
        )
        .await;
    assert!(
        reply.get("error").is_some() || reply["result"]["isError"] == true,
        "{reply}"
    );

    raw.assert_alive(12).await;
    let reply = raw
        .request(
            13,
            "tools/call",
            json!({"name": "read_file", "arguments": {"path": "a.txt"}}),
        )
        .await;
    assert_eq!(reply["result"]["content"][0]["text"], "alive\n");
    assert!(raw.is_running());
}

#[tokio::test]
async fn concurrent_calls_are_all_answered() {
    let dir = Scratch::new();
    for i in 0..20 {
        dir.file(&format!("f{i}.txt"), format!("file {i}\n"));
    }
    let server = Server::start(&[&dir.path], &[]).await;
    let calls = (0..20).map(|i| {
        let server = &server;
        async move {
            let text = server
                .ok_text("read_file", json!({"path": format!("f{i}.txt")}))
                .await;
            assert_eq!(text, format!("file {i}\n"));
        }
    });
    futures::future::join_all(calls).await;
}

#[tokio::test]
async fn disabled_tools_are_not_offered() {
    let dir = Scratch::new();
    let server = Server::start(&[&dir.path], &["--disable-tool", "file_read"]).await;
    let tools = server.client.list_all_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.name != "file_read"));
    let err = server
        .try_call("file_read", json!({"path": "x"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("file_read"));
    let result = server.call("read_file", json!({"path": "nope"})).await;
    assert!(all_text(&result).starts_with("File not found"));
}

/// bash's annotations say what it may do in the server's configuration:
/// read-only where its mode only reads (clients may run it unasked), and
/// destructive where commands may write (clients hold it for approval, as
/// they hold write_file).
#[tokio::test]
async fn bash_annotations_follow_the_mode() {
    let dir = common::Scratch::new();
    for (args, read_only) in [
        (vec!["--bash-mode", "read-only"], true),
        (vec!["--bash-mode", "allowlist"], false),
        (vec!["--bash-mode", "workspace-write"], false),
        // The old name of workspace-write.
        (vec!["--bash-mode", "unrestricted"], false),
        (vec!["--read-only"], true),
    ] {
        let server = common::Server::start(&[&dir.path], &args).await;
        let tools = server.client.list_all_tools().await.unwrap();
        let bash = tools
            .iter()
            .find(|t| t.name == "bash")
            .expect("bash offered");
        let annotations = bash.annotations.clone().expect("annotations");
        assert_eq!(annotations.read_only_hint, Some(read_only), "{args:?}");
        assert_eq!(annotations.destructive_hint, Some(!read_only), "{args:?}");
    }
}
