//! The release packaging agrees with itself: one version everywhere, the
//! same five targets in the workflow, the npm launcher's dependencies and
//! `packaging/targets.json`, and a Gemini CLI extension that hides Gemini
//! CLI's built-in file tools without hiding ours. (`tests/npm_package.sh`
//! packs and runs the npm packages; `tests/real_clients.sh` links the
//! extension into Gemini CLI.)

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn json(rel: &str) -> Value {
    serde_json::from_str(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

const TARGETS: [&str; 5] = [
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
    "x86_64-pc-windows-msvc",
];

#[test]
fn every_package_carries_the_crate_version() {
    let version = env!("CARGO_PKG_VERSION");
    let launcher = json("npm/rootbound/package.json");
    assert_eq!(launcher["version"], version, "npm/rootbound/package.json");
    for (name, range) in launcher["optionalDependencies"].as_object().unwrap() {
        assert_eq!(range, version, "npm/rootbound/package.json: {name}");
    }
    assert_eq!(
        json("gemini-extension.json")["version"],
        version,
        "gemini-extension.json"
    );
}

#[test]
fn the_workflow_the_targets_file_and_the_npm_launcher_name_the_same_five_targets() {
    let targets = json("packaging/targets.json");
    let listed: BTreeSet<&str> = targets
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(listed, BTreeSet::from(TARGETS), "packaging/targets.json");

    let workflow = read(".github/workflows/release.yml");
    for target in TARGETS {
        assert!(
            workflow.contains(&format!("target: {target},")),
            "release.yml does not build {target}"
        );
    }

    let packages: BTreeSet<String> = targets
        .as_object()
        .unwrap()
        .values()
        .map(|t| {
            format!(
                "rootbound-{}-{}",
                t["os"].as_str().unwrap(),
                t["cpu"].as_str().unwrap()
            )
        })
        .collect();
    let launcher = json("npm/rootbound/package.json");
    let dependencies: BTreeSet<String> = launcher["optionalDependencies"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        dependencies, packages,
        "the launcher's optionalDependencies"
    );
    // The launcher looks its package up as rootbound-<process.platform>-<process.arch>.
    let launcher_js = read("npm/rootbound/bin/rootbound.js");
    assert!(launcher_js.contains("`rootbound-${process.platform}-${process.arch}`"));
}

#[test]
fn the_extension_runs_the_bundled_binary_on_the_workspace() {
    let extension = json("gemini-extension.json");
    assert_eq!(extension["name"], "rootbound");
    let server = &extension["mcpServers"]["rootbound"];
    assert_eq!(server["command"], "${extensionPath}${/}bin${/}rootbound");
    let args: Vec<&str> = server["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args,
        ["--root", "${workspacePath}", "--dialect", "gemini-current"]
    );
    let context = extension["contextFileName"].as_str().unwrap();
    assert!(!read(context).is_empty(), "{context} is empty");
}

/// Gemini CLI matches each `excludeTools` entry against a tool's name, its
/// class name, and, for an MCP tool, its name without the `mcp_<server>_`
/// prefix. A plain `read_file` would therefore hide our read_file too
/// (checked with Gemini CLI 0.61: only bash and file_read were left), so
/// the built-ins are named by class, which no MCP tool has.
#[test]
fn the_extension_excludes_the_built_in_file_tools_by_class_and_none_of_ours() {
    let extension = json("gemini-extension.json");
    let excluded: BTreeSet<&str> = extension["excludeTools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let built_ins = BTreeSet::from([
        "ReadFileTool",      // read_file
        "WriteFileTool",     // write_file
        "EditTool",          // replace
        "LSTool",            // list_directory
        "GlobTool",          // glob
        "GrepTool",          // grep_search / search_file_content
        "RipGrepTool",       // grep_search when ripgrep is on
        "ReadManyFilesTool", // read_many_files
    ]);
    assert_eq!(excluded, built_ins);

    let mut ours = BTreeSet::new();
    for dialect in ["gemini-0.24", "gemini-current"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rootbound"))
            .args(["--dialect", dialect, "tools"])
            .output()
            .unwrap();
        let tools: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        ours.extend(
            tools
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string()),
        );
    }
    for name in &ours {
        assert!(
            !excluded.contains(name.as_str()),
            "excludeTools names {name}, which would hide rootbound's own {name}"
        );
    }
}
