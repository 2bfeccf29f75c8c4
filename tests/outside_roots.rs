//! Attempts to read outside the roots, through the real binary: every one is
//! refused with the exact message, nothing outside is returned, and the
//! server keeps answering.
// Builds Unix trees (symlinks, FIFOs, modes) or runs Unix programs; the
// Windows build is checked by the unit tests and the smoke test under Wine
// (.ci/cross.sh).
#![cfg(unix)]

mod common;

use std::os::unix::fs::symlink;

use common::{Scratch, Server, all_text};
use serde_json::json;

const SECRET: &str = "TOP-SECRET-OUTSIDE";

/// `<tmp>/root` is the root; `<tmp>/root_evil` and `<tmp>/outside` are not.
struct Layout {
    tmp: Scratch,
}

impl Layout {
    fn new() -> Layout {
        let tmp = Scratch::new();
        tmp.file("root/inside.txt", "inside\n");
        tmp.dir("root/sub");
        tmp.file("root_evil/secret.txt", SECRET);
        tmp.file("outside/secret.txt", SECRET);
        Layout { tmp }
    }
    fn root(&self) -> std::path::PathBuf {
        self.tmp.path.join("root")
    }
    fn outside(&self) -> std::path::PathBuf {
        self.tmp.path.join("outside")
    }
}

async fn assert_refused(server: &Server, root: &std::path::Path, tool: &str, path: &str) {
    let result = server.call(tool, json!({"path": path})).await;
    let text = all_text(&result);
    assert_eq!(
        result.is_error,
        Some(true),
        "{tool} {path} was not refused: {text}"
    );
    assert!(!text.contains(SECRET), "{tool} {path} leaked the secret");
    assert_eq!(
        text,
        format!(
            "File path must be within one of the workspace directories: {}",
            root.display()
        ),
        "{tool} {path}"
    );
}

#[tokio::test]
async fn dotdot_absolute_and_sibling_prefix_paths_are_refused() {
    let l = Layout::new();
    let root = l.root();
    let server = Server::start(&[&root], &[]).await;
    let attempts = [
        "../outside/secret.txt".to_string(),
        "sub/../../outside/secret.txt".to_string(),
        format!("{}/secret.txt", l.outside().display()),
        format!("{}/../outside/secret.txt", root.display()),
        format!("{}_evil/secret.txt", root.display()),
        "../root_evil/secret.txt".to_string(),
        format!("file://{}/secret.txt", l.outside().display()),
        "/etc/passwd".to_string(),
    ];
    for tool in ["read_file", "file_read"] {
        for path in &attempts {
            assert_refused(&server, &root, tool, path).await;
        }
    }
    server.assert_alive().await;
}

#[tokio::test]
async fn symlinks_out_dangling_and_chained_are_refused() {
    let l = Layout::new();
    let root = l.root();
    symlink(l.outside().join("secret.txt"), root.join("link_out")).unwrap();
    symlink(l.outside(), root.join("dir_out")).unwrap();
    symlink(root.join("nowhere"), root.join("dangling_in")).unwrap();
    symlink(l.outside().join("nowhere"), root.join("dangling_out")).unwrap();
    symlink("chain2", root.join("chain1")).unwrap();
    symlink("chain3", root.join("chain2")).unwrap();
    symlink("../outside/secret.txt", root.join("chain3")).unwrap();
    symlink("loop2", root.join("loop1")).unwrap();
    symlink("loop1", root.join("loop2")).unwrap();
    let server = Server::start(&[&root], &[]).await;
    for tool in ["read_file", "file_read"] {
        for path in [
            "link_out",
            "dir_out/secret.txt",
            "dangling_in",
            "dangling_out",
            "chain1",
            "loop1",
        ] {
            assert_refused(&server, &root, tool, path).await;
        }
    }
    server.assert_alive().await;
}

#[tokio::test]
async fn symlinks_inside_and_a_symlinked_root_work() {
    let l = Layout::new();
    let root = l.root();
    symlink("inside.txt", root.join("link_in")).unwrap();
    symlink("link_in", root.join("chain_in")).unwrap();
    let alias = l.tmp.path.join("alias");
    symlink(&root, &alias).unwrap();
    let server = Server::start(&[&alias], &[]).await;
    for path in [
        "link_in".to_string(),
        "chain_in".to_string(),
        format!("{}/inside.txt", alias.display()),
        format!("{}/inside.txt", root.display()),
    ] {
        let text = server.ok_text("read_file", json!({"path": path})).await;
        assert_eq!(text, "inside\n", "{path}");
    }
    // Messages name the canonical root.
    assert_refused(&server, &root, "read_file", "../outside/secret.txt").await;
}

