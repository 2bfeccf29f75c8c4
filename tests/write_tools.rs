//! write_file and replace through the real binary, asserting the bytes on
//! disk after every call (docs/tools.md).
// Builds Unix trees (symlinks, FIFOs, modes) or runs Unix programs; the
// Windows build is checked by the unit tests and the smoke test under Wine
// (.ci/cross.sh).
#![cfg(unix)]

mod common;

use std::os::unix::fs::{PermissionsExt, symlink};

use common::{Scratch, Server};
use serde_json::json;

fn bytes(path: &std::path::Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

fn utf16(text: &str, little: bool) -> Vec<u8> {
    let mut out = if little {
        vec![0xFF, 0xFE]
    } else {
        vec![0xFE, 0xFF]
    };
    for u in text.encode_utf16() {
        out.extend_from_slice(&if little {
            u.to_le_bytes()
        } else {
            u.to_be_bytes()
        });
    }
    out
}

/// Names in `dir`, sorted: proves no temporary file was left behind.
fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

// ---------------------------------------------------------------- replace

#[tokio::test]
async fn replace_keeps_crlf_lone_cr_and_mixed_endings() {
    let dir = Scratch::new();
    let crlf = dir.file("crlf.txt", "one\r\ntwo\r\nthree\r\n");
    let cr = dir.file("cr.txt", "one\rtwo\rthree\r");
    let mixed = dir.file("mixed.txt", "a\r\nb\nc\r\nd\n");
    let server = Server::start(&[&dir.path], &[]).await;
    server
        .ok_text(
            "replace",
            json!({"file_path": "crlf.txt", "old_string": "two\n", "new_string": "2a\n2b\n"}),
        )
        .await;
    assert_eq!(bytes(&crlf), b"one\r\n2a\r\n2b\r\nthree\r\n");
    server
        .ok_text(
            "replace",
            json!({"file_path": "cr.txt", "old_string": "one\ntwo", "new_string": "1\n2"}),
        )
        .await;
    assert_eq!(bytes(&cr), b"1\r2\rthree\r");
    server
        .ok_text(
            "replace",
            json!({"file_path": "mixed.txt", "old_string": "b", "new_string": "B"}),
        )
        .await;
    assert_eq!(bytes(&mixed), b"a\r\nB\nc\r\nd\n");
}

#[tokio::test]
async fn replace_keeps_bom_utf16_and_missing_final_newline() {
    let dir = Scratch::new();
    let bom = dir.file("bom.txt", b"\xEF\xBB\xBFhello world\n");
    let le = dir.file("le.txt", utf16("grüße\r\nwelt\r\n", true));
    let be = dir.file("be.txt", utf16("alpha\nbeta\n", false));
    let bare = dir.file("bare.txt", "a\nb");
    let server = Server::start(&[&dir.path], &[]).await;
    for (file, old, new) in [
        ("bom.txt", "world", "there"),
        ("le.txt", "welt", "Welt 😀"),
        ("be.txt", "beta", "gamma"),
        ("bare.txt", "b", "c"),
    ] {
        let text = server
            .ok_text(
                "replace",
                json!({"file_path": file, "old_string": old, "new_string": new}),
            )
            .await;
        assert!(text.starts_with("Successfully modified file: "), "{text}");
    }
    assert_eq!(bytes(&bom), b"\xEF\xBB\xBFhello there\n");
    assert_eq!(bytes(&le), utf16("grüße\r\nWelt 😀\r\n", true));
    assert_eq!(bytes(&be), utf16("alpha\ngamma\n", false));
    assert_eq!(bytes(&bare), b"a\nc");
}

#[tokio::test]
async fn replace_is_literal() {
    let dir = Scratch::new();
    let f = dir.file("a.js", "price = 1;\nre = /a.b/;\n");
    let server = Server::start(&[&dir.path], &[]).await;
    server
        .ok_text(
            "replace",
            json!({"file_path": "a.js", "old_string": "1", "new_string": "$1 $& $$ \\1"}),
        )
        .await;
    server
        .ok_text(
            "replace",
            json!({"file_path": "a.js", "old_string": "/a.b/", "new_string": "/x.*/"}),
        )
        .await;
    assert_eq!(bytes(&f), b"price = $1 $& $$ \\1;\nre = /x.*/;\n");
}

#[tokio::test]
async fn replace_success_message_and_diff() {
    let dir = Scratch::new();
    dir.file("src/m.rs", "fn a() {}\nfn b() {}\nfn c() {}\n");
    let server = Server::start(&[&dir.path], &[]).await;
    let text = server
        .ok_text("replace", json!({"file_path": "src/m.rs", "old_string": "fn b() {}", "new_string": "fn b() { todo!() }"}))
        .await;
    assert_eq!(
        text,
        format!(
            "Successfully modified file: {}/src/m.rs (1 replacements).\n\n```diff\n--- a/src/m.rs\n+++ b/src/m.rs\n@@ -1,3 +1,3 @@\n fn a() {{}}\n-fn b() {{}}\n+fn b() {{ todo!() }}\n fn c() {{}}\n```",
            dir.path.display()
        )
    );
}

#[tokio::test]
async fn expected_replacements_and_allow_multiple() {
    let dir = Scratch::new();
    let f = dir.file("x.txt", "x x x\n");
    let server = Server::start(&[&dir.path], &[]).await;
    let abs = f.display().to_string();
    assert_eq!(
        server
            .err_text(
                "replace",
                json!({"file_path": "x.txt", "old_string": "x", "new_string": "y"})
            )
            .await,
        format!("Failed to edit, Expected 1 occurrence but found 3 for old_string in file: {abs}")
    );
    assert_eq!(
        server
            .err_text("replace", json!({"file_path": "x.txt", "old_string": "x", "new_string": "y", "expected_replacements": 2}))
            .await,
        format!("Failed to edit, Expected 2 occurrences but found 3 for old_string in file: {abs}")
    );
    assert_eq!(bytes(&f), b"x x x\n");
    let text = server
        .ok_text("replace", json!({"file_path": "x.txt", "old_string": "x", "new_string": "y", "expected_replacements": 3}))
        .await;
    assert!(text.contains("(3 replacements)"), "{text}");
    assert_eq!(bytes(&f), b"y y y\n");
    let text = server
        .ok_text("replace", json!({"file_path": "x.txt", "old_string": "y", "new_string": "z", "allow_multiple": true, "instruction": "rename"}))
        .await;
    assert!(text.contains("(3 replacements)"), "{text}");
    assert_eq!(bytes(&f), b"z z z\n");
    // allow_multiple still needs at least one occurrence.
    let text = server
        .err_text("replace", json!({"file_path": "x.txt", "old_string": "q", "new_string": "r", "allow_multiple": true}))
        .await;
    assert!(
        text.starts_with("Failed to edit, 0 occurrences found for old_string in"),
        "{text}"
    );
}

#[tokio::test]
async fn replace_creation_rules() {
    let dir = Scratch::new();
    let server = Server::start(&[&dir.path], &[]).await;
    let root = dir.path.display();
    // Rule 1: missing file, empty old_string: created, parents too, relative path.
    assert_eq!(
        server
            .ok_text(
                "replace",
                json!({"file_path": "new/deep/f.txt", "old_string": "", "new_string": "made\r\n"})
            )
            .await,
        format!("Created new file: {root}/new/deep/f.txt with provided content.")
    );
    assert_eq!(bytes(&dir.path.join("new/deep/f.txt")), b"made\r\n");
    // Rule 2: missing file, non-empty old_string.
    let text = server
        .err_text(
            "replace",
            json!({"file_path": "nope.txt", "old_string": "a", "new_string": "b"}),
        )
        .await;
    assert!(
        text.starts_with(&format!("File not found: {root}/nope.txt")),
        "{text}"
    );
    assert!(text.contains("empty old_string"), "{text}");
    assert!(!dir.path.join("nope.txt").exists());
    // Rule 3: existing file, empty old_string.
    assert_eq!(
        server
            .err_text(
                "replace",
                json!({"file_path": "new/deep/f.txt", "old_string": "", "new_string": "x"})
            )
            .await,
        format!("File already exists, cannot create: {root}/new/deep/f.txt")
    );
    // Rule 4: identical after normalisation.
    assert_eq!(
        server
            .err_text("replace", json!({"file_path": "new/deep/f.txt", "old_string": "made\r\n", "new_string": "made\n"}))
            .await,
        format!("No changes to apply. The old_string and new_string are identical in file: {root}/new/deep/f.txt")
    );
    assert_eq!(bytes(&dir.path.join("new/deep/f.txt")), b"made\r\n");
}

#[tokio::test]
async fn zero_occurrences_name_the_closest_region_and_change_nothing() {
    let dir = Scratch::new();
    let content = "fn main() {\n    let total = add(1, 2);\n    println!(\"{total}\");\n}\n";
    let f = dir.file("main.rs", content);
    let server = Server::start(&[&dir.path], &[]).await;
    let text = server
        .err_text("replace", json!({"file_path": "main.rs", "old_string": "let total = add(1, 2);\nprintln!(\"{total}\");", "new_string": "x"}))
        .await;
    assert!(
        text.starts_with(&format!(
            "Failed to edit, 0 occurrences found for old_string in {}.",
            f.display()
        )),
        "{text}"
    );
    assert!(text.contains("lines 2-3"), "{text}");
    assert!(text.contains("indentation"), "{text}");
    assert!(text.contains("2:     let total = add(1, 2);"), "{text}");
    assert_eq!(bytes(&f), content.as_bytes());
    // Escaped quotes, as models often send them.
    let text = server
        .err_text("replace", json!({"file_path": "main.rs", "old_string": "println!(\\\"{total}\\\");", "new_string": "x"}))
        .await;
    assert!(text.contains("escape sequences"), "{text}");
    assert_eq!(bytes(&f), content.as_bytes());
}

#[tokio::test]
async fn undecodable_and_binary_files_are_refused_and_untouched() {
    let dir = Scratch::new();
    let latin1 = dir.file("latin1.txt", b"caf\xe9 au lait\n");
    let blob = dir.file("blob.bin", b"\0\x01\x02abc");
    let server = Server::start(&[&dir.path], &[]).await;
    let text = server
        .err_text(
            "replace",
            json!({"file_path": "latin1.txt", "old_string": "au", "new_string": "with"}),
        )
        .await;
    assert!(
        text.contains("not valid UTF-8 text") && text.contains("offset 3"),
        "{text}"
    );
    assert_eq!(bytes(&latin1), b"caf\xe9 au lait\n");
    let text = server
        .err_text(
            "replace",
            json!({"file_path": "blob.bin", "old_string": "abc", "new_string": "x"}),
        )
        .await;
    assert!(text.contains("binary"), "{text}");
    assert_eq!(bytes(&blob), b"\0\x01\x02abc");
}

// ---------------------------------------------------------------- write_file

#[tokio::test]
async fn write_file_creates_and_overwrites_with_exact_messages() {
    let dir = Scratch::new();
    let server = Server::start(&[&dir.path], &[]).await;
    let root = dir.path.display();
    assert_eq!(
        server
            .ok_text(
                "write_file",
                json!({"file_path": "a/b/new.txt", "content": "one\ntwo\n"})
            )
            .await,
        format!("Successfully created and wrote to new file: {root}/a/b/new.txt.")
    );
    assert_eq!(bytes(&dir.path.join("a/b/new.txt")), b"one\ntwo\n");
    let text = server
        .ok_text(
            "write_file",
            json!({"file_path": "a/b/new.txt", "content": "one\n2\n"}),
        )
        .await;
    assert_eq!(
        text,
        format!(
            "Successfully overwrote file: {root}/a/b/new.txt.\n\n```diff\n--- a/a/b/new.txt\n+++ b/a/b/new.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n```"
        )
    );
    // A new file is written exactly as given, CRLF and all.
    server
        .ok_text(
            "write_file",
            json!({"file_path": "raw.txt", "content": "x\r\ny\n"}),
        )
        .await;
    assert_eq!(bytes(&dir.path.join("raw.txt")), b"x\r\ny\n");
    assert_eq!(entries(&dir.path.join("a/b")), vec!["new.txt"]);
}

#[tokio::test]
async fn write_file_keeps_crlf_bom_and_utf16() {
    let dir = Scratch::new();
    let crlf = dir.file("crlf.txt", "old\r\nlines\r\n");
    let bom = dir.file("bom.txt", b"\xEF\xBB\xBFold\n");
    let le = dir.file("le.txt", utf16("old\n", true));
    let server = Server::start(&[&dir.path], &[]).await;
    server
        .ok_text(
            "write_file",
            json!({"file_path": "crlf.txt", "content": "new\nand\r\nmore\n"}),
        )
        .await;
    assert_eq!(bytes(&crlf), b"new\r\nand\r\nmore\r\n");
    server
        .ok_text(
            "write_file",
            json!({"file_path": "bom.txt", "content": "new\n"}),
        )
        .await;
    assert_eq!(bytes(&bom), b"\xEF\xBB\xBFnew\n");
    server
        .ok_text(
            "write_file",
            json!({"file_path": "le.txt", "content": "nëw\n"}),
        )
        .await;
    assert_eq!(bytes(&le), utf16("nëw\n", true));
}

#[tokio::test]
async fn permission_bits_are_kept() {
    let dir = Scratch::new();
    let script = dir.file("run.sh", "#!/bin/sh\necho old\n");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let private = dir.file("private.txt", "secret\n");
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    let server = Server::start(&[&dir.path], &[]).await;
    server
        .ok_text(
            "replace",
            json!({"file_path": "run.sh", "old_string": "old", "new_string": "new"}),
        )
        .await;
    server
        .ok_text(
            "write_file",
            json!({"file_path": "private.txt", "content": "still secret\n"}),
        )
        .await;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&script), 0o755);
    assert_eq!(mode(&private), 0o600);
    assert_eq!(bytes(&script), b"#!/bin/sh\necho new\n");
}

