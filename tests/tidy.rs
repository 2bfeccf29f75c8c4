//! Tidy checks on the source itself, in the style of rust-analyzer's
//! `tidy.rs`: rules the compiler cannot keep, checked by reading `src/`.
//!
//! Two rules. Only the command-line front end prints to stdout, which is
//! otherwise the protocol. And only the guard layer (`src/fs/`) touches the
//! file system.
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
        |line| {
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

/// Every line of non-test code in `src/` that `breaks` a rule (which says
/// how), in files the rule does not `exempt` (paths relative to the crate,
/// `/`-separated), as `file:line: what`.
fn lines_breaking(
    exempt: impl Fn(&str) -> bool,
    breaks: impl Fn(&str) -> Option<String>,
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
            if let Some(what) = breaks(line) {
                violations.push(format!("{rel}:{number}: {what}"));
            }
        }
    }
    violations
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
        |line| prints_to_stdout(line).then(|| line.trim().to_string()),
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
