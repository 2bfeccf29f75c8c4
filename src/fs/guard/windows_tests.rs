//! The guard's rules on Windows, against a real temporary tree: spellings,
//! case, 8.3 names, streams, device names, links (junctions and symlinks
//! where this process may make them; under Wine, whose own link calls do
//! nothing, Unix symlinks made by `/bin/ln`, which Wine shows as what they
//! lead to), reads, listings and writes. Judged by effect: what a read
//! returns, what is on disk after a write.

use std::fs;
use std::os::windows::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::*;
use crate::fs::atomic;

/// `<tmp>/root` (the root), `<tmp>/root_evil` and `<tmp>/outside`, all by
/// their canonical display path.
struct Tree {
    _dir: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let base = crate::fs::canonical_dir(dir.path()).unwrap();
        let root = base.join("root");
        fs::create_dir_all(root.join("sub").join("deep")).unwrap();
        fs::write(root.join("file.txt"), "inside\n").unwrap();
        fs::write(root.join("sub").join("deep").join("x.rs"), "fn main() {}\n").unwrap();
        fs::create_dir_all(base.join("root_evil")).unwrap();
        fs::write(base.join("root_evil").join("secret"), "evil\n").unwrap();
        fs::create_dir_all(base.join("outside")).unwrap();
        fs::write(base.join("outside").join("secret"), "outside\n").unwrap();
        Tree {
            _dir: dir,
            base,
            root,
        }
    }

    fn guard(&self) -> Guard {
        Guard::new(&[&self.root]).unwrap()
    }

    fn raw(&self, rel: &str) -> String {
        format!("{}\\{rel}", self.root.display())
    }
}

fn read(guard: &Guard, raw: &str) -> io::Result<String> {
    let resolved = guard
        .resolve(raw)
        .map_err(|r| io::Error::other(format!("{r:?}")))?;
    let (mut file, _) = guard.open_read(&resolved)?;
    let mut text = String::new();
    io::Read::read_to_string(&mut file, &mut text)?;
    Ok(text)
}

fn invalid(r: Result<Resolved, Refusal>) -> String {
    match r {
        Err(Refusal::Invalid(message)) => message,
        other => panic!("expected a validation refusal, got {other:?}"),
    }
}

fn outside_why(r: Result<Resolved, Refusal>) -> OutsideWhy {
    match r {
        Err(Refusal::Outside { why, .. }) => why,
        other => panic!("expected an outside refusal, got {other:?}"),
    }
}

