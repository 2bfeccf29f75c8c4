//! `rootbound setup gemini`: writes the user-level Gemini CLI policy that
//! lets rootbound's read-only tools run without a prompt, as Gemini CLI's own
//! read tools do.
//!
//! Why a policy file: headless `gemini -p` offers the model none of an MCP
//! server's tools unless a policy allows them, and interactive sessions ask
//! before every call, reads included. Gemini CLI ignores ALLOW rules that an
//! extension contributes, by design, so the rule has to live in the user's
//! own policy directory (`~/.gemini/policies/*.toml`, the "user" tier).
//!
//! The rule matches the server by name and its tools by the
//! `readOnlyHint = true` annotation, so it follows the server's
//! configuration by itself: bash declares itself read-only only in the
//! read-only bash mode, and write_file and replace never do. Those stay with
//! Gemini CLI's approval mode, as its own write tools do; its auto-edit mode
//! runs its own write_file and replace (a default rule that names the
//! built-in tools, which does not match an MCP server's), so a second rule
//! does the same for ours. A bash that may write is asked about in every
//! mode but yolo, as Gemini CLI's own shell is.
//!
//! Like `main.rs` and `cli.rs`, this is a command-line front end: it prints
//! to stdout and writes one file the user asked for, never a path from a
//! request (tests/tidy.rs names it).

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

/// `rootbound setup CLIENT`.
#[derive(Debug, Args)]
pub struct SetupArgs {
    #[command(subcommand)]
    pub client: SetupClient,
}

#[derive(Debug, Subcommand)]
pub enum SetupClient {
    /// Write the user-level Gemini CLI policy (~/.gemini/policies/rootbound.toml)
    /// that runs rootbound's read-only tools without prompts, headless
    /// `gemini -p` included; writes and a bash that may write stay with
    /// Gemini CLI's approval mode. Prints the file and what changed.
    Gemini(GeminiSetup),
}

#[derive(Debug, Args)]
pub struct GeminiSetup {
    /// Print what would be written, and change nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// The server's name in Gemini CLI: the key under `mcpServers` in
    /// settings.json (the extension's server is also named rootbound).
    #[arg(long, value_name = "NAME", default_value = DEFAULT_SERVER_NAME)]
    pub server_name: String,
}

const DEFAULT_SERVER_NAME: &str = "rootbound";

/// The first line of every file this command writes: a file that starts
/// otherwise is the user's, and is never overwritten.
const MARKER: &str = "# Written by `rootbound setup gemini`.";

/// Within the user tier (final priority 4 + priority / 1000). Gemini CLI's
/// own settings rules sit above it and keep winning: `tools.exclude` (4.4),
/// `tools.confirmationRequired` (4.35), a `tools.core` allowlist (4.25) and
/// `mcp.excluded` (4.9). A user's own rule above 100 wins too.
const RULE_PRIORITY: u32 = 100;

/// Runs `rootbound setup ...`; the process's exit code.
pub fn run_setup(args: &SetupArgs) -> i32 {
    match &args.client {
        SetupClient::Gemini(gemini) => match setup_gemini(gemini, &|name| std::env::var_os(name)) {
            Ok(report) => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(report.as_bytes()).and_then(|()| out.flush());
                0
            }
            Err(message) => {
                eprintln!("rootbound setup gemini: {message}");
                1
            }
        },
    }
}

