//! Tidy checks on the source itself, in the style of rust-analyzer's
//! `tidy.rs`: rules the compiler cannot keep, checked by reading `src/`.
//!
//! Three rules. Only the command-line front end prints to stdout, which is
//! otherwise the protocol. A layer uses only the layers before it
//! (ARCHITECTURE.md). And only the guard layer (`src/fs/`) touches the file
//! system.
//! Everything else gets files from the guard (`Guard::open_read`,
//! `open_walked`, `read_dir`, `read_own_file`), which refuses symlinks that
//! leave the roots, FIFOs and devices. A direct `std::fs` call anywhere else
//! would be a way around it, so this test names every such line.

use std::path::{Path, PathBuf};

/// Directories of `src/` allowed to use the file system directly.
const GUARD_LAYER: &[&str] = &[
    "src/fs/",
    // The sandbox sets up the kernel for a call: it writes /proc/self's id
    // maps and pid_max, opens /dev/null, reads /proc for its children, and
    // makes and removes the call's private temporary directory; at start it
    // looks up the toolchains of the programs bash may run. None of it is a
    // path from a request.
    "src/shell/sandbox/",
    // `rootbound setup` writes the client configuration the user asked it
    // to (~/.gemini/policies/...), never a path from a request.
    "src/setup.rs",
];

/// Text that means "touching the file system without the guard". Stat-only
/// probes (`.exists()`, `.is_file()`, `.metadata()`) are not listed: by text
/// they cannot be told apart from the guard's own methods of those names,
/// and they read no content.
const FORBIDDEN: &[&str] = &[
    "std::fs",
    "tokio::fs",
    "rustix::fs",
    "std::os::unix::fs",
    "std::os::windows::fs",
    "windows_sys::Win32::Storage",
    "windows_sys::Wdk::Storage",
    "File::open",
    "File::create",
    "File::options",
    "OpenOptions",
    ".canonicalize()",
    ".read_link()",
    ".read_dir()",
    ".symlink_metadata()",
    "libc::open",
];

#[test]
fn only_the_guard_layer_touches_the_file_system() {
    let violations = lines_breaking(
        |rel| GUARD_LAYER.iter().any(|layer| rel.starts_with(layer)),
        |_, line| {
            FORBIDDEN
                .iter()
                .find(|p| line.contains(*p))
                .map(|pattern| format!("`{pattern}` in: {}", line.trim()))
        },
    );
    assert!(
        violations.is_empty(),
        "file-system access outside the guard layer (src/fs/); go through the guard:\n{}",
        violations.join("\n")
    );
}

/// Every line of non-test code in `src/` that `breaks` a rule (which is
/// told the file, as a path relative to the crate, `/`-separated, and says
/// how), in files the rule does not `exempt`, as `file:line: what`.
fn lines_breaking(
    exempt: impl Fn(&str) -> bool,
    breaks: impl Fn(&str, &str) -> Option<String>,
) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut violations = Vec::new();
    for file in rust_files(&root.join("src")) {
        let rel = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if exempt(&rel) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in non_test_code(&rel, &text) {
            if let Some(what) = breaks(&rel, line) {
                violations.push(format!("{rel}:{number}: {what}"));
            }
        }
    }
    violations
}

/// The layers, in order: each may use those before it, never one after
/// it (ARCHITECTURE.md). A top-level file is a layer of its own name; the
/// front ends sit on top.
const LAYERS: &[&[&str]] = &[
    &["text"],
    &["fs"],
    &["discovery"],
    &["shell"],
    &["config"],
    &["tools"],
    &["mcp"],
    &["cli", "history", "setup", "lib", "main"],
];

/// The layer a file of `src/` belongs to (its first path component, less
/// `.rs`), and that layer's place in [`LAYERS`].
fn layer_of(rel: &str) -> Option<(&str, usize)> {
    let first = rel.strip_prefix("src/")?.split('/').next()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    LAYERS
        .iter()
        .position(|names| names.contains(&name))
        .map(|rank| (name, rank))
}

/// The first name of each path in `line` that starts with `prefix`
/// (`crate::`, `super::`): `x` for `prefix x::y` or `prefix x as z`, and
/// each item's first name in a `prefix {a, b::c}` group.
fn path_heads<'a>(line: &'a str, prefix: &str) -> Vec<&'a str> {
    let mut names = Vec::new();
    for (at, _) in line.match_indices(prefix) {
        let rest = &line[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = group.split('}').next().unwrap_or("");
            names.extend(
                group
                    .split(',')
                    .map(|item| item.trim().split("::").next().unwrap_or("").trim())
                    .filter(|n| !n.is_empty()),
            );
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            names.push(&rest[..end]);
        }
    }
    names
}

