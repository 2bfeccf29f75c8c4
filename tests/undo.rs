//! Undo and history (docs/tools.md, "Undo"): the journal of edits, the
//! model's `undo_edit`, the user's `rootbound history` and `rootbound undo`,
//! and write_file's refusal to overwrite a change the session has not seen.
//! Judged by the bytes, mode and presence of files on disk.
// The journal's sharing between servers rests on `flock` and the tests read
// modes: Unix.
#![cfg(unix)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{BIN, Scratch, Server, all_text};
use serde_json::json;

/// A root and a state directory beside it (never inside it).
struct Setup {
    root: Scratch,
    state: Scratch,
}

impl Setup {
    fn new() -> Setup {
        Setup {
            root: Scratch::new(),
            state: Scratch::new(),
        }
    }

    fn state_arg(&self) -> String {
        self.state.path.display().to_string()
    }

    async fn server(&self, extra: &[&str]) -> Server {
        let state = self.state_arg();
        let mut args = vec!["--state-dir", state.as_str()];
        args.extend_from_slice(extra);
        Server::start(&[&self.root.path], &args).await
    }

    /// `rootbound --state-dir S <args>`.
    fn cli(&self, args: &[&str]) -> Output {
        std::process::Command::new(BIN)
            .arg("--state-dir")
            .arg(&self.state.path)
            .args(args)
            .output()
            .expect("run rootbound")
    }

    fn journal_bytes(&self) -> u64 {
        fn walk(dir: &Path) -> u64 {
            std::fs::read_dir(dir).map_or(0, |listing| {
                listing
                    .flatten()
                    // A file pruned meanwhile weighs nothing.
                    .map(|e| match e.metadata() {
                        Ok(meta) if meta.is_dir() => walk(&e.path()),
                        Ok(meta) => meta.len(),
                        Err(_) => 0,
                    })
                    .sum()
            })
        }
        walk(&self.state.path)
    }

