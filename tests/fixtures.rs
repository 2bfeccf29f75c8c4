//! The committed files of `fixtures/` through the real binary: the kinds of
//! files users have (UTF-16 and CRLF text, a PNG, a PDF, a Next.js tree with
//! bracketed route folders and a git-ignored build folder). Each test works
//! on a copy in a git work tree of its own, so edits never touch the
//! repository and `.gitignore` applies as it does in a user's project.

mod common;

use std::path::{Path, PathBuf};

use base64::Engine;
use common::{Scratch, Server, all_text};
use rmcp::model::{ContentBlock, ResourceContents};
use serde_json::json;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A copy of `fixtures/` in a fresh git work tree.
fn copy_of_fixtures() -> Scratch {
    let dir = Scratch::new();
    copy_tree(&fixtures(), &dir.path);
    let status = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&dir.path)
        .status()
        .expect("git is installed");
    assert!(status.success());
    dir
}

fn b64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

#[test]
fn the_generated_fixtures_match_their_script() {
    let out = std::process::Command::new("python3")
        .arg(fixtures().join("make_fixtures.py"))
        .arg("--check")
        .output()
        .expect("python3 is installed");
    assert!(
        out.status.success(),
        "fixtures differ from fixtures/make_fixtures.py:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[tokio::test]
async fn utf16_and_crlf_files_are_read_decoded_and_edited_in_their_own_bytes() {
    let dir = copy_of_fixtures();
    let server = Server::start(&[&dir.path], &[]).await;

    let notes = dir.path.join("text/release-notes.utf16.txt");
    let text = server
        .ok_text("read_file", json!({"path": notes.to_str().unwrap()}))
        .await;
    assert!(text.starts_with("Release notes\r\n"), "{text:?}");
    assert!(text.contains("Grüße aus Köln"), "{text:?}");
    assert!(text.contains("日本語 and an emoji 🚀"), "{text:?}");

    // An edit of the UTF-16 file writes UTF-16 with its BOM and CRLF endings.
    let before = std::fs::read(&notes).unwrap();
    server
        .ok_text(
            "replace",
            json!({"file_path": notes.to_str().unwrap(),
                   "old_string": "Line six is the last one.",
                   "new_string": "Line six is still the last one."}),
        )
        .await;
    let after = std::fs::read(&notes).unwrap();
    assert_eq!(&after[..2], b"\xff\xfe", "the byte-order mark is kept");
    let expected = String::from_utf16(
        &before[2..]
            .chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect::<Vec<_>>(),
    )
    .unwrap()
    .replace(
        "Line six is the last one.",
        "Line six is still the last one.",
    );
    let expected: Vec<u8> = std::iter::once([0xff, 0xfe])
        .chain(expected.encode_utf16().map(u16::to_le_bytes))
        .flatten()
        .collect();
    assert_eq!(after, expected, "only the replaced words changed");

    // An edit of the CRLF file changes the one line and keeps every CR LF.
    let ini = dir.path.join("text/settings.crlf.ini");
    let before = std::fs::read_to_string(&ini).unwrap();
    server
        .ok_text(
            "replace",
            json!({"file_path": ini.to_str().unwrap(),
                   "old_string": "host = localhost\nport = 8080",
                   "new_string": "host = localhost\nport = 9090\ntimeout = 30"}),
        )
        .await;
    let after = std::fs::read_to_string(&ini).unwrap();
    assert_eq!(
        after,
        before.replace("port = 8080\r\n", "port = 9090\r\ntimeout = 30\r\n")
    );
}

#[tokio::test]
async fn the_png_and_the_pdf_come_back_as_media_blocks_with_their_bytes() {
    let dir = copy_of_fixtures();
    let server = Server::start(&[&dir.path], &[]).await;

    let png = std::fs::read(dir.path.join("media/gradient.png")).unwrap();
    let result = server
        .call("read_file", json!({"path": "media/gradient.png"}))
        .await;
    let image = result
        .content
        .iter()
        .find_map(|c| match c {
            ContentBlock::Image(i) => Some(i),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no image block: {result:?}"));
    assert_eq!(image.mime_type, "image/png");
    assert_eq!(image.data, b64(&png));

    let pdf = std::fs::read(dir.path.join("media/one-page.pdf")).unwrap();
    let result = server
        .call("read_file", json!({"path": "media/one-page.pdf"}))
        .await;
    let blob = result
        .content
        .iter()
        .find_map(|c| match c {
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::BlobResourceContents {
                    mime_type, blob, ..
                } if mime_type.as_deref() == Some("application/pdf") => Some(blob.clone()),
                _ => None,
            },
            _ => None,
        })
        .unwrap_or_else(|| panic!("no PDF resource: {result:?}"));
    assert_eq!(blob, b64(&pdf));
}

#[tokio::test]
async fn next_app_routes_are_taken_literally_and_the_build_folder_stays_ignored() {
    let dir = copy_of_fixtures();
    let app = dir.path.join("next-app");
    let server = Server::start(&[&app], &[]).await;

    // Brackets and parentheses are glob syntax; an existing path is literal.
    let text = server
        .ok_text("glob", json!({"pattern": "app/[id]/page.tsx"}))
        .await;
    assert!(text.starts_with("Found 1 file(s)"), "{text}");
    assert!(
        text.ends_with(&format!("\n{}", app.join("app/[id]/page.tsx").display())),
        "{text}"
    );
    let text = server
        .ok_text(
            "read_many_files",
            json!({"paths": ["app/[id]/page.tsx", "app/(marketing)/about/page.tsx"]}),
        )
        .await;
    assert!(
        text.contains("export default async function ProductPage"),
        "{text}"
    );
    assert!(text.contains("export default function About"), "{text}");

    // `.next/` is in next-app/.gitignore: counted, never shown or searched.
    let text = server.ok_text("list_directory", json!({"path": "."})).await;
    assert!(text.ends_with("\n\n(1 ignored)"), "{text}");
    assert!(!text.contains(".next"), "{text}");
    let text = server.ok_text("glob", json!({"pattern": "**/*.js"})).await;
    assert!(text.starts_with("No files found"), "{text}");
    assert!(text.contains("(1 files were ignored)"), "{text}");
    let result = server
        .call("search_file_content", json!({"pattern": "Product 42"}))
        .await;
    let text = all_text(&result);
    assert!(text.contains("File: app/page.tsx"), "{text}");
    assert!(!text.contains(".next"), "{text}");
}
