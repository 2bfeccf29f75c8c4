//! The bash tool's policy through the real binary (docs/tools.md,
//! docs/security.md), one test per way around it. Each asserts the effect: a marker
//! file that does not appear, a token that only the forbidden program could
//! compute and that is absent, a name from outside the roots that never
//! appears in any answer. The sandbox beneath is tested alone in
//! `tests/sandbox.rs`.
// Builds Unix trees (symlinks, FIFOs, modes) or runs Unix programs; the
// Windows build is checked by the unit tests and the smoke test under Wine
// (.ci/cross.sh).
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{BashAnswer, Scratch, Server, all_text};
use serde_json::json;

/// `<tmp>/root` is the root; `<tmp>/outside` is not.
struct Layout {
    tmp: Scratch,
}

impl Layout {
    fn new() -> Layout {
        let tmp = Scratch::new();
        tmp.file(
            "root/src/main.rs",
            "fn main() {\n    println!(\"hello\");\n}\n",
        );
        tmp.file("root/notes.txt", "alpha\nbeta\ngamma\n");
        tmp.file("outside/secret.txt", "TOP SECRET\n");
        tmp.file("outside/id_rsa-7781", "KEY\n");
        tmp.file("root_evil/secret.txt", "EVIL SECRET\n");
        Layout { tmp }
    }
    fn root(&self) -> PathBuf {
        self.tmp.path.join("root")
    }
    fn outside(&self) -> PathBuf {
        self.tmp.path.join("outside")
    }
    async fn server(&self, extra: &[&str]) -> Server {
        Server::start(&[&self.root()], extra).await
    }
    /// A git repository at the root with one commit, made with the host's git
    /// and no configuration of its own.
    fn git_repo(&self) {
        for args in [
            &["init", "-q"][..],
            &["add", "."],
            &["commit", "-q", "-m", "init"],
        ] {
            git(&self.root(), args);
        }
    }
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

async fn bash(server: &Server, command: &str) -> (bool, String) {
    let result = server.call("bash", json!({"command": command})).await;
    (result.is_error == Some(true), all_text(&result))
}

async fn refused(server: &Server, command: &str) -> String {
    let (err, text) = bash(server, command).await;
    assert!(err, "not refused: {command:?} -> {text}");
    assert!(
        text.starts_with("Command refused: `"),
        "{command:?}: {text}"
    );
    text
}

/// Refuses each of `commands`, each time saying `reason`.
async fn refused_saying(server: &Server, commands: &[&str], reason: &str) {
    for command in commands {
        let text = refused(server, command).await;
        assert!(text.contains(reason), "{command}: {text}");
    }
}

async fn ran(server: &Server, command: &str) -> BashAnswer {
    let (err, text) = bash(server, command).await;
    assert!(!err, "refused: {command:?} -> {text}");
    BashAnswer::parse(&text)
}

#[tokio::test]
async fn allowed_commands_run_with_the_documented_result_format() {
    let l = Layout::new();
    let server = l.server(&[]).await;
    let (err, text) = bash(&server, "grep -n beta notes.txt").await;
    assert!(!err);
    let a = BashAnswer::parse(&text);
    assert_eq!(a.status, "[exit code: 0]", "{text}");
    assert_eq!(a.stdout, "2:beta");
    assert!(
        text.lines().nth(1).unwrap().starts_with("[stdout "),
        "{text}"
    );
    let a = ran(&server, "cat notes.txt | sort -r | head -n 1 && echo done").await;
    assert_eq!((a.exit_code(), a.stdout.as_str()), (Some(0), "gamma\ndone"));
    // A non-zero exit is a normal result, with stderr in its own section.
    let a = ran(&server, "ls missing.txt").await;
    assert_eq!(a.exit_code(), Some(2));
    assert!(
        a.stderr.starts_with("ls: cannot access 'missing.txt'"),
        "{a:?}"
    );
    let a = ran(&server, "false || echo recovered; echo after").await;
    assert_eq!(a.stdout, "recovered\nafter");
    assert_eq!(ran(&server, "true && false").await.status, "[exit code: 1]");
    // Glob arguments are expanded by the server, inside the root.
    assert_eq!(
        ran(&server, "ls src/*.rs *.txt").await.stdout,
        "notes.txt\nsrc/main.rs"
    );
    assert_eq!(
        ran(&server, "pwd").await.stdout,
        l.root().display().to_string()
    );
    let a = ran(
        &server,
        "ls nothing-here 2>/dev/null; echo x >/dev/null; ls nope 2>&1 | wc -l; echo err >&2",
    )
    .await;
    assert_eq!((a.stdout.as_str(), a.stderr.as_str()), ("1", "err"));
}

/// A pipeline's status is its last command's, as in bash; a failure before
/// the last is said on the status line, so `tests | tail` cannot read as a
/// pass. A command stopped by SIGPIPE because a later one stopped reading
/// is no failure.
#[tokio::test]
async fn a_failure_hidden_by_a_pipeline_is_on_the_status_line() {
    let l = Layout::new();
    let server = l.server(&[]).await;
    let a = ran(&server, "ls missing.txt | tail -n 5").await;
    assert_eq!(
        a.status, "[exit code: 0; earlier stage failed: ls exited 2]",
        "{a:?}"
    );
    let a = ran(&server, "grep -r beta missing/ | sort | grep nothing").await;
    assert_eq!(
        a.status, "[exit code: 1; earlier stage failed: grep exited 2]",
        "{a:?}"
    );
    // `cat` is killed by SIGPIPE once `head` has what it wants (the file is
    // larger than a pipe holds).
    std::fs::write(l.root().join("big.txt"), "y\n".repeat(1 << 20)).unwrap();
    let a = ran(&server, "cat big.txt | head -n 2").await;
    assert_eq!(
        (a.status.as_str(), a.stdout.as_str()),
        ("[exit code: 0]", "y\ny")
    );
    let a = ran(&server, "cat notes.txt | sort -r | head -n 1").await;
    assert_eq!(a.status, "[exit code: 0]");
}

#[tokio::test]
async fn attacks_on_the_grammar_are_refused_and_leave_no_marker() {
    let l = Layout::new();
    let root = l.root();
    let outside = l.outside();
    let server = l.server(&[]).await;
    let o = outside.join("pwned").display().to_string();
    let attacks = vec![
        "touch pwned".to_string(),
        "ls; touch pwned".into(),
        "ls && touch pwned".into(),
        "false || touch pwned".into(),
        "ls | tee pwned".into(),
        "ls\ntouch pwned".into(),
        "ls\rtouch pwned".into(),
        format!("touch {o}"),
        "echo $(touch pwned)".into(),
        "echo `touch pwned`".into(),
        "echo \"$(touch pwned)\"".into(),
        "echo ${IFS}pwned".into(),
        "echo $'\\x74ouch' pwned".into(),
        "cat <(touch pwned)".into(),
        "ls > pwned".into(),
        "ls >> pwned".into(),
        format!("echo x > {o}"),
        "ls 2> pwned".into(),
        "cat <<EOF\nx\nEOF".into(),
        "(touch pwned)".into(),
        "{ touch pwned; }".into(),
        "touch pwned &".into(),
        "X=1 touch pwned".into(),
        "t{o,}uch pwned".into(),
        "'touch' pwned".into(),
        "t\"ouch\" pwned".into(),
        "\\touch pwned".into(),
        "/usr/bin/touch pwned".into(),
        "./touch pwned".into(),
        "tou* pwned".into(),
        "sh -c 'touch pwned'".into(),
        "bash -c 'touch pwned'".into(),
        "env touch pwned".into(),
        "xargs touch".into(),
        "timeout 5 touch pwned".into(),
        "nice touch pwned".into(),
        "python3 -c 'open(\"pwned\",\"w\")'".into(),
        "perl -e 'open(F,\">pwned\")'".into(),
        "command touch pwned".into(),
        "exec touch pwned".into(),
        "sudo touch pwned".into(),
        "find . -exec touch pwned ;".into(),
        "find . -execdir touch pwned ;".into(),
        "find . -fprint pwned".into(),
        "find . -delete".into(),
        "sort -o pwned notes.txt".into(),
        "sort --output=pwned notes.txt".into(),
        "tree -o pwned".into(),
        "xxd notes.txt pwned".into(),
        "uniq notes.txt pwned".into(),
        "git -c core.pager='touch pwned' log".into(),
        "git -C .. status".into(),
        "git config core.pager touch".into(),
        "git commit -m x".into(),
        "git diff --output=pwned".into(),
        "git branch pwned".into(),
    ];
    for attack in &attacks {
        let text = refused(&server, attack).await;
        assert!(text.contains("mode allows:"), "{attack:?}: {text}");
    }
    assert!(!root.join("pwned").exists(), "a marker appeared inside");
    assert!(!outside.join("pwned").exists(), "a marker appeared outside");
    server.assert_alive().await;
}

/// Abbreviated long options. git and getopt_long accept any unique
/// prefix, so only exact, listed options pass. `expr 40000 + 1234` prints
/// 41234 only if the pager program ran.
#[tokio::test]
async fn abbreviated_options_never_reach_a_program() {
    let l = Layout::new();
    l.git_repo();
    let server = l.server(&[]).await;
    let pager = "'expr 40000 + 1234 #'";
    for command in [
        format!("git grep --open={pager} alpha"),
        format!("git grep --op={pager} alpha"),
        format!("git grep --open-files-in-pager={pager} alpha"),
        format!("git -P grep --open={pager} alpha"),
        format!("git grep --no-index --open={pager} alpha"),
        format!("git grep -O{pager} alpha"),
        "git grep --textc alpha".into(),
        "git diff --ext-dif".into(),
        "git log --ext-diff".into(),
        "git --exec-pat=. log".into(),
        "sort --out=pwned notes.txt".into(),
        "sort --compress-prog=touch notes.txt".into(),
        "du --files0=list".into(),
        "wc --files0=list".into(),
        "ls --derefer .".into(),
        "grep --derefer alpha .".into(),
    ] {
        let text = refused(&server, &command).await;
        assert!(!text.contains("41234"), "{command}: {text}");
    }
    assert!(!l.root().join("pwned").exists());
}

/// Allowed programs whose options run other programs.
#[tokio::test]
async fn options_that_run_programs_are_refused() {
    let l = Layout::new();
    l.git_repo();
    let marker = l.outside().join("ran");
    let script = l.tmp.file(
        "root/tools/host.sh",
        format!("#!/bin/sh\ntouch {}\necho localhost\n", marker.display()),
    );
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    l.tmp.file("root/a.txt", "a\n");
    l.tmp.file("root/b.txt", "b\n");
    let server = l.server(&["--bash-allow", "tar"]).await;
    for command in [
        "diff -l a.txt b.txt",
        "diff --paginate a.txt b.txt",
        "rg --hostname-bin=tools/host.sh --hyperlink-format=default alpha",
        "rg --pre=tools/host.sh alpha",
        "rg --pre tools/host.sh alpha",
        "rg -z alpha",
        "rg --search-zip alpha",
        "tar -tf host:file",
        "tar -t --file=host:file",
        "git --help",
        "git log --help",
        "git help log",
        "file -z notes.txt",
    ] {
        let text = refused(&server, command).await;
        // `pr` would print a page header; man would print the manual.
        assert!(
            !text.contains("Page 1") && !text.contains("GIT(1)"),
            "{text}"
        );
    }
    assert!(!marker.exists(), "a program ran");
}

/// git's own configuration names programs. git is asked for its
/// effective configuration (includes, worktree config and all), and any key
/// that names a program refuses the command.
#[tokio::test]
async fn git_configuration_that_names_programs_refuses_git() {
    let l = Layout::new();
    l.git_repo();
    let root = l.root();
    let marker = l.outside().join("git-ran");
    let m = marker.display().to_string();
    let config = root.join(".git/config");
    let pristine = std::fs::read_to_string(&config).unwrap();
    std::fs::write(root.join("notes.txt"), "changed\n").unwrap();
    let server = l.server(&[]).await;
    // A clean repository works.
    let a = ran(&server, "git status --short").await;
    assert_eq!(a.stdout, " M notes.txt", "{a:?}");
    let hazards = [
        format!("[filter \"x\"] clean = touch {m}\n"),
        format!("[core]\n\tfsmonitor = touch {m}\n"),
        format!("[core]\n\tpager = touch {m}\n"),
        format!("[core]\n\tsshCommand = touch {m}\n"),
        format!("[core]\n\thooksPath = {m}\n"),
        format!("[diff]\n\texternal = touch {m}\n"),
        format!("[diff \"x\"]\n\ttextconv = touch {m}\n"),
        format!("[man]\n\tviewer = touch {m}\n"),
        format!("[man \"x\"]\n\tcmd = touch {m}\n"),
        format!("[gpg \"ssh\"]\n\tprogram = touch {m}\n"),
        format!("[credential]\n\thelper = touch {m}\n"),
        format!("[include]\n\tpath = {m}\n"),
        format!("[pager]\n\tlog = touch {m}\n"),
    ];
    for hazard in &hazards {
        std::fs::write(&config, format!("{pristine}{hazard}")).unwrap();
        for command in [
            "git status",
            "git log -p -n 1",
            "git diff",
            "git grep alpha",
        ] {
            let text = refused(&server, command).await;
            assert!(
                text.contains("git's configuration sets"),
                "{hazard}: {text}"
            );
        }
    }
    // A worktree configuration file, read only with extensions.worktreeConfig.
    std::fs::write(
        &config,
        format!("{pristine}[extensions]\n\tworktreeConfig = true\n"),
    )
    .unwrap();
    std::fs::write(
        root.join(".git/config.worktree"),
        format!("[core]\n\tpager = touch {m}\n"),
    )
    .unwrap();
    let text = refused(&server, "git log").await;
    assert!(text.contains("core.pager"), "{text}");
    assert!(!marker.exists(), "git ran a configured program");
}

/// Submodules: git runs itself inside a submodule, whose own
/// configuration the server never asked; it is kept out of submodules
/// (an explicit `--ignore-submodules=all`, which a `.gitmodules` saying
/// `ignore = none` cannot undo), and options that would recurse are refused.
#[tokio::test]
async fn a_submodules_configuration_runs_nothing() {
    let l = Layout::new();
    let root = l.root();
    l.git_repo();
    let sub = root.join("sub");
    l.tmp.file("root/sub/f", "f\n");
    git(&sub, &["init", "-q"]);
    git(&sub, &["add", "f"]);
    git(&sub, &["commit", "-q", "-m", "sub"]);
    git(&root, &["add", "sub"]);
    git(&root, &["commit", "-q", "-m", "with sub"]);
    git(
        &sub,
        &["config", "filter.x.clean", "expr 40000 + 1234 >&2; cat"],
    );
    l.tmp.file("root/sub/.git/info/attributes", "f filter=x\n");
    l.tmp.file(
        "root/.gitmodules",
        "[submodule \"sub\"]\n\tpath = sub\n\turl = ./sub\n\tignore = none\n",
    );
    let later = std::time::SystemTime::now() + Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(sub.join("f"))
        .unwrap()
        .set_modified(later)
        .unwrap();
    let server = l.server(&[]).await;
    for command in [
        "git status",
        "git status --porcelain",
        "git diff",
        "git diff --stat",
        "git diff HEAD",
        "git log -p -n 2",
        "git show --stat",
        "git grep f",
    ] {
        let (_, text) = bash(&server, command).await;
        assert!(!text.contains("41234"), "{command}: {text}");
    }
    for command in [
        "git describe --dirty --always",
        "git status --ignore-submodules=none",
        "git diff --submodule=diff",
        "git grep --recurse-submodules f",
        "git ls-files --recurse-submodules",
    ] {
        let text = refused(&server, command).await;
        assert!(!text.contains("41234"), "{command}: {text}");
    }
}

/// A root that looks like a bare repository, written
/// with the server's own write_file, is never used as git's repository.
#[tokio::test]
async fn a_bare_layout_written_at_the_root_is_not_a_repository() {
    let l = Layout::new();
    let marker = l.outside().join("bare-ran");
    // With the user's opt-in: without it, write_file refuses to complete a
    // bare layout at all (tests/left_behind.rs); here git must not take the
    // layout for a repository even when it is written.
    let server = l.server(&["--unprotect", "."]).await;
    let m = marker.display();
    for (name, content) in [
        ("HEAD", "ref: refs/heads/main\n".to_string()),
        (
            "config",
            format!("[core]\n\tbare = true\n\tfsmonitor = touch {m}\n\tpager = touch {m}\n"),
        ),
        ("objects/info/keep", String::new()),
        ("refs/heads/keep", String::new()),
    ] {
        let path = l.root().join(name).display().to_string();
        server
            .ok_text("write_file", json!({"file_path": path, "content": content}))
            .await;
    }
    for command in ["git log", "git status", "git grep x"] {
        let (_, text) = bash(&server, command).await;
        assert!(!text.contains("[exit code: 0]"), "{command}: {text}");
    }
    assert!(!marker.exists(), "the bare layout's configuration ran");
}

/// Runs a program as on a kernel without Landlock (a seccomp filter
/// answers `landlock_create_ruleset` with ENOSYS), from where no user
/// namespace can be made and no capability is left: a call gets neither
/// Landlock nor a mount namespace, so nothing in the kernel keeps a
/// read-only call from writing.
#[cfg(target_os = "linux")]
const NO_LANDLOCK: &str = r#"
import ctypes, os, platform, struct, sys
number = {"x86_64": 444, "aarch64": 444}[platform.machine()]
insn = lambda code, jt, jf, k: struct.pack("HBBI", code, jt, jf, k)
program = b"".join([
    insn(0x20, 0, 0, 0),                    # load the system call's number
    insn(0x15, 0, 1, number),               # landlock_create_ruleset?
    insn(0x06, 0, 0, 0x00050000 | 38),      # then fail with ENOSYS
    insn(0x06, 0, 0, 0x7FFF0000),           # else allow
])
buffer = ctypes.create_string_buffer(program)
class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
fprog = Fprog(len(program) // 8, ctypes.addressof(buffer))
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0):
    sys.exit("cannot install the filter: errno %d" % ctypes.get_errno())
os.execvp(sys.argv[1], sys.argv[1:])
"#;

#[cfg(target_os = "linux")]
const WITHOUT_LANDLOCK_OR_NAMESPACES: &[&str] = &[
    "python3",
    "-c",
    NO_LANDLOCK,
    "unshare",
    "-U",
    "-r",
    "sh",
    "-c",
    "echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --bounding-set=-all \
     --inh-caps=-all --ambient-caps=-all \"$0\" \"$@\"",
];

/// Where the kernel cannot make a call read-only, a line that runs git
/// beside a program the user allowed is refused: that program could change
/// what git reads after the check (`cp evil.cfg .git/config` before `git
/// diff`), and only the policy would stand in its way. Judged by a marker
/// only git's filter would write, and the configuration's bytes.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn without_a_sandbox_git_does_not_share_a_line_with_a_writer() {
    let l = Layout::new();
    l.git_repo();
    let root = l.root();
    // First, that the wrapper takes away what it says: nothing enforces
    // "no write".
    let table = std::process::Command::new(WITHOUT_LANDLOCK_OR_NAMESPACES[0])
        .args(&WITHOUT_LANDLOCK_OR_NAMESPACES[1..])
        .arg(common::BIN)
        .args(["sandbox", "--root"])
        .arg(&root)
        .args(["--bash-mode", "allowlist"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&table.stdout);
    let no_write = table
        .lines()
        .find(|l| l.starts_with("no write outside the writable set"))
        .unwrap_or_else(|| panic!("no property table: {table}"));
    assert!(no_write.contains(" NO "), "{no_write}");

    let marker = root.join("filter-ran");
    let config = root.join(".git/config");
    let pristine = std::fs::read(&config).unwrap();
    let evil = format!(
        "{}[filter \"x\"]\n\tclean = \"touch {}; cat\"\n",
        String::from_utf8_lossy(&pristine),
        marker.display()
    );
    std::fs::write(root.join(".gitattributes"), "notes.txt filter=x\n").unwrap();
    std::fs::write(root.join("evil.cfg"), &evil).unwrap();
    std::fs::write(root.join("notes.txt"), "changed\n").unwrap();
    let server = Server::start_as(
        WITHOUT_LANDLOCK_OR_NAMESPACES,
        &[&root],
        &["--bash-mode", "allowlist", "--bash-allow", "cp"],
        &[],
    )
    .await;
    let text = refused(&server, "cp evil.cfg .git/config; git diff --stat").await;
    assert!(text.contains("run git in a call of its own"), "{text}");
    assert!(!marker.exists(), "the filter ran: {text}");
    assert_eq!(std::fs::read(&config).unwrap(), pristine);
    // Alone, each still runs.
    let a = ran(&server, "git diff --stat").await;
    assert_eq!(a.exit_code(), Some(0), "{a:?}");
    let a = ran(&server, "cp evil.cfg copied.cfg").await;
    assert_eq!(a.exit_code(), Some(0), "{a:?}");
    assert!(!marker.exists());

    // A read-only server whose user allowed a writer: a line with it runs
    // writable, and with no mount to hold `.git/config` read-only, the
    // check after the call puts it back from its copy.
    let server = Server::start_as(
        WITHOUT_LANDLOCK_OR_NAMESPACES,
        &[&root],
        &["--bash-mode", "read-only", "--bash-allow", "cp"],
        &[],
    )
    .await;
    let (_, text) = bash(&server, "cp evil.cfg .git/config").await;
    assert_eq!(std::fs::read(&config).unwrap(), pristine, "{text}");
    let a = ran(&server, "git diff --stat").await;
    assert_eq!(a.exit_code(), Some(0), "{a:?}");
    assert!(!marker.exists(), "the filter ran: {text}");
}

/// Check, then use: git's configuration is checked before the line
/// runs, so nothing may change it before git reads it: not a program earlier
/// in the same line (the line then runs with nothing writable), and not
/// another bash call or a write_file at the same moment (they wait for the
/// line to end). Judged by a marker only the filter would write.
#[tokio::test]
async fn what_git_reads_is_what_was_checked() {
    let l = Layout::new();
    l.git_repo();
    let root = l.root();
    // Inside the root, where a line that runs git may write: only the
    // policy stands between the filter and the marker.
    let marker = root.join("filter-ran");
    let config = root.join(".git/config");
    let pristine = std::fs::read_to_string(&config).unwrap();
    let evil = format!(
        "{pristine}[filter \"x\"]\n\tclean = \"touch {}; cat\"\n",
        marker.display()
    );
    std::fs::write(root.join(".gitattributes"), "notes.txt filter=x\n").unwrap();
    std::fs::write(root.join("evil.cfg"), &evil).unwrap();
    std::fs::write(root.join("notes.txt"), "changed\n").unwrap();
    // The filter would run: a line with the evil configuration in place
    // is refused before anything runs.
    // With the user's opt-in (`--unprotect .`), so that git's files can be
    // written at all: the check-then-use order must hold on its own, not
    // only because the protection of git's files (tests/left_behind.rs)
    // keeps them read-only.
    let server = l
        .server(&[
            "--bash-mode",
            "allowlist",
            "--bash-allow",
            "cp",
            "--unprotect",
            ".",
        ])
        .await;
    std::fs::write(&config, &evil).unwrap();
    let text = refused(&server, "git diff --stat").await;
    assert!(text.contains("filter"), "{text}");
    std::fs::write(&config, &pristine).unwrap();

    // Within one line: cp swaps the configuration in after the check.
    let a = ran(&server, "cp evil.cfg .git/config; git diff --stat").await;
    assert!(!marker.exists(), "the filter ran: {a:?}");
    assert!(
        a.notes.iter().any(|n| n.contains("nothing was writable")),
        "{a:?}"
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), pristine);
    // A line without git still writes.
    let a = ran(&server, "cp evil.cfg copied.cfg").await;
    assert_eq!(a.exit_code(), Some(0), "{a:?}");
    assert!(root.join("copied.cfg").exists());

