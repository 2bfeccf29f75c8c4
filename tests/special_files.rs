//! Files that are not what they seem: FIFOs where the server reads files of
//! its own (ignore files) or searches, files swapped for FIFOs or for
//! symlinks to outside secrets while a walk is running. Every call must
//! answer, the server must keep answering, and no outside byte may show.
// Builds Unix trees (symlinks, FIFOs, modes) or runs Unix programs; the
// Windows build is checked by the unit tests and the smoke test under Wine
// (.ci/cross.sh).
#![cfg(unix)]

mod common;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{Scratch, Server, all_text};
use serde_json::{Value, json};

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(rc, 0, "mkfifo {}", path.display());
}

/// A call that must come back within a few seconds (a FIFO opened for
/// reading would block forever).
async fn answers(server: &Server, tool: &str, args: Value) -> String {
    let Value::Object(args) = args else {
        unreachable!()
    };
    let params = rmcp::model::CallToolRequestParams::new(tool.to_string()).with_arguments(args);
    let result = tokio::time::timeout(Duration::from_secs(10), server.client.call_tool(params))
        .await
        .unwrap_or_else(|_| panic!("{tool} did not answer within 10 s"))
        .unwrap_or_else(|e| panic!("{tool} failed at the protocol level: {e}"));
    all_text(&result)
}

async fn ping(server: &Server) {
    tokio::time::timeout(Duration::from_secs(10), server.assert_alive())
        .await
        .expect("the server answers tools/list within 10 s");
}

#[tokio::test]
async fn fifos_in_place_of_ignore_files_hang_no_tool() {
    let dir = Scratch::new();
    dir.file("a.txt", "needle\n");
    dir.file("sub/b.txt", "needle\n");
    dir.dir(".git/info");
    mkfifo(&dir.path.join(".gitignore"));
    mkfifo(&dir.path.join(".geminiignore"));
    mkfifo(&dir.path.join(".git/info/exclude"));
    mkfifo(&dir.path.join("sub/.gitignore"));
    let server = Server::start(&[&dir.path], &[]).await;

    let text = answers(&server, "read_file", json!({"path": "a.txt"})).await;
    assert_eq!(text, "needle\n");
    ping(&server).await;
    let text = answers(&server, "list_directory", json!({"path": "."})).await;
    assert!(text.contains("a.txt"), "{text}");
    ping(&server).await;
    let text = answers(&server, "glob", json!({"pattern": "**/*.txt"})).await;
    assert!(text.contains("Found 2 file(s)"), "{text}");
    let text = answers(&server, "search_file_content", json!({"pattern": "needle"})).await;
    assert!(text.contains("sub/b.txt"), "{text}");
    let text = answers(&server, "read_many_files", json!({"paths": ["**/*.txt"]})).await;
    assert!(text.contains("needle"), "{text}");
    let text = answers(&server, "list_directory", json!({"path": "sub"})).await;
    assert!(text.contains("b.txt"), "{text}");
    ping(&server).await;
}

#[tokio::test]
async fn a_fifo_searched_by_name_or_found_by_a_walk_hangs_nothing() {
    let dir = Scratch::new();
    dir.file("a.txt", "needle\n");
    mkfifo(&dir.path.join("pipe.txt"));
    let server = Server::start(&[&dir.path], &[]).await;

    let text = answers(
        &server,
        "search_file_content",
        json!({"pattern": "needle", "path": "pipe.txt"}),
    )
    .await;
    assert!(!text.contains("pipe.txt:"), "{text}");
    let text = answers(&server, "search_file_content", json!({"pattern": "needle"})).await;
    assert!(text.contains("a.txt"), "{text}");
    let text = answers(
        &server,
        "read_many_files",
        json!({"paths": ["pipe.txt", "a.txt"]}),
    )
    .await;
    assert!(text.contains("needle"), "{text}");
    let text = answers(&server, "read_file", json!({"path": "pipe.txt"})).await;
    assert!(text.contains("FIFO"), "{text}");
    ping(&server).await;
}

/// Runs `swap` over and over on another thread until the returned guard is
/// dropped.
struct Swapper {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<usize>>,
}

