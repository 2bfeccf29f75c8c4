//! Writers racing for one file: several rootbound servers on one root, and
//! programs outside rootbound that rewrite a file while an edit of it is
//! under way. Judged by the bytes on disk: every edit a server acknowledged
//! is in the file, and no outside write is replaced by content that was
//! computed from what it replaced.
// The servers' cross-process lock is `flock` (Unix); on Windows the check
// before the rename stands alone and is tested by the unit tests.
#![cfg(unix)]

mod common;

use std::path::Path;
use std::time::Duration;

use common::{Scratch, Server, all_text};
use serde_json::json;

/// `total` replaces with distinct markers, spread over `servers` servers
/// on one root, all sent at once.
async fn concurrent_replaces_across_servers(servers: usize, total: usize) {
    let dir = Scratch::new();
    let content: String = (0..total).map(|i| format!("item {i}\n")).collect();
    let f = dir.file("list.txt", &content);
    let mut started = Vec::new();
    for _ in 0..servers {
        started.push(Server::start(&[&dir.path], &[]).await);
    }
    let calls = (0..total).map(|i| {
        let server = &started[i % servers];
        async move {
            let result = server
                .call(
                    "replace",
                    json!({"file_path": "list.txt", "old_string": format!("item {i}\n"),
                           "new_string": format!("done {i}\n")}),
                )
                .await;
            (i, result.is_error != Some(true), all_text(&result))
        }
    });
    let results = futures::future::join_all(calls).await;
    let on_disk = std::fs::read_to_string(&f).unwrap();
    for (i, succeeded, text) in &results {
        if *succeeded {
            assert!(
                on_disk.contains(&format!("done {i}\n")),
                "replace {i} answered success but its edit is not in the file: {text}"
            );
        }
    }
    let failed: Vec<_> = results.iter().filter(|(_, ok, _)| !ok).collect();
    assert!(failed.is_empty(), "calls failed: {failed:?}");
    let expected: String = (0..total).map(|i| format!("done {i}\n")).collect();
    assert_eq!(on_disk, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_200_concurrent_replaces_lose_no_acknowledged_edit() {
    concurrent_replaces_across_servers(2, 200).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_servers_200_concurrent_replaces_lose_no_acknowledged_edit() {
    concurrent_replaces_across_servers(4, 200).await;
}

/// How long the servers below wait between writing their temporary file
/// and the final check (`ROOTBOUND_TEST_PAUSE_BEFORE_RENAME_MS`): the window
/// in which the outside writer strikes.
const PAUSE_MS: u64 = 800;

async fn paused_server(dir: &Scratch) -> Server {
    let pause = PAUSE_MS.to_string();
    Server::start_as(
        &[],
        &[&dir.path],
        &[],
        &[("ROOTBOUND_TEST_PAUSE_BEFORE_RENAME_MS", &pause)],
    )
    .await
}

/// A program outside rootbound writing the file: by renaming a new file
/// over it (as most editors save), or in place (same inode).
#[derive(Clone, Copy, Debug)]
enum Outside {
    RenameOver,
    InPlace,
}

impl Outside {
    fn write(self, path: &Path, content: &str) {
        match self {
            Outside::RenameOver => {
                let side = path.with_extension("editor-swap");
                std::fs::write(&side, content).unwrap();
                std::fs::rename(&side, path).unwrap();
            }
            Outside::InPlace => std::fs::write(path, content).unwrap(),
        }
    }
}

/// Writes `content` at each of `moments` (ms after the call was sent).
fn outside_writer(
    how: Outside,
    path: &Path,
    writes: Vec<(u64, String)>,
) -> tokio::task::JoinHandle<()> {
    let path = path.to_path_buf();
    tokio::spawn(async move {
        let start = tokio::time::Instant::now();
        for (at, content) in writes {
            tokio::time::sleep_until(start + Duration::from_millis(at)).await;
            how.write(&path, &content);
        }
    })
}

#[tokio::test]
async fn a_replace_whose_file_is_rewritten_mid_edit_is_applied_to_the_new_content() {
    for how in [Outside::RenameOver, Outside::InPlace] {
        let dir = Scratch::new();
        let f = dir.file("code.rs", "fn a() {}\nfn marker() {}\n");
        let server = paused_server(&dir).await;
        // Theirs keeps the marker, adds a line of its own and changes a
        // byte count: the edit must land on it, not on what was read.
        let theirs = "// added by the editor\nfn a() {}\nfn marker() {}\n";
        let writer = outside_writer(how, &f, vec![(PAUSE_MS / 3, theirs.into())]);
        let text = server
            .ok_text(
                "replace",
                json!({"file_path": "code.rs", "old_string": "fn marker() {}",
                       "new_string": "fn edited() {}"}),
            )
            .await;
        writer.await.unwrap();
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            "// added by the editor\nfn a() {}\nfn edited() {}\n",
            "{how:?}: {text}"
        );
    }
}

#[tokio::test]
async fn a_replace_whose_marker_an_outside_writer_removed_fails_and_keeps_their_content() {
    let dir = Scratch::new();
    let f = dir.file("code.rs", "fn a() {}\nfn marker() {}\n");
    let server = paused_server(&dir).await;
    let theirs = "fn a() {}\nfn renamed_by_them() {}\n";
    let writer = outside_writer(Outside::InPlace, &f, vec![(PAUSE_MS / 3, theirs.into())]);
    let message = server
        .err_text(
            "replace",
            json!({"file_path": "code.rs", "old_string": "fn marker() {}",
                   "new_string": "fn edited() {}"}),
        )
        .await;
    writer.await.unwrap();
    assert!(message.contains("0 occurrences"), "{message}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), theirs);
}

#[tokio::test]
async fn a_replace_whose_file_keeps_changing_is_refused_and_keeps_the_last_outside_write() {
    let dir = Scratch::new();
    let f = dir.file("code.rs", "fn marker() {}\n");
    let server = paused_server(&dir).await;
    // One write in the first attempt's window, one in the retry's.
    let writes = vec![
        (PAUSE_MS / 3, "fn marker() {}\n// one\n".to_string()),
        (
            PAUSE_MS + PAUSE_MS / 2,
            "fn marker() {}\n// two\n".to_string(),
        ),
    ];
    let writer = outside_writer(Outside::RenameOver, &f, writes);
    let message = server
        .err_text(
            "replace",
            json!({"file_path": "code.rs", "old_string": "fn marker() {}",
                   "new_string": "fn edited() {}"}),
        )
        .await;
    writer.await.unwrap();
    assert!(message.contains("changed on disk"), "{message}");
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        "fn marker() {}\n// two\n"
    );
}

#[tokio::test]
async fn a_write_file_over_content_it_did_not_read_is_refused() {
    for how in [Outside::RenameOver, Outside::InPlace] {
        let dir = Scratch::new();
        let f = dir.file("notes.txt", "as read\n");
        let server = paused_server(&dir).await;
        let theirs = "written meanwhile by an editor\n";
        let writer = outside_writer(how, &f, vec![(PAUSE_MS / 3, theirs.into())]);
        let message = server
            .err_text(
                "write_file",
                json!({"file_path": "notes.txt", "content": "mine\n"}),
            )
            .await;
        writer.await.unwrap();
        assert!(message.contains("changed on disk"), "{how:?}: {message}");
        assert!(message.contains("Nothing was written"), "{message}");
        assert_eq!(std::fs::read_to_string(&f).unwrap(), theirs, "{how:?}");
        assert_eq!(leftovers(&dir.path), ["notes.txt"], "{how:?}");
    }
}

#[tokio::test]
async fn a_new_file_that_an_outside_writer_creates_first_is_not_replaced() {
    let dir = Scratch::new();
    let server = paused_server(&dir).await;
    let f = dir.path.join("new.txt");
    let theirs = "created by someone else\n";
    let writer = outside_writer(Outside::RenameOver, &f, vec![(PAUSE_MS / 3, theirs.into())]);
    let message = server
        .err_text(
            "write_file",
            json!({"file_path": "new.txt", "content": "mine\n"}),
        )
        .await;
    writer.await.unwrap();
    assert!(message.contains("changed on disk"), "{message}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), theirs);
}

/// The names in `dir`, sorted: no temporary file may be left.
fn leftovers(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