/// What in `line`, of a file of layer `rank`, reaches a later layer.
fn reaches_up(rank: usize, line: &str) -> Option<String> {
    let later: Vec<&str> = path_heads(line, "crate::")
        .into_iter()
        .filter(|name| {
            LAYERS
                .iter()
                .position(|names| names.contains(name))
                .is_some_and(|used| used > rank)
        })
        .collect();
    (!later.is_empty()).then(|| format!("uses {} from: {}", later.join(", "), line.trim()))
}

#[test]
fn a_layer_uses_only_the_layers_before_it() {
    let violations = lines_breaking(
        |_| false,
        |rel, line| {
            let (_, rank) =
                layer_of(rel).unwrap_or_else(|| panic!("{rel} is in no layer of LAYERS"));
            reaches_up(rank, line)
        },
    );
    assert!(
        violations.is_empty(),
        "a layer reaches a later one (the order is in tests/tidy.rs and ARCHITECTURE.md):\n{}",
        violations.join("\n")
    );
}

/// The layer check itself: a planted back-edge is found, in either form of
/// a path, and a use of an earlier layer or of the same one is not.
#[test]
fn the_layer_check_finds_a_planted_back_edge() {
    let (_, fs) = layer_of("src/fs/guard.rs").unwrap();
    let (_, tools) = layer_of("src/tools/bash.rs").unwrap();
    assert_eq!(layer_of("src/config.rs").map(|(n, _)| n), Some("config"));
    assert!(reaches_up(fs, "use crate::tools::State;").is_some());
    assert!(reaches_up(fs, "use crate::{text::names, mcp::server};").is_some());
    assert!(reaches_up(fs, "    let x = crate::shell::Shell::new();").is_some());
    assert!(reaches_up(fs, "use crate::text::names::escaped;").is_none());
    assert!(reaches_up(fs, "use crate::fs::guard::Guard;").is_none());
    assert!(reaches_up(tools, "use crate::config::Config;").is_none());
    assert!(reaches_up(tools, "use crate::mcp::server::RootboundServer;").is_some());
    // A planted back-edge in ordinary code is reported by the same path the
    // real check takes; one in a comment or a test module is not.
    let planted = "use crate::text::names;\n\
                   // crate::mcp is only mentioned here\n\
                   use crate::mcp::json;\n\
                   #[cfg(test)]\n\
                   mod tests { use crate::tools::State; }\n";
    let found: Vec<usize> = non_test_code("src/fs/x.rs", planted)
        .filter(|(_, line)| reaches_up(fs, line).is_some())
        .map(|(number, _)| number)
        .collect();
    assert_eq!(found, vec![3]);
}

/// Within the shell layer, edges that would close a cycle: the runners
/// (`shell/run/`) use the sandbox, so the sandbox does not use them (what
/// both need is in `shell/steps.rs`); `git.rs` uses `git_write.rs`'s
/// tables, so `git_write.rs` does not use `git.rs` (what both need is in
/// `git_config.rs`).
const SHELL_BACK_EDGES: &[(&str, &[&str])] = &[
    (
        "src/shell/sandbox/",
        &["shell::run", "super::run", "super::super::run"],
    ),
    (
        "src/shell/policy/git_write.rs",
        &["super::git::", "policy::git::"],
    ),
];

#[test]
fn no_cycle_between_the_runners_and_the_sandbox_or_the_two_git_tables() {
    let violations = lines_breaking(
        |rel| {
            !SHELL_BACK_EDGES
                .iter()
                .any(|(prefix, _)| rel.starts_with(prefix))
        },
        |rel, line| {
            SHELL_BACK_EDGES
                .iter()
                .filter(|(prefix, _)| rel.starts_with(prefix))
                .flat_map(|(_, edges)| edges.iter())
                .find(|edge| line.contains(*edge))
                .map(|edge| format!("`{edge}` in: {}", line.trim()))
        },
    );
    assert!(
        violations.is_empty(),
        "an edge back within the shell layer:\n{}",
        violations.join("\n")
    );
}

/// The tools, one file each in `src/tools/`: none imports another (what
/// they share lives in `reads.rs`, `writes.rs`, `filters.rs` and the other
/// shared files); only the registry (`tools/mod.rs`) names them all.
const TOOLS: &[&str] = &[
    "bash",
    "file_read",
    "glob",
    "list_directory",
    "read_file",
    "read_many_files",
    "replace",
    "search_file_content",
    "undo_edit",
    "write_file",
];

/// The other tool that `line`, in the file of tool `tool`, names (through
/// `super::` or `tools::`, alone or in a `{...}` group).
fn names_another_tool(tool: &str, line: &str) -> Option<String> {
    let mut named = path_heads(line, "super::");
    named.extend(path_heads(line, "tools::"));
    TOOLS
        .iter()
        .find(|other| **other != tool && named.contains(*other))
        .map(|other| format!("imports tool {other}: {}", line.trim()))
}

