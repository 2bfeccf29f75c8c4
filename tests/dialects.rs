//! `--dialect gemini-0.24|gemini-current` (docs/tools.md): what each dialect
//! advertises and says, and that every spelling works in both.

mod common;

use common::{Scratch, Server, all_text};
use serde_json::{Value, json};

const CURRENT: &[&str] = &["--dialect", "gemini-current"];

async fn schemas(server: &Server) -> Vec<(String, Value)> {
    server
        .client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| {
            (
                t.name.to_string(),
                Value::Object(t.input_schema.as_ref().clone()),
            )
        })
        .collect()
}

fn props(schema: &Value) -> Vec<String> {
    let mut names: Vec<String> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn gemini_current_advertises_newer_gemini_clis_tools() {
    let dir = Scratch::new();
    let server = Server::start(&[&dir.path], CURRENT).await;
    let tools = schemas(&server).await;
    let get = |name: &str| {
        tools
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name} not listed"))
            .1
            .clone()
    };
    assert!(tools.iter().all(|(n, _)| n != "search_file_content"));
    let read = get("read_file");
    assert_eq!(props(&read), ["end_line", "file_path", "start_line"]);
    assert_eq!(read["required"], json!(["file_path"]));
    assert_eq!(read["properties"]["start_line"]["minimum"], 1);
    let replace = get("replace");
    assert_eq!(
        props(&replace),
        [
            "allow_multiple",
            "file_path",
            "instruction",
            "new_string",
            "old_string"
        ]
    );
    assert_eq!(
        replace["required"],
        json!(["file_path", "instruction", "old_string", "new_string"])
    );
    let grep = get("grep_search");
    assert_eq!(
        props(&grep),
        [
            "after",
            "before",
            "case_sensitive",
            "context",
            "dir_path",
            "exclude_pattern",
            "fixed_strings",
            "include_pattern",
            "max_matches_per_file",
            "names_only",
            "no_ignore",
            "pattern",
            "total_max_matches"
        ]
    );
    let list = get("list_directory");
    assert_eq!(
        props(&list),
        ["dir_path", "file_filtering_options", "ignore"]
    );
    assert_eq!(list["required"], json!(["dir_path"]));
    assert_eq!(
        props(&list["properties"]["file_filtering_options"]),
        ["respect_gemini_ignore", "respect_git_ignore"]
    );
    assert!(props(&get("glob")).contains(&"dir_path".to_string()));
    let many = get("read_many_files");
    assert_eq!(many["required"], json!(["include"]));
    assert!(props(&many).contains(&"file_filtering_options".to_string()));
    // The default dialect keeps docs/tools.md's names.
    let old = Server::start(&[&dir.path], &[]).await;
    let old_tools = schemas(&old).await;
    assert!(old_tools.iter().any(|(n, _)| n == "search_file_content"));
    assert!(old_tools.iter().all(|(n, _)| n != "grep_search"));
}

#[tokio::test]
async fn every_spelling_works_in_both_dialects() {
    let dir = Scratch::new();
    dir.file("a.txt", "one\ntwo\nthree\n");
    dir.file("r.txt", "x x x\n");
    for extra in [&[][..], CURRENT] {
        let server = Server::start(&[&dir.path], extra).await;
        let a = dir.path.join("a.txt").display().to_string();
        // read_file: path, file_path, absolute_path; offset/limit and start_line/end_line.
        for args in [
            json!({"path": "a.txt", "offset": 1, "limit": 1}),
            json!({"file_path": "a.txt", "start_line": 2, "end_line": 2}),
            json!({"absolute_path": a, "offset": 1, "limit": 1}),
        ] {
            let text = server.ok_text("read_file", args.clone()).await;
            assert!(text.ends_with("\ntwo"), "{extra:?} {args}: {text}");
        }
        // search under both names, with both spellings of its filters.
        for name in ["search_file_content", "grep_search"] {
            let text = server
                .ok_text(
                    name,
                    json!({"pattern": "two", "dir_path": ".", "include_pattern": "*.txt", "context": 0}),
                )
                .await;
            assert!(
                text.contains("File: a.txt\nL2: two"),
                "{extra:?} {name}: {text}"
            );
        }
        // replace: expected_replacements and allow_multiple.
        let text = server
            .ok_text(
                "replace",
                json!({"file_path": "r.txt", "old_string": "x", "new_string": "y", "allow_multiple": true, "instruction": "all of them"}),
            )
            .await;
        assert!(text.starts_with("Successfully modified file"), "{text}");
        let text = server
            .ok_text(
                "replace",
                json!({"file_path": "r.txt", "old_string": "y", "new_string": "x", "expected_replacements": 3, "instruction": "back"}),
            )
            .await;
        assert!(text.contains("(3 replacements)"), "{text}");
        // list_directory and glob: path and dir_path.
        for key in ["path", "dir_path"] {
            let text = server.ok_text("list_directory", json!({ key: "." })).await;
            assert!(text.contains("a.txt"), "{text}");
            let text = server
                .ok_text("glob", json!({"pattern": "*.txt", key: "." }))
                .await;
            assert!(text.starts_with("Found 2 file(s)"), "{text}");
        }
        // read_many_files: paths and include.
        for key in ["paths", "include"] {
            let text = all_text(
                &server
                    .call("read_many_files", json!({ key: ["a.txt"] }))
                    .await,
            );
            assert!(text.contains("one\ntwo\nthree"), "{text}");
        }
    }
}