impl Swapper {
    fn start(mut swap: impl FnMut() + Send + 'static) -> Swapper {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut rounds = 0;
            while !flag.load(Ordering::Relaxed) {
                swap();
                rounds += 1;
            }
            rounds
        });
        Swapper {
            stop,
            thread: Some(thread),
        }
    }

    fn finish(mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap()
    }
}

#[tokio::test]
async fn files_swapped_for_fifos_during_walks_hang_nothing() {
    let dir = Scratch::new();
    let files = 20;
    for i in 0..files {
        dir.file(&format!("f{i}.txt"), "needle\n");
    }
    let root = dir.path.clone();
    let swapper = Swapper::start(move || {
        for i in 0..files {
            let target = root.join(format!("f{i}.txt"));
            let fifo = root.join(format!(".fifo{i}"));
            let regular = root.join(format!(".regular{i}"));
            mkfifo(&fifo);
            std::fs::rename(&fifo, &target).unwrap();
            std::fs::write(&regular, "needle\n").unwrap();
            std::fs::rename(&regular, &target).unwrap();
        }
    });
    let server = Server::start(&[&dir.path], &[]).await;
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut calls = 0;
    while Instant::now() < deadline {
        answers(
            &server,
            "search_file_content",
            json!({"pattern": "needle", "no_ignore": true}),
        )
        .await;
        answers(&server, "read_many_files", json!({"paths": ["*.txt"]})).await;
        answers(&server, "glob", json!({"pattern": "*.txt"})).await;
        ping(&server).await;
        calls += 3;
    }
    let rounds = swapper.finish();
    assert!(rounds > 0 && calls > 0);
    ping(&server).await;
}

/// A file swapped between a regular file and a symlink to an outside secret,
/// searched over and over: the secret never shows.
#[tokio::test]
async fn search_never_reads_through_a_file_swapped_for_an_outside_symlink() {
    let outside = Scratch::new();
    let secret = outside.file("secret.txt", "needle OUTSIDE-SECRET\n");
    let dir = Scratch::new();
    let files = 20;
    for i in 0..files {
        dir.file(&format!("f{i}.txt"), "needle inside\n");
    }
    let root = dir.path.clone();
    let swapper = Swapper::start(move || {
        for i in 0..files {
            let target = root.join(format!("f{i}.txt"));
            let link = root.join(format!(".link{i}"));
            let regular = root.join(format!(".regular{i}"));
            std::os::unix::fs::symlink(&secret, &link).unwrap();
            std::fs::rename(&link, &target).unwrap();
            std::fs::write(&regular, "needle inside\n").unwrap();
            std::fs::rename(&regular, &target).unwrap();
        }
    });
    let server = Server::start(&[&dir.path], &[]).await;
    let deadline = Instant::now() + Duration::from_secs(4);
    let (mut calls, mut inside_seen) = (0, 0);
    while Instant::now() < deadline {
        for args in [
            json!({"pattern": "needle", "no_ignore": true}),
            json!({"pattern": "needle", "path": "f0.txt"}),
            json!({"pattern": "needle", "names_only": true}),
        ] {
            let text = answers(&server, "search_file_content", args).await;
            assert!(
                !text.contains("OUTSIDE-SECRET"),
                "leaked after {calls} calls: {text}"
            );
            inside_seen += usize::from(text.contains("needle inside"));
            calls += 1;
        }
    }
    let rounds = swapper.finish();
    assert!(rounds > 0, "the swapper never ran");
    assert!(
        inside_seen > 0,
        "no search saw the files at all ({calls} calls)"
    );
    eprintln!("{calls} searches during {rounds} swap rounds of {files} files: no outside byte");
}