    /// The journal comes down to `limit` bytes within a few seconds.
    async fn assert_settles_within(&self, limit: u64, edits: usize) {
        let mut stored = self.journal_bytes();
        for _ in 0..100 {
            if stored <= limit {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            stored = self.journal_bytes();
        }
        panic!("after {edits} edits the journal holds {stored} bytes, over {limit}");
    }

    /// The edits `rootbound history` lists.
    fn edit_count(&self) -> usize {
        let out = self.cli(&["history", "--last", "100000"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out).lines().filter(|l| l.starts_with("  ")).count()
    }

    fn entry_files(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        for journal in std::fs::read_dir(self.state.path.join("journal"))
            .into_iter()
            .flatten()
            .flatten()
        {
            for entry in std::fs::read_dir(journal.path().join("entries"))
                .into_iter()
                .flatten()
                .flatten()
            {
                found.push(entry.path());
            }
        }
        found
    }
}

fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[tokio::test]
async fn write_replace_replace_then_three_undos_give_back_the_original() {
    let s = Setup::new();
    let original = b"alpha\r\nbeta\r\ngamma\r\n";
    let f = s.root.file("notes.txt", original);
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
    let server = s.server(&[]).await;
    server
        .ok_text(
            "write_file",
            json!({"file_path": "notes.txt", "content": "one\ntwo\nthree\n"}),
        )
        .await;
    server
        .ok_text(
            "replace",
            json!({"file_path": "notes.txt", "old_string": "two", "new_string": "TWO"}),
        )
        .await;
    server
        .ok_text(
            "replace",
            json!({"file_path": "notes.txt", "old_string": "three", "new_string": "THREE"}),
        )
        .await;
    assert_eq!(std::fs::read(&f).unwrap(), b"one\r\nTWO\r\nTHREE\r\n");
    let steps: [&[u8]; 3] = [
        b"one\r\nTWO\r\nthree\r\n",
        b"one\r\ntwo\r\nthree\r\n",
        original,
    ];
    for expected in steps {
        let text = server
            .ok_text("undo_edit", json!({"file_path": "notes.txt"}))
            .await;
        assert!(text.starts_with("Undid the "), "{text}");
        assert_eq!(std::fs::read(&f).unwrap(), expected, "after: {text}");
        assert_eq!(mode_of(&f), 0o640);
    }
    // The other dialect's spelling of the path is accepted too.
    let text = server
        .err_text("undo_edit", json!({"path": "notes.txt"}))
        .await;
    assert!(text.starts_with("Nothing left to undo"), "{text}");
    assert_eq!(std::fs::read(&f).unwrap(), original);
}

#[tokio::test]
async fn an_edit_that_created_the_file_is_undone_by_removing_it() {
    let s = Setup::new();
    let server = s.server(&[]).await;
    server
        .ok_text(
            "write_file",
            json!({"file_path": "new/made.txt", "content": "fresh\n"}),
        )
        .await;
    let f = s.root.path.join("new/made.txt");
    assert!(f.exists());
    let text = server
        .ok_text("undo_edit", json!({"file_path": "new/made.txt"}))
        .await;
    assert!(
        text.contains("created the file, so it was removed"),
        "{text}"
    );
    assert!(!f.exists());
}

#[tokio::test]
async fn undo_refuses_after_another_program_changed_the_file_and_loses_nothing() {
    let s = Setup::new();
    let f = s.root.file("a.txt", "x = 1\ny = 2\n");
    let server = s.server(&[]).await;
    server
        .ok_text(
            "replace",
            json!({"file_path": "a.txt", "old_string": "x = 1", "new_string": "x = 10"}),
        )
        .await;
    // An editor saves the file afterwards.
    std::fs::write(&f, "x = 10\ny = 2\nz = 3\n").unwrap();
    let text = server
        .err_text("undo_edit", json!({"file_path": "a.txt"}))
        .await;
    assert!(text.contains("the file changed after that edit"), "{text}");
    assert!(
        text.contains("+z = 3"),
        "the diff shows what changed: {text}"
    );
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        "x = 10\ny = 2\nz = 3\n"
    );
    // The user's undo follows the same rule, even with --force.
    for force in [&[][..], &["--force"][..]] {
        let mut args = vec!["undo", f.to_str().unwrap()];
        args.extend_from_slice(force);
        let out = s.cli(&args);
        assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
        assert!(
            stderr(&out).contains("the file changed after that edit"),
            "{}",
            stderr(&out)
        );
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            "x = 10\ny = 2\nz = 3\n"
        );
    }
}

