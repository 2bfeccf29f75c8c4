//! Checks on the documents the repository carries:
//!
//! - docs/tools.md's parameter tables are generated from the tools'
//!   schemas and aliases (`rootbound::tool_parameter_tables`); this test
//!   fails when they differ. To rewrite them in place:
//!   `ROOTBOUND_UPDATE_DOCS=1 cargo test --test docs`.
//! - No tracked Markdown file links outside the repository (no URLs, no
//!   relative path that climbs out of it) or to a file that does not exist.

mod common;

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn begin_marker(tool: &str) -> String {
    format!("<!-- BEGIN GENERATED: parameters of {tool} (tests/docs.rs) -->\n")
}

const END_MARKER: &str = "<!-- END GENERATED -->";

/// docs/tools.md with every generated block replaced by its current text;
/// the tools that have no block.
fn regenerate(doc: &str) -> (String, Vec<&'static str>) {
    let mut doc = doc.to_string();
    let mut missing = Vec::new();
    for (tool, block) in rootbound::tool_parameter_tables() {
        let begin = begin_marker(tool);
        let Some(start) = doc.find(&begin).map(|i| i + begin.len()) else {
            missing.push(tool);
            continue;
        };
        let end = start
            + doc[start..]
                .find(END_MARKER)
                .unwrap_or_else(|| panic!("docs/tools.md: no {END_MARKER} after {begin}"));
        doc.replace_range(start..end, &block);
    }
    (doc, missing)
}

