//! What an atomic write keeps of the file it replaces, judged by the bits,
//! owners and attributes on disk afterwards (read back with `stat`,
//! `getfattr` and `getfacl`): owner and group, set-id bits, extended
//! attributes (`user.*`, `trusted.*`, `security.capability`), POSIX ACLs;
//! what it refuses when one cannot be kept (run as another user with
//! `setpriv`); and what it says about hard links.
//!
//! Needs `getfattr`/`setfattr` (Debian's `attr`), `getfacl`/`setfacl`
//! (`acl`) and `setpriv` (`util-linux`), installed by `.ci/setup.sh`: a
//! missing tool fails the test. Runs as root, as CI does: it gives files to
//! other users and sets attributes only root may.
#![cfg(target_os = "linux")]

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use common::{Scratch, Server};
use serde_json::json;

/// Runs a tool that the test needs, failing (not skipping) without it.
fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("`{program}` is needed (installed by .ci/setup.sh) and could not run: {e}")
        });
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Every extended attribute of `path`, as `getfattr` shows them (hex).
fn xattrs(path: &Path) -> String {
    run(
        "getfattr",
        &[
            "--absolute-names",
            "-d",
            "-m",
            "-",
            "-e",
            "hex",
            path_str(path),
        ],
    )
    .lines()
    .filter(|l| !l.starts_with('#'))
    .collect::<Vec<_>>()
    .join("\n")
}

/// The ACL of `path`, as `getfacl` shows it.
fn acl(path: &Path) -> String {
    run(
        "getfacl",
        &["--absolute-names", "--omit-header", path_str(path)],
    )
}

async fn edit(server: &Server, rel: &str) -> String {
    server
        .ok_text(
            "replace",
            json!({"file_path": rel, "old_string": "old", "new_string": "new"}),
        )
        .await
}

#[tokio::test]
async fn owner_group_and_set_id_bits_are_kept() {
    let dir = Scratch::new();
    let server = Server::start(&[&dir.path], &[]).await;
    for mode in [0o2755, 0o4755, 0o6750, 0o1644, 0o640] {
        let f = dir.file("tool.sh", "old\n");
        std::os::unix::fs::chown(&f, Some(1234), Some(5678)).unwrap();
        // After the chown: it clears set-id bits.
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode)).unwrap();
        edit(&server, "tool.sh").await;
        let after = std::fs::metadata(&f).unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "new\n");
        assert_eq!(
            after.mode() & 0o7777,
            mode,
            "mode {mode:o} became {:o}",
            after.mode() & 0o7777
        );
        assert_eq!((after.uid(), after.gid()), (1234, 5678), "mode {mode:o}");
    }
}

#[tokio::test]
async fn extended_attributes_are_kept() {
    let dir = Scratch::new();
    let f = dir.file("bin.sh", "old\n");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = path_str(&f);
    run("setfattr", &["-n", "user.origin", "-v", "downloaded", file]);
    run("setfattr", &["-n", "user.empty", file]);
    run("setfattr", &["-n", "trusted.note", "-v", "0x00ff10", file]);
    // cap_net_bind_service, permitted and effective (vfs_cap_data v2).
    run(
        "setfattr",
        &[
            "-n",
            "security.capability",
            "-v",
            "0x0100000200040000000000000000000000000000",
            file,
        ],
    );
    let before = xattrs(&f);
    assert!(before.contains("security.capability"), "{before}");
    let server = Server::start(&[&dir.path], &[]).await;
    edit(&server, "bin.sh").await;
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "new\n");
    assert_eq!(xattrs(&f), before);
    assert_eq!(std::fs::metadata(&f).unwrap().mode() & 0o7777, 0o755);
    // write_file keeps them too.
    server
        .ok_text(
            "write_file",
            json!({"file_path": "bin.sh", "content": "newer\n"}),
        )
        .await;
    assert_eq!(xattrs(&f), before);
}

#[tokio::test]
async fn a_posix_acl_is_kept_and_not_widened_to_the_group() {
    let dir = Scratch::new();
    let f = dir.file("shared.txt", "old\n");
    run(
        "setfacl",
        &[
            "--set",
            "u::rw-,u:1234:rw-,g::---,m::rw-,o::---",
            path_str(&f),
        ],
    );
    let before = acl(&f);
    assert!(before.contains("user:1234:rw-"), "{before}");
    let server = Server::start(&[&dir.path], &[]).await;
    edit(&server, "shared.txt").await;
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "new\n");
    let after = acl(&f);
    assert_eq!(after, before);
    assert!(after.contains("group::---"), "{after}");
    assert_eq!(std::fs::metadata(&f).unwrap().mode() & 0o777, 0o660);
}

