//! list_directory, glob, search_file_content and read_many_files through
//! the real binary (docs/tools.md), on trees built at test time.
// Builds Unix trees (symlinks, FIFOs, modes) or runs Unix programs; the
// Windows build is checked by the unit tests and the smoke test under Wine
// (.ci/cross.sh).
#![cfg(unix)]

mod common;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::{Duration, SystemTime};

use common::{Scratch, Server, all_text};
use rmcp::model::ContentBlock;
use serde_json::json;

/// A git work tree with ignore files, default excludes, binaries and links.
///
/// ```text
/// .git/                 (git init)
/// .gitignore            *.log, build/, secret_dir/
/// .geminiignore         private.md
/// .env                  (dot-file)
/// README.md
/// app.log               (gitignored)
/// build/out.js          (gitignored dir)
/// node_modules/pkg/index.js
/// private.md            (geminiignored)
/// src/main.rs           fn main, TODO
/// src/lib.rs            pub fn, TODO x2
/// src/nested/deep.rs
/// src/Upper.RS
/// src/blob.bin          (NUL bytes, contains TODO)
/// src/win.txt           (CRLF)
/// dist/bundle.js        (search-excluded)
/// docs/guide.md
/// docs/logo.png
/// ```
struct Repo {
    dir: Scratch,
}

impl Repo {
    fn new() -> Repo {
        let dir = Scratch::new();
        let status = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&dir.path)
            .status()
            .expect("git is installed");
        assert!(status.success());
        dir.file(".gitignore", "*.log\nbuild/\nsecret_dir/\n");
        dir.file(".geminiignore", "private.md\n");
        dir.file(".env", "KEY=value TODO\n");
        dir.file("README.md", "# Project\nTODO: write docs\n");
        dir.file("app.log", "TODO in a log\n");
        dir.file("build/out.js", "// TODO built\n");
        dir.file("node_modules/pkg/index.js", "// TODO dependency\n");
        dir.file("private.md", "TODO private\n");
        dir.file(
            "src/main.rs",
            "fn main() {\n    // TODO: start\n    println!(\"hi\");\n}\n",
        );
        dir.file(
            "src/lib.rs",
            "pub fn a() {}\n// TODO one\npub fn b() {}\n// TODO two\n",
        );
        dir.file("src/nested/deep.rs", "pub fn deep() {}\n");
        dir.file("src/Upper.RS", "// upper\n");
        dir.file("src/blob.bin", b"binary\0data TODO\n");
        dir.file("src/win.txt", "first line   \r\nTODO crlf\r\n");
        dir.file("dist/bundle.js", "// TODO bundled\n");
        dir.file("docs/guide.md", "Guide\n");
        dir.file("docs/logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
        Repo { dir }
    }

    fn root(&self) -> &Path {
        &self.dir.path
    }

    async fn server(&self) -> Server {
        Server::start(&[self.root()], &[]).await
    }
}

fn set_mtime(path: &Path, ago: Duration) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - ago).unwrap();
}

const OLD: Duration = Duration::from_secs(10 * 24 * 3600);

// ---------------------------------------------------------------- list_directory

#[tokio::test]
async fn list_directory_format_order_and_ignored_count() {
    let repo = Repo::new();
    repo.dir.file("B.txt", "");
    repo.dir.file("a.txt", "");
    repo.dir.file("b.txt", "");
    repo.dir.dir("Zeta");
    repo.dir.dir("alpha");
    let server = repo.server().await;
    let root = repo.root().display();
    let text = server.ok_text("list_directory", json!({"path": "."})).await;
    // .git, app.log, build (gitignore) and private.md (geminiignore) are hidden and counted.
    assert_eq!(
        text,
        format!(
            "Directory listing for {root}:\n[DIR] alpha\n[DIR] dist\n[DIR] docs\n[DIR] node_modules\n[DIR] src\n[DIR] Zeta\n.env\n.geminiignore\n.gitignore\na.txt\nB.txt\nb.txt\nREADME.md\n\n(4 ignored)"
        )
    );
}