/// Names holding a newline, a carriage return, an ANSI escape or bytes that
/// are not UTF-8: every listing shows them escaped, one entry per line, and
/// says so.
#[tokio::test]
async fn control_characters_and_invalid_utf8_in_names_are_escaped() {
    use std::ffi::OsStr;
    let dir = Scratch::new();
    let names: [&[u8]; 4] = [
        b"two\nlines.txt",
        b"red\x1b[31m.txt",
        b"bad\xff.txt",
        b"plain.txt",
    ];
    for name in names {
        std::fs::write(dir.path.join(OsStr::from_bytes(name)), "needle\n").unwrap();
    }
    std::fs::create_dir(dir.path.join("sub\rdir")).unwrap();
    let server = Server::start(&[&dir.path], &[]).await;
    let shown = [
        "two\\nlines.txt",
        "red\\x1B[31m.txt",
        "bad\\xFF.txt",
        "plain.txt",
    ];
    let clean = |text: &str| !text.contains(['\r', '\x1b', '\u{fffd}']);

    let listing = answers(&server, "list_directory", json!({"path": "."})).await;
    assert!(clean(&listing), "{listing:?}");
    assert!(listing.contains("\n[DIR] sub\\rdir\n"), "{listing}");
    for name in shown {
        assert!(listing.lines().any(|l| l == name), "{name} in {listing}");
    }
    assert!(!listing.lines().any(|l| l == "lines.txt"), "{listing}");
    assert!(listing.contains("cannot be given back"), "{listing}");

    let globbed = answers(&server, "glob", json!({"pattern": "*.txt"})).await;
    assert!(globbed.contains("Found 4 file(s)"), "{globbed}");
    assert!(clean(&globbed), "{globbed:?}");
    for name in shown {
        let line = format!("{}/{name}", dir.path.display());
        assert!(globbed.lines().any(|l| l == line), "{line} in {globbed}");
    }

    let found = answers(&server, "search_file_content", json!({"pattern": "needle"})).await;
    assert!(found.contains("Found 4 matches"), "{found}");
    assert!(clean(&found), "{found:?}");
    for name in shown {
        assert!(
            found.contains(&format!("File: {name}\n")),
            "{name} in {found}"
        );
    }
    assert!(
        found.contains("(Some names hold control characters"),
        "{found}"
    );

    let read = answers(&server, "read_many_files", json!({"paths": ["*.txt"]})).await;
    assert!(clean(&read), "{read:?}");
    for name in shown {
        let header = format!("--- {}/{name} ---", dir.path.display());
        assert!(read.contains(&header), "{header} in {read}");
    }
}

/// A tree nested deeper than the longest path the system opens: the walkers
/// say that they could not look below it instead of staying silent.
#[tokio::test]
async fn walkers_say_when_a_tree_is_nested_too_deeply_to_walk() {
    use rustix::fs::{Mode, OFlags};
    let dir = Scratch::new();
    dir.file("top.txt", "needle\n");
    dir.file("shallow/x.txt", "needle\n");
    // 2100 levels of "dd/" make a path of 6300 bytes, past PATH_MAX (4096).
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut fd = rustix::fs::open(&dir.path, flags, Mode::empty()).unwrap();
    for _ in 0..2100 {
        rustix::fs::mkdirat(&fd, "dd", Mode::from_raw_mode(0o755)).unwrap();
        fd = rustix::fs::openat(&fd, "dd", flags, Mode::empty()).unwrap();
    }
    let file = rustix::fs::openat(
        &fd,
        "deep.txt",
        OFlags::WRONLY | OFlags::CREATE | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    )
    .unwrap();
    rustix::io::write(&file, b"needle\n").unwrap();
    let server = Server::start(&[&dir.path], &[]).await;
    let note = "nested so deeply that their path is longer than the system can open";

    let text = answers(&server, "glob", json!({"pattern": "**/*.txt"})).await;
    assert!(text.contains("top.txt") && text.contains(note), "{text}");
    let text = answers(&server, "search_file_content", json!({"pattern": "needle"})).await;
    assert!(text.contains("top.txt") && text.contains(note), "{text}");
    let text = answers(&server, "read_many_files", json!({"paths": ["**/*.txt"]})).await;
    assert!(text.contains(note), "{text}");
    // A shallow tree says nothing of the kind.
    let text = answers(
        &server,
        "glob",
        json!({"pattern": "*.txt", "path": "shallow"}),
    )
    .await;
    assert!(text.contains("x.txt") && !text.contains(note), "{text}");
}

