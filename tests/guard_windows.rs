//! The path guard on Windows, through the real binary over MCP, where
//! Wine cannot stand in (issue 26): NTFS junctions, Windows symbolic links,
//! 8.3 short names and ACLs. Wine's link calls make nothing, it gives no
//! 8.3 names and it does not enforce ACLs, so the unit tests under Wine
//! (src/fs/guard/windows_tests.rs, run by .ci/cross.sh) cannot show these;
//! the CI workflow's windows-2022 job runs this file.
//!
//! Every test is judged by effect: a read whose answer does not hold the
//! outside secret, a write after which nothing new is outside and the
//! outside bytes are what they were; and for each kind of link one that
//! stays inside the root, read through, so a link that was never made
//! cannot pass a test. What this machine cannot set up (a symlink without
//! the privilege, a volume without 8.3 names) is skipped with the reason
//! printed, and fails instead under ROOTBOUND_NO_SKIPS (the CI workflow).
#![cfg(windows)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{Scratch, Server, all_text};
use serde_json::{Value, json};

/// A number that sets this run's secrets apart from any other text.
fn token() -> u32 {
    std::process::id()
}

/// `path` without the `\\?\` prefix `canonicalize` gives: the form a user
/// and a model write.
fn plain(path: &Path) -> PathBuf {
    let text = path.to_str().expect("a Unicode path");
    if let Some(rest) = text.strip_prefix(r"\\?\UNC\") {
        PathBuf::from(format!(r"\\{rest}"))
    } else if let Some(rest) = text.strip_prefix(r"\\?\") {
        PathBuf::from(rest)
    } else {
        path.to_path_buf()
    }
}

/// A test that cannot run on this machine: a failure under
/// ROOTBOUND_NO_SKIPS, else a skip that says why.
fn cannot_run(test: &str, why: &str) {
    assert!(
        std::env::var_os("ROOTBOUND_NO_SKIPS").is_none(),
        "{test} cannot run here ({why}), and a skip is a failure in CI"
    );
    eprintln!("SKIPPED {test}: {why}");
}

/// `<base>\rootdirectory` is the root, holding `sub\a.txt`;
/// `<base>\outside` is not, holding a secret; more is added per test.
struct Tree {
    tmp: Scratch,
    base: PathBuf,
    secret: String,
}

impl Tree {
    fn new() -> Tree {
        let tmp = Scratch::new();
        let base = plain(&tmp.path);
        let secret = format!("OUTSIDE-SECRET-{}", token());
        tmp.file(r"rootdirectory\sub\a.txt", "inside\n");
        tmp.file(r"outside\outside-secret.txt", &secret);
        tmp.file(r"outside\deeper\outside-deep.txt", &secret);
        Tree { tmp, base, secret }
    }

    fn root(&self) -> PathBuf {
        self.base.join("rootdirectory")
    }

    fn outside(&self) -> PathBuf {
        self.base.join("outside")
    }

    async fn server(&self) -> Server {
        Server::start(&[&self.root()], &["--no-journal"]).await
    }
}

/// Every file beneath `dir` (no link followed) and its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut found = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let kind = entry.file_type().unwrap();
            if kind.is_dir() && !kind.is_symlink() {
                stack.push(entry.path());
            } else if kind.is_file() {
                found.insert(entry.path(), std::fs::read(entry.path()).unwrap());
            } else {
                found.insert(entry.path(), Vec::new());
            }
        }
    }
    found
}

/// The call must fail, and its answer hold none of `hidden`.
async fn refused(server: &Server, tool: &str, args: Value, hidden: &[&str]) -> String {
    let result = server.call(tool, args.clone()).await;
    let text = all_text(&result);
    assert_eq!(
        result.is_error,
        Some(true),
        "{tool} {args} was not refused: {text}"
    );
    for h in hidden {
        assert!(!text.contains(h), "{tool} {args} shows {h}: {text}");
    }
    text
}

/// Whatever the call answers, it holds none of `hidden`.
async fn shows_none(server: &Server, tool: &str, args: Value, hidden: &[&str]) -> String {
    let text = all_text(&server.call(tool, args.clone()).await);
    for h in hidden {
        assert!(!text.contains(h), "{tool} {args} shows {h}: {text}");
    }
    text
}

