//! read_file through the real binary (docs/tools.md).
// Builds Unix trees (symlinks, FIFOs, modes) or runs Unix programs; the
// Windows build is checked by the unit tests and the smoke test under Wine
// (.ci/cross.sh).
#![cfg(unix)]

mod common;

use base64::Engine;
use common::{Scratch, Server, all_text};
use rmcp::model::{ContentBlock, ResourceContents};
use serde_json::json;

fn numbered_lines(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

fn b64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

#[tokio::test]
async fn whole_files_come_back_unchanged() {
    let dir = Scratch::new();
    dir.file("lf.txt", "a\nb\n");
    dir.file("crlf.txt", "a\r\nb\r\n");
    dir.file("no_newline.txt", "a\nb");
    dir.file("empty.txt", "");
    dir.file("bom.txt", b"\xEF\xBB\xBFwith bom\n");
    let server = Server::start(&[&dir.path], &[]).await;
    for (name, expected) in [
        ("lf.txt", "a\nb\n"),
        ("crlf.txt", "a\r\nb\r\n"),
        ("no_newline.txt", "a\nb"),
        ("empty.txt", ""),
        ("bom.txt", "with bom\n"),
    ] {
        let text = server.ok_text("read_file", json!({"path": name})).await;
        assert_eq!(text, expected, "{name}");
    }
}

#[tokio::test]
async fn utf16_and_utf32_files_are_decoded() {
    let dir = Scratch::new();
    let text = "grüße\n😀\n";
    let mut le = vec![0xFF, 0xFE];
    let mut be = vec![0xFE, 0xFF];
    for u in text.encode_utf16() {
        le.extend_from_slice(&u.to_le_bytes());
        be.extend_from_slice(&u.to_be_bytes());
    }
    let mut le32 = vec![0xFF, 0xFE, 0, 0];
    for c in text.chars() {
        le32.extend_from_slice(&(c as u32).to_le_bytes());
    }
    dir.file("le.txt", &le);
    dir.file("be.txt", &be);
    dir.file("le32.txt", &le32);
    let server = Server::start(&[&dir.path], &[]).await;
    for name in ["le.txt", "be.txt", "le32.txt"] {
        assert_eq!(
            server.ok_text("read_file", json!({"path": name})).await,
            text,
            "{name}"
        );
    }
    let part = server
        .ok_text(
            "read_file",
            json!({"path": "le.txt", "offset": 1, "limit": 1}),
        )
        .await;
    assert!(
        part.ends_with("--- FILE CONTENT (truncated) ---\n😀"),
        "{part}"
    );
}

#[tokio::test]
async fn offset_and_limit_give_the_exact_truncation_block() {
    let dir = Scratch::new();
    dir.file("ten.txt", numbered_lines(10));
    let server = Server::start(&[&dir.path], &[]).await;
    let text = server
        .ok_text(
            "read_file",
            json!({"path": "ten.txt", "offset": 2, "limit": 3}),
        )
        .await;
    assert_eq!(
        text,
        "\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 3-5 of 10 total \
         lines.\nAction: To read more of the file, you can use the 'offset' and 'limit' \
         parameters in a subsequent 'read_file' call. For example, to read the next section of \
         the file, use offset: 5.\n\n--- FILE CONTENT (truncated) ---\nline 3\nline 4\nline 5"
    );
    // A range covering the whole file returns the text unchanged.
    let text = server
        .ok_text(
            "read_file",
            json!({"path": "ten.txt", "offset": 0, "limit": 10}),
        )
        .await;
    assert_eq!(text, numbered_lines(10));
    // The last lines: still truncated (the start is not shown), no trailing newline.
    let text = server
        .ok_text("read_file", json!({"path": "ten.txt", "offset": 8}))
        .await;
    assert!(
        text.contains("Showing lines 9-10 of 10 total lines."),
        "{text}"
    );
    assert!(text.ends_with("---\nline 9\nline 10"), "{text}");
}

#[tokio::test]
async fn start_line_and_end_line_dialect() {
    let dir = Scratch::new();
    dir.file("ten.txt", numbered_lines(10));
    let server = Server::start(&[&dir.path], &[]).await;
    let text = server
        .ok_text(
            "read_file",
            json!({"path": "ten.txt", "start_line": 3, "end_line": 5}),
        )
        .await;
    assert_eq!(
        text,
        "\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 3-5 of 10 total \
         lines.\nAction: To read more of the file, you can use the 'start_line' and 'end_line' \
         parameters in a subsequent 'read_file' call. For example, to read the next section of \
         the file, use start_line: 6.\n\n--- FILE CONTENT (truncated) ---\nline 3\nline 4\nline 5"
    );
    // Canonical parameters win over the dialect.
    let text = server
        .ok_text(
            "read_file",
            json!({"path": "ten.txt", "offset": 0, "limit": 1, "start_line": 5}),
        )
        .await;
    assert!(text.ends_with("---\nline 1"), "{text}");
    assert_eq!(
        server
            .err_text(
                "read_file",
                json!({"path": "ten.txt", "start_line": 5, "end_line": 4})
            )
            .await,
        "start_line cannot be greater than end_line"
    );
}

#[tokio::test]
async fn default_limit_is_2000_lines() {
    let dir = Scratch::new();
    dir.file("long.txt", numbered_lines(2500));
    let server = Server::start(&[&dir.path], &[]).await;
    let text = server
        .ok_text("read_file", json!({"path": "long.txt"}))
        .await;
    assert!(
        text.contains("Status: Showing lines 1-2000 of 2500 total lines."),
        "{}",
        &text[..300]
    );
    assert!(text.contains("use offset: 2000."));
    assert!(text.ends_with("\nline 2000"));
}

#[tokio::test]
async fn long_lines_are_cut_and_reported() {
    let dir = Scratch::new();
    let long = "x".repeat(2500);
    dir.file("wide.txt", format!("short\n{long}\nend\n"));
    let server = Server::start(&[&dir.path], &[]).await;
    let text = server
        .ok_text("read_file", json!({"path": "wide.txt"}))
        .await;
    assert!(
        text.contains("Showing lines 1-3 of 3 total lines."),
        "{}",
        &text[..300]
    );
    let expected = format!("short\n{}... [truncated]\nend", "x".repeat(2000));
    assert!(text.ends_with(&expected));
}

#[tokio::test]
async fn parameter_errors() {
    let dir = Scratch::new();
    dir.file("a.txt", "a\nb\n");
    let server = Server::start(&[&dir.path], &[]).await;
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
    let past = server
        .err_text("read_file", json!({"path": "a.txt", "offset": 5}))
        .await;
    assert!(
        past.contains("beyond the end") && past.contains("2 lines"),
        "{past}"
    );
}

#[tokio::test]
async fn missing_files_directories_and_special_files() {
    let dir = Scratch::new();
    dir.dir("sub");
    let fifo = dir.path.join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let server = Server::start(&[&dir.path], &[]).await;
    let root = dir.path.display();
    assert_eq!(
        server
            .err_text("read_file", json!({"path": "nope.txt"}))
            .await,
        format!("File not found: {root}/nope.txt")
    );
    assert_eq!(
        server.err_text("read_file", json!({"path": "sub"})).await,
        format!("Path is a directory, not a file: {root}/sub")
    );
    // A FIFO is refused at once instead of blocking the server.
    let text = server.err_text("read_file", json!({"path": "pipe"})).await;
    assert!(text.contains("named pipe"), "{text}");
    server.assert_alive().await;
}

#[tokio::test]
async fn files_over_20mb_need_a_range() {
    let dir = Scratch::new();
    let line = "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz\n";
    let count = 21 * 1024 * 1024 / line.len() + 10;
    let mut big = String::with_capacity(line.len() * count);
    for _ in 0..count {
        big.push_str(line);
    }
    let path = dir.file("big.log", &big);
    let size = std::fs::metadata(&path).unwrap().len();
    let server = Server::start(&[&dir.path], &[]).await;
    let err = server
        .err_text("read_file", json!({"path": "big.log"}))
        .await;
    let expected = format!(
        "File size exceeds the 20MB limit: {} ({:.2}MB)",
        path.display(),
        size as f64 / 1048576.0
    );
    assert!(err.starts_with(&expected), "{err}");
    assert!(err.contains("'offset' and 'limit'"), "{err}");
    // With a range, any size streams.
    let text = server
        .ok_text(
            "read_file",
            json!({"path": "big.log", "offset": 300000, "limit": 2}),
        )
        .await;
    assert!(
        text.contains(&format!(
            "Showing lines 300001-300002 of {count} total lines."
        )),
        "{text}"
    );
    // Media over 20 MB is refused whatever the range.
    let png = dir.path.join("huge.png");
    std::fs::File::create(&png)
        .unwrap()
        .set_len(21 * 1024 * 1024)
        .unwrap();
    let err = server
        .err_text(
            "read_file",
            json!({"path": "huge.png", "offset": 0, "limit": 1}),
        )
        .await;
    assert_eq!(
        err,
        format!(
            "File size exceeds the 20MB limit: {} (21.00MB)",
            png.display()
        )
    );
}

#[tokio::test]
async fn media_come_back_as_mcp_blocks() {
    let dir = Scratch::new();
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0";
    dir.file("img.png", png);
    dir.file("sniffed", png);
    dir.file("sound.mp3", b"ID3\x03\0\0\0\0\0\0 audio");
    dir.file("doc.pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n");
    dir.file("clip.mp4", b"\0\0\0\x18ftypmp42");
    let server = Server::start(&[&dir.path], &[]).await;

    for name in ["img.png", "sniffed"] {
        let result = server.call("read_file", json!({"path": name})).await;
        let image = result
            .content
            .iter()
            .find_map(|c| match c {
                ContentBlock::Image(i) => Some(i),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{name}: no image block in {result:?}"));
        assert_eq!(image.mime_type, "image/png");
        assert_eq!(image.data, b64(png));
    }
    let result = server.call("read_file", json!({"path": "sound.mp3"})).await;
    assert!(
        result
            .content
            .iter()
            .any(|c| matches!(c, ContentBlock::Audio(a) if a.mime_type == "audio/mpeg")),
        "{result:?}"
    );
    for (name, mime) in [("doc.pdf", "application/pdf"), ("clip.mp4", "video/mp4")] {
        let result = server.call("read_file", json!({"path": name})).await;
        let found = result.content.iter().any(|c| match c {
            ContentBlock::Resource(r) => matches!(&r.resource,
                ResourceContents::BlobResourceContents { mime_type, blob, .. }
                    if mime_type.as_deref() == Some(mime) && !blob.is_empty()),
            _ => false,
        });
        assert!(found, "{name}: {result:?}");
    }
}

#[tokio::test]
async fn binary_and_svg_messages() {
    let dir = Scratch::new();
    dir.file("sub/blob.bin", b"\0\x01\x02binary");
    dir.file("data.unknown", b"abc\0def");
    dir.file("small.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n");
    dir.file(
        "sub/big.svg",
        format!("<svg>{}</svg>", "x".repeat(1024 * 1024 + 10)),
    );
    let server = Server::start(&[&dir.path], &[]).await;
    assert_eq!(
        server
            .ok_text("read_file", json!({"path": "sub/blob.bin"}))
            .await,
        "Cannot display content of binary file: sub/blob.bin"
    );
    assert_eq!(
        server
            .ok_text("read_file", json!({"path": "data.unknown"}))
            .await,
        "Cannot display content of binary file: data.unknown"
    );
    assert_eq!(
        server
            .ok_text("read_file", json!({"path": "small.svg"}))
            .await,
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n"
    );
    assert_eq!(
        server
            .ok_text("read_file", json!({"path": "sub/big.svg"}))
            .await,
        "Cannot display content of SVG file larger than 1MB: sub/big.svg"
    );
}

#[tokio::test]
async fn typescript_is_always_text() {
    let dir = Scratch::new();
    dir.file("mod.ts", "export const x = 1;\n");
    let server = Server::start(&[&dir.path], &[]).await;
    assert_eq!(
        server.ok_text("read_file", json!({"path": "mod.ts"})).await,
        "export const x = 1;\n"
    );
}

#[tokio::test]
async fn aliases_uris_and_absolute_paths() {
    let dir = Scratch::new();
    let path = dir.file("src/main.rs", "fn main() {}\n");
    let server = Server::start(&[&dir.path], &[]).await;
    let abs = path.display().to_string();
    for args in [
        json!({"path": abs}),
        json!({"file_path": "src/main.rs"}),
        json!({"absolute_path": abs}),
        json!({"path": format!("file://{abs}")}),
        json!({"path": "src/../src/./main.rs"}),
    ] {
        assert_eq!(
            server.ok_text("read_file", args.clone()).await,
            "fn main() {}\n",
            "{args}"
        );
    }
    // Canonical name wins over an alias.
    let text = server
        .err_text(
            "read_file",
            json!({"path": "missing.rs", "file_path": "src/main.rs"}),
        )
        .await;
    assert!(text.starts_with("File not found"), "{text}");
    // Gemini CLI's words for an empty path, under the name the caller used.
    assert_eq!(
        server.err_text("read_file", json!({"path": "  "})).await,
        "The 'path' parameter must be non-empty."
    );
    assert_eq!(
        server.err_text("read_file", json!({"file_path": ""})).await,
        "The 'file_path' parameter must be non-empty."
    );
}

#[tokio::test]
async fn relative_paths_use_the_primary_root_not_the_server_cwd() {
    let dir = Scratch::new();
    dir.file("only_here.txt", "root copy\n");
    // The server is started from another directory.
    let elsewhere = Scratch::new();
    elsewhere.file("only_here.txt", "cwd copy\n");
    let mut cmd = tokio::process::Command::new(common::BIN);
    cmd.arg("--root")
        .arg(&dir.path)
        .current_dir(&elsewhere.path);
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .spawn()
        .unwrap();
    let client = rmcp::ServiceExt::serve((), transport).await.unwrap();
    let server = Server { client };
    assert_eq!(
        server
            .ok_text("read_file", json!({"path": "only_here.txt"}))
            .await,
        "root copy\n"
    );
}

#[tokio::test]
async fn geminiignore_refuses_reads_but_gitignore_does_not() {
    let dir = Scratch::new();
    dir.file(".geminiignore", "secrets/\n*.pem\n");
    dir.file(".gitignore", "build/\n");
    dir.file("secrets/token.txt", "t0ken\n");
    dir.file("key.pem", "pem\n");
    dir.file("build/out.txt", "built\n");
    let server = Server::start(&[&dir.path], &[]).await;
    let root = dir.path.display();
    assert_eq!(
        server
            .err_text("read_file", json!({"path": "secrets/token.txt"}))
            .await,
        format!("File path '{root}/secrets/token.txt' is ignored by configured ignore patterns.")
    );
    assert_eq!(
        server
            .err_text("read_file", json!({"path": "key.pem"}))
            .await,
        format!("File path '{root}/key.pem' is ignored by configured ignore patterns.")
    );
    assert_eq!(
        server
            .ok_text("read_file", json!({"path": "build/out.txt"}))
            .await,
        "built\n"
    );
    let result = server.call("file_read", json!({"path": "key.pem"})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(all_text(&result).contains("ignored by configured ignore patterns"));
}

/// A big file read window by window, anywhere and in any order, gives the
/// lines a whole read gives; the second window on is read from the index
/// the first made (`fs::reading::LineIndexes`). A file rewritten in place,
/// same size and modification time, is read anew, never through the old
/// index.
#[tokio::test]
async fn windows_of_a_big_file_anywhere_are_its_lines_and_a_rewrite_is_seen() {
    let dir = Scratch::new();
    let rows = 200_000;
    let row = |i: usize, tag: &str| format!("{tag} {i:06} {}", "p".repeat(i % 23));
    let mut text = b"\xEF\xBB\xBF".to_vec();
    for i in 0..rows {
        text.extend_from_slice(row(i, "row").as_bytes());
        text.extend_from_slice(if i % 3 == 0 { b"\r\n" } else { b"\n" });
    }
    text.extend_from_slice(b"no newline at the end");
    let path = dir.file("big.log", &text);
    let server = Server::start(&[&dir.path], &["--answer-budget", "off"]).await;
    let window = |start: usize, count: usize| {
        let server = &server;
        async move {
            server
                .ok_text(
                    "read_file",
                    json!({"path": "big.log", "offset": start, "limit": count}),
                )
                .await
        }
    };
    let lines_of = |answer: &str| -> Vec<String> {
        let (head, content) = answer
            .split_once("--- FILE CONTENT (truncated) ---\n")
            .unwrap();
        assert!(
            head.contains(&format!("of {} total lines", rows + 1)),
            "{head}"
        );
        content.split('\n').map(str::to_string).collect()
    };
    // In a scattered order, so that windows start before and after the
    // last one, near marks and between them.
    let mut start = 7usize;
    for _ in 0..40 {
        start = (start * 7919 + 104_729) % (rows + 1);
        let got = lines_of(&window(start, 5).await);
        let expected: Vec<String> = (start..(start + 5).min(rows + 1))
            .map(|i| match i {
                i if i < rows && i % 3 == 0 => format!("{}\r", row(i, "row")),
                i if i < rows => row(i, "row"),
                _ => "no newline at the end".to_string(),
            })
            .collect();
        assert_eq!(got, expected, "window at {start}");
    }
    // Rewritten in place: same bytes but the tag, same size, the old
    // modification time put back.
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    let rewritten = String::from_utf8(text).unwrap().replace("row ", "ROW ");
    std::fs::write(&path, rewritten).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    let got = lines_of(&window(150_001, 1).await);
    assert_eq!(got, [row(150_001, "ROW")]);
}