#[tokio::test]
async fn placeholders_and_git_internals_are_refused() {
    let dir = Scratch::new();
    let f = dir.file("lib.rs", "fn a() {}\n// ... rest of code ...\nfn z() {}\n");
    dir.file(".git/config", "[core]\n");
    let server = Server::start(&[&dir.path], &[]).await;
    let text = server
        .err_text(
            "write_file",
            json!({"file_path": "lib.rs", "content": "fn a() {}\n    // rest of methods ...\n"}),
        )
        .await;
    assert!(
        text.contains("omission placeholder") && text.contains("complete content"),
        "{text}"
    );
    let text = server
        .err_text("replace", json!({"file_path": "lib.rs", "old_string": "fn a() {}", "new_string": "fn a() {}\n# unchanged code ..."}))
        .await;
    assert!(text.contains("omission placeholder"), "{text}");
    // A placeholder already in old_string may stay.
    server
        .ok_text("replace", json!({"file_path": "lib.rs", "old_string": "fn a() {}\n// ... rest of code ...", "new_string": "fn b() {}\n// ... rest of code ..."}))
        .await;
    assert_eq!(
        bytes(&f),
        b"fn b() {}\n// ... rest of code ...\nfn z() {}\n"
    );
    for tool_args in [
        (
            "write_file",
            json!({"file_path": ".git/config", "content": "[core]\n\tfsmonitor = evil\n"}),
        ),
        (
            "write_file",
            json!({"file_path": ".git/hooks/pre-commit", "content": "evil"}),
        ),
        (
            "replace",
            json!({"file_path": ".git/config", "old_string": "[core]", "new_string": "[evil]"}),
        ),
    ] {
        let text = server.err_text(tool_args.0, tool_args.1).await;
        assert!(text.contains(".git directory"), "{text}");
    }
    assert_eq!(bytes(&dir.path.join(".git/config")), b"[core]\n");
    assert!(!dir.path.join(".git/hooks").exists());
}