#[tokio::test]
async fn a_default_acl_of_the_directory_is_not_added_to_a_file_that_had_none() {
    let dir = Scratch::new();
    let sub = dir.dir("team");
    run(
        "setfacl",
        &["-d", "-m", "u:1234:rwx,g::rwx,o::rwx", path_str(&sub)],
    );
    let f = dir.file("team/private.txt", "old\n");
    // The file was made without the inherited ACL: only its owner reads it.
    run("setfacl", &["-b", path_str(&f)]);
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    let server = Server::start(&[&dir.path], &[]).await;
    edit(&server, "team/private.txt").await;
    let after = acl(&f);
    assert!(!after.contains("1234"), "{after}");
    assert_eq!(std::fs::metadata(&f).unwrap().mode() & 0o7777, 0o600);
    assert_eq!(xattrs(&f), "");
}

/// Runs the server as user 1234 (no capabilities): what it cannot keep, it
/// must refuse to write.
async fn server_as_1234(dir: &Scratch) -> Server {
    run("setpriv", &["--version"]);
    std::fs::set_permissions(&dir.path, std::fs::Permissions::from_mode(0o777)).unwrap();
    Server::start_as(
        &["setpriv", "--reuid=1234", "--regid=1234", "--clear-groups"],
        &[&dir.path],
        &[],
        &[],
    )
    .await
}

#[tokio::test]
async fn what_cannot_be_kept_is_refused_not_dropped() {
    let dir = Scratch::new();
    // Another user's file, writable by all: replacing it as user 1234
    // would make it 1234's.
    let theirs = dir.file("theirs.txt", "old\n");
    std::os::unix::fs::chown(&theirs, Some(4321), Some(4321)).unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o666)).unwrap();
    // 1234's own file with a file capability, which only a privileged
    // process may set.
    let capable = dir.file("capable.sh", "old\n");
    // Before the capability: a chown clears it.
    std::os::unix::fs::chown(&capable, Some(1234), Some(1234)).unwrap();
    run(
        "setfattr",
        &[
            "-n",
            "security.capability",
            "-v",
            "0x0100000200040000000000000000000000000000",
            path_str(&capable),
        ],
    );
    let capable_attrs = xattrs(&capable);
    assert!(
        capable_attrs.contains("security.capability"),
        "{capable_attrs}"
    );
    let server = server_as_1234(&dir).await;

    let message = server
        .err_text(
            "replace",
            json!({"file_path": "theirs.txt", "old_string": "old", "new_string": "new"}),
        )
        .await;
    assert!(
        message.contains("owner (user 4321, group 4321) cannot be kept"),
        "{message}"
    );
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "old\n");
    assert_eq!(std::fs::metadata(&theirs).unwrap().uid(), 4321);

    let message = server
        .err_text(
            "write_file",
            json!({"file_path": "capable.sh", "content": "new\n"}),
        )
        .await;
    assert!(
        message.contains("security.capability cannot be kept"),
        "{message}"
    );
    assert_eq!(std::fs::read_to_string(&capable).unwrap(), "old\n");
    assert_eq!(xattrs(&capable), capable_attrs);

    // Its own plain file is written as usual, and nothing is left behind.
    let own = dir.file("own.txt", "old\n");
    std::os::unix::fs::chown(&own, Some(1234), Some(1234)).unwrap();
    edit(&server, "own.txt").await;
    assert_eq!(std::fs::read_to_string(&own).unwrap(), "new\n");
    let mut names: Vec<String> = std::fs::read_dir(&dir.path)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["capable.sh", "own.txt", "theirs.txt"]);
}

#[tokio::test]
async fn an_edit_of_a_hard_linked_file_says_the_other_links_keep_the_old_content() {
    let dir = Scratch::new();
    let f = dir.file("a.txt", "old\n");
    std::fs::hard_link(&f, dir.path.join("b.txt")).unwrap();
    let server = Server::start(&[&dir.path], &[]).await;
    let text = edit(&server, "a.txt").await;
    assert!(text.contains("had 1 other hard link"), "{text}");
    assert!(text.contains("that link keeps the old content"), "{text}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "new\n");
    assert_eq!(
        std::fs::read_to_string(dir.path.join("b.txt")).unwrap(),
        "old\n"
    );
    // Now a file of its own: no note.
    let text = server
        .ok_text(
            "write_file",
            json!({"file_path": "a.txt", "content": "newer\n"}),
        )
        .await;
    assert!(!text.contains("hard link"), "{text}");
}