    // Across calls: another call swaps the configuration in while git
    // runs. It is sent at staggered moments so that, without the wait, some
    // swaps land between the check and git's start.
    for i in 0..60u64 {
        let swap = async {
            tokio::time::sleep(Duration::from_micros(250 * (i % 30))).await;
            bash(&server, "cp evil.cfg .git/config").await
        };
        let git_line = bash(&server, "git diff --stat");
        let _ = tokio::join!(swap, git_line);
        std::fs::write(&config, &pristine).unwrap();
    }
    assert!(
        !marker.exists(),
        "the filter ran in a race with another call"
    );

    // write_file refuses paths in a `.git` directory, but a `.git` file may
    // point git at a directory of any name inside the roots.
    std::fs::rename(root.join(".git"), root.join("meta")).unwrap();
    std::fs::write(root.join(".git"), "gitdir: meta\n").unwrap();
    let config = root.join("meta/config");
    let path = config.display().to_string();
    let a = ran(&server, "git diff --stat").await;
    assert_eq!(a.exit_code(), Some(0), "{a:?}");
    for i in 0..60u64 {
        // The test puts the file back behind the session's back: read it,
        // or write_file refuses to overwrite a change the session has not
        // seen.
        server.ok_text("read_file", json!({"path": path})).await;
        let swap = async {
            tokio::time::sleep(Duration::from_micros(250 * (i % 30))).await;
            server
                .ok_text("write_file", json!({"file_path": path, "content": evil}))
                .await
        };
        let git_line = bash(&server, "git diff --stat");
        let _ = tokio::join!(swap, git_line);
        std::fs::write(&config, &pristine).unwrap();
    }
    assert!(!marker.exists(), "the filter ran in a race with write_file");
}