/// Plans and (unless a dry run) writes the policy; the report to print.
fn setup_gemini(
    args: &GeminiSetup,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Result<String, String> {
    check_server_name(&args.server_name)?;
    let gemini_dir = gemini_user_dir(env)?;
    let path = gemini_dir
        .join("policies")
        .join(policy_file_name(&args.server_name));
    let wanted = gemini_policy(&args.server_name);
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let change = plan(existing.as_deref(), &wanted, &path)?;
    if !args.dry_run && change != Change::Unchanged {
        write_atomically(&path, &wanted)?;
    }
    let mut report = describe(&change, args.dry_run, &path, &wanted);
    if let Some(note) = policy_paths_note(&gemini_dir.join("settings.json")) {
        report.push_str(&note);
    }
    Ok(report)
}

/// What running the command does to the policy file.
#[derive(Debug, PartialEq, Eq)]
enum Change {
    Create,
    /// The file holds an earlier version of this command's policy.
    Replace {
        previous: String,
    },
    Unchanged,
}

/// Decides the change; refuses to touch a file this command did not write.
fn plan(existing: Option<&str>, wanted: &str, path: &Path) -> Result<Change, String> {
    match existing {
        None => Ok(Change::Create),
        Some(text) if text == wanted => Ok(Change::Unchanged),
        Some(text) if text.starts_with(MARKER) => Ok(Change::Replace {
            previous: text.to_string(),
        }),
        Some(_) => Err(format!(
            "{} exists and was not written by this command, so it is left as it is. Move it \
             aside (or merge the rule below into it yourself) and run this again. The rule:\n\n{}",
            path.display(),
            wanted
        )),
    }
}

fn describe(change: &Change, dry_run: bool, path: &Path, wanted: &str) -> String {
    let path = path.display();
    let mut out = match (change, dry_run) {
        (Change::Unchanged, _) => format!("{path} already holds this policy; nothing changed.\n"),
        (Change::Create, true) => format!("Would create {path} (dry run: nothing written):\n"),
        (Change::Create, false) => format!("Created {path}:\n"),
        (Change::Replace { .. }, true) => {
            format!("Would replace {path} (dry run: nothing written) with:\n")
        }
        (Change::Replace { .. }, false) => format!("Replaced {path} with:\n"),
    };
    out.push('\n');
    out.push_str(wanted);
    if let Change::Replace { previous } = change {
        out.push_str(&format!(
            "\nIt held an earlier version of this command's policy:\n\n{previous}"
        ));
    }
    if *change != Change::Unchanged && !dry_run {
        out.push_str(
            "\nGemini CLI reads it when a session starts: sessions started from now on run \
             the server's read-only tools without asking.\n",
        );
    }
    out
}

/// The policy for the MCP server named `server_name`.
fn gemini_policy(server_name: &str) -> String {
    format!(
        "{MARKER} Running it again rewrites this file;
# put rules of your own in another file of this directory.
#
# Gemini CLI runs its own read-only tools (read_file, glob, ...) without asking.
# The first rule does the same for the tools of the MCP server \"{server_name}\" that
# declare themselves read-only (readOnlyHint): read_file, list_directory, glob,
# search_file_content (grep_search), read_many_files, file_read, and bash while
# the server's bash mode is read-only. write_file, replace, undo_edit and a bash
# that may write declare readOnlyHint = false, so they stay with Gemini CLI's
# approval mode, as its own write tools do: the second rule lets the auto-edit
# mode run write_file, replace and undo_edit, as it runs Gemini CLI's own edits.
# A rule of yours above priority {RULE_PRIORITY} wins.
[[rule]]
mcpName = \"{server_name}\"
toolName = \"*\"
toolAnnotations = {{ readOnlyHint = true }}
decision = \"allow\"
priority = {RULE_PRIORITY}

[[rule]]
mcpName = \"{server_name}\"
toolName = [\"write_file\", \"replace\", \"undo_edit\"]
modes = [\"autoEdit\"]
decision = \"allow\"
priority = {RULE_PRIORITY}
"
    )
}

/// One file per server name, so two servers' rules never share a file.
fn policy_file_name(server_name: &str) -> String {
    if server_name == DEFAULT_SERVER_NAME {
        format!("{DEFAULT_SERVER_NAME}.toml")
    } else {
        format!("{DEFAULT_SERVER_NAME}-{server_name}.toml")
    }
}

/// Gemini CLI names a server's tools `mcp_<server>_<tool>` after replacing
/// every character outside `[A-Za-z0-9_.:-]` with `_`, but matches a rule's
/// `mcpName` against the name as written: a name it rewrites would never
/// match. The name also goes into a TOML string and a file name unescaped.
fn check_server_name(name: &str) -> Result<(), String> {
    let fits = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if name.is_empty() || !name.chars().all(fits) || name.starts_with('.') {
        return Err(format!(
            "--server-name {name:?}: use letters, digits, '_', '-' and '.' (not first), as the \
             key under mcpServers in Gemini CLI's settings.json"
        ));
    }
    Ok(())
}

/// `~/.gemini`, found as Gemini CLI finds it: `GEMINI_CLI_HOME` if set, else
/// the home directory Node's `os.homedir()` gives (`HOME`, `USERPROFILE` on
/// Windows, else the account's).
fn gemini_user_dir(env: &dyn Fn(&str) -> Option<OsString>) -> Result<PathBuf, String> {
    let home_variable = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    let home = ["GEMINI_CLI_HOME", home_variable]
        .into_iter()
        .filter_map(|name| env(name).filter(|value| !value.is_empty()))
        .map(PathBuf::from)
        .next()
        .or_else(std::env::home_dir)
        .ok_or("cannot tell your home directory: set HOME (or GEMINI_CLI_HOME, as Gemini CLI reads it)")?;
    Ok(home.join(".gemini"))
}

/// Gemini CLI's `policyPaths` setting (and its `--policy` flag) replace the
/// user policy directory: a file written there would then not be read.
fn policy_paths_note(settings: &Path) -> Option<String> {
    let text = std::fs::read_to_string(settings).ok()?;
    text.contains("\"policyPaths\"").then(|| {
        format!(
            "\nNote: {} sets policyPaths, which Gemini CLI reads instead of this directory; \
             add the rule to one of those paths too.\n",
            settings.display()
        )
    })
}

/// Writes through a temporary file beside the target and a rename, so
/// Gemini CLI never reads half a policy.
fn write_atomically(path: &Path, content: &str) -> Result<(), String> {
    let dir = path.parent().ok_or("the policy path has no directory")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let temporary = dir.join(format!(".rootbound-setup-{}.tmp", std::process::id()));
    let written =
        std::fs::write(&temporary, content).and_then(|()| std::fs::rename(&temporary, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        format!("cannot write {}: {e}", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> + use<> {
        let pairs: Vec<(String, OsString)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    fn setup(dir: &Path, dry_run: bool, server_name: &str) -> Result<String, String> {
        let home = dir.to_string_lossy().into_owned();
        let env = env_of(&[("HOME", &home), ("USERPROFILE", &home)]);
        let args = GeminiSetup {
            dry_run,
            server_name: server_name.into(),
        };
        setup_gemini(&args, &env)
    }

    #[test]
    fn the_policy_allows_read_only_tools_always_and_edits_in_auto_edit_mode() {
        let policy = gemini_policy("rootbound");
        assert!(policy.starts_with(MARKER));
        let rules: Vec<&str> = policy
            .lines()
            .filter(|line| !line.starts_with('#'))
            .collect();
        assert_eq!(
            rules,
            [
                "[[rule]]",
                "mcpName = \"rootbound\"",
                "toolName = \"*\"",
                "toolAnnotations = { readOnlyHint = true }",
                "decision = \"allow\"",
                "priority = 100",
                "",
                "[[rule]]",
                "mcpName = \"rootbound\"",
                "toolName = [\"write_file\", \"replace\", \"undo_edit\"]",
                "modes = [\"autoEdit\"]",
                "decision = \"allow\"",
                "priority = 100",
            ]
        );
    }

    #[test]
    fn the_user_directory_is_found_as_gemini_cli_finds_it() {
        let home = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
        let both = env_of(&[("GEMINI_CLI_HOME", "/g"), (home, "/h")]);
        assert_eq!(
            gemini_user_dir(&both),
            Ok(PathBuf::from("/g").join(".gemini"))
        );
        let plain = env_of(&[("GEMINI_CLI_HOME", ""), (home, "/h")]);
        assert_eq!(
            gemini_user_dir(&plain),
            Ok(PathBuf::from("/h").join(".gemini"))
        );
    }

    #[test]
    fn server_names_gemini_cli_would_rewrite_are_refused() {
        for good in ["rootbound", "rb-2", "my_server", "a.b"] {
            assert_eq!(check_server_name(good), Ok(()), "{good}");
        }
        for bad in ["", "my server", "a/b", "a\"b", ".hidden", "x:y", "ü"] {
            assert!(check_server_name(bad).is_err(), "{bad}");
        }
        assert_eq!(policy_file_name("rootbound"), "rootbound.toml");
        assert_eq!(policy_file_name("rb"), "rootbound-rb.toml");
    }

    #[test]
    fn setup_creates_then_leaves_alone_then_updates_its_own_file() {
        let dir = tempfile::tempdir().unwrap();
        // Joined part by part, so that it is shown with the platform's
        // separators, as setup shows it.
        let path = dir
            .path()
            .join(".gemini")
            .join("policies")
            .join("rootbound.toml");

        let dry = setup(dir.path(), true, "rootbound").unwrap();
        assert!(dry.starts_with("Would create"), "{dry}");
        assert!(dry.contains(&gemini_policy("rootbound")), "{dry}");
        assert!(!path.exists(), "a dry run wrote the file");

        let first = setup(dir.path(), false, "rootbound").unwrap();
        assert!(
            first.starts_with(&format!("Created {}", path.display())),
            "{first}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            gemini_policy("rootbound")
        );

        let again = setup(dir.path(), false, "rootbound").unwrap();
        assert!(again.contains("nothing changed"), "{again}");

        let older = format!("{MARKER}\n[[rule]]\ntoolName = \"x\"\n");
        std::fs::write(&path, &older).unwrap();
        let updated = setup(dir.path(), false, "rootbound").unwrap();
        assert!(updated.starts_with("Replaced"), "{updated}");
        assert!(
            updated.contains(&older),
            "the report should show what was replaced"
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            gemini_policy("rootbound")
        );
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, [std::ffi::OsString::from("rootbound.toml")]);
    }

    #[test]
    fn a_file_the_user_wrote_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let policies = dir.path().join(".gemini/policies");
        std::fs::create_dir_all(&policies).unwrap();
        let theirs = "[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 5\n";
        std::fs::write(policies.join("rootbound.toml"), theirs).unwrap();
        std::fs::write(policies.join("mine.toml"), theirs).unwrap();

        let refused = setup(dir.path(), false, "rootbound").unwrap_err();
        assert!(
            refused.contains("was not written by this command"),
            "{refused}"
        );
        assert!(refused.contains(&gemini_policy("rootbound")), "{refused}");
        let kept = std::fs::read_to_string(policies.join("rootbound.toml")).unwrap();
        assert_eq!(kept, theirs);

        // Another server name gets a file of its own beside the user's.
        let other = setup(dir.path(), false, "rb").unwrap();
        assert!(other.contains("rootbound-rb.toml"), "{other}");
        assert!(other.contains("mcpName = \"rb\""), "{other}");
        assert_eq!(
            std::fs::read_to_string(policies.join("mine.toml")).unwrap(),
            theirs
        );
    }

    #[test]
    fn a_policy_paths_setting_is_pointed_out() {
        let dir = tempfile::tempdir().unwrap();
        let gemini = dir.path().join(".gemini");
        std::fs::create_dir_all(&gemini).unwrap();
        std::fs::write(gemini.join("settings.json"), r#"{"policyPaths": ["/p"]}"#).unwrap();
        let report = setup(dir.path(), true, "rootbound").unwrap();
        assert!(report.contains("sets policyPaths"), "{report}");
    }
}