/// A directory swapped between a real directory and a symlink to an outside
/// one while walks run: no walker lists what is outside, not even a name.
/// Sizes and types come from the handle a listing came from (issue 19):
/// while a directory is swapped for an outward link over and over,
/// list_directory (gemini-current shows sizes) never shows an outside size
/// or name under the inside directory, and read_file never answers for a
/// name that exists only outside (not even "is a directory").
#[tokio::test]
async fn listings_never_show_outside_sizes_under_a_swap_race() {
    let outside = Scratch::new();
    // Outside: the same name as inside, with a size of its own, and a
    // directory and a file that exist only there.
    outside.file("small.txt", "o".repeat(2602));
    outside.file("OUTSIDE-ONLY.txt", "o".repeat(2602));
    outside.dir("outside-only-dir");
    let dir = Scratch::new();
    dir.file("sw/small.txt", "tiny\n");
    let (root, target) = (dir.path.clone(), outside.path.clone());
    let swapper = Swapper::start(move || {
        let real = root.join("sw");
        let parked = root.join(".parked");
        let link = root.join(".link");
        std::fs::rename(&real, &parked).unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        std::fs::rename(&link, &real).unwrap();
        std::fs::remove_file(&real).unwrap();
        std::fs::rename(&parked, &real).unwrap();
    });
    let server = Server::start(&[&dir.path], &["--dialect", "gemini-current"]).await;
    let deadline = Instant::now() + Duration::from_secs(4);
    let mut calls = 0;
    while Instant::now() < deadline {
        for (tool, args) in [
            ("list_directory", json!({"dir_path": "sw"})),
            ("list_directory", json!({"dir_path": "."})),
            ("read_file", json!({"file_path": "sw/outside-only-dir"})),
            ("read_file", json!({"file_path": "sw/OUTSIDE-ONLY.txt"})),
        ] {
            let text = answers(&server, tool, args.clone()).await;
            // read_file echoes the name it was asked for; a listing never
            // shows an outside name.
            let leaks: &[&str] = if tool == "read_file" {
                &["2602", "is a directory", "ooo"]
            } else {
                &["2602", "OUTSIDE", "outside-only", "ooo"]
            };
            for leak in leaks {
                assert!(
                    !text.contains(leak),
                    "{tool} {args} showed {leak:?} after {calls} calls: {text}"
                );
            }
            calls += 1;
        }
    }
    let rounds = swapper.finish();
    assert!(rounds > 0 && calls > 0);
}

#[tokio::test]
async fn walkers_never_list_a_directory_swapped_for_an_outside_symlink() {
    let outside = Scratch::new();
    outside.file("OUTSIDE-NAME.txt", "needle outside\n");
    let dir = Scratch::new();
    for i in 0..10 {
        dir.file(&format!("d{i}/inside.txt"), "needle inside\n");
    }
    let (root, target) = (dir.path.clone(), outside.path.clone());
    let swapper = Swapper::start(move || {
        for i in 0..10 {
            let real = root.join(format!("d{i}"));
            let parked = root.join(format!(".parked{i}"));
            let link = root.join(format!(".link{i}"));
            std::fs::rename(&real, &parked).unwrap();
            std::os::unix::fs::symlink(&target, &link).unwrap();
            std::fs::rename(&link, &real).unwrap();
            std::fs::remove_file(&real).unwrap();
            std::fs::rename(&parked, &real).unwrap();
        }
    });
    let server = Server::start(&[&dir.path], &[]).await;
    let deadline = Instant::now() + Duration::from_secs(4);
    let mut calls = 0;
    while Instant::now() < deadline {
        for (tool, args) in [
            ("glob", json!({"pattern": "**/*.txt"})),
            (
                "search_file_content",
                json!({"pattern": "needle", "names_only": true}),
            ),
            ("read_many_files", json!({"paths": ["**/*.txt"]})),
        ] {
            let text = answers(&server, tool, args).await;
            assert!(
                !text.contains("OUTSIDE"),
                "{tool} leaked after {calls} calls: {text}"
            );
            calls += 1;
        }
    }
    let rounds = swapper.finish();
    assert!(rounds > 0 && calls > 0);
}
