//! The behaviours issue 11 fixed to match Gemini CLI (found by running its
//! own tools beside rootbound; tests/gemini_parity/ keeps comparing), each
//! checked here against the real binary over MCP.
// Builds Unix trees (symlinks, FIFOs, modes) or runs Unix programs; the
// Windows build is checked by the unit tests and the smoke test under Wine
// (.ci/cross.sh).
#![cfg(unix)]

mod common;

use common::{Scratch, Server, all_text};
use serde_json::json;

/// A git work tree with ignore files, hidden files, a dependency directory
/// and a file reached through an in-tree symlink.
fn tree() -> Scratch {
    let dir = Scratch::new();
    let status = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&dir.path)
        .status()
        .expect("git is installed");
    assert!(status.success());
    dir.file(".gitignore", "logs/\n*.cache\n");
    dir.file(".geminiignore", "private/\n");
    dir.file(".env", "TOKEN=abc needle\n");
    dir.file(".github/ci.yml", "needle: ci\n");
    dir.file("a.txt", "needle one\nneedle two\nhaystack\n");
    dir.file("logs/app.txt", "needle in a log\n");
    dir.file("private/key.txt", "needle private\n");
    dir.file("node_modules/dep/index.js", "needle dep\n");
    dir.file("GEMINI.md", "notes\n");
    dir.file("app/[id]/page.tsx", "bracket page\n");
    dir.file("app/i/page.tsx", "i page\n");
    std::os::unix::fs::symlink("a.txt", dir.path.join("link.txt")).unwrap();
    dir
}

// ---------------------------------------------------------------- search

#[tokio::test]
async fn search_ends_with_the_last_separator_and_skips_hidden_links_and_ignored() {
    let dir = tree();
    let server = Server::start(&[&dir.path], &[]).await;
    let text = server
        .ok_text("search_file_content", json!({"pattern": "needle"}))
        .await;
    // Not: .env and .github (hidden), link.txt (a symlink: a.txt once),
    // logs/ (.gitignore), private/ (.geminiignore), node_modules.
    assert_eq!(
        text,
        "Found 2 matches for pattern \"needle\" in path \".\":\n---\nFile: a.txt\nL1: needle one\nL2: needle two\n---"
    );
    // An include pattern that names hidden files lets them in.
    let text = server
        .ok_text(
            "search_file_content",
            json!({"pattern": "needle", "include": ".github/*"}),
        )
        .await;
    assert!(text.contains("File: .github/ci.yml"), "{text}");
    // no_ignore brings back ignored and excluded files, never .git.
    std::fs::write(dir.path.join(".git/needle.txt"), "needle in git\n").unwrap();
    let text = server
        .ok_text(
            "search_file_content",
            json!({"pattern": "needle", "no_ignore": true}),
        )
        .await;
    assert!(
        text.contains("File: logs/app.txt") && text.contains("File: node_modules/dep/index.js"),
        "{text}"
    );
    assert!(!text.contains(".git/"), "{text}");
}

#[tokio::test]
async fn search_honours_exclude_pattern_and_the_ignore_switches() {
    let dir = tree();
    let server = Server::start(&[&dir.path], &[]).await;
    let text = server
        .ok_text(
            "search_file_content",
            json!({"pattern": "needle", "exclude_pattern": "TWO"}),
        )
        .await;
    assert_eq!(
        text,
        "Found 1 match for pattern \"needle\" in path \".\":\n---\nFile: a.txt\nL1: needle one\n---"
    );
    let text = server
        .ok_text(
            "search_file_content",
            json!({"pattern": "needle", "file_filtering_options": {"respect_gemini_ignore": false}}),
        )
        .await;
    assert!(text.contains("File: private/key.txt"), "{text}");
    assert!(!text.contains("logs/"), "{text}");
    let text = server
        .ok_text(
            "search_file_content",
            json!({"pattern": "needle", "respect_git_ignore": false}),
        )
        .await;
    assert!(text.contains("File: logs/app.txt"), "{text}");
    assert!(!text.contains("private/"), "{text}");
}

#[tokio::test]
async fn regex_errors_quote_the_callers_pattern() {
    let dir = tree();
    let server = Server::start(&[&dir.path], &[]).await;
    let text = server
        .err_text("search_file_content", json!({"pattern": "foo("}))
        .await;
    assert_eq!(
        text,
        "Invalid regular expression pattern provided: foo(. Error: regex parse error:\n    foo(\n       ^\nerror: unclosed group"
    );
    assert!(!text.contains("(?:"), "{text}");
    let text = server
        .err_text(
            "search_file_content",
            json!({"pattern": "x", "exclude_pattern": "["}),
        )
        .await;
    assert!(
        text.starts_with("Invalid exclude regular expression pattern provided: [. Error: "),
        "{text}"
    );
}

// ---------------------------------------------------------------- arguments