#[test]
fn the_parameter_tables_of_docs_tools_md_are_generated_from_the_schemas() {
    let path = repo().join("docs/tools.md");
    let doc = std::fs::read_to_string(&path).expect("docs/tools.md exists");
    let (fresh, missing) = regenerate(&doc);
    assert!(
        missing.is_empty(),
        "docs/tools.md has no generated block for {missing:?}: add a section with the line\n{}{END_MARKER}\nand run ROOTBOUND_UPDATE_DOCS=1 cargo test --test docs",
        begin_marker(missing[0]).trim_end()
    );
    if fresh == doc {
        return;
    }
    if std::env::var_os("ROOTBOUND_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &fresh).expect("rewrite docs/tools.md");
        eprintln!("docs/tools.md: parameter tables rewritten");
        return;
    }
    let first = doc
        .lines()
        .zip(fresh.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(doc.lines().count().min(fresh.lines().count()));
    panic!(
        "docs/tools.md's parameter tables differ from the schemas (first at line {}):\n  file: {:?}\n  now:  {:?}\nRun ROOTBOUND_UPDATE_DOCS=1 cargo test --test docs to rewrite them.",
        first + 1,
        doc.lines().nth(first).unwrap_or(""),
        fresh.lines().nth(first).unwrap_or(""),
    );
}

/// The generated tables name every tool and parameter that the real
/// binary's `tools` subcommand prints, in both dialects.
#[test]
fn the_tables_cover_every_published_tool_and_parameter() {
    let doc = std::fs::read_to_string(repo().join("docs/tools.md")).unwrap();
    for dialect in ["gemini-0.24", "gemini-current"] {
        let out = std::process::Command::new(common::BIN)
            .args(["--dialect", dialect, "tools"])
            .output()
            .expect("run rootbound tools");
        assert!(out.status.success());
        let tools: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        for tool in tools {
            let name = tool["name"].as_str().unwrap();
            let names_line = format!("`{name}` ({dialect})");
            let section = doc
                .split(BEGIN_PREFIX)
                .find(|s| s.contains(&names_line))
                .unwrap_or_else(|| panic!("docs/tools.md: no table names {names_line}"));
            let shows = format!("Parameters {dialect} shows:");
            let table = &section[section.find(&shows).expect("a table per dialect")..];
            for param in tool["inputSchema"]["properties"]
                .as_object()
                .unwrap()
                .keys()
            {
                assert!(
                    table.contains(&format!("| `{param}` |")),
                    "docs/tools.md: {name} in {dialect} lacks a row for {param}"
                );
            }
        }
    }
}

const BEGIN_PREFIX: &str = "<!-- BEGIN GENERATED: parameters of ";

/// Whether the crate's folder is the top of a git work tree (not so in an
/// unpacked crate, which may even lie inside another work tree).
fn is_git_work_tree() -> bool {
    let Ok(out) = std::process::Command::new("git")
        .args(["rev-parse", "--show-toplevel"])
        .current_dir(repo())
        .output()
    else {
        return false;
    };
    let top = String::from_utf8_lossy(&out.stdout);
    out.status.success()
        && std::fs::canonicalize(top.trim()).ok() == std::fs::canonicalize(repo()).ok()
}

/// Tracked Markdown files (every `.md` below the crate's folder when it is
/// not a git work tree, as in a crate tarball).
fn markdown_files() -> Vec<PathBuf> {
    let out = std::process::Command::new("git")
        .args(["ls-files", "-z", "--", "*.md"])
        .current_dir(repo())
        .output();
    if is_git_work_tree()
        && let Ok(out) = out
        && out.status.success()
    {
        return out
            .stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| repo().join(String::from_utf8_lossy(p).as_ref()))
            .collect();
    }
    let mut files = Vec::new();
    let mut stack = vec![repo().to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if entry.file_type().unwrap().is_dir() {
                if !matches!(name.to_str(), Some("target" | "node_modules" | ".git")) {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files
}

/// `path` with `.` and `..` applied, without touching the file system;
/// `None` if it climbs above its start.
fn normalise(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// The byte offset just past the last character of `s` that `stop` accepts
/// (0 if none does).
fn after_last(s: &str, stop: impl Fn(char) -> bool) -> usize {
    s.char_indices()
        .rev()
        .find(|&(_, c)| stop(c))
        .map_or(0, |(i, c)| i + c.len_utf8())
}

/// What in `text` (the file `rel`, relative to the repository) points
/// outside the repository or to nothing: one message per finding.
fn outside_links(rel: &Path, text: &str, exists: &dyn Fn(&Path) -> bool) -> Vec<String> {
    let dir = rel.parent().unwrap_or(Path::new(""));
    let mut found = Vec::new();
    let mut in_fence = false;
    for (number, line) in text.lines().enumerate() {
        let at = |what: String| format!("{}:{}: {what}", rel.display(), number + 1);
        // A URL anywhere, in prose, code or a fence, leaves the repository.
        // A bare scheme in code (`file://`) names a form, not a place.
        let mut rest = line;
        while let Some(i) = rest.find("://") {
            let scheme_start = after_last(&rest[..i], |c| {
                !c.is_ascii_alphanumeric() && c != '+' && c != '-'
            });
            let after = rest[i + 3..].chars().next();
            if i > scheme_start && after.is_some_and(|c| !c.is_whitespace() && c != '`') {
                let url = rest[scheme_start..]
                    .split(|c: char| c.is_whitespace() || "`'\")>".contains(c))
                    .next()
                    .unwrap_or("");
                found.push(at(format!("URL {url}")));
            }
            rest = &rest[i + 3..];
        }
        if line.contains("mailto:") {
            found.push(at("mailto link".into()));
        }
        // A relative path that climbs out of the repository, even in code.
        let mut rest = line;
        while let Some(i) = rest.find("../") {
            let start = after_last(&rest[..i], |c| c.is_whitespace() || "`'\"(<[=".contains(c));
            let end = rest[i..]
                .find(|c: char| c.is_whitespace() || "`'\")>]".contains(c))
                .map_or(rest.len(), |j| i + j);
            let token = &rest[start..end];
            if !token.starts_with('/') && normalise(&dir.join(token)).is_none() {
                found.push(at(format!("path outside the repository: {token}")));
            }
            rest = &rest[end.max(i + 3)..];
        }
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        // Link and image targets, inline and reference-style, must be files
        // of the repository.
        let mut targets = Vec::new();
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            let tail = &rest[i + 2..];
            let end = tail.find([')', ' ']).unwrap_or(tail.len());
            targets.push(tail[..end].to_string());
            rest = &tail[end..];
        }
        let trimmed = line.trim_start();
        if trimmed.starts_with('[')
            && let Some(j) = trimmed.find("]:")
        {
            targets.push(
                trimmed[j + 2..]
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .into(),
            );
        }
        for target in targets {
            let target = target.trim_start_matches('<').trim_end_matches('>');
            let file = target.split('#').next().unwrap_or("");
            if file.is_empty() || file.contains("://") {
                continue; // an anchor in the same file; URLs are reported above
            }
            if file.contains(':') {
                found.push(at(format!("link leaves the repository: {target}")));
                continue;
            }
            let joined = if let Some(abs) = file.strip_prefix('/') {
                Some(PathBuf::from(abs))
            } else {
                normalise(&dir.join(file))
            };
            match joined {
                None => found.push(at(format!("link leaves the repository: {target}"))),
                Some(path) if !exists(&path) => {
                    found.push(at(format!("link to a missing file: {target}")))
                }
                Some(_) => {}
            }
        }
    }
    found
}

#[test]
fn no_markdown_file_links_outside_the_repository() {
    let files = markdown_files();
    assert!(
        files.iter().any(|f| f.ends_with("README.md")),
        "found no Markdown files: {files:?}"
    );
    let exists = |rel: &Path| repo().join(rel).exists();
    let mut found = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(repo()).unwrap();
        let text = std::fs::read_to_string(file).unwrap();
        found.extend(outside_links(rel, &text, &exists));
    }
    assert!(
        found.is_empty(),
        "Markdown that leaves the repository (users get only the repository):\n{}",
        found.join("\n")
    );
}

/// The checker itself: it reports each way out, and nothing else.
#[test]
fn the_link_check_finds_what_it_should_and_only_that() {
    let text = "\
[ok](../README.md) [anchor](#top) [ok](../ARCHITECTURE.md#map) ![img](pic.png)\n\
[out](../../shared/spec/notes.md)\n\
see `../../shared/bench/mcp_bench.py` here\n\
a URL: https://example.org/x and <http://example.com>\n\
[ref]: ../../x.md\n\
[missing](nothing.md)\n\
`file://` URIs are decoded; `../` alone stays inside\n\
```sh\n\
curl https://example.net/install.sh\n\
[not a link](../../x)\n\
```\n";
    let exists = |p: &Path| {
        BTreeSet::from(["README.md", "ARCHITECTURE.md", "docs/pic.png"])
            .contains(p.to_str().unwrap())
    };
    let found = outside_links(Path::new("docs/tools.md"), text, &exists);
    let lines: Vec<usize> = found
        .iter()
        .map(|f| f.split(':').nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        lines,
        vec![2, 2, 3, 4, 4, 5, 5, 6, 9, 10],
        "{}",
        found.join("\n")
    );
}
