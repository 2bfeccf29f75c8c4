//! What writes do besides writing: refuse a file whose mode says read-only,
//! whoever the server runs as, and clear away the temporary files that
//! crashed writes left behind.
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

#[tokio::test]
async fn temp_files_of_ended_processes_are_removed_when_a_write_touches_their_directory() {
    let dir = Scratch::new();
    let dead = ended_pid();
    let alive = std::process::id();
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
    let server = Server::start(&[&dir.path], &[]).await;
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