#[tokio::test]
async fn list_directory_filters_and_aliases() {
    let repo = Repo::new();
    let server = repo.server().await;
    let text = server
        .ok_text(
            "list_directory",
            json!({"dir_path": ".", "respect_git_ignore": false, "ignore": ["README.*", "node_*"]}),
        )
        .await;
    assert!(
        text.contains("\napp.log") && text.contains("[DIR] build") && text.contains("[DIR] .git"),
        "{text}"
    );
    assert!(
        !text.contains("README.md") && !text.contains("node_modules"),
        "{text}"
    );
    // private.md is hidden by .geminiignore (counted); the ignore parameter's hits are not counted.
    assert!(text.ends_with("\n\n(1 ignored)"), "{text}");
    let text = server
        .ok_text("list_directory", json!({"path": ".", "file_filtering_options": {"respect_git_ignore": false, "respect_gemini_ignore": false}}))
        .await;
    assert!(
        text.contains("\nprivate.md") && text.contains("\napp.log") && !text.contains("ignored)"),
        "{text}"
    );
}

#[tokio::test]
async fn list_directory_errors_and_empty() {
    let repo = Repo::new();
    repo.dir.dir("empty");
    let server = repo.server().await;
    let root = repo.root().display();
    assert_eq!(
        server
            .ok_text("list_directory", json!({"path": "empty"}))
            .await,
        format!("Directory {root}/empty is empty.")
    );
    assert_eq!(
        server
            .err_text("list_directory", json!({"path": "README.md"}))
            .await,
        format!("Error: Path is not a directory: {root}/README.md")
    );
    let missing = server
        .err_text("list_directory", json!({"path": "nope"}))
        .await;
    assert!(
        missing.starts_with("Error listing directory: "),
        "{missing}"
    );
    assert_eq!(
        server
            .err_text("list_directory", json!({"path": "/etc"}))
            .await,
        format!("Path must be within one of the workspace directories: {root}")
    );
}

#[tokio::test]
async fn list_directory_links_and_ten_thousand_entries() {
    let tmp = Scratch::new();
    let root = tmp.dir("root");
    let outside = tmp.dir("outside");
    let big = tmp.dir("root/big");
    for i in 0..10_000 {
        std::fs::write(big.join(format!("f{i:05}.txt")), "").unwrap();
    }
    tmp.dir("root/real_dir");
    symlink(root.join("real_dir"), root.join("link_dir")).unwrap();
    symlink(&outside, root.join("out_link")).unwrap();
    symlink("missing", root.join("dangling")).unwrap();
    // Every entry (tests/answer_budget.rs checks the cut at the budget).
    let server = Server::start(&[&root], &["--answer-budget", "off"]).await;
    let text = server.ok_text("list_directory", json!({"path": "."})).await;
    assert_eq!(
        text,
        format!(
            "Directory listing for {}:\n[DIR] big\n[DIR] link_dir\n[DIR] real_dir",
            root.display()
        )
    );
    let text = server
        .ok_text("list_directory", json!({"path": "big"}))
        .await;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 10_001);
    assert_eq!(lines[1], "f00000.txt");
    assert_eq!(lines[10_000], "f09999.txt");
}

// ---------------------------------------------------------------- glob

#[tokio::test]
async fn glob_finds_recent_first_then_path_order_and_counts_ignored() {
    let repo = Repo::new();
    let root = repo.root();
    repo.dir.file("build/gen.rs", "// generated\n");
    for f in [
        "src/main.rs",
        "src/lib.rs",
        "src/nested/deep.rs",
        "src/Upper.RS",
        "build/gen.rs",
    ] {
        set_mtime(&root.join(f), OLD);
    }
    set_mtime(&root.join("src/nested/deep.rs"), Duration::from_secs(60));
    let server = repo.server().await;
    let r = root.display();
    let text = server.ok_text("glob", json!({"pattern": "**/*.rs"})).await;
    assert_eq!(
        text,
        format!(
            "Found 4 file(s) matching \"**/*.rs\" within {r} (1 additional files were ignored), sorted by modification time (newest first):\n{r}/src/nested/deep.rs\n{r}/src/lib.rs\n{r}/src/main.rs\n{r}/src/Upper.RS"
        )
    );
    // Case-sensitive: Upper.RS does not match.
    let text = server
        .ok_text(
            "glob",
            json!({"pattern": "src/*.rs", "case_sensitive": true}),
        )
        .await;
    assert!(
        text.starts_with(&format!(
            "Found 2 file(s) matching \"src/*.rs\" within {r},"
        )),
        "{text}"
    );
    // `*` does not cross `/`.
    let text = server.ok_text("glob", json!({"pattern": "*.md"})).await;
    assert!(
        text.contains("/README.md") && !text.contains("guide.md") && !text.contains("private.md"),
        "{text}"
    );
}