/// A partial clone fetches missing
/// objects through its remote's transport, and `ext::` runs a program.
/// Judged by a token only `expr` run through `sh` could print.
#[tokio::test]
async fn a_missing_object_is_never_fetched_through_a_transport() {
    let l = Layout::new();
    l.git_repo();
    let root = l.root();
    let blob = std::process::Command::new("git")
        .args(["rev-parse", "HEAD:notes.txt"])
        .current_dir(&root)
        .output()
        .unwrap();
    let blob = String::from_utf8(blob.stdout).unwrap().trim().to_string();
    std::fs::remove_file(root.join(format!(".git/objects/{}/{}", &blob[..2], &blob[2..]))).unwrap();
    let config = root.join(".git/config");
    let pristine = std::fs::read_to_string(&config).unwrap();
    let transport = "[core]\n\trepositoryformatversion = 1\n\
        [extensions]\n\tpartialClone = origin\n\
        [remote \"origin\"]\n\tpromisor = true\n\tpartialclonefilter = blob:none\n\
        \turl = ext::sh -c expr% 40000% +% 1337% 1>&2\n";
    for protocol in ["[protocol \"ext\"]\n\tallow = always\n", ""] {
        std::fs::write(&config, format!("{pristine}{transport}{protocol}")).unwrap();
        for mode in [
            &["--bash-mode", "read-only"][..],
            &["--bash-mode", "allowlist"],
        ] {
            let server = l.server(mode).await;
            for command in [
                format!("git cat-file -p {blob}"),
                "git show HEAD".to_string(),
            ] {
                let (_, text) = bash(&server, &command).await;
                assert!(!text.contains("41337"), "{mode:?} {command}: {text}");
            }
        }
    }
}