#[test]
fn roots_are_shown_in_the_plain_form() {
    let t = Tree::new();
    let g = t.guard();
    let shown = g.primary().display().to_string();
    assert!(!shown.starts_with(r"\\?\"), "{shown}");
    assert_eq!(g.primary(), t.root);
    assert_eq!(g.roots_display(), shown);
}

#[test]
fn every_spelling_of_a_drive_path_reaches_the_same_file() {
    let t = Tree::new();
    let g = t.guard();
    let root = t.root.display().to_string();
    for spelling in [
        format!(r"{root}\file.txt"),
        format!("{}/file.txt", root.replace('\\', "/")),
        format!(r"{}\FILE.TXT", root.to_uppercase()),
        format!(r"{}\file.txt", root.to_lowercase()),
        format!(r"\\?\{root}\file.txt"),
        format!(r"{root}\sub\..\file.txt"),
        format!("file:///{}/file.txt", root.replace('\\', "/")),
        "file.txt".to_string(),
        r".\sub\..\file.txt".to_string(),
    ] {
        assert_eq!(read(&g, &spelling).unwrap(), "inside\n", "{spelling}");
        let resolved = g.resolve(&spelling).unwrap();
        assert_eq!(resolved.real(), t.root.join("file.txt"), "{spelling}");
    }
    let upper = g.resolve(&t.raw(r"SUB\DEEP\X.RS")).unwrap();
    assert_eq!(upper.real(), t.root.join("sub").join("deep").join("x.rs"));
}

#[test]
fn dotdot_escapes_and_prefix_siblings_are_outside() {
    let t = Tree::new();
    let g = t.guard();
    for raw in [
        r"..\outside\secret".to_string(),
        r"..\root_evil\secret".to_string(),
        format!(r"{}\root_evil\secret", t.base.display()),
        t.raw(r"..\outside\secret"),
        t.raw(r"sub\..\..\outside"),
    ] {
        assert_eq!(outside_why(g.resolve(&raw)), OutsideWhy::Resolved, "{raw}");
    }
}

#[test]
fn streams_device_names_and_trailing_dots_are_refused() {
    let t = Tree::new();
    let g = t.guard();
    for raw in [
        "file.txt::$DATA",
        "file.txt:hidden",
        r"sub:x\y",
        "nowhere:stream",
    ] {
        let message = invalid(g.resolve(&t.raw(raw)));
        assert!(
            message.contains("alternate data stream"),
            "{raw}: {message}"
        );
    }
    for raw in ["CON", "nul", "nul.txt", "COM1", "lpt1.log", r"sub\AUX\x"] {
        let message = invalid(g.resolve(&t.raw(raw)));
        assert!(message.contains("reserved device name"), "{raw}: {message}");
    }
    for raw in ["file.txt.", "file.txt ", r"sub.\deep"] {
        let message = invalid(g.resolve(&t.raw(raw)));
        assert!(message.contains("dot or a space"), "{raw}: {message}");
    }
    for raw in [r"\\.\C:\x", r"\\?\GLOBALROOT\x", "C:relative"] {
        invalid(g.resolve(raw));
    }
    // Nothing was created by any of it.
    let mut names: Vec<String> = fs::read_dir(&t.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["file.txt", "sub"]);
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

#[test]
fn short_names_resolve_to_long_ones_and_cannot_dodge_the_git_rule() {
    let t = Tree::new();
    let long = t.root.join("A Long Directory Name");
    fs::create_dir_all(&long).unwrap();
    fs::write(long.join("f.txt"), "long\n").unwrap();
    fs::create_dir_all(t.root.join(".git")).unwrap();
    fs::write(t.root.join(".git").join("config"), "[core]\n").unwrap();
    let Some(short) = short_name(&long) else {
        eprintln!("skipped: this file system gives no 8.3 names");
        return;
    };
    let g = t.guard();
    let resolved = g.resolve(&t.raw(&format!(r"{short}\f.txt"))).unwrap();
    assert_eq!(resolved.real(), long.join("f.txt"));
    assert_eq!(
        read(&g, &t.raw(&format!(r"{short}\f.txt"))).unwrap(),
        "long\n"
    );
    if let Some(git_short) = short_name(&t.root.join(".git")) {
        let raw = t.raw(&format!(r"{git_short}\config"));
        let resolved = g.resolve(&raw).unwrap();
        assert!(has_component(resolved.real(), ".git"), "{resolved:?}");
        let refused = crate::fs::writing::target(&g, &raw);
        assert!(
            matches!(refused, Err(crate::fs::writing::TargetError::InsideGit(_))),
            "{refused:?}"
        );
    }
    // A short spelling of a path outside the root is outside.
    let outside_long = t.base.join("Outside Long Name");
    fs::create_dir_all(&outside_long).unwrap();
    if let Some(short) = short_name(&outside_long) {
        let raw = format!(r"{}\{short}", t.base.display());
        assert_eq!(outside_why(g.resolve(&raw)), OutsideWhy::Resolved);
    }
}

#[test]
fn the_git_rule_ignores_case() {
    assert!(has_component(Path::new(r"C:\r\.GIT\config"), ".git"));
    assert!(has_component(Path::new(r"C:\r\.Git"), ".git"));
    assert!(!has_component(Path::new(r"C:\r\.gitx"), ".git"));
}

/// A link as this system can make one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Made {
    /// A Windows symbolic link (a name-surrogate reparse point).
    Windows,
    /// A Unix symlink under Wine, seen as what it leads to.
    Wine,
}

/// The Unix path of a Windows one, when running under Wine.
fn wine_unix_path(path: &Path) -> Option<String> {
    #[link(name = "kernel32")]
    unsafe extern "system" {
        fn GetModuleHandleA(name: *const u8) -> *mut std::ffi::c_void;
        fn GetProcAddress(module: *mut std::ffi::c_void, name: *const u8) -> *const ();
    }
    type UnixName = unsafe extern "system" fn(*const u16) -> *const std::ffi::c_char;
    use std::os::windows::ffi::OsStrExt;
    // SAFETY: NUL-terminated names; a missing export gives null, checked.
    let function = unsafe {
        let kernel32 = GetModuleHandleA(c"kernel32.dll".as_ptr().cast());
        GetProcAddress(kernel32, c"wine_get_unix_file_name".as_ptr().cast())
    };
    if function.is_null() {
        return None;
    }
    // SAFETY: Wine's export has this signature; it returns a heap string
    // (left allocated: tests only).
    let function: UnixName = unsafe { std::mem::transmute(function) };
    let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
    // SAFETY: a NUL-terminated wide string, as the function takes.
    let unix = unsafe { function(wide.as_ptr()) };
    if unix.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated string from Wine.
    Some(
        unsafe { std::ffi::CStr::from_ptr(unix) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// Makes `at` a link to `target`: a Windows symbolic link when this process
/// may make one, else under Wine a Unix symlink. None when neither works.
fn link(target: &Path, at: &Path) -> Option<Made> {
    let made = if target.is_dir() {
        std::os::windows::fs::symlink_dir(target, at)
    } else {
        std::os::windows::fs::symlink_file(target, at)
    };
    if made.is_ok() && fs::symlink_metadata(at).is_ok_and(|m| m.file_type().is_symlink()) {
        return Some(Made::Windows);
    }
    // Wine answers success and makes nothing.
    let (target_unix, at_unix) = (wine_unix_path(target)?, wine_unix_path(at)?);
    // Wine starts Unix programs; it cannot wait for them, so look for the result.
    let _ = std::process::Command::new(r"Z:\bin\ln")
        .args(["-s", &target_unix, &at_unix])
        .spawn();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if fs::symlink_metadata(at).is_ok() {
            return Some(Made::Wine);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

fn skip_without_links() {
    eprintln!("skipped: this system lets this process make no links");
}

#[test]
fn links_inside_the_root_work_and_links_out_are_refused() {
    let t = Tree::new();
    let Some(made) = link(&t.root.join("sub"), &t.root.join("to_sub")) else {
        return skip_without_links();
    };
    link(&t.base.join("outside"), &t.root.join("to_outside")).unwrap();
    link(
        &t.base.join("outside").join("secret"),
        &t.root.join("secret_link"),
    )
    .unwrap();
    let g = t.guard();
    let inner = g.resolve(&t.raw(r"to_sub\deep\x.rs")).unwrap();
    assert_eq!(inner.real(), t.root.join("sub").join("deep").join("x.rs"));
    assert_eq!(
        read(&g, &t.raw(r"to_sub\deep\x.rs")).unwrap(),
        "fn main() {}\n"
    );
    for raw in [
        r"to_outside\secret",
        "secret_link",
        r"to_outside\new\file.txt",
    ] {
        assert_eq!(
            outside_why(g.resolve(&t.raw(raw))),
            OutsideWhy::SymlinkLeaves,
            "{raw} ({made:?})"
        );
    }
}

#[test]
fn a_link_from_one_root_into_another_is_followed() {
    let t = Tree::new();
    let second = t.base.join("outside");
    if link(&second, &t.root.join("to_second")).is_none() {
        return skip_without_links();
    }
    let g = Guard::new(&[&t.root, &second]).unwrap();
    assert_eq!(read(&g, &t.raw(r"to_second\secret")).unwrap(), "outside\n");
}

#[test]
fn a_dangling_link_is_refused_or_at_least_never_written_through() {
    let t = Tree::new();
    let target = t.base.join("outside").join("made_later.txt");
    fs::write(&target, "x").unwrap();
    let Some(made) = link(&target, &t.root.join("dangling")) else {
        return skip_without_links();
    };
    fs::remove_file(&target).unwrap();
    let g = t.guard();
    match made {
        Made::Windows => assert_eq!(
            outside_why(g.resolve(&t.raw("dangling"))),
            OutsideWhy::SymlinkDangles
        ),
        // Wine shows a dangling Unix link as nothing at all: a write
        // replaces the link and nothing appears outside.
        Made::Wine => {
            let target = crate::fs::writing::target(&g, &t.raw("dangling")).unwrap();
            let mut held = crate::fs::writing::try_hold(&g, &target).unwrap().unwrap();
            crate::fs::writing::commit(&g, &target, b"mine", &mut held).unwrap();
            assert!(!t.base.join("outside").join("made_later.txt").exists());
        }
    }
}

#[test]
fn a_directory_swapped_for_a_link_after_the_check_is_not_followed() {
    let t = Tree::new();
    fs::write(t.base.join("outside").join("x.rs"), "secret\n").unwrap();
    let g = t.guard();
    let resolved = g.resolve(&t.raw(r"sub\deep\x.rs")).unwrap();
    fs::rename(t.root.join("sub"), t.base.join("moved")).unwrap();
    fs::create_dir_all(t.root.join("sub")).unwrap();
    if link(&t.base.join("outside"), &t.root.join("sub").join("deep")).is_none() {
        return skip_without_links();
    }
    match g.open_read(&resolved) {
        Ok((mut file, _)) => {
            let mut text = String::new();
            io::Read::read_to_string(&mut file, &mut text).unwrap();
            panic!("read through the swapped link: {text:?}");
        }
        Err(e) => assert!(sys::is_link_error(&e), "{e}"),
    }
    // A write there goes nowhere outside either.
    let target = crate::fs::writing::target(&g, &t.raw(r"sub\deep\new.rs"));
    if let Ok(target) = target
        && let Ok(Some(mut held)) = crate::fs::writing::try_hold(&g, &target)
    {
        let _ = crate::fs::writing::commit(&g, &target, b"mine", &mut held);
    }
    assert!(!t.base.join("outside").join("new.rs").exists());
}

#[test]
fn listings_read_through_the_handle() {
    let t = Tree::new();
    let g = t.guard();
    let resolved = g.resolve(".").unwrap();
    let mut items: Vec<(String, EntryKind)> = g
        .read_dir(&resolved)
        .unwrap()
        .map(|i| i.unwrap())
        .map(|i| (i.name.to_string_lossy().into_owned(), i.kind))
        .collect();
    items.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        items,
        [
            ("file.txt".to_string(), EntryKind::File),
            ("sub".to_string(), EntryKind::Directory)
        ]
    );
    let listing = g.list_walked_dir(&t.root.join("sub")).unwrap();
    assert_eq!(listing.entries().count(), 1);
    assert_eq!(
        listing.kind_of(OsStr::new("deep")),
        Some(EntryKind::Directory)
    );
    assert!(listing.modified(OsStr::new("deep")).is_some());
    fs::write(t.root.join("sub").join(".gitignore"), "*.log\n").unwrap();
    assert_eq!(
        listing
            .read_own_file(OsStr::new(".gitignore"), 1024)
            .unwrap()
            .unwrap(),
        b"*.log\n"
    );
    assert!(
        listing
            .read_own_file(OsStr::new("missing"), 1024)
            .unwrap()
            .is_none()
    );
    let walked = g.open_walked(&t.root.join("sub").join("deep").join("x.rs"));
    assert!(walked.is_ok(), "{walked:?}");
    assert!(g.list_walked_dir(&t.base.join("outside")).is_err());
}

#[test]
fn writes_create_directories_replace_atomically_and_keep_attributes() {
    let t = Tree::new();
    let g = t.guard();
    let target = crate::fs::writing::target(&g, &t.raw(r"new\dirs\f.txt")).unwrap();
    let mut held = crate::fs::writing::try_hold(&g, &target).unwrap().unwrap();
    crate::fs::writing::commit(&g, &target, b"first", &mut held).unwrap();
    drop(held);
    let path = t.root.join("new").join("dirs").join("f.txt");
    assert_eq!(fs::read(&path).unwrap(), b"first");

    // Hidden stays hidden after a replace.
    let hidden = {
        let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
        crate::fs::nt::set_attributes(&file, crate::fs::nt::FILE_ATTRIBUTE_HIDDEN).unwrap();
        fs::metadata(&path).unwrap()
    };
    assert_ne!(
        hidden.file_attributes() & crate::fs::nt::FILE_ATTRIBUTE_HIDDEN,
        0
    );
    let target = crate::fs::writing::target(&g, &t.raw(r"new\dirs\f.txt")).unwrap();
    let mut held = crate::fs::writing::try_hold(&g, &target).unwrap().unwrap();
    assert_eq!(
        held.metadata().unwrap().file_attributes(),
        hidden.file_attributes()
    );
    crate::fs::writing::commit(&g, &target, b"second", &mut held).unwrap();
    drop(held);
    assert_eq!(fs::read(&path).unwrap(), b"second");
    let after = fs::metadata(&path).unwrap();
    assert_ne!(
        after.file_attributes() & crate::fs::nt::FILE_ATTRIBUTE_HIDDEN,
        0
    );

    // Read-only is refused and left alone.
    let mut permissions = after.permissions();
    permissions.set_readonly(true);
    fs::set_permissions(&path, permissions).unwrap();
    let readonly = fs::metadata(&path).unwrap();
    let target = crate::fs::writing::target(&g, &t.raw(r"new\dirs\f.txt")).unwrap();
    let mut held = crate::fs::writing::try_hold(&g, &target).unwrap().unwrap();
    let e = crate::fs::writing::commit(&g, &target, b"third", &mut held).unwrap_err();
    drop(held);
    let message = crate::fs::writing::write_error_message("f.txt", &e);
    assert!(
        message.contains("read-only (read-only attribute)"),
        "{message}"
    );
    assert_eq!(fs::read(&path).unwrap(), b"second");

    // No temporary file is left, and a failure half-way keeps the old file.
    let (dir, name) = g.open_parent_dir(target.resolved(), false).unwrap();
    let old = fs::File::open(&path).unwrap();
    let previous = atomic::Previous {
        file: Some(&old),
        metadata: &readonly,
    };
    let failed = atomic::write_with(&dir, &name, atomic::Replacing::Read(previous), |f| {
        io::Write::write_all(f, b"half")?;
        Err(io::Error::other("simulated"))
    });
    assert!(failed.is_err());
    let names: Vec<String> = fs::read_dir(t.root.join("new").join("dirs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["f.txt"]);
}

#[test]
fn temporary_files_of_ended_processes_are_swept() {
    let t = Tree::new();
    let g = t.guard();
    let stale = t.root.join(".rootbound-4294967294-1.tmp");
    let own = t
        .root
        .join(format!(".rootbound-{}-99.tmp", std::process::id()));
    fs::write(&stale, "left by a crash").unwrap();
    fs::write(&own, "being written").unwrap();
    let resolved = g.resolve("f.txt").unwrap();
    let (dir, _) = g.open_parent_dir(&resolved, false).unwrap();
    assert_eq!(atomic::sweep_stale_temps(&dir, &t.root), 1);
    assert!(!stale.exists());
    assert!(own.exists());
}

#[test]
fn the_server_reads_its_own_files_above_the_root_without_links() {
    let t = Tree::new();
    fs::write(t.base.join(".gitignore"), "x\n").unwrap();
    let g = t.guard();
    assert_eq!(
        g.read_own_file(&t.base.join(".gitignore"), 100).unwrap(),
        Some(b"x\n".to_vec())
    );
    assert_eq!(g.read_own_file(&t.base.join("none"), 100).unwrap(), None);
}