#[tokio::test]
async fn glob_pattern_features_and_literal_paths() {
    let repo = Repo::new();
    repo.dir.file("app/[id]/page.tsx", "export {}\n");
    repo.dir.file("app/x/page.tsx", "export {}\n");
    let server = repo.server().await;
    let r = repo.root().display();
    let text = server
        .ok_text("glob", json!({"pattern": "src/{main,lib}.rs"}))
        .await;
    assert!(text.starts_with("Found 2 file(s)"), "{text}");
    let text = server
        .ok_text("glob", json!({"pattern": "src/[ml]*.rs"}))
        .await;
    assert!(text.starts_with("Found 2 file(s)"), "{text}");
    let text = server.ok_text("glob", json!({"pattern": "**/.env"})).await;
    assert!(text.contains(&format!("{r}/.env")), "{text}");
    let text = server
        .ok_text("glob", json!({"pattern": "app/[id]/page.tsx"}))
        .await;
    assert_eq!(
        text,
        format!(
            "Found 1 file(s) matching \"app/[id]/page.tsx\" within {r}, sorted by modification time (newest first):\n{r}/app/[id]/page.tsx"
        )
    );
    let text = server
        .ok_text("glob", json!({"pattern": "**/index.js"}))
        .await;
    assert!(
        text.starts_with("No files found matching pattern"),
        "node_modules is never walked: {text}"
    );
    let text = server
        .ok_text(
            "glob",
            json!({"pattern": "**/*.log", "respect_git_ignore": false}),
        )
        .await;
    assert!(text.contains("/app.log"), "{text}");
}

#[tokio::test]
async fn glob_errors_and_no_matches() {
    let repo = Repo::new();
    let server = repo.server().await;
    let r = repo.root().display();
    assert_eq!(
        server.ok_text("glob", json!({"pattern": "**/*.zig"})).await,
        format!("No files found matching pattern \"**/*.zig\" within {r}")
    );
    assert_eq!(
        server.err_text("glob", json!({"pattern": "  "})).await,
        "The 'pattern' parameter cannot be empty."
    );
    assert_eq!(
        server
            .err_text("glob", json!({"pattern": "*", "path": "nope"}))
            .await,
        format!("Search path does not exist {r}/nope")
    );
    assert_eq!(
        server
            .err_text("glob", json!({"pattern": "*", "path": "README.md"}))
            .await,
        format!("Search path is not a directory: {r}/README.md")
    );
    assert_eq!(
        server
            .err_text("glob", json!({"pattern": "*", "path": "/etc"}))
            .await,
        format!("Search path (\"/etc\") resolves outside the allowed workspace directories: {r}")
    );
}

#[tokio::test]
async fn glob_does_not_follow_directory_links_and_spans_roots() {
    let tmp = Scratch::new();
    let one = tmp.dir("one");
    let two = tmp.dir("two");
    tmp.file("one/a.txt", "");
    tmp.file("two/b.txt", "");
    tmp.file("outside/c.txt", "");
    symlink(tmp.path.join("outside"), one.join("out")).unwrap();
    symlink(&two, one.join("to_two")).unwrap();
    symlink(one.join("a.txt"), one.join("a_link.txt")).unwrap();
    let server = Server::start(&[&one, &two], &[]).await;
    let text = server.ok_text("glob", json!({"pattern": "**/*.txt"})).await;
    assert!(
        text.starts_with("Found 3 file(s) matching \"**/*.txt\" across 2 workspace directories,"),
        "{text}"
    );
    assert!(
        text.contains("/one/a_link.txt") && !text.contains("c.txt") && !text.contains("to_two/"),
        "{text}"
    );
}

#[tokio::test]
async fn glob_caps_output_at_2000_paths() {
    let dir = Scratch::new();
    let many = dir.dir("many");
    for i in 0..2100 {
        std::fs::write(many.join(format!("{i:04}.txt")), "").unwrap();
    }
    // The walk's own cap (tests/answer_budget.rs checks the budget's).
    let server = Server::start(&[&dir.path], &["--answer-budget", "off"]).await;
    let text = server
        .ok_text("glob", json!({"pattern": "many/*.txt"}))
        .await;
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("Found 2100 file(s)"));
    assert_eq!(lines.len(), 1 + 2000 + 1);
    assert!(lines[2001].contains("100 more files"), "{}", lines[2001]);
}