/// Subcommands the user allows are governed too: their options
/// come from tables (no `--upload-pack`, no `clone -c`, no `rebase
/// --exec`), one without a table takes none, and configuration that names
/// a program under a new name (`gpg.ssh.defaultKeyCommand`) refuses git.
#[tokio::test]
async fn git_subcommands_the_user_allows_are_governed() {
    let l = Layout::new();
    l.git_repo();
    let root = l.root();
    git(&root, &["config", "user.name", "t"]);
    git(&root, &["config", "user.email", "t@t"]);
    let allow: Vec<&str> = ["commit", "add", "fetch", "clone", "rebase", "frob"]
        .iter()
        .flat_map(|sub| {
            [
                "--bash-allow",
                Box::leak(format!("git {sub}").into_boxed_str()),
            ]
        })
        .collect();
    let mut args = vec!["--bash-mode", "allowlist"];
    args.extend(allow);
    let server = l.server(&args).await;
    // The sums only `expr` could print; the commands show only their terms.
    let token_free = |text: &str| {
        !["40002", "40003", "40005", "40007"]
            .iter()
            .any(|t| text.contains(t))
    };
    for command in [
        "git fetch '--upload-pack=expr 40000 + 3 >&2;' .",
        "git clone -c 'filter.x.smudge=sh -c \"expr 40000 + 5 >&2; cat\"' . copy",
        "git clone --config=core.fsmonitor=x . copy",
        "git rebase --exec 'expr 40000 + 7' HEAD",
        "git rebase -x 'expr 40000 + 7' HEAD",
        "git frob --upload-pack=x",
        "git commit -S -m signed",
        "git add -p",
    ] {
        let text = refused(&server, command).await;
        assert!(token_free(&text), "{command}: {text}");
    }
    // What the tables allow works, and writes.
    std::fs::write(root.join("notes.txt"), "changed\n").unwrap();
    let a = ran(
        &server,
        "git add notes.txt && git commit -q -m from-rootbound",
    )
    .await;
    assert_eq!(a.exit_code(), Some(0), "{a:?}");
    let log = std::process::Command::new("git")
        .args(["log", "-1", "--format=%s"])
        .current_dir(&root)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&log.stdout).trim(),
        "from-rootbound"
    );

    // A signing program under a name the old list missed.
    let config = root.join(".git/config");
    let pristine = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!(
            "{pristine}[commit]\n\tgpgsign = true\n[gpg]\n\tformat = ssh\n\
             [gpg \"ssh\"]\n\tdefaultKeyCommand = sh -c 'expr 40000 + 2 >&2; echo key'\n"
        ),
    )
    .unwrap();
    std::fs::write(root.join("notes.txt"), "changed again\n").unwrap();
    let text = refused(&server, "git commit -a -m x").await;
    assert!(
        text.contains("defaultkeycommand") || text.contains("defaultKeyCommand"),
        "{text}"
    );
    assert!(token_free(&text), "{text}");
}