/// Every tool, aimed at `link` (a link in the root that leads to the
/// outside directory, or to its secret file when `to_file`): reads are
/// refused and show no outside content, listings and searches show no
/// outside name or content, and whatever writes answer, the outside is
/// byte for byte what it was and holds nothing new. (A write may replace
/// a link to a file instead of refusing it; it may never write through.)
async fn nothing_passes_through(t: &Tree, server: &Server, link: &str, to_file: bool) {
    let before = snapshot(&t.outside());
    // Requests that name a file may see it named back in their refusal;
    // no answer may show its content, nor a name no request gave.
    let content = [t.secret.as_str()];
    let names = [t.secret.as_str(), "outside-secret.txt", "outside-deep.txt"];
    let (file, new_file) = if to_file {
        (link.to_string(), link.to_string())
    } else {
        (
            format!(r"{link}\outside-secret.txt"),
            format!(r"{link}\planted.txt"),
        )
    };
    let absolute = t.root().join(&file).display().to_string();
    // Reads first: a write may replace a link to a file with a file of
    // its own, which a later read would then rightly read.
    for path in [&file, &absolute] {
        refused(server, "read_file", json!({"path": path}), &content).await;
        refused(server, "file_read", json!({"path": path}), &content).await;
    }
    for path in [&file, &absolute] {
        shows_none(
            server,
            "write_file",
            json!({"file_path": path, "content": "planted"}),
            &content,
        )
        .await;
        shows_none(
            server,
            "replace",
            json!({"file_path": path, "old_string": "OUTSIDE-SECRET-", "new_string": "replaced-"}),
            &content,
        )
        .await;
    }
    shows_none(
        server,
        "write_file",
        json!({"file_path": new_file, "content": "planted"}),
        &content,
    )
    .await;
    if !to_file {
        refused(server, "list_directory", json!({"path": link}), &names).await;
        shows_none(
            server,
            "write_file",
            json!({"file_path": format!(r"{link}\new\dir\planted.txt"), "content": "planted"}),
            &content,
        )
        .await;
    }
    shows_none(server, "glob", json!({"pattern": "**/*"}), &names).await;
    shows_none(
        server,
        "search_file_content",
        json!({"pattern": "OUTSIDE-SECRET-[0-9]+"}),
        &names,
    )
    .await;
    shows_none(
        server,
        "read_many_files",
        json!({"paths": [link, format!("{link}/**"), "**/*.txt"]}),
        &names,
    )
    .await;
    assert_eq!(snapshot(&t.outside()), before, "the outside changed");
    server.assert_alive().await;
}

