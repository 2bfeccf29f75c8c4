//! What writes do besides writing: refuse a file whose mode says read-only,
//! whoever the server runs as, and clear away the temporary files that
//! crashed writes left behind (where a write goes, and at start).
// Builds Unix trees (symlinks, FIFOs, modes) or runs Unix programs; the
// Windows build is checked by the unit tests and the smoke test under Wine
// (.ci/cross.sh).
#![cfg(unix)]

mod common;

use std::os::unix::fs::PermissionsExt;

use common::{Scratch, Server};
use serde_json::json;

#[tokio::test]
async fn a_file_whose_mode_denies_writing_is_refused_even_for_root() {
    let dir = Scratch::new();
    let locked = dir.file("locked.txt", "keep me\n");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o444)).unwrap();
    let server = Server::start(&[&dir.path], &[]).await;

    let message = server
        .err_text(
            "write_file",
            json!({"file_path": "locked.txt", "content": "overwritten\n"}),
        )
        .await;
    assert!(message.contains("read-only (mode 0444)"), "{message}");
    assert!(message.contains(&locked.display().to_string()), "{message}");
    let message = server
        .err_text(
            "replace",
            json!({"file_path": "locked.txt", "old_string": "keep", "new_string": "lose"}),
        )
        .await;
    assert!(message.contains("read-only (mode 0444)"), "{message}");
    assert_eq!(std::fs::read_to_string(&locked).unwrap(), "keep me\n");
    let mode = std::fs::metadata(&locked).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o444);

    // Writable by its owner only: still written (by its owner, or by root).
    let owned = dir.file("owned.txt", "old\n");
    std::fs::set_permissions(&owned, std::fs::Permissions::from_mode(0o644)).unwrap();
    server
        .ok_text(
            "write_file",
            json!({"file_path": "owned.txt", "content": "new\n"}),
        )
        .await;
    assert_eq!(std::fs::read_to_string(&owned).unwrap(), "new\n");
}

/// The pid of a process that has ended.
fn ended_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// Waits until `path` is gone (the sweep at start removed it).
async fn until_removed(path: &std::path::Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while path.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "{} still there 20 s after start",
            path.display()
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn temp_files_of_ended_processes_are_removed_when_a_write_touches_their_directory() {
    let dir = Scratch::new();
    let dead = ended_pid();
    let alive = std::process::id();
    // Directories made after the sweep at start: only a write sweeps them.
    let sentinel = dir.file(&format!(".rootbound-{dead}-99.tmp"), "half a write");
    let server = Server::start(&[&dir.path], &[]).await;
    until_removed(&sentinel).await;
    let stale = [
        format!("sub/.rootbound-{dead}-0.tmp"),
        format!("sub/.rootbound-{dead}-17.tmp"),
    ];
    let kept = [
        format!("sub/.rootbound-{alive}-3.tmp"),
        "sub/.rootbound-notes.tmp".to_string(),
        "sub/rootbound-1-1.tmp".to_string(),
        format!("other/.rootbound-{dead}-1.tmp"),
    ];
    for name in stale.iter().chain(&kept) {
        dir.file(name, "half a write");
    }
    server
        .ok_text(
            "write_file",
            json!({"file_path": "sub/new.txt", "content": "x\n"}),
        )
        .await;
    for name in &stale {
        assert!(!dir.path.join(name).exists(), "{name} is still there");
    }
    for name in &kept {
        assert!(dir.path.join(name).exists(), "{name} was removed");
    }
}

#[tokio::test]
async fn temp_files_of_ended_processes_are_removed_at_start_without_any_write() {
    let dir = Scratch::new();
    let dead = ended_pid();
    let alive = std::process::id();
    let stale = [
        format!(".rootbound-{dead}-0.tmp"),
        format!("src/.rootbound-{dead}-4.tmp"),
        format!("src/deep/er/.rootbound-{dead}-9.tmp"),
    ];
    let kept = [
        format!("src/.rootbound-{alive}-3.tmp"),
        "src/.rootbound-notes.tmp".to_string(),
        format!(".git/.rootbound-{dead}-2.tmp"),
    ];
    for name in stale.iter().chain(&kept) {
        dir.file(name, "half a write");
    }
    // A read-only server removes nothing.
    let read_only = Server::start(&[&dir.path], &["--read-only"]).await;
    read_only.assert_alive().await;
    // Well past the moment a sweep would start (200 ms after start).
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;
    for name in &stale {
        assert!(
            dir.path.join(name).exists(),
            "{name} removed by a read-only server"
        );
    }
    drop(read_only);

    let server = Server::start(&[&dir.path], &[]).await;
    // The sweep runs beside the session: the server answers meanwhile.
    server.assert_alive().await;
    for name in &stale {
        until_removed(&dir.path.join(name)).await;
    }
    for name in &kept {
        assert!(dir.path.join(name).exists(), "{name} was removed");
    }
}