// ---------------------------------------------------------------- search_file_content

#[tokio::test]
async fn search_format_skips_and_order() {
    let repo = Repo::new();
    let server = repo.server().await;
    let text = server
        .ok_text("search_file_content", json!({"pattern": "TODO"}))
        .await;
    // Not: app.log (gitignore and *.log), build/, node_modules/, private.md
    // (geminiignore), dist/ (search exclude), blob.bin (binary), .env
    // (hidden, and not named by the include pattern). The text ends with
    // the last `---`.
    assert_eq!(
        text,
        "Found 5 matches for pattern \"TODO\" in path \".\":\n---\nFile: README.md\nL2: TODO: write docs\n---\nFile: src/lib.rs\nL2: // TODO one\nL4: // TODO two\n---\nFile: src/main.rs\nL2:     // TODO: start\n---\nFile: src/win.txt\nL2: TODO crlf\n---"
    );
    // A hidden file is searched when the include pattern names it.
    let text = server
        .ok_text(
            "search_file_content",
            json!({"pattern": "TODO", "include": ".env*"}),
        )
        .await;
    assert_eq!(
        text,
        "Found 1 match for pattern \"TODO\" in path \".\" (filter: \".env*\"):\n---\nFile: .env\nL1: KEY=value TODO\n---"
    );
}

#[tokio::test]
async fn search_options() {
    let repo = Repo::new();
    let server = repo.server().await;
    let text = server
        .ok_text(
            "search_file_content",
            json!({"pattern": "todo", "include": "*.rs", "case_sensitive": true}),
        )
        .await;
    assert_eq!(
        text,
        "No matches found for pattern \"todo\" in path \".\" (filter: \"*.rs\")."
    );
    let text = server
        .ok_text(
            "search_file_content",
            json!({"pattern": "todo", "include_pattern": "*.rs"}),
        )
        .await;
    assert!(
        text.starts_with("Found 3 matches for pattern \"todo\" in path \".\" (filter: \"*.rs\"):"),
        "{text}"
    );
    let text = server
        .ok_text(
            "search_file_content",
            json!({"pattern": "println!(\"hi\")", "fixed_strings": true, "dir_path": "src"}),
        )
        .await;
    assert!(
        text.starts_with("Found 1 match for pattern") && text.contains("File: main.rs\nL3:"),
        "{text}"
    );
    let text = server
        .ok_text(
            "search_file_content",
            json!({"pattern": "start", "path": "src/main.rs", "context": 1}),
        )
        .await;
    assert_eq!(
        text,
        "Found 1 match for pattern \"start\" in path \"src/main.rs\":\n---\nFile: main.rs\nL1- fn main() {\nL2:     // TODO: start\nL3-     println!(\"hi\");\n---"
    );
    let text = server
        .ok_text(
            "search_file_content",
            json!({"pattern": "TODO", "names_only": true}),
        )
        .await;
    assert_eq!(
        text,
        "Found 4 files with matches for pattern \"TODO\" in path \".\":\nREADME.md\nsrc/lib.rs\nsrc/main.rs\nsrc/win.txt"
    );
    let text = server
        .ok_text(
            "search_file_content",
            json!({"pattern": "TODO", "max_matches_per_file": 1, "include": "lib.rs"}),
        )
        .await;
    assert!(
        text.contains("L2: // TODO one\n---") && !text.contains("TODO two"),
        "{text}"
    );
    // no_ignore searches what ignore files and default excludes hide (not binaries).
    let text = server
        .ok_text(
            "search_file_content",
            json!({"pattern": "TODO", "no_ignore": true, "names_only": true}),
        )
        .await;
    for f in [
        "app.log",
        "build/out.js",
        "node_modules/pkg/index.js",
        "private.md",
        "dist/bundle.js",
    ] {
        assert!(text.contains(f), "{f} missing: {text}");
    }
    assert!(!text.contains("blob.bin"), "{text}");
}