#[tokio::test]
async fn directories_are_not_files() {
    let dir = Scratch::new();
    dir.dir("sub");
    let server = Server::start(&[&dir.path], &[]).await;
    let want = format!(
        "Path is a directory, not a file: {}/sub",
        dir.path.display()
    );
    assert_eq!(
        server
            .err_text("write_file", json!({"file_path": "sub", "content": "x"}))
            .await,
        want
    );
    assert_eq!(
        server
            .err_text(
                "replace",
                json!({"file_path": "sub", "old_string": "a", "new_string": "b"})
            )
            .await,
        want
    );
}

// ---------------------------------------------------------------- symlinks

#[tokio::test]
async fn writing_through_an_in_root_symlink_keeps_the_link() {
    let dir = Scratch::new();
    let real = dir.file("real.txt", "old\n");
    let link = dir.path.join("link.txt");
    symlink("real.txt", &link).unwrap();
    let server = Server::start(&[&dir.path], &[]).await;
    server
        .ok_text(
            "write_file",
            json!({"file_path": "link.txt", "content": "via link\n"}),
        )
        .await;
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(bytes(&real), b"via link\n");
    server
        .ok_text(
            "replace",
            json!({"file_path": "link.txt", "old_string": "via", "new_string": "through"}),
        )
        .await;
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(bytes(&real), b"through link\n");
}