#[tokio::test]
async fn gemini_current_speaks_newer_gemini_clis_messages() {
    let dir = Scratch::new();
    dir.file("r.txt", "foo\nbar\nfoo\n");
    dir.file("docs/a.md", "12345\n");
    dir.dir("docs/sub");
    let root = dir.path.display().to_string();
    let server = Server::start(&[&dir.path], CURRENT).await;
    let r = dir.path.join("r.txt").display().to_string();
    assert_eq!(
        server
            .err_text(
                "replace",
                json!({"file_path": "r.txt", "instruction": "i", "old_string": "foo", "new_string": "baz"}),
            )
            .await,
        format!(
            "Failed to edit, Expected 1 occurrence but found 2 for old_string in file: {r}. If you intended to replace multiple occurrences, set 'allow_multiple' to true."
        )
    );
    let text = server
        .err_text(
            "replace",
            json!({"file_path": "r.txt", "instruction": "i", "old_string": "qux", "new_string": "baz"}),
        )
        .await;
    assert!(
        text.starts_with(&format!(
            "Could not find an exact match for 'old_string' in '{r}'. If previous edits modified the file"
        )),
        "{text}"
    );
    assert_eq!(
        server
            .err_text(
                "replace",
                json!({"file_path": "r.txt", "old_string": "foo", "new_string": "baz", "allow_multiple": true}),
            )
            .await,
        "params must have required property 'instruction'"
    );
    for (tool, args) in [
        ("read_file", json!({"file_path": "/etc/hostname"})),
        ("list_directory", json!({"dir_path": "/etc"})),
        ("glob", json!({"pattern": "*", "dir_path": "/etc"})),
        ("grep_search", json!({"pattern": "x", "dir_path": "/etc"})),
    ] {
        let text = server.err_text(tool, args).await;
        assert!(
            text.starts_with("Path not in workspace: Attempted path \"/etc")
                && text.ends_with(&format!(
                    "\" resolves outside the allowed workspace directories: {root}"
                )),
            "{tool}: {text}"
        );
    }
    // list_directory shows file sizes.
    assert_eq!(
        server
            .ok_text("list_directory", json!({"dir_path": "docs"}))
            .await,
        format!("Directory listing for {root}/docs:\n[DIR] sub\na.md (6 bytes)")
    );
    // Without a range, a cut read names start_line and end_line.
    dir.file("long.txt", "x\n".repeat(2100));
    let text = server
        .ok_text("read_file", json!({"file_path": "long.txt"}))
        .await;
    assert!(
        text.contains("use the 'start_line' and 'end_line' parameters")
            && text.contains("use start_line: 2001."),
        "{text}"
    );
}

#[tokio::test]
async fn gemini_current_adds_context_around_a_few_matches() {
    let dir = Scratch::new();
    let body: String = (1..=120).map(|i| format!("line {i}\n")).collect();
    dir.file("f.txt", body.replace("line 60\n", "line 60 needle\n"));
    let current = Server::start(&[&dir.path], CURRENT).await;
    let text = current
        .ok_text("grep_search", json!({"pattern": "needle"}))
        .await;
    // One match: 50 lines either side.
    assert!(text.starts_with("Found 1 match for pattern"), "{text}");
    assert!(
        text.contains("\nL10- line 10\n") && text.contains("\nL110- line 110\n---"),
        "{text}"
    );
    assert!(!text.contains("L9- ") && !text.contains("L111- "), "{text}");
    assert!(text.contains("\nL60: line 60 needle\n"), "{text}");
    // Asking for context (even 0) turns it off, and gemini-0.24 never adds it.
    let text = current
        .ok_text("grep_search", json!({"pattern": "needle", "context": 0}))
        .await;
    assert!(
        text.ends_with("File: f.txt\nL60: line 60 needle\n---"),
        "{text}"
    );
    let old = Server::start(&[&dir.path], &[]).await;
    let text = old
        .ok_text("search_file_content", json!({"pattern": "needle"}))
        .await;
    assert!(
        text.ends_with("File: f.txt\nL60: line 60 needle\n---"),
        "{text}"
    );
}

#[tokio::test]
async fn tools_can_be_disabled_by_either_name() {
    let dir = Scratch::new();
    let server = Server::start(
        &[&dir.path],
        &[
            "--dialect",
            "gemini-current",
            "--disable-tool",
            "search_file_content",
        ],
    )
    .await;
    assert!(
        schemas(&server)
            .await
            .iter()
            .all(|(n, _)| n != "grep_search")
    );
    let server = Server::start(&[&dir.path], &["--disable-tool", "grep_search"]).await;
    assert!(
        schemas(&server)
            .await
            .iter()
            .all(|(n, _)| n != "search_file_content")
    );
}