/// Makes a junction at `at` to the directory `target` (`mklink /J`, which
/// needs no privilege). Whether it leads there is checked by the caller.
fn junction(at: &Path, target: &Path) {
    let out = std::process::Command::new("cmd")
        .args(["/C", "mklink", "/J"])
        .arg(at)
        .arg(target)
        .output()
        .expect("run cmd");
    assert!(
        out.status.success(),
        "mklink /J: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Junctions count as links: one that leads out of the root (beside it,
/// or to a directory inside the root's parent) lets no tool read, list,
/// search or write there; one that stays inside the root reads through.
#[tokio::test]
async fn junctions_out_of_the_root_lead_nowhere() {
    let t = Tree::new();
    junction(&t.root().join("out"), &t.outside());
    junction(&t.root().join("up"), &t.base);
    junction(&t.root().join("inner"), &t.root().join("sub"));
    // The junctions are there and lead where they should, for the host.
    assert_eq!(
        std::fs::read_to_string(t.root().join(r"out\outside-secret.txt")).unwrap(),
        t.secret
    );
    assert_eq!(
        std::fs::read_to_string(t.root().join(r"inner\a.txt")).unwrap(),
        "inside\n"
    );
    let server = t.server().await;
    let inner = server
        .ok_text("read_file", json!({"path": r"inner\a.txt"}))
        .await;
    assert_eq!(inner, "inside\n");
    nothing_passes_through(&t, &server, "out", false).await;
    nothing_passes_through(&t, &server, r"up\outside", false).await;
}

/// Windows symbolic links (to a directory, to a file, relative, and one
/// that dangles until its target appears outside) lead nowhere outside
/// the root; one to a directory inside the root reads through.
#[tokio::test]
async fn symbolic_links_out_of_the_root_lead_nowhere() {
    let t = Tree::new();
    let inner = std::os::windows::fs::symlink_dir(t.root().join("sub"), t.root().join("inner"));
    if let Err(e) = inner {
        return cannot_run(
            "symbolic_links_out_of_the_root_lead_nowhere",
            &format!(
                "this process may not make symbolic links ({e}); developer mode or an administrator's token is needed"
            ),
        );
    }
    std::os::windows::fs::symlink_dir(t.outside(), t.root().join("dir_link")).unwrap();
    std::os::windows::fs::symlink_file(
        t.outside().join("outside-secret.txt"),
        t.root().join("file_link.txt"),
    )
    .unwrap();
    std::os::windows::fs::symlink_file(
        Path::new(r"..\outside\outside-secret.txt"),
        t.root().join("relative_link.txt"),
    )
    .unwrap();
    let later = t.outside().join("later");
    std::os::windows::fs::symlink_dir(&later, t.root().join("dangling")).unwrap();
    assert_eq!(
        std::fs::read_to_string(t.root().join("relative_link.txt")).unwrap(),
        t.secret
    );
    let server = t.server().await;
    let read = server
        .ok_text("read_file", json!({"path": r"inner\a.txt"}))
        .await;
    assert_eq!(read, "inside\n");
    nothing_passes_through(&t, &server, "dir_link", false).await;
    nothing_passes_through(&t, &server, "file_link.txt", true).await;
    nothing_passes_through(&t, &server, "relative_link.txt", true).await;
    // A dangling link: a write through it would make its target outside.
    shows_none(
        &server,
        "write_file",
        json!({"file_path": r"dangling\planted.txt", "content": "planted"}),
        &[],
    )
    .await;
    assert!(
        !later.exists(),
        "a write through a dangling link made its target"
    );
    // Its target made afterwards is outside all the same.
    std::fs::create_dir(&later).unwrap();
    std::fs::write(later.join("outside-secret.txt"), &t.secret).unwrap();
    nothing_passes_through(&t, &server, "dangling", false).await;
}

/// The 8.3 name Windows gives `path`, if it gives one other than its name.
fn short_name(path: &Path) -> Option<String> {
    #[link(name = "kernel32")]
    unsafe extern "system" {
        fn GetShortPathNameW(long: *const u16, short: *mut u16, size: u32) -> u32;
    }
    use std::os::windows::ffi::OsStrExt;
    let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
    let mut buffer = vec![0u16; 1024];
    // SAFETY: NUL-terminated input; the buffer is valid for its length.
    let n = unsafe { GetShortPathNameW(wide.as_ptr(), buffer.as_mut_ptr(), 1024) } as usize;
    let short = String::from_utf16(buffer.get(..n)?).ok()?;
    let name = Path::new(&short).file_name()?.to_str()?.to_string();
    (name != path.file_name()?.to_str()?).then_some(name)
}

/// `path`'s 8.3 name: the one NTFS gave it, or else `wanted`, set with
/// `fsutil file setshortname` (an administrator's right; the CI workflow
/// also turns 8.3 names on). None when neither works.
fn ensure_short_name(path: &Path, wanted: &str) -> Option<String> {
    if let Some(name) = short_name(path) {
        return Some(name);
    }
    let _ = std::process::Command::new("fsutil")
        .args(["file", "setshortname"])
        .arg(path)
        .arg(wanted)
        .output();
    short_name(path)
}

/// 8.3 short names are resolved to the long names they stand for: a short
/// spelling of a directory beside the root (one whose long name starts
/// like the root's, and one that does not) is outside, for reads and
/// writes; a short spelling of the root, or of a directory in it, reads
/// inside; `.git` by its short name is still refused to the write tools;
/// and a root given by its short name confines as its long name does.
#[tokio::test]
async fn short_names_resolve_to_what_they_stand_for() {
    let test = "short_names_resolve_to_what_they_stand_for";
    let t = Tree::new();
    let evil = t.base.join("rootdirectory_evil");
    std::fs::create_dir(&evil).unwrap();
    std::fs::write(evil.join("outside-secret.txt"), &t.secret).unwrap();
    let long_outside = t.base.join("longdirectoryname");
    std::fs::create_dir(&long_outside).unwrap();
    std::fs::write(long_outside.join("outside-secret.txt"), &t.secret).unwrap();
    let long_inside = t.root().join("a long directory name");
    std::fs::create_dir(&long_inside).unwrap();
    std::fs::write(long_inside.join("f.txt"), "long\n").unwrap();
    std::fs::create_dir(t.root().join(".git")).unwrap();
    std::fs::write(t.root().join(r".git\config"), "[core]\n").unwrap();
    let names = (
        ensure_short_name(&t.root(), "RBROOT~1"),
        ensure_short_name(&evil, "RBEVIL~1"),
        ensure_short_name(&long_outside, "RBLONG~1"),
        ensure_short_name(&long_inside, "RBINSI~1"),
        ensure_short_name(&t.root().join(".git"), "RBGIT~1"),
    );
    let (Some(root_s), Some(evil_s), Some(long_s), Some(inside_s), Some(git_s)) = names else {
        return cannot_run(test, &format!("this volume gives no 8.3 names: {names:?}"));
    };
    // The host sees the short names lead where they should.
    assert_eq!(
        std::fs::read_to_string(t.base.join(&long_s).join("outside-secret.txt")).unwrap(),
        t.secret
    );
    let before = snapshot(&t.base.join(&evil_s));
    let hidden = [t.secret.as_str()];
    let server = t.server().await;
    for path in [
        t.base.join(&evil_s).join("outside-secret.txt"),
        t.base.join(&long_s).join("outside-secret.txt"),
        PathBuf::from(format!(r"..\{long_s}\outside-secret.txt")),
        PathBuf::from(format!(r"..\{evil_s}\outside-secret.txt")),
    ] {
        let path = path.display().to_string();
        refused(&server, "read_file", json!({"path": path}), &hidden).await;
        refused(
            &server,
            "write_file",
            json!({"file_path": path, "content": "planted"}),
            &hidden,
        )
        .await;
    }
    for dir in [&evil_s, &long_s] {
        let planted = t.base.join(dir).join("planted.txt");
        refused(
            &server,
            "write_file",
            json!({"file_path": planted.display().to_string(), "content": "planted"}),
            &hidden,
        )
        .await;
        refused(
            &server,
            "list_directory",
            json!({"path": t.base.join(dir).display().to_string()}),
            &["outside-secret.txt"],
        )
        .await;
    }
    assert!(!evil.join("planted.txt").exists() && !long_outside.join("planted.txt").exists());
    assert_eq!(snapshot(&t.base.join(&evil_s)), before);
    // Inside, short spellings read what they stand for.
    let through_root = t.base.join(&root_s).join(r"sub\a.txt");
    let read = server
        .ok_text(
            "read_file",
            json!({"path": through_root.display().to_string()}),
        )
        .await;
    assert_eq!(read, "inside\n");
    let read = server
        .ok_text("read_file", json!({"path": format!(r"{inside_s}\f.txt")}))
        .await;
    assert_eq!(read, "long\n");
    // `.git` by its short name is still git's.
    refused(
        &server,
        "write_file",
        json!({"file_path": format!(r"{git_s}\config"), "content": "[core]\n\tfsmonitor = x\n"}),
        &[],
    )
    .await;
    refused(
        &server,
        "write_file",
        json!({"file_path": format!(r"{git_s}\hooks\pre-commit"), "content": "x"}),
        &[],
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(t.root().join(r".git\config")).unwrap(),
        "[core]\n"
    );
    assert!(!t.root().join(r".git\hooks").exists());
    // A root given by its short name: its sibling whose long name starts
    // like it is still outside.
    let short_root = t.base.join(&root_s);
    let server = Server::start(&[&short_root], &["--no-journal"]).await;
    let read = server
        .ok_text("read_file", json!({"path": r"sub\a.txt"}))
        .await;
    assert_eq!(read, "inside\n");
    refused(
        &server,
        "read_file",
        json!({"path": evil.join("outside-secret.txt").display().to_string()}),
        &hidden,
    )
    .await;
    refused(
        &server,
        "read_file",
        json!({"path": r"..\rootdirectory_evil\outside-secret.txt"}),
        &hidden,
    )
    .await;
}

/// Removes, when dropped, the deny entries `deny_everyone` added.
struct DenyEntries(Vec<PathBuf>);

impl Drop for DenyEntries {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = std::process::Command::new("icacls")
                .arg(path)
                .args(["/remove:d", "*S-1-1-0"])
                .output();
        }
    }
}