#[tokio::test]
async fn minimums_and_nulls_in_gemini_cli_words() {
    let dir = tree();
    let server = Server::start(&[&dir.path], &[]).await;
    assert_eq!(
        server
            .err_text(
                "replace",
                json!({"file_path": "a.txt", "old_string": "x", "new_string": "y", "expected_replacements": 0}),
            )
            .await,
        "params/expected_replacements must be >= 1"
    );
    assert_eq!(
        server
            .err_text(
                "search_file_content",
                json!({"pattern": "x", "context": -2}),
            )
            .await,
        "params/context must be >= 0"
    );
    // A required property given as null is present with the wrong type,
    // named as the caller spelled it.
    assert_eq!(
        server
            .err_text("write_file", json!({"file_path": "n.txt", "content": null}))
            .await,
        "params/content must be string"
    );
    assert_eq!(
        server
            .err_text("read_file", json!({"file_path": null}))
            .await,
        "params/file_path must be string"
    );
    assert_eq!(
        server
            .err_text(
                "list_directory",
                json!({"path": ".", "file_filtering_options": {"respect_git_ignore": "no"}}),
            )
            .await,
        "params/file_filtering_options/respect_git_ignore must be boolean"
    );
    assert!(!dir.path.join("n.txt").exists());
}

// ---------------------------------------------------------------- glob, list_directory

#[tokio::test]
async fn glob_tells_ignored_matches_and_words_several_roots_as_gemini_cli() {
    let dir = tree();
    let other = Scratch::new();
    other.file("b.md", "b\n");
    let server = Server::start(&[&dir.path], &[]).await;
    let root = dir.path.display();
    assert_eq!(
        server
            .ok_text("glob", json!({"pattern": "logs/*.txt"}))
            .await,
        format!(
            "No files found matching pattern \"logs/*.txt\" within {root} (1 files were ignored)"
        )
    );
    let two = Server::start(&[&dir.path, &other.path], &[]).await;
    assert_eq!(
        two.ok_text("glob", json!({"pattern": "**/*.nothing"}))
            .await,
        "No files found matching pattern \"**/*.nothing\" within 2 workspace directories"
    );
    let text = two.ok_text("glob", json!({"pattern": "**/*.md"})).await;
    assert!(
        text.starts_with("Found 2 file(s) matching \"**/*.md\" across 2 workspace directories"),
        "{text}"
    );
}

#[tokio::test]
async fn a_listing_whose_entries_are_all_ignored_shows_an_empty_line() {
    let dir = tree();
    let server = Server::start(&[&dir.path], &[]).await;
    let logs = dir.path.join("logs");
    assert_eq!(
        server
            .ok_text("list_directory", json!({"path": "logs"}))
            .await,
        format!("Directory listing for {}:\n\n\n(1 ignored)", logs.display())
    );
}

// ---------------------------------------------------------------- read_many_files

#[tokio::test]
async fn read_many_files_default_excludes_apply_to_named_files() {
    let dir = tree();
    let server = Server::start(&[&dir.path], &[]).await;
    let root = dir.path.display();
    let text = all_text(
        &server
            .call(
                "read_many_files",
                json!({"paths": [".env", "node_modules/dep/index.js", "GEMINI.md", "a.txt"]}),
            )
            .await,
    );
    assert!(text.starts_with(&format!("--- {root}/a.txt ---")), "{text}");
    for (file, pattern) in [
        (".env", "**/.env"),
        ("node_modules/dep/index.js", "**/node_modules/**"),
        ("GEMINI.md", "**/GEMINI.md"),
    ] {
        assert!(
            text.contains(&format!("- {root}/{file}: excluded by default ({pattern})")),
            "{file}: {text}"
        );
    }
    // Without the default excludes, node_modules is walked.
    let text = all_text(
        &server
            .call(
                "read_many_files",
                json!({"paths": ["**/*.js"], "useDefaultExcludes": false}),
            )
            .await,
    );
    assert!(
        text.contains(&format!(
            "--- {root}/node_modules/dep/index.js ---\n\nneedle dep\n"
        )),
        "{text}"
    );
}

#[tokio::test]
async fn read_many_files_takes_existing_paths_literally_and_says_why_it_skips() {
    let dir = tree();
    let server = Server::start(&[&dir.path], &[]).await;
    let root = dir.path.display();
    let text = all_text(
        &server
            .call("read_many_files", json!({"include": ["app/[id]/page.tsx"]}))
            .await,
    );
    assert!(
        text.starts_with(&format!(
            "--- {root}/app/[id]/page.tsx ---\n\nbracket page\n"
        )),
        "{text}"
    );
    assert!(!text.contains("i page"), "{text}");
    let text = all_text(
        &server
            .call(
                "read_many_files",
                json!({"paths": ["private/key.txt", "logs/*.txt", "nothing*.zzz"]}),
            )
            .await,
    );
    assert!(
        text.starts_with("No files matching the criteria were found or all were skipped.\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "- {root}/private/key.txt: ignored by .geminiignore"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("- {root}/logs/app.txt: ignored by .gitignore")),
        "{text}"
    );
    assert!(
        text.contains("- nothing*.zzz: no file matches this pattern"),
        "{text}"
    );
    // Glob matching ignores letter case, as Gemini CLI's does.
    let text = all_text(
        &server
            .call("read_many_files", json!({"paths": ["A.TXT"]}))
            .await,
    );
    assert!(text.starts_with(&format!("--- {root}/a.txt ---")), "{text}");
}

// ---------------------------------------------------------------- read_file

#[tokio::test]
async fn a_path_differing_only_in_case_is_not_found_as_in_gemini_cli() {
    let dir = tree();
    let server = Server::start(&[&dir.path], &[]).await;
    assert_eq!(
        server.err_text("read_file", json!({"path": "A.TXT"})).await,
        format!("File not found: {}/A.TXT", dir.path.display())
    );
}