#[tokio::test]
async fn a_file_deleted_after_the_edit_comes_back_only_with_the_users_force() {
    let s = Setup::new();
    let f = s.root.file("gone.txt", "keep me\n");
    let server = s.server(&[]).await;
    server
        .ok_text(
            "replace",
            json!({"file_path": "gone.txt", "old_string": "keep", "new_string": "kept"}),
        )
        .await;
    std::fs::remove_file(&f).unwrap();
    let text = server
        .err_text("undo_edit", json!({"file_path": "gone.txt"}))
        .await;
    assert!(text.contains("deleted after that edit"), "{text}");
    assert!(text.contains("--force"), "{text}");
    assert!(!f.exists());
    let out = s.cli(&["undo", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!f.exists());
    let out = s.cli(&["undo", f.to_str().unwrap(), "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "keep me\n");
}

#[tokio::test]
async fn history_lists_each_edit_and_shows_its_diff_and_undo_takes_its_id() {
    let s = Setup::new();
    let f = s.root.file("src/lib.rs", "fn a() {}\n");
    let server = s.server(&[]).await;
    server
        .ok_text(
            "replace",
            json!({"file_path": "src/lib.rs", "old_string": "fn a() {}", "new_string": "fn a() {}\nfn b() {}"}),
        )
        .await;
    server
        .ok_text(
            "write_file",
            json!({"file_path": "README", "content": "hello\n"}),
        )
        .await;
    let out = s.cli(&["history"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = stdout(&out);
    assert!(
        listed.starts_with(&format!("{}:\n", s.root.path.display())),
        "{listed}"
    );
    let lines: Vec<&str> = listed.lines().skip(1).collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert!(
        lines[0].contains(" replace ")
            && lines[0].contains("+1 -0")
            && lines[0].ends_with("src/lib.rs"),
        "{listed}"
    );
    assert!(
        lines[1].contains(" write_file ") && lines[1].ends_with("README"),
        "{listed}"
    );
    // Only one file's edits.
    let only = stdout(&s.cli(&["history", f.to_str().unwrap()]));
    assert_eq!(only.lines().count(), 2, "{only}");
    let id = lines[0].split_whitespace().next().unwrap();
    let diff = stdout(&s.cli(&["history", "--diff", id]));
    assert!(diff.contains("+fn b() {}"), "{diff}");
    // Undo by ID while the server runs, then the server's own undo of the
    // same file finds nothing left.
    let out = s.cli(&["undo", id]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "fn a() {}\n");
    assert!(stdout(&s.cli(&["history"])).contains("(undone)"));
    let text = server
        .err_text("undo_edit", json!({"file_path": "src/lib.rs"}))
        .await;
    assert!(text.starts_with("Nothing left to undo"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_root_journal_every_edit_and_undo_steps_back_through_all() {
    let s = Setup::new();
    let total = 40;
    let content: String = (0..total).map(|i| format!("item {i}\n")).collect();
    let f = s.root.file("list.txt", &content);
    let servers = [s.server(&[]).await, s.server(&[]).await];
    let calls = (0..total).map(|i| {
        let server = &servers[i % 2];
        async move {
            let result = server
                .call(
                    "replace",
                    json!({"file_path": "list.txt", "old_string": format!("item {i}\n"),
                           "new_string": format!("done {i}\n")}),
                )
                .await;
            assert_ne!(result.is_error, Some(true), "{}", all_text(&result));
        }
    });
    futures::future::join_all(calls).await;
    let done: String = (0..total).map(|i| format!("done {i}\n")).collect();
    assert_eq!(std::fs::read_to_string(&f).unwrap(), done);
    assert_eq!(s.edit_count(), total, "one entry per acknowledged edit");
    // Undone one at a time, alternately by each server and by the user,
    // every step succeeds and the last gives back the original.
    for step in 0..total {
        match step % 3 {
            2 => {
                let out = s.cli(&["undo", f.to_str().unwrap()]);
                assert_eq!(out.status.code(), Some(0), "step {step}: {}", stderr(&out));
            }
            n => {
                servers[n]
                    .ok_text("undo_edit", json!({"file_path": "list.txt"}))
                    .await;
            }
        }
    }
    assert_eq!(std::fs::read_to_string(&f).unwrap(), content);
}

#[tokio::test]
async fn a_thousand_edits_of_a_one_megabyte_file_stay_within_the_journals_limit() {
    let s = Setup::new();
    let line = "x".repeat(99) + "\n";
    let body = line.repeat(10_000); // 1,000,000 bytes
    s.root.file("big.txt", format!("counter 0\n{body}"));
    const LIMIT: u64 = 20 * 1024 * 1024;
    let server = s.server(&["--journal-max-mb", "20"]).await;
    for i in 0..1000 {
        server
            .ok_text(
                "replace",
                json!({"file_path": "big.txt", "old_string": format!("counter {i}\n"),
                       "new_string": format!("counter {}\n", i + 1)}),
            )
            .await;
        if i % 100 == 99 {
            // Pruning runs beside the edits, and catches up within moments;
            // it is never allowed to fall behind to twice the limit.
            let stored = s.journal_bytes();
            assert!(stored <= 2 * LIMIT, "after {} edits: {stored} bytes", i + 1);
            s.assert_settles_within(LIMIT, i + 1).await;
        }
    }
    // The newest edits are still undoable.
    server
        .ok_text("undo_edit", json!({"file_path": "big.txt"}))
        .await;
    let text = std::fs::read_to_string(s.root.path.join("big.txt")).unwrap();
    assert!(text.starts_with("counter 999\n"));
}

#[tokio::test]
async fn an_edit_of_a_file_over_the_size_limit_says_it_is_not_journaled() {
    let s = Setup::new();
    s.root.file("large.txt", "line\n".repeat(400_000) + "end\n");
    let server = s.server(&["--journal-max-file-mb", "1"]).await;
    let text = server
        .ok_text(
            "replace",
            json!({"file_path": "large.txt", "old_string": "end", "new_string": "END"}),
        )
        .await;
    assert!(
        text.contains("not in the journal, so it cannot be undone"),
        "{text}"
    );
    assert!(text.contains("files over 1 MB are not journaled"), "{text}");
    assert_eq!(s.edit_count(), 0);
}

#[tokio::test]
async fn the_journal_is_private_and_holds_nothing_the_guard_refused() {
    let s = Setup::new();
    s.root.file("ok.txt", "fine\n");
    s.root.dir(".git/hooks");
    let outside = Scratch::new();
    let outside_file = outside.file("secret.txt", "secret\n");
    let server = s.server(&[]).await;
    server
        .err_text(
            "write_file",
            json!({"file_path": outside_file.to_str().unwrap(), "content": "x\n"}),
        )
        .await;
    server
        .err_text(
            "write_file",
            json!({"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}),
        )
        .await;
    assert_eq!(s.edit_count(), 0);
    server
        .ok_text(
            "replace",
            json!({"file_path": "ok.txt", "old_string": "fine", "new_string": "good"}),
        )
        .await;
    assert_eq!(s.edit_count(), 1);
    let entries = s.entry_files();
    assert_eq!(entries.len(), 1, "one log per server");
    let journal = entries[0].parent().unwrap().parent().unwrap();
    assert_eq!(
        mode_of(journal) & 0o077,
        0,
        "journal dir {:o}",
        mode_of(journal)
    );
    assert_eq!(mode_of(&entries[0]) & 0o077, 0);
    for blob in std::fs::read_dir(journal.join("blobs")).unwrap().flatten() {
        assert_eq!(
            mode_of(&blob.path()) & 0o077,
            0,
            "{}",
            blob.path().display()
        );
    }
    assert_eq!(std::fs::read_to_string(&outside_file).unwrap(), "secret\n");
}

#[tokio::test]
async fn a_state_directory_inside_a_root_keeps_no_journal() {
    let root = Scratch::new();
    root.file("a.txt", "one\n");
    let state = root.path.join(".state");
    let server = Server::start(&[&root.path], &["--state-dir", state.to_str().unwrap()]).await;
    let text = server
        .ok_text(
            "replace",
            json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
        )
        .await;
    assert!(text.contains("is inside the root"), "{text}");
    assert!(!state.exists(), "nothing was written inside the root");
}

#[tokio::test]
async fn write_file_over_a_change_the_session_has_not_seen_is_refused_until_read() {
    let s = Setup::new();
    let f = s.root.file("conf.txt", "a = 1\n");
    let server = s.server(&[]).await;
    server
        .ok_text("read_file", json!({"path": "conf.txt"}))
        .await;
    // A formatter rewrites it after the model read it.
    std::fs::write(&f, "a = 1\nb = 2\n").unwrap();
    let text = server
        .err_text(
            "write_file",
            json!({"file_path": "conf.txt", "content": "a = 5\n"}),
        )
        .await;
    assert!(
        text.contains("changed on disk since this session last read"),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "a = 1\nb = 2\n");
    // After reading it again, the write goes through.
    server
        .ok_text("read_file", json!({"path": "conf.txt"}))
        .await;
    server
        .ok_text(
            "write_file",
            json!({"file_path": "conf.txt", "content": "a = 5\nb = 2\n"}),
        )
        .await;
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "a = 5\nb = 2\n");
    // After the session's own write, an outside change is shown as a diff.
    std::fs::write(&f, "a = 5\nb = 3\n").unwrap();
    let text = server
        .err_text(
            "write_file",
            json!({"file_path": "conf.txt", "content": "a = 6\nb = 2\n"}),
        )
        .await;
    assert!(text.contains("-b = 2") && text.contains("+b = 3"), "{text}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "a = 5\nb = 3\n");
    // replace applies to the new content and says the file had changed.
    let text = server
        .ok_text(
            "replace",
            json!({"file_path": "conf.txt", "old_string": "a = 5", "new_string": "a = 7"}),
        )
        .await;
    assert!(
        text.contains("had changed on disk since this session last read"),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "a = 7\nb = 3\n");
    // A file the session never saw is not affected.
    let other = s.root.file("other.txt", "old\n");
    server
        .ok_text(
            "write_file",
            json!({"file_path": "other.txt", "content": "new\n"}),
        )
        .await;
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "new\n");
}

#[tokio::test]
async fn undo_edit_is_offered_in_both_dialects_and_can_be_disabled() {
    let s = Setup::new();
    for dialect in ["gemini-0.24", "gemini-current"] {
        let server = s.server(&["--dialect", dialect]).await;
        let tools = server.client.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "undo_edit"), "{dialect}");
        let server = s
            .server(&["--dialect", dialect, "--disable-tool", "undo_edit"])
            .await;
        let tools = server.client.list_all_tools().await.unwrap();
        assert!(!tools.iter().any(|t| t.name == "undo_edit"), "{dialect}");
    }
    let server = s.server(&["--read-only"]).await;
    let tools = server.client.list_all_tools().await.unwrap();
    assert!(!tools.iter().any(|t| t.name == "undo_edit"));
}

#[tokio::test]
async fn a_rewrite_that_keeps_the_size_and_sets_the_time_back_is_still_seen_as_a_change() {
    let s = Setup::new();
    let f = s.root.file("same.txt", "abc\n");
    let server = s.server(&[]).await;
    server
        .ok_text("read_file", json!({"path": "same.txt"}))
        .await;
    let modified = std::fs::metadata(&f).unwrap().modified().unwrap();
    std::fs::write(&f, "xyz\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    assert_eq!(std::fs::metadata(&f).unwrap().modified().unwrap(), modified);
    let text = server
        .err_text(
            "write_file",
            json!({"file_path": "same.txt", "content": "abd\n"}),
        )
        .await;
    assert!(text.contains("changed on disk since"), "{text}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "xyz\n");
}

#[tokio::test]
async fn a_state_directory_reached_through_a_link_into_a_root_keeps_no_journal() {
    let root = Scratch::new();
    root.file("a.txt", "one\n");
    let elsewhere = Scratch::new();
    let link = elsewhere.path.join("state-link");
    std::os::unix::fs::symlink(&root.path, &link).unwrap();
    // Through a link, and with the root inside the state directory.
    for state in [
        link.join(".state"),
        root.path.parent().unwrap().to_path_buf(),
    ] {
        let server = Server::start(&[&root.path], &["--state-dir", state.to_str().unwrap()]).await;
        let text = server
            .ok_text(
                "write_file",
                json!({"file_path": "a.txt", "content": format!("{}\n", state.display())}),
            )
            .await;
        assert!(text.contains("not in the journal"), "{text}");
        assert!(!root.path.join(".state").exists());
        assert!(!root.path.parent().unwrap().join("journal").exists());
    }
}

#[tokio::test]
async fn the_users_undo_refuses_a_root_replaced_by_a_link_and_writes_nothing_outside() {
    let s = Setup::new();
    let outside = Scratch::new();
    let server = s.server(&[]).await;
    server
        .ok_text(
            "write_file",
            json!({"file_path": "made.txt", "content": "x\n"}),
        )
        .await;
    server
        .ok_text(
            "write_file",
            json!({"file_path": "made.txt", "content": "y\n"}),
        )
        .await;
    drop(server);
    // The root's directory is moved away and a link to another takes its place.
    let moved = s.root.path.with_extension("moved");
    std::fs::rename(&s.root.path, &moved).unwrap();
    std::os::unix::fs::symlink(&outside.path, &s.root.path).unwrap();
    let listed = stdout(&s.cli(&["history"]));
    let id = listed
        .lines()
        .nth(2)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    let out = s.cli(&["undo", id, "--force"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("no longer the directory"),
        "{}",
        stderr(&out)
    );
    assert!(!outside.path.join("made.txt").exists());
    std::fs::remove_file(&s.root.path).unwrap();
    std::fs::rename(&moved, &s.root.path).unwrap();
}

#[tokio::test]
async fn a_file_brought_back_with_force_gets_its_old_permission_bits() {
    let s = Setup::new();
    let f = s.root.file("secret.env", "TOKEN=1\n");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    let server = s.server(&[]).await;
    server
        .ok_text(
            "replace",
            json!({"file_path": "secret.env", "old_string": "1", "new_string": "2"}),
        )
        .await;
    std::fs::remove_file(&f).unwrap();
    let out = s.cli(&["undo", f.to_str().unwrap(), "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "TOKEN=1\n");
    assert_eq!(mode_of(&f), 0o600);
}

#[tokio::test]
async fn write_file_refuses_a_path_that_now_leads_to_another_file() {
    let s = Setup::new();
    let a = s.root.file("a.txt", "a\n");
    let c = s.root.file("c.txt", "precious\n");
    let server = s.server(&[]).await;
    server.ok_text("read_file", json!({"path": "a.txt"})).await;
    std::fs::remove_file(&a).unwrap();
    std::os::unix::fs::symlink(&c, &a).unwrap();
    let text = server
        .err_text(
            "write_file",
            json!({"file_path": "a.txt", "content": "new\n"}),
        )
        .await;
    assert!(text.contains("leads to another file"), "{text}");
    assert_eq!(std::fs::read_to_string(&c).unwrap(), "precious\n");
}

#[tokio::test]
async fn undo_never_removes_through_a_link_or_a_read_only_file() {
    let s = Setup::new();
    let report = s.root.file("report.txt", "same\n");
    let server = s.server(&[]).await;
    server
        .ok_text(
            "write_file",
            json!({"file_path": "notes.txt", "content": "same\n"}),
        )
        .await;
    let notes = s.root.path.join("notes.txt");
    std::fs::remove_file(&notes).unwrap();
    std::os::unix::fs::symlink(&report, &notes).unwrap();
    let listed = stdout(&s.cli(&["history"]));
    let id = listed
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    let out = s.cli(&["undo", id]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert_eq!(std::fs::read_to_string(&report).unwrap(), "same\n");
    // A created file the user then made read-only stays.
    server
        .ok_text(
            "write_file",
            json!({"file_path": "ro.txt", "content": "keep\n"}),
        )
        .await;
    let ro = s.root.path.join("ro.txt");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    server
        .err_text("undo_edit", json!({"file_path": "ro.txt"}))
        .await;
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), "keep\n");
}

#[tokio::test]
async fn history_shows_control_characters_in_names_escaped() {
    let s = Setup::new();
    let server = s.server(&[]).await;
    let name = "evil\n  deadbeef  fake\u{1b}[2K.txt";
    server
        .ok_text("write_file", json!({"file_path": name, "content": "x\n"}))
        .await;
    let listed = stdout(&s.cli(&["history"]));
    assert!(!listed.contains('\u{1b}'), "{listed:?}");
    assert_eq!(listed.lines().count(), 2, "{listed:?}");
}

#[tokio::test]
async fn many_tiny_edits_keep_the_entries_within_the_limit_too() {
    let s = Setup::new();
    let long = format!("{}/f.txt", "d".repeat(200));
    let server = s.server(&["--journal-max-mb", "1"]).await;
    for i in 0..3000 {
        server
            .ok_text(
                "write_file",
                json!({"file_path": long, "content": format!("{}", i % 2)}),
            )
            .await;
    }
    s.assert_settles_within(1024 * 1024, 3000).await;
}