/// Adds an entry denying `rights` to Everyone (`icacls /deny`).
fn deny_everyone(path: &Path, rights: &str, kept: &mut DenyEntries) {
    let out = std::process::Command::new("icacls")
        .arg(path)
        .arg("/deny")
        .arg(format!("*S-1-1-0:{rights}"))
        .output()
        .expect("run icacls");
    assert!(
        out.status.success(),
        "icacls /deny: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    kept.0.push(path.to_path_buf());
}

/// ACLs decide as they do for the user: a file whose ACL denies reading its
/// data is read by no tool (and the server goes on); a directory whose ACL
/// denies listing is listed by none; a directory whose ACL denies adding
/// files gets none from write_file. Each is checked first to hold for the
/// test process itself, so the test shows the server adds no way past
/// them.
#[tokio::test]
async fn acls_that_deny_the_user_are_obeyed() {
    let test = "acls_that_deny_the_user_are_obeyed";
    let t = Tree::new();
    let secret = format!("ACL-SECRET-{}", token());
    let unreadable = t.tmp.file(r"rootdirectory\unreadable.txt", &secret);
    let unlisted_name = format!("unlisted-{}.txt", token());
    let unlisted = t.tmp.dir(r"rootdirectory\unlisted");
    std::fs::write(unlisted.join(&unlisted_name), "x").unwrap();
    let closed = t.tmp.dir(r"rootdirectory\closed");
    let mut kept = DenyEntries(Vec::new());
    deny_everyone(&unreadable, "(RD)", &mut kept);
    deny_everyone(&unlisted, "(RD)", &mut kept);
    deny_everyone(&closed, "(WD,AD)", &mut kept);
    if std::fs::read(&unreadable).is_ok()
        || std::fs::read_dir(&unlisted).is_ok()
        || std::fs::write(closed.join("probe.txt"), "x").is_ok()
    {
        return cannot_run(
            test,
            "the deny entries do not hold for this process (it may read past ACLs)",
        );
    }
    let server = t.server().await;
    let hidden = [secret.as_str()];
    refused(
        &server,
        "read_file",
        json!({"path": "unreadable.txt"}),
        &hidden,
    )
    .await;
    refused(
        &server,
        "file_read",
        json!({"path": "unreadable.txt"}),
        &hidden,
    )
    .await;
    shows_none(
        &server,
        "read_many_files",
        json!({"paths": ["unreadable.txt", "**/*.txt"]}),
        &hidden,
    )
    .await;
    shows_none(
        &server,
        "search_file_content",
        json!({"pattern": "ACL-SECRET-[0-9]+"}),
        &hidden,
    )
    .await;
    refused(
        &server,
        "list_directory",
        json!({"path": "unlisted"}),
        &[&unlisted_name],
    )
    .await;
    shows_none(
        &server,
        "glob",
        json!({"pattern": "**/*"}),
        &[&unlisted_name],
    )
    .await;
    refused(
        &server,
        "write_file",
        json!({"file_path": r"closed\new.txt", "content": "x"}),
        &[],
    )
    .await;
    assert_eq!(
        std::fs::read_dir(&closed).unwrap().count(),
        0,
        "a file was added to a directory whose ACL denies it"
    );
    // The server is fine, and reads what it may.
    let read = server
        .ok_text("read_file", json!({"path": r"sub\a.txt"}))
        .await;
    assert_eq!(read, "inside\n");
    drop(kept);
}

/// The write tools refuse git's configuration and hooks and the settings
/// agents and editors run programs from, in any letter case and through a
/// junction to the git directory: on Windows no sandbox stands behind
/// bash, so these rules are all that protects them.
#[tokio::test]
async fn the_write_tools_refuse_protected_paths_in_any_spelling() {
    let t = Tree::new();
    t.tmp
        .file(r"rootdirectory\.git\config", "[core]\n\tbare = false\n");
    t.tmp
        .file(r"rootdirectory\.git\HEAD", "ref: refs/heads/main\n");
    t.tmp.dir(r"rootdirectory\.git\objects");
    t.tmp.dir(r"rootdirectory\.git\refs");
    junction(&t.root().join("gitlink"), &t.root().join(".git"));
    let before = snapshot(&t.root());
    let server = t.server().await;
    for path in [
        r".git\config",
        r".GIT\CONFIG",
        r".git\hooks\pre-commit",
        r".Git\Hooks\post-checkout",
        r"gitlink\config",
        r"gitlink\hooks\pre-commit",
        r".gemini\settings.json",
        r".vscode\tasks.json",
        ".mcp.json",
        r"sub\.git",
        // Last: no `.gemini` exists, so the name is looked at as spelled.
        r".GEMINI\settings.json",
        r".VSCode\tasks.json",
    ] {
        refused(
            &server,
            "write_file",
            json!({"file_path": path, "content": "[core]\n\tfsmonitor = calc.exe\n"}),
            &[],
        )
        .await;
    }
    refused(
        &server,
        "replace",
        json!({"file_path": r".git\config", "old_string": "bare = false", "new_string": "fsmonitor = calc.exe"}),
        &[],
    )
    .await;
    assert_eq!(snapshot(&t.root()), before, "a protected path changed");
    // An ordinary file beside them is written.
    server
        .ok_text(
            "write_file",
            json!({"file_path": r"sub\b.txt", "content": "fine\n"}),
        )
        .await;
    assert_eq!(
        std::fs::read_to_string(t.root().join(r"sub\b.txt")).unwrap(),
        "fine\n"
    );
}