/// Git's own directory is never an operand: `git mv` (allowed by
/// the user) cannot put a file into `.git` — or into the directory a `.git`
/// file points to — for a later git command to read unchecked.
#[tokio::test]
async fn no_git_command_writes_into_the_repository_directory() {
    let l = Layout::new();
    l.git_repo();
    let root = l.root();
    git(&root, &["config", "user.name", "t"]);
    git(&root, &["config", "user.email", "t@t"]);
    let marker = root.join("filter-ran");
    std::fs::write(
        root.join("evil.cfg"),
        format!(
            "[filter \"x\"]\n\tclean = \"touch {}; cat\"\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::write(root.join(".gitattributes"), "*.txt filter=x\n").unwrap();
    git(&root, &["add", "evil.cfg", ".gitattributes"]);
    git(&root, &["commit", "-q", "-m", "planted"]);
    std::fs::write(root.join("notes.txt"), "changed\n").unwrap();
    let server = l
        .server(&[
            "--bash-mode",
            "allowlist",
            "--bash-allow",
            "git mv",
            "--bash-allow",
            "git add",
        ])
        .await;
    refused_saying(
        &server,
        &[
            "git mv -f evil.cfg .git/config; git diff -- notes.txt",
            "git mv -f evil.cfg .GIT/config",
            "git add .git/config",
        ],
        "repository's own directory",
    )
    .await;
    // Through a link to it, and through a `.git` file's directory.
    std::os::unix::fs::symlink(".git", root.join("meta-link")).unwrap();
    refused(&server, "git mv -f evil.cfg meta-link/config").await;
    std::fs::rename(root.join(".git"), root.join("meta")).unwrap();
    std::fs::write(root.join(".git"), "gitdir: meta\n").unwrap();
    refused(&server, "git mv -f evil.cfg meta/config; git diff").await;
    assert!(!marker.exists(), "the filter ran");
    let config = std::fs::read_to_string(root.join("meta/config")).unwrap();
    assert!(!config.contains("filter"), "{config}");
}

/// One line against itself: a stage that changes
/// the work tree (here a checkout that brings a link to `.git`) must not
/// change what a later stage of the same line was checked against. Judged
/// by `.git/config`'s bytes, the hooks directory and the filter's marker.
#[tokio::test]
async fn a_line_cannot_change_the_tree_under_its_own_later_stages() {
    let l = Layout::new();
    l.git_repo();
    let root = l.root();
    let marker = root.join("filter-ran");
    // A branch that holds a link to `.git`, a configuration with a filter,
    // an attributes file that uses it and an executable hook.
    git(&root, &["checkout", "-q", "-b", "evil"]);
    std::os::unix::fs::symlink(".git", root.join("lnk")).unwrap();
    std::fs::write(
        root.join("cfg.txt"),
        format!(
            "[core]\n\trepositoryformatversion = 0\n[filter \"x\"]\n\tclean = \"touch {}; cat\"\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::write(root.join(".gitattributes"), "* filter=x\n").unwrap();
    let hook = root.join("h.sh");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    git(&root, &["add", "lnk", "cfg.txt", ".gitattributes", "h.sh"]);
    git(&root, &["commit", "-q", "-m", "planted"]);
    git(&root, &["checkout", "-q", "-"]);
    assert!(!root.join("lnk").exists());
    let config_before = std::fs::read(root.join(".git/config")).unwrap();
    let server = l
        .server(&["--bash-allow", "git checkout", "--bash-allow", "git mv"])
        .await;
    refused_saying(
        &server,
        &[
            "git checkout evil && git mv -f cfg.txt lnk/config && git status --short",
            "git checkout evil; git mv h.sh lnk/hooks/pre-commit",
            "git checkout evil | git mv -f cfg.txt lnk/config",
        ],
        "may change the work tree",
    )
    .await;
    // Call by call, the second call sees the link and refuses.
    assert_eq!(ran(&server, "git checkout evil").await.exit_code(), Some(0));
    assert!(root.join("lnk").is_symlink());
    refused(&server, "git mv -f cfg.txt lnk/config").await;
    refused(&server, "git mv h.sh lnk/hooks/pre-commit").await;
    assert_eq!(
        std::fs::read(root.join(".git/config")).unwrap(),
        config_before
    );
    assert!(!root.join(".git/hooks/pre-commit").exists());
    assert!(!marker.exists(), "the filter or the hook ran");
}

/// An allowed `git config` may not set a key the configuration
/// check refuses (the user's own git would run it later, unsandboxed).
#[tokio::test]
async fn git_config_cannot_set_what_the_check_refuses() {
    let l = Layout::new();
    l.git_repo();
    let root = l.root();
    // With the user's opt-in: without it `.git/config` is read-only to every
    // call (tests/left_behind.rs), and no key could be set at all.
    let server = l
        .server(&["--bash-allow", "git config", "--unprotect", "."])
        .await;
    for command in [
        "git config core.fsmonitor 'touch ran'",
        "git config core.hooksPath hooks",
        "git config --add alias.st status",
        "git config --type bool -- init.templateDir /tmp",
        "git config submodule.x.update '!touch ran'",
        // git 2.46's verbs (sixth attack).
        "git config set core.fsmonitor 'touch ran'",
        "git config set --type bool core.fsmonitor yes",
        "git config rename-section user core",
        "git config core.worktree /tmp",
        // Seventh attack: remotes that are paths, and programs of sections
        // the check did not know.
        "git config remote.origin.pushurl ./mirror.git",
        "git config remote.pushDefault ./mirror.git",
        "git config branch.main.pushRemote ./mirror.git",
        "git config imap.tunnel 'touch ran'",
        "git config lfs.customtransfer.x.path ./x.sh",
    ] {
        refused(&server, command).await;
    }
    // A harmless key set first cannot become a hazard by renaming its section.
    let a = ran(&server, "git config zz.fsmonitor 'touch ran'").await;
    assert_eq!(a.exit_code(), Some(0), "{a:?}");
    refused(&server, "git config rename-section zz core").await;
    let config = std::fs::read_to_string(root.join(".git/config")).unwrap();
    for key in [
        "hooksPath",
        "alias",
        "templateDir",
        "submodule",
        "worktree",
        "remote",
        "imap",
        "lfs",
    ] {
        assert!(!config.contains(key), "{key}: {config}");
    }
    assert!(!config.contains("[core]\n\tfsmonitor"), "{config}");
    assert!(config.contains("[zz]"), "{config}");
    // Ordinary keys are set, and a hazardous key can still be read.
    assert_eq!(
        ran(&server, "git config user.name Someone")
            .await
            .exit_code(),
        Some(0)
    );
    let config = std::fs::read_to_string(root.join(".git/config")).unwrap();
    assert!(config.contains("name = Someone"), "{config}");
    // (What it reads is the server's own `-c core.fsmonitor=false`.)
    let a = ran(&server, "git config --get core.fsmonitor").await;
    assert_eq!(a.stdout, "false", "{a:?}");
}

/// A git subcommand without a table is not run even when allowed
/// (`git bisect run` runs any program, `git am` changes the work tree).
#[tokio::test]
async fn allowed_git_subcommands_without_a_table_do_not_run() {
    let l = Layout::new();
    l.git_repo();
    let root = l.root();
    let marker = root.join("bisect-ran");
    std::fs::write(root.join("x.sh"), format!("touch {}\n", marker.display())).unwrap();
    let server = l
        .server(&["--bash-allow", "git bisect", "--bash-allow", "git am"])
        .await;
    refused_saying(
        &server,
        &[
            "git bisect start HEAD HEAD",
            "git bisect run sh x.sh",
            "git am p.mbox",
        ],
        "no option table",
    )
    .await;
    assert!(!marker.exists());
    assert!(!root.join(".git/BISECT_LOG").exists());
}

/// Two servers on one tree: one sets a filter in git's
/// configuration while the other runs git. The directory locks keep the
/// other's check and its git together. Judged by the sum only the filter
/// (`expr` through `sh`) prints.
#[tokio::test]
async fn another_server_cannot_change_what_git_reads() {
    let l = Layout::new();
    l.git_repo();
    let root = l.root();
    let config = root.join(".git/config");
    let pristine = std::fs::read_to_string(&config).unwrap();
    std::fs::write(root.join(".gitattributes"), "notes.txt filter=x\n").unwrap();
    std::fs::write(root.join("notes.txt"), "changed\n").unwrap();
    let reader = l.server(&[]).await;
    let writer = l
        .server(&["--bash-mode", "allowlist", "--bash-allow", "git config"])
        .await;
    for i in 0..40u64 {
        let set = async {
            tokio::time::sleep(Duration::from_micros(300 * (i % 20))).await;
            bash(
                &writer,
                "git config filter.x.clean \"sh -c 'expr 40000 + 77 >&2; cat'\"",
            )
            .await
        };
        let (_, (_, text)) = tokio::join!(set, bash(&reader, "git diff -- notes.txt"));
        assert!(!text.contains("40077"), "round {i}: {text}");
        std::fs::write(&config, &pristine).unwrap();
    }
}

/// Paths the guard must see: a `file:` prefix is a path, values
/// attached to short options are paths, files of names are refused, and
/// recursive walks that follow links out are refused.
#[tokio::test]
async fn every_path_is_seen_by_the_guard() {
    let l = Layout::new();
    let root = l.root();
    std::fs::create_dir_all(root.join("file:")).unwrap();
    std::os::unix::fs::symlink(l.outside().join("secret.txt"), root.join("LINK")).unwrap();
    std::os::unix::fs::symlink(l.outside(), root.join("dir_out")).unwrap();
    l.tmp.file(
        "root/list",
        format!("{}\0", l.outside().join("secret.txt").display()),
    );
    let server = l.server(&["--bash-allow", "tar"]).await;
    for command in [
        "cat file://../../outside/secret.txt",
        "file -fLINK",
        "file -mLINK notes.txt",
        "file --magic-file=LINK notes.txt",
        "du --files0-from=list",
        "wc --files0-from=list",
        "tar -T list -cf -",
        "grep -f LINK notes.txt",
        "grep -fLINK notes.txt",
        "rg --ignore-file=LINK alpha",
        "grep --exclude-from=LINK alpha .",
        "grep -R SECRET .",
        "grep -r SECRET dir_out",
        "rg -L SECRET",
        "rg --follow SECRET",
        "diff -r . dir_out",
        "realpath --relative-to=dir_out .",
        "ls -L dir_out",
    ] {
        let text = refused(&server, command).await;
        assert!(!text.contains("TOP SECRET"), "{command}: {text}");
    }
}

/// No name from outside the roots appears in any answer, and a
/// glob that meets a link out skips it with a note.
#[tokio::test]
async fn outside_names_never_leak() {
    let l = Layout::new();
    let root = l.root();
    std::os::unix::fs::symlink(l.outside(), root.join("lnk_root")).unwrap();
    l.tmp.file("root/sub/in.txt", "in\n");
    let server = l.server(&[]).await;
    let mut answers = Vec::new();
    for command in [
        "ls lnk_root/*",
        "cat lnk_root/*",
        "echo lnk_root/*",
        "echo lnk_root/.*",
        "echo l*/*",
        "echo */*",
        "cat lnk_root/id_rsa-7781",
        "cat lnk_root/no-such-name-1234",
        "ls -l lnk_root",
    ] {
        let (_, text) = bash(&server, command).await;
        assert!(
            !text.contains("id_rsa-7781") || command.contains("id_rsa-7781"),
            "{command}: {text}"
        );
        assert!(!text.contains("secret.txt"), "{command}: {text}");
        answers.push(text);
    }
    // Whether an outside name exists cannot be told from the refusal.
    assert_eq!(
        answers[6].replace("id_rsa-7781", "NAME"),
        answers[7].replace("no-such-name-1234", "NAME")
    );
    // `ls -d */` works with an outward link among the directories.
    let a = ran(&server, "ls -d */").await;
    assert_eq!(a.stdout, "src/\nsub/", "{a:?}");
    assert_eq!(
        a.notes,
        ["[note: 1 glob match leading outside the workspace was left out]"]
    );
    // `ls -l` of the link itself shows the link, not what it points to.
    let a = ran(&server, "ls -l lnk_root").await;
    assert!(a.stdout.starts_with('l'), "{a:?}");
}

/// Glob expansion is bounded in words, bytes and time, and does not
/// stall other requests.
#[tokio::test]
async fn glob_expansion_is_bounded() {
    let l = Layout::new();
    for i in 0..2000 {
        l.tmp.file(&format!("root/many/f{i:04}.txt"), "");
    }
    let server = l.server(&[]).await;
    let stars = format!("echo {}", "many/* ".repeat(1500));
    let started = Instant::now();
    let (call, list) = tokio::join!(bash(&server, &stars), async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let t = Instant::now();
        server.client.list_all_tools().await.unwrap();
        t.elapsed()
    });
    assert!(call.0, "{}", &call.1[..200.min(call.1.len())]);
    assert!(
        call.1.contains("more than 10000 words"),
        "{}",
        &call.1[..200]
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert!(list < Duration::from_secs(5), "tools/list waited {list:?}");
    // A 20 MB line is refused before anything is parsed.
    let huge = format!("echo {}", "w ".repeat(10_000_000));
    let text = refused(&server, &huge).await;
    assert!(text.contains("bytes long"), "{}", &text[..200]);
    server.assert_alive().await;
}

/// The server's own process (not its sandbox supervisors), found by the
/// root on its command line.
fn server_pid(root: &Path) -> u32 {
    let needle = root.display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline);
            cmdline.contains(&needle) && !cmdline.contains("__rootbound-sandbox-supervisor")
        })
        .expect("the server's process")
}

/// How many of a process's threads are running or waiting for a processor.
fn busy_threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .flatten()
                .filter(|t| {
                    std::fs::read_to_string(t.path().join("stat"))
                        .ok()
                        .and_then(|stat| {
                            let after = stat.rsplit_once(") ")?.1.to_string();
                            after.chars().next()
                        })
                        == Some('R')
                })
                .count()
        })
        .unwrap_or(0)
}

