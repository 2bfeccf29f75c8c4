//! file_read through the real binary (docs/tools.md).

mod common;

use common::{Scratch, Server};
use serde_json::json;

#[tokio::test]
async fn header_and_right_aligned_line_numbers() {
    let dir = Scratch::new();
    let text: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    dir.file("src/lib.rs", &text);
    let server = Server::start(&[&dir.path], &[]).await;
    let out = server
        .ok_text(
            "file_read",
            json!({"path": "src/lib.rs", "start_line": 8, "end_line": 11}),
        )
        .await;
    assert_eq!(
        out,
        "src/lib.rs (lines 8-11 of 12)\n 8\tline 8\n 9\tline 9\n10\tline 10\n11\tline 11"
    );
    let whole = server
        .ok_text("file_read", json!({"path": "src/lib.rs"}))
        .await;
    assert!(
        whole.starts_with("src/lib.rs (lines 1-12 of 12)\n 1\tline 1\n"),
        "{whole}"
    );
    assert!(whole.ends_with("\n12\tline 12"));
    // end_line past the end is clamped.
    let tail = server
        .ok_text(
            "file_read",
            json!({"path": "src/lib.rs", "start_line": 12, "end_line": 99}),
        )
        .await;
    assert_eq!(tail, "src/lib.rs (lines 12-12 of 12)\n12\tline 12");
}

#[tokio::test]
async fn absolute_paths_inside_a_root_and_crlf_files() {
    let dir = Scratch::new();
    let path = dir.file("win.txt", "one\r\ntwo\r\n");
    let server = Server::start(&[&dir.path], &[]).await;
    let out = server
        .ok_text("file_read", json!({"path": path.display().to_string()}))
        .await;
    assert_eq!(out, "win.txt (lines 1-2 of 2)\n1\tone\n2\ttwo");
}

#[tokio::test]
async fn output_is_capped_at_15000_characters_with_a_continuation_line() {
    let dir = Scratch::new();
    let text: String = (1..=1000)
        .map(|i| format!("{i:04} {}\n", "z".repeat(95)))
        .collect();
    dir.file("wide.txt", &text);
    let server = Server::start(&[&dir.path], &[]).await;
    let out = server
        .ok_text("file_read", json!({"path": "wide.txt"}))
        .await;
    let (body, note) = out.rsplit_once('\n').unwrap();
    assert!(body.chars().count() <= 15_000, "{}", body.chars().count());
    let shown = body.lines().count() - 1;
    assert!(shown > 100 && shown < 1000, "{shown}");
    assert!(
        body.starts_with(&format!("wide.txt (lines 1-{shown} of 1000)\n")),
        "{}",
        &body[..60]
    );
    assert!(body.ends_with(&format!("{shown}\t{shown:04} {}", "z".repeat(95))));
    assert!(
        note.contains(&format!("start_line: {}", shown + 1)),
        "{note}"
    );
    // Following the note continues exactly where it stopped.
    let next = server
        .ok_text(
            "file_read",
            json!({"path": "wide.txt", "start_line": shown + 1, "end_line": shown + 1}),
        )
        .await;
    assert!(
        next.ends_with(&format!(
            "{}\t{:04} {}",
            shown + 1,
            shown + 1,
            "z".repeat(95)
        )),
        "{next}"
    );
}

#[tokio::test]
async fn errors_match_read_file() {
    let dir = Scratch::new();
    dir.file("three.txt", "a\nb\nc\n");
    dir.file("empty.txt", "");
    dir.file("blob.bin", b"\0\0\0");
    dir.dir("sub");
    let server = Server::start(&[&dir.path], &[]).await;
    let root = dir.path.display();
    let beyond = server
        .err_text("file_read", json!({"path": "three.txt", "start_line": 4}))
        .await;
    assert_eq!(
        beyond,
        "start_line 4 is beyond the end of three.txt, which has 3 lines."
    );
    assert_eq!(
        server
            .err_text(
                "file_read",
                json!({"path": "three.txt", "start_line": 3, "end_line": 2})
            )
            .await,
        "start_line cannot be greater than end_line"
    );
    assert_eq!(
        server.err_text("file_read", json!({"path": "nope"})).await,
        format!("File not found: {root}/nope")
    );
    assert_eq!(
        server.err_text("file_read", json!({"path": "sub"})).await,
        format!("Path is a directory, not a file: {root}/sub")
    );
    assert_eq!(
        server
            .err_text("file_read", json!({"path": "blob.bin"}))
            .await,
        "Cannot display content of binary file: blob.bin"
    );
    assert_eq!(
        server.err_text("file_read", json!({"path": "../x"})).await,
        format!("File path must be within one of the workspace directories: {root}")
    );
    assert_eq!(
        server
            .ok_text("file_read", json!({"path": "empty.txt"}))
            .await,
        "empty.txt (empty file, 0 lines)"
    );
}

#[tokio::test]
async fn files_over_20mb_need_a_range() {
    let dir = Scratch::new();
    let line = "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789\n";
    let count = 21 * 1024 * 1024 / line.len() + 1;
    let path = dir.file("big.txt", line.repeat(count));
    let server = Server::start(&[&dir.path], &[]).await;
    let err = server
        .err_text("file_read", json!({"path": "big.txt"}))
        .await;
    assert!(
        err.starts_with(&format!(
            "File size exceeds the 20MB limit: {}",
            path.display()
        )),
        "{err}"
    );
    assert!(err.contains("'start_line' and 'end_line'"), "{err}");
    let out = server
        .ok_text(
            "file_read",
            json!({"path": "big.txt", "start_line": 250000, "end_line": 250001}),
        )
        .await;
    assert!(
        out.starts_with(&format!(
            "big.txt (lines 250000-250001 of {count})\n250000\tabc"
        )),
        "{out}"
    );
}