#[tokio::test]
async fn writes_through_outward_and_dangling_links_are_refused_and_outside_is_untouched() {
    let tmp = Scratch::new();
    let root = tmp.dir("root");
    let outside = tmp.dir("outside");
    let victim = tmp.file("outside/victim.txt", "victim\n");
    symlink(&victim, root.join("to_victim")).unwrap();
    symlink(&outside, root.join("out_dir")).unwrap();
    symlink(outside.join("created.txt"), root.join("dangling_out")).unwrap();
    symlink("missing.txt", root.join("dangling_in")).unwrap();
    let server = Server::start(&[&root], &[]).await;
    let refused = format!(
        "File path must be within one of the workspace directories: {}",
        root.display()
    );
    for (tool, args) in [
        (
            "write_file",
            json!({"file_path": "to_victim", "content": "pwned"}),
        ),
        (
            "replace",
            json!({"file_path": "to_victim", "old_string": "victim", "new_string": "pwned"}),
        ),
        (
            "write_file",
            json!({"file_path": "out_dir/new.txt", "content": "pwned"}),
        ),
        (
            "write_file",
            json!({"file_path": "out_dir/deep/er/new.txt", "content": "pwned"}),
        ),
        (
            "replace",
            json!({"file_path": "out_dir/new2.txt", "old_string": "", "new_string": "pwned"}),
        ),
        (
            "write_file",
            json!({"file_path": "dangling_out", "content": "pwned"}),
        ),
        (
            "write_file",
            json!({"file_path": "dangling_in", "content": "pwned"}),
        ),
        (
            "write_file",
            json!({"file_path": "../outside/new.txt", "content": "pwned"}),
        ),
        (
            "write_file",
            json!({"file_path": format!("{}_evil/x.txt", root.display()), "content": "pwned"}),
        ),
    ] {
        assert_eq!(
            server.err_text(tool, args.clone()).await,
            refused,
            "{tool} {args}"
        );
    }
    assert_eq!(bytes(&victim), b"victim\n");
    assert_eq!(entries(&outside), vec!["victim.txt"]);
    assert!(!tmp.path.join("root_evil").exists());
    assert!(
        std::fs::symlink_metadata(root.join("dangling_in"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(!root.join("missing.txt").exists());
}

// ---------------------------------------------------------------- failure mid-write

/// The server runs with a 64 KB file-size limit (RLIMIT_FSIZE, SIGXFSZ
/// ignored), so a bigger write fails half-way through, as on a full disk.
#[tokio::test]
async fn a_write_failing_half_way_leaves_the_old_file_and_no_temporary() {
    let dir = Scratch::new();
    let f = dir.file("data.txt", "original\n");
    let mut cmd = tokio::process::Command::new(common::BIN);
    cmd.arg("--root").arg(&dir.path);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: 64 * 1024,
                rlim_max: 64 * 1024,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .spawn()
        .unwrap();
    let client = rmcp::ServiceExt::serve((), transport).await.unwrap();
    let server = Server { client };
    let big = "y".repeat(200 * 1024);
    let text = server
        .err_text(
            "write_file",
            json!({"file_path": "data.txt", "content": big}),
        )
        .await;
    assert!(
        text.starts_with(&format!("Cannot write {}", f.display())),
        "{text}"
    );
    assert_eq!(bytes(&f), b"original\n");
    let text = server
        .err_text(
            "replace",
            json!({"file_path": "data.txt", "old_string": "original", "new_string": big}),
        )
        .await;
    assert!(text.contains("left as it was"), "{text}");
    assert_eq!(bytes(&f), b"original\n");
    assert_eq!(entries(&dir.path), vec!["data.txt"]);
    // Small writes still work.
    server
        .ok_text(
            "write_file",
            json!({"file_path": "data.txt", "content": "small\n"}),
        )
        .await;
    assert_eq!(bytes(&f), b"small\n");
}

#[tokio::test]
async fn concurrent_replaces_on_one_file_all_land() {
    let dir = Scratch::new();
    let content: String = (0..20).map(|i| format!("item {i}\n")).collect();
    let f = dir.file("list.txt", &content);
    let server = Server::start(&[&dir.path], &[]).await;
    let calls = (0..20).map(|i| {
        let server = &server;
        async move {
            server
                .ok_text("replace", json!({"file_path": "list.txt", "old_string": format!("item {i}\n"), "new_string": format!("done {i}\n")}))
                .await;
        }
    });
    futures::future::join_all(calls).await;
    let expected: String = (0..20).map(|i| format!("done {i}\n")).collect();
    assert_eq!(String::from_utf8(bytes(&f)).unwrap(), expected);
}

#[tokio::test]
async fn read_only_mode_offers_no_write_tools() {
    let dir = Scratch::new();
    let server = Server::start(&[&dir.path], &["--read-only"]).await;
    let tools = server.client.list_all_tools().await.unwrap();
    assert!(
        tools
            .iter()
            .all(|t| t.name != "write_file" && t.name != "replace")
    );
    assert!(
        server
            .try_call("write_file", json!({"file_path": "x", "content": "y"}))
            .await
            .is_err()
    );
    assert!(!dir.path.join("x").exists());
}