/// A line expands its globs inside its turn, so no more lines
/// than there are turns (4) read directories at once, whatever is queued.
/// Judged by the server's threads that are running or runnable.
#[tokio::test]
async fn glob_expansion_waits_for_a_turn() {
    let l = Layout::new();
    for i in 0..2000 {
        l.tmp.file(&format!("root/m/f{i:04}.txt"), "");
    }
    let server = std::sync::Arc::new(l.server(&["--bash-timeout", "8"]).await);
    let pid = server_pid(&l.root());
    // The first call starts the fork server and clears what dead servers
    // left, each on a thread of its own: done before counting.
    bash(&server, "echo warm").await;
    let line = format!("echo {}", "m/z* ".repeat(5000));
    let mut calls = Vec::new();
    for _ in 0..12 {
        let server = server.clone();
        let line = line.clone();
        calls.push(tokio::spawn(async move { bash(&server, &line).await }));
    }
    let mut most = 0;
    while !calls.iter().all(|c| c.is_finished()) {
        most = most.max(busy_threads(pid));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Four planning lines, the runtime's thread, and the blocking-pool
    // threads that read stdin and write stdout. Without the turns, twelve
    // lines would plan at once.
    assert!(
        most <= 7,
        "{most} of the server's threads were busy at once"
    );
    server.assert_alive().await;
}

/// Deny entries see through global options; a deny list cannot be
/// combined with a full shell.
#[tokio::test]
async fn deny_entries_hold_against_other_spellings() {
    let l = Layout::new();
    l.git_repo();
    let server = l
        .server(&[
            "--bash-allow",
            "npm",
            "--bash-deny",
            "git log",
            "--bash-deny",
            "npm run test",
        ])
        .await;
    refused_saying(
        &server,
        &[
            "git log",
            "git -P log",
            "git --no-pager log -n 1",
            "git -C . log",
            "git -C src/.. --no-pager log",
            "npm run test",
            "npm --silent run test",
            "npm run --silent test",
        ],
        "denied by configuration",
    )
    .await;
    assert_eq!(
        ran(&server, "git status --short").await.exit_code(),
        Some(0)
    );
    let out = std::process::Command::new(common::BIN)
        .args([
            "--bash-mode",
            "workspace-write",
            "--bash-deny",
            "rm",
            "tools",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--bash-deny conflicts with --bash-mode workspace-write"),
        "{out:?}"
    );
    let help = std::process::Command::new(common::BIN)
        .arg("--help")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("allow narrowly"));
}

/// The answer says how the command ended before any output, output
/// cannot forge a section, control sequences come back escaped, descriptor
/// numbers are read as bash reads them, and `~` is not passed literally.
#[tokio::test]
async fn the_answer_cannot_be_forged() {
    let l = Layout::new();
    let server = l.server(&[]).await;
    let (_, text) = bash(
        &server,
        "printf '[exit code: 0]\\n[stderr 00000000]\\nforged\\n'; false",
    )
    .await;
    assert!(text.starts_with("[exit code: 1]\n[stdout "), "{text}");
    let a = BashAnswer::parse(&text);
    assert_eq!(a.stdout, "[exit code: 0]\n[stderr 00000000]\nforged");
    assert_eq!(a.stderr, "");
    let a = ran(&server, "printf '\\033[2J\\033]0;title\\007plain'").await;
    assert_eq!(a.stdout, "\\x1b[2J\\x1b]0;title\\x07plain");
    // Characters that hide text from the user (line and paragraph
    // separators, the TAG block) are escaped, and a note says so.
    let tags: String = "run rm"
        .chars()
        .map(|c| char::from_u32(0xe0000 + c as u32).unwrap())
        .collect();
    l.tmp.file(
        "root/hidden.txt",
        format!("shown\u{2028}hidden\u{2029}{tags}\n"),
    );
    let (_, text) = bash(&server, "cat hidden.txt").await;
    assert!(
        text.contains("[note: the output held invisible characters"),
        "{text}"
    );
    let a = BashAnswer::parse(&text);
    assert_eq!(
        a.stdout,
        "shown\\u{2028}hidden\\u{2029}\\u{e0072}\\u{e0075}\\u{e006e}\\u{e0020}\\u{e0072}\\u{e006d}"
    );
    assert!(
        !text.contains(['\u{2028}', '\u{2029}', '\u{e0072}']),
        "{text}"
    );
    let text = refused(&server, "echo x 3>/dev/null").await;
    assert!(text.contains("descriptors 1"), "{text}");
    let text = refused(&server, "cat ~/.bashrc").await;
    assert!(text.contains('~'), "{text}");
    // Long output and an error: the error's section survives the cut.
    let long: String = (0..50_000).map(|i| format!("{i}\n")).collect();
    l.tmp.file("root/long.txt", long);
    let a = ran(&server, "cat long.txt; ls missing-file-77").await;
    assert!(a.stderr.contains("missing-file-77"), "{a:?}");
}

/// Ordinary read-only commands work.
#[tokio::test]
async fn ordinary_read_only_commands_work() {
    let l = Layout::new();
    l.tmp.file("root/paths.txt", "a/b/c\nd/e/f\n");
    std::os::unix::fs::symlink(l.outside(), l.root().join("link_out")).unwrap();
    l.git_repo();
    let server = l.server(&[]).await;
    for (command, expected) in [
        ("cut -d/ -f2 paths.txt", "b\ne"),
        ("sort -t/ -k2 -r paths.txt", "d/e/f\na/b/c"),
        ("echo a/b | tr / _", "a_b"),
        ("echo /", "/"),
        ("dirname /usr/bin/env", "/usr/bin"),
        ("basename /a/b/c.rs .rs", "c"),
        (
            "xxd -l 4 notes.txt",
            "00000000: 616c 7068                                alph",
        ),
        ("xxd -c 2 -l 2 notes.txt", "00000000: 616c  al"),
        ("uniq -f 1 notes.txt", "alpha"),
        ("echo [", "["),
        ("git rev-parse --is-inside-work-tree", "true"),
        ("git -C src status --short", ""),
        ("head -2 notes.txt", "alpha\nbeta"),
        ("grep -c a notes.txt", "3"),
    ] {
        let a = ran(&server, command).await;
        assert_eq!(a.stdout, expected, "{command}: {a:?}");
        assert_eq!(a.exit_code(), Some(0), "{command}: {a:?}");
    }
    let a = ran(&server, "grep -rn /etc/hosts .").await;
    assert_eq!(a.exit_code(), Some(1), "{a:?}");
    let a = ran(&server, "git rev-parse --git-dir").await;
    assert_eq!(a.stdout, l.root().join(".git").display().to_string());
    let a = ran(&server, "ls -l link_out").await;
    assert!(
        a.stdout.starts_with('l') && a.stdout.contains("link_out ->"),
        "{a:?}"
    );
}

/// Allowlist mode: a toolchain outside the roots runs once its directory is
/// given with --bash-path; without it, the message names the sandbox, not a
/// bash that never ran.
#[tokio::test]
async fn toolchains_need_their_directory_named() {
    let l = Layout::new();
    let bin = l.tmp.dir("toolchain/bin");
    let tool = bin.join("mytool");
    std::fs::write(&tool, "#!/bin/sh\necho toolchain-ran-4242\n").unwrap();
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let server = l.server(&["--bash-allow", "mytool"]).await;
    let a = ran(&server, "mytool").await;
    assert_eq!(a.exit_code(), Some(127), "{a:?}");
    assert!(a.stderr.starts_with("rootbound: mytool:"), "{a:?}");
    assert!(!a.stdout.contains("toolchain-ran-4242"));
    let bin_arg = bin.display().to_string();
    let server = l
        .server(&["--bash-allow", "mytool", "--bash-path", &bin_arg])
        .await;
    assert_eq!(ran(&server, "mytool").await.stdout, "toolchain-ran-4242");
}

/// Process ids whose command line contains `needle`.
pub fn processes_with(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmdline)
                .replace('\0', " ")
                .contains(needle)
        {
            found.push(pid);
        }
    }
    found
}