#[test]
fn tools_do_not_import_each_other() {
    let tool_of = |rel: &str| {
        TOOLS
            .iter()
            .find(|tool| rel == format!("src/tools/{tool}.rs"))
            .copied()
    };
    let violations = lines_breaking(
        |rel| tool_of(rel).is_none(),
        |rel, line| names_another_tool(tool_of(rel)?, line),
    );
    assert!(
        violations.is_empty(),
        "a tool imports another (move what they share to a shared file):\n{}",
        violations.join("\n")
    );
}

/// The tool check itself: the import that was moved out (file_read's of
/// read_file) is found in each spelling; a tool naming itself or a shared
/// file is not.
#[test]
fn the_tool_check_finds_a_tool_importing_another() {
    for line in [
        "use super::read_file::{RangeStyle, open_target};",
        "use crate::tools::read_file::media_block;",
        "use super::{read_file, CallContext};",
        "use super::{CallContext, read_file::media_block};",
        "use super::read_file as reader;",
    ] {
        assert!(names_another_tool("file_read", line).is_some(), "{line}");
    }
    assert!(names_another_tool("read_file", "use super::read_file::x;").is_none());
    assert!(names_another_tool("file_read", "use super::reads::ReadTarget;").is_none());
    assert!(names_another_tool("glob", "use super::{CallContext, globs};").is_none());
}

/// Where `print!` and `println!` may stand: the command-line front end
/// (`rootbound tools`, `sandbox`, `call`, `setup`, the sandbox probe). Everywhere
/// else stdout is the MCP protocol, and logs go to stderr through `tracing`.
const FRONT_END: &[&str] = &[
    "src/main.rs",
    "src/cli.rs",
    "src/setup.rs",
    "src/history.rs",
];

#[test]
fn only_the_command_line_front_end_prints_to_stdout() {
    let violations = lines_breaking(
        |rel| FRONT_END.contains(&rel),
        |_, line| prints_to_stdout(line).then(|| line.trim().to_string()),
    );
    assert!(
        violations.is_empty(),
        "print!/println! outside the command-line front end (stdout is the protocol; \
         log with tracing):\n{}",
        violations.join("\n")
    );
}

/// A `print!` or `println!` call, not `eprint!`/`eprintln!`.
fn prints_to_stdout(line: &str) -> bool {
    ["print!(", "println!("].iter().any(|macro_call| {
        line.match_indices(macro_call)
            .any(|(at, _)| !line[..at].ends_with('e'))
    })
}

#[test]
fn the_print_check_tells_print_from_eprint() {
    assert!(prints_to_stdout("    println!(\"{x}\");"));
    assert!(prints_to_stdout("print!(\"x\")"));
    assert!(!prints_to_stdout("    eprintln!(\"{x}\");"));
    assert!(!prints_to_stdout("eprint!(\"x\")"));
}

/// The checker itself: it must see a forbidden call in ordinary code, and
/// must not see one in a comment or a test module.
#[test]
fn the_check_finds_what_it_should_and_only_that() {
    let source = "use std::path::Path;\n\
                  // std::fs is mentioned in a comment only\n\
                  fn f() { let _ = std::fs::read(\"x\"); }\n\
                  #[cfg(test)]\n\
                  mod tests { fn g() { std::fs::write(\"x\", \"\").unwrap(); } }\n";
    let flagged: Vec<usize> = non_test_code("src/x.rs", source)
        .filter(|(_, line)| FORBIDDEN.iter().any(|p| line.contains(p)))
        .map(|(number, _)| number)
        .collect();
    assert_eq!(flagged, vec![3]);
    assert_eq!(non_test_code("src/fs/guard/tests.rs", source).count(), 0);
    let unix_tests = source.replace("#[cfg(test)]", "#[cfg(all(test, unix))]");
    assert_eq!(non_test_code("src/x.rs", &unix_tests).count(), 2);
}

/// The lines of `text` that are neither comments nor test code (a file named
/// `tests.rs`, or everything from a `#[cfg(test)]` or `#[cfg(all(test, ...))]`
/// on: test modules sit at the end of a file), with 1-based line numbers.
fn non_test_code<'a>(rel: &str, text: &'a str) -> impl Iterator<Item = (usize, &'a str)> {
    let is_test_file = rel.ends_with("/tests.rs");
    text.lines()
        .enumerate()
        .take_while(move |(_, line)| {
            let line = line.trim();
            !is_test_file && line != "#[cfg(test)]" && !line.starts_with("#[cfg(all(test,")
        })
        .filter(|(_, line)| {
            let trimmed = line.trim_start();
            !(trimmed.starts_with("//") || trimmed.starts_with("/*") || trimmed.starts_with('*'))
        })
        .map(|(i, line)| (i + 1, line))
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}