#[tokio::test]
async fn several_roots_are_listed_in_the_message() {
    let l = Layout::new();
    let root = l.root();
    let second = l.tmp.dir("second");
    std::fs::write(second.join("b.txt"), "second root\n").unwrap();
    let server = Server::start(&[&root, &second], &[]).await;
    let text = server
        .ok_text(
            "read_file",
            json!({"path": second.join("b.txt").display().to_string()}),
        )
        .await;
    assert_eq!(text, "second root\n");
    let err = server
        .err_text("read_file", json!({"path": "../outside/secret.txt"}))
        .await;
    assert_eq!(
        err,
        format!(
            "File path must be within one of the workspace directories: {}, {}",
            root.display(),
            second.display()
        )
    );
}

/// `path` normalised lexically (`.` and `..` on the spelling), as messages
/// show a refused path.
fn lexical(path: &std::path::Path) -> String {
    let mut out = std::path::PathBuf::from("/");
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out.display().to_string()
}

/// No answer tells what lies outside (issue 19): for every tool that takes
/// a path, in both dialects, `X/..` for an outside directory, a missing
/// name and a file, and a path that goes out and comes back in
/// (`../outside/D/../../root/inside.txt`, whether or not `D` exists), get
/// the same answer, byte for byte once the path itself is taken out.
#[tokio::test]
async fn no_answer_depends_on_what_lies_outside() {
    let l = Layout::new();
    let root = l.root();
    l.tmp.dir("outside/D");
    let spellings = [
        "../outside/D/..",
        "../outside/missing/..",
        "../outside/secret.txt/..",
        "../outside/D/../../root/inside.txt",
        "../outside/missing/../../root/inside.txt",
        "../outside/secret.txt/../../root/inside.txt",
    ];
    let mut paths: Vec<String> = spellings.iter().map(|s| s.to_string()).collect();
    paths.extend(spellings.iter().map(|s| format!("{}/{s}", root.display())));
    for dialect in ["gemini-0.24", "gemini-current"] {
        let server = Server::start(&[&root], &["--dialect", dialect]).await;
        for (tool, args) in [
            ("read_file", json!({"path": "P"})),
            ("file_read", json!({"path": "P"})),
            ("write_file", json!({"file_path": "P", "content": "x\n"})),
            (
                "replace",
                json!({"file_path": "P", "old_string": "inside", "new_string": "x"}),
            ),
            ("list_directory", json!({"path": "P"})),
            ("glob", json!({"pattern": "*", "path": "P"})),
            (
                "search_file_content",
                json!({"pattern": "inside", "path": "P"}),
            ),
            ("read_many_files", json!({"paths": ["P"]})),
            ("bash", json!({"command": "ls P"})),
        ] {
            let mut answers = std::collections::BTreeMap::new();
            for path in &paths {
                let args = serde_json::from_str(
                    &args
                        .to_string()
                        .replace("\"P\"", &json!(path).to_string())
                        .replace("ls P", &format!("ls {path}")),
                )
                .unwrap();
                let result = server.call(tool, args).await;
                let text = all_text(&result);
                assert!(!text.contains(SECRET), "{dialect} {tool} {path}: {text}");
                assert_ne!(text, "inside\n", "{dialect} {tool} {path} read through");
                let absolute = if path.starts_with('/') {
                    std::path::PathBuf::from(path)
                } else {
                    root.join(path)
                };
                let shown = text
                    .replace(path.as_str(), "<P>")
                    .replace(&absolute.display().to_string(), "<P>")
                    .replace(&lexical(&absolute), "<P>");
                answers
                    .entry((result.is_error, shown))
                    .or_insert_with(Vec::new)
                    .push(path.clone());
            }
            assert_eq!(
                answers.len(),
                1,
                "{dialect} {tool}: the answers differ with what lies outside: {answers:#?}"
            );
        }
        server.assert_alive().await;
    }
    assert_eq!(
        std::fs::read_to_string(root.join("inside.txt")).unwrap(),
        "inside\n"
    );
}