#[tokio::test]
async fn search_cap_is_deterministic_and_noted() {
    let dir = Scratch::new();
    for i in 0..60 {
        dir.file(&format!("d{}/f{i:02}.txt", i % 7), "hit\nhit\nhit\n");
    }
    let server = Server::start(&[&dir.path], &[]).await;
    let first = server
        .ok_text(
            "search_file_content",
            json!({"pattern": "hit", "total_max_matches": 10}),
        )
        .await;
    assert!(
        first.starts_with("Found 10 matches for pattern \"hit\" in path \".\" (results limited to 10 matches for performance):"),
        "{first}"
    );
    // The first matches in path order: d0/f00, d0/f07, d0/f14, d0/f21 (1 of 3).
    assert!(
        first.contains("File: d0/f00.txt\nL1: hit\nL2: hit\nL3: hit\n---\nFile: d0/f07.txt"),
        "{first}"
    );
    assert!(first.ends_with("File: d0/f21.txt\nL1: hit\n---"), "{first}");
    for _ in 0..5 {
        let again = server
            .ok_text(
                "search_file_content",
                json!({"pattern": "hit", "total_max_matches": 10}),
            )
            .await;
        assert_eq!(again, first);
    }
}

#[tokio::test]
async fn search_utf16_long_lines_and_errors() {
    let dir = Scratch::new();
    let mut utf16 = vec![0xFF, 0xFE];
    for u in "first\nneedle in utf16\n".encode_utf16() {
        utf16.extend_from_slice(&u.to_le_bytes());
    }
    dir.file("wide.txt", &utf16);
    dir.file(
        "long.txt",
        format!("{}needle{}\n", "a".repeat(1990), "b".repeat(100)),
    );
    let server = Server::start(&[&dir.path], &[]).await;
    let text = server
        .ok_text("search_file_content", json!({"pattern": "needle"}))
        .await;
    assert!(
        text.contains("File: wide.txt\nL2: needle in utf16\n"),
        "{text}"
    );
    let expected = format!("L1: {}needlebbbb... [truncated]\n", "a".repeat(1990));
    assert!(text.contains(&expected), "{text}");
    let root = dir.path.display();
    assert_eq!(
        server
            .err_text("search_file_content", json!({"pattern": "a(b"}))
            .await
            .lines()
            .next()
            .unwrap(),
        "Invalid regular expression pattern provided: a(b. Error: regex parse error:"
    );
    assert_eq!(
        server
            .err_text(
                "search_file_content",
                json!({"pattern": "x", "path": "../"})
            )
            .await,
        format!(
            "Path validation failed: Attempted path \"../\" resolves outside the allowed workspace directories: {root}"
        )
    );
    assert_eq!(
        server
            .err_text(
                "search_file_content",
                json!({"pattern": "x", "path": "nope"})
            )
            .await,
        // Gemini CLI 0.24's wording names the directory relative paths start from.
        format!("Path does not exist: {root}/nope (CWD: {root})")
    );
}

// ---------------------------------------------------------------- read_many_files

#[tokio::test]
async fn read_many_files_blocks_and_order() {
    let repo = Repo::new();
    let server = repo.server().await;
    let r = repo.root().display();
    let result = server
        .call(
            "read_many_files",
            json!({"paths": ["src/main.rs", "README.md", "src/main.rs"]}),
        )
        .await;
    assert_ne!(result.is_error, Some(true));
    let texts: Vec<&str> = result
        .content
        .iter()
        .map(|c| match c {
            ContentBlock::Text(t) => t.text.as_str(),
            _ => "<media>",
        })
        .collect();
    assert_eq!(
        texts,
        vec![
            format!("--- {r}/README.md ---\n\n# Project\nTODO: write docs\n\n\n").as_str(),
            format!("--- {r}/src/main.rs ---\n\nfn main() {{\n    // TODO: start\n    println!(\"hi\");\n}}\n\n\n").as_str(),
            "\n--- End of content ---",
        ]
    );
}

#[tokio::test]
async fn read_many_files_globs_directories_and_skips() {
    let repo = Repo::new();
    repo.dir.file(
        "long.txt",
        (1..=2500).map(|i| format!("{i}\n")).collect::<String>(),
    );
    repo.dir.file("src/data.raw", b"raw\0bytes");
    let server = repo.server().await;
    let r = repo.root().display();
    let text = all_text(
        &server
            .call("read_many_files", json!({"paths": ["src", "docs/*.md", "app.log", "nope.txt", "/etc/passwd", "long.txt"]}))
            .await,
    );
    for f in [
        "src/lib.rs",
        "src/main.rs",
        "src/nested/deep.rs",
        "src/Upper.RS",
        "src/win.txt",
        "docs/guide.md",
    ] {
        assert!(
            text.contains(&format!("--- {r}/{f} ---\n\n")),
            "{f} missing"
        );
    }
    assert!(text.contains(&format!("--- {r}/long.txt ---\n\n[WARNING: This file was truncated. To view the full content, use the 'read_file' tool on this specific file.]\n\n1\n2\n")));
    assert!(text.contains("\n--- End of content ---"));
    assert!(
        text.contains(&format!("- {r}/app.log: ignored by .gitignore\n")),
        "{text}"
    );
    assert!(
        text.contains(&format!("- {r}/src/data.raw: binary file")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "- {r}/src/blob.bin: excluded by default (**/*.bin)"
        )),
        "{text}"
    );
    assert!(
        text.contains("- /etc/passwd: outside the workspace roots"),
        "{text}"
    );
    assert!(text.contains("- nope.txt: not found"), "{text}");
    // Path order: docs/ before long.txt before src/.
    let docs = text.find("docs/guide.md ---").unwrap();
    let long = text.find("long.txt ---").unwrap();
    let src = text.find("src/lib.rs ---").unwrap();
    assert!(docs < long && long < src);
}