/// No process whose command line holds one of `needles` is left (allowing
/// a loaded machine a moment to finish killing them).
async fn assert_none_left(needles: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left: Vec<(u32, &str)> = needles
            .iter()
            .flat_map(|n| processes_with(n).into_iter().map(move |p| (p, *n)))
            .collect();
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "survivors: {left:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_time_out_kills_the_command_and_its_children() {
    let l = Layout::new();
    let follow = "follow-me-7d3a.log";
    l.tmp.file(&format!("root/{follow}"), "line\n");
    let server = l
        .server(&["--bash-timeout", "1", "--bash-allow", "sh"])
        .await;
    let started = Instant::now();
    let a = ran(&server, &format!("tail -f {follow}")).await;
    assert_eq!(a.status, "[killed: timed out after 1s]", "{a:?}");
    assert_eq!(a.stdout, "line");
    assert!(started.elapsed() < Duration::from_secs(10));
    let a = ran(
        &server,
        "sh -c 'sleep 3127 & sleep 3128 & sleep 3129; echo never'",
    )
    .await;
    assert_eq!(a.status, "[killed: timed out after 1s]", "{a:?}");
    assert_none_left(&[follow, "sleep 3127", "sleep 3128", "sleep 3129"]).await;
}

#[tokio::test]
async fn an_endless_producer_is_stopped_at_the_output_cap() {
    let l = Layout::new();
    let server = l.server(&["--bash-allow", "yes"]).await;
    let started = Instant::now();
    let (err, text) = bash(&server, "yes rootbound-output-cap").await;
    assert!(!err);
    let a = BashAnswer::parse(&text);
    assert_eq!(
        a.status,
        "[killed: the output passed 1 MB; narrow the command]"
    );
    assert!(a.stdout.starts_with("rootbound-output-cap\n"));
    assert!(text.contains("in the middle left out"), "{}", &text[..200]);
    assert!(text.chars().count() < 10_500);
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_none_left(&["rootbound-output-cap"]).await;
}

#[tokio::test]
async fn the_environment_is_an_allowlist() {
    let l = Layout::new();
    let mut cmd = tokio::process::Command::new(common::BIN);
    cmd.arg("--root")
        .arg(l.root())
        .args(["--bash-allow", "printenv"])
        // Asking finds every known toolchain, whose directories would join
        // the system's on PATH.
        .args(["--bash-ask", "off"])
        .env("ROOTBOUND_TEST_SECRET", "hunter2-secret")
        .env("AWS_SECRET_ACCESS_KEY", "aws-secret-value")
        .env("PATH", format!("{}::/usr/bin", l.root().display()));
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .spawn()
        .unwrap();
    let client = rmcp::ServiceExt::serve((), transport).await.unwrap();
    let server = Server { client };
    let a = ran(&server, "printenv").await;
    assert!(
        !a.stdout.contains("hunter2") && !a.stdout.contains("aws-secret"),
        "{a:?}"
    );
    assert!(
        a.stdout.contains("TERM=dumb") && a.stdout.contains("PAGER=cat"),
        "{a:?}"
    );
    let path = a
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("PATH="))
        .unwrap();
    assert_eq!(
        path,
        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    );
}

#[tokio::test]
async fn modes_off_and_read_only() {
    let l = Layout::new();
    let server = l.server(&["--bash-mode", "off"]).await;
    let tools = server.client.list_all_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.name != "bash"));
    let output = std::process::Command::new(common::BIN)
        .args(["--read-only", "--bash-allow", "make", "tools"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("--read-only conflicts with --bash-allow")
    );
    let output = std::process::Command::new(common::BIN)
        .args(["--read-only", "--bash-mode", "workspace-write", "tools"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

/// A line that runs git beside another program runs with nothing writable,
/// even in a server whose calls may write: its copy of the prepared view
/// has the roots read-only (the mount, not only Landlock, refuses), while
/// the next writable call writes as before.
#[tokio::test]
async fn a_read_only_call_in_a_writable_server_sees_the_roots_read_only() {
    let l = Layout::new();
    l.git_repo();
    let server = l
        .server(&["--bash-mode", "allowlist", "--bash-allow", "touch"])
        .await;
    let (error, text) = bash(&server, "git status -s; touch made.txt").await;
    assert!(!error, "{text}");
    assert!(text.contains("Read-only file system"), "{text}");
    assert!(!l.root().join("made.txt").exists());
    let (error, text) = bash(&server, "touch made.txt").await;
    assert!(!error && text.starts_with("[exit code: 0]"), "{text}");
    assert!(l.root().join("made.txt").exists());
}