#[tokio::test]
async fn read_many_files_media_only_when_asked() {
    let repo = Repo::new();
    let server = repo.server().await;
    let r = repo.root().display();
    let result = server
        .call("read_many_files", json!({"paths": ["docs"]}))
        .await;
    assert!(
        !result
            .content
            .iter()
            .any(|c| matches!(c, ContentBlock::Image(_)))
    );
    assert!(
        all_text(&result).contains("logo.png: image/png file not asked for by name or extension")
    );
    for paths in [json!(["docs/logo.png"]), json!(["docs/*.png"])] {
        let result = server
            .call("read_many_files", json!({"paths": paths}))
            .await;
        let pos = result
            .content
            .iter()
            .position(|c| matches!(c, ContentBlock::Image(i) if i.mime_type == "image/png"))
            .expect("an image block");
        assert!(
            matches!(&result.content[pos - 1], ContentBlock::Text(t) if t.text == format!("--- {r}/docs/logo.png ---\n\n"))
        );
    }
}

#[tokio::test]
async fn read_many_files_excludes_aliases_and_nothing_read() {
    let repo = Repo::new();
    let server = repo.server().await;
    let text = all_text(
        &server
            .call("read_many_files", json!({"paths": ["**/.env"]}))
            .await,
    );
    assert!(text.contains(".env: excluded by default"), "{text}");
    let text = all_text(
        &server
            .call(
                "read_many_files",
                json!({"paths": ["**/.env"], "useDefaultExcludes": false}),
            )
            .await,
    );
    assert!(text.contains("KEY=value TODO"), "{text}");
    let text = all_text(
        &server
            .call(
                "read_many_files",
                json!({"paths": ["src/**/*.rs"], "exclude": ["**/lib.rs", "deep.rs"]}),
            )
            .await,
    );
    assert!(
        text.contains("/src/main.rs ---")
            && !text.contains("lib.rs ---")
            && !text.contains("deep.rs ---"),
        "{text}"
    );
    // v0.24 spelling: the list given as `include`.
    let text = all_text(
        &server
            .call("read_many_files", json!({"include": ["README.md"]}))
            .await,
    );
    assert!(text.contains("/README.md ---\n\n# Project"), "{text}");
    let result = server
        .call("read_many_files", json!({"paths": ["*.nothing"]}))
        .await;
    assert!(
        matches!(&result.content[0], ContentBlock::Text(t) if t.text == "No files matching the criteria were found or all were skipped.")
    );
    assert_eq!(
        server
            .err_text("read_many_files", json!({"paths": []}))
            .await,
        "params/paths must NOT have fewer than 1 items"
    );
}

#[tokio::test]
async fn read_many_files_caps_total_output() {
    let dir = Scratch::new();
    let line = format!("{}\n", "x".repeat(1500));
    for i in 0..5 {
        dir.file(&format!("big{i}.txt"), line.repeat(300));
    }
    // Without an answer budget, a fixed cap still bounds the answer.
    let server = Server::start(&[&dir.path], &["--answer-budget", "off"]).await;
    let text = all_text(
        &server
            .call("read_many_files", json!({"paths": ["*.txt"]}))
            .await,
    );
    assert!(text.len() < 1024 * 1024 + 4096, "{}", text.len());
    assert!(
        text.contains("Skipped 3 file(s):")
            && text.contains("big4.txt: not shown: the answer stops at 1048576 characters"),
        "{}",
        &text[text.len() - 400..]
    );
}
