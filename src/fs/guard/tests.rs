//! Tests of every guard rule (docs/security.md), and a property test over
//! random trees with symlinks.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;

/// A temporary layout: `<tmp>/root` (the root), `<tmp>/root_evil` (a sibling
/// sharing its prefix) and `<tmp>/outside`.
struct Tree {
    _dir: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let root = base.join("root");
        fs::create_dir_all(root.join("sub/deep")).unwrap();
        fs::write(root.join("file.txt"), "inside\n").unwrap();
        fs::write(root.join("sub/deep/x.rs"), "fn main() {}\n").unwrap();
        fs::create_dir_all(base.join("root_evil")).unwrap();
        fs::write(base.join("root_evil/secret"), "evil\n").unwrap();
        fs::create_dir_all(base.join("outside")).unwrap();
        fs::write(base.join("outside/secret"), "outside\n").unwrap();
        Tree {
            _dir: dir,
            base,
            root,
        }
    }

    fn guard(&self) -> Guard {
        Guard::new(&[&self.root]).unwrap()
    }
}

fn outside_why(r: Result<Resolved, Refusal>) -> OutsideWhy {
    match r {
        Err(Refusal::Outside { why, .. }) => why,
        other => panic!("expected an outside refusal, got {other:?}"),
    }
}

#[test]
fn rule1_rejects_empty_blank_nul_and_long_paths() {
    let t = Tree::new();
    let g = t.guard();
    for bad in ["", "   ", "\t\n", "a\0b"] {
        assert!(
            matches!(g.resolve(bad), Err(Refusal::Invalid(_))),
            "{bad:?}"
        );
    }
    let long = "a/".repeat(MAX_PATH_BYTES / 2 + 1);
    assert!(matches!(g.resolve(&long), Err(Refusal::Invalid(_))));
}

#[test]
fn rule1_decodes_file_uris() {
    let t = Tree::new();
    fs::write(t.root.join("a b.txt"), "x").unwrap();
    let g = t.guard();
    let uri = format!("file://{}/a%20b.txt", t.root.display());
    let r = g.resolve(&uri).unwrap();
    assert_eq!(r.real, t.root.join("a b.txt"));
    let uri = format!("file://localhost{}/file.txt", t.root.display());
    assert!(g.resolve(&uri).unwrap().exists());
    assert!(matches!(
        g.resolve("file://server/share/x"),
        Err(Refusal::Invalid(_))
    ));
    let outside = format!("file://{}/outside/secret", t.base.display());
    assert_eq!(outside_why(g.resolve(&outside)), OutsideWhy::Resolved);
}

#[test]
fn rule2_relative_paths_resolve_against_the_primary_root_not_the_cwd() {
    let t = Tree::new();
    let g = t.guard();
    let r = g.resolve("sub/deep/x.rs").unwrap();
    assert_eq!(r.real, t.root.join("sub/deep/x.rs"));
    assert_eq!(r.display, t.root.join("sub/deep/x.rs"));
    let r = g.resolve("./sub/../file.txt").unwrap();
    assert_eq!(r.real, t.root.join("file.txt"));
    // `~` is an ordinary character.
    let r = g.resolve("~/x").unwrap();
    assert_eq!(r.real, t.root.join("~/x"));
    assert!(!r.exists());
}

#[test]
fn rule3_dotdot_escapes_are_refused() {
    let t = Tree::new();
    let g = t.guard();
    assert_eq!(
        outside_why(g.resolve("../outside/secret")),
        OutsideWhy::Resolved
    );
    assert_eq!(
        outside_why(g.resolve("sub/../../outside/secret")),
        OutsideWhy::Resolved
    );
    let abs = format!("{}/../outside/secret", t.root.display());
    assert_eq!(outside_why(g.resolve(&abs)), OutsideWhy::Resolved);
    assert_eq!(outside_why(g.resolve("/etc/passwd")), OutsideWhy::Resolved);
    assert_eq!(outside_why(g.resolve("..")), OutsideWhy::Resolved);
    // Going up and back in is fine: the resolved path is what counts.
    assert!(g.resolve("../root/file.txt").unwrap().exists());
}

#[test]
fn nothing_outside_is_looked_at() {
    let t = Tree::new();
    fs::create_dir(t.base.join("outside/D")).unwrap();
    let g = t.guard();
    // `X/..` is the same refusal whether X is a directory, a file or
    // missing, and so is a path that goes out and comes back in.
    for path in [
        "../outside/D/..",
        "../outside/missing/..",
        "../outside/secret/..",
        "../outside/D/../../root/file.txt",
        "../outside/missing/../../root/file.txt",
        "../outside/secret/../../root/file.txt",
        "sub/../../outside/D/../../root/file.txt",
    ] {
        assert_eq!(outside_why(g.resolve(path)), OutsideWhy::Resolved, "{path}");
    }
    // A link inside that goes out and back in is refused too.
    symlink(
        "../outside/D/../../root/file.txt",
        t.root.join("round_trip"),
    )
    .unwrap();
    assert_eq!(
        outside_why(g.resolve("round_trip")),
        OutsideWhy::SymlinkLeaves
    );
}

#[test]
fn rule4_sibling_with_the_same_prefix_is_outside() {
    let t = Tree::new();
    let g = t.guard();
    let evil = format!("{}_evil/secret", t.root.display());
    assert_eq!(outside_why(g.resolve(&evil)), OutsideWhy::Resolved);
    assert_eq!(
        outside_why(g.resolve("../root_evil/secret")),
        OutsideWhy::Resolved
    );
}

#[test]
fn symlinks_inside_the_roots_work() {
    let t = Tree::new();
    symlink("sub/deep/x.rs", t.root.join("link.rs")).unwrap();
    symlink(t.root.join("sub"), t.root.join("sublink")).unwrap();
    // A chain: a -> b -> sub/deep
    symlink("b", t.root.join("a")).unwrap();
    symlink("sub/deep", t.root.join("b")).unwrap();
    let g = t.guard();
    let r = g.resolve("link.rs").unwrap();
    assert_eq!(r.real, t.root.join("sub/deep/x.rs"));
    assert_eq!(r.display, t.root.join("link.rs"));
    assert_eq!(
        g.resolve("sublink/deep/x.rs").unwrap().real,
        t.root.join("sub/deep/x.rs")
    );
    assert_eq!(
        g.resolve("a/x.rs").unwrap().real,
        t.root.join("sub/deep/x.rs")
    );
    // `..` applies to where the link led, as in the kernel.
    assert_eq!(
        g.resolve("a/../deep/x.rs").unwrap().real,
        t.root.join("sub/deep/x.rs")
    );
    // A new file below an in-root directory link.
    let r = g.resolve("sublink/new.txt").unwrap();
    assert!(!r.exists());
    assert_eq!(r.real, t.root.join("sub/new.txt"));
}

#[test]
fn symlinks_leaving_the_roots_are_refused() {
    let t = Tree::new();
    symlink(t.base.join("outside/secret"), t.root.join("out_file")).unwrap();
    symlink(t.base.join("outside"), t.root.join("out_dir")).unwrap();
    symlink("../outside", t.root.join("out_rel")).unwrap();
    // A chain whose last hop leaves.
    symlink("hop2", t.root.join("hop1")).unwrap();
    symlink("../outside/secret", t.root.join("hop2")).unwrap();
    let g = t.guard();
    assert_eq!(
        outside_why(g.resolve("out_file")),
        OutsideWhy::SymlinkLeaves
    );
    assert_eq!(
        outside_why(g.resolve("out_dir/secret")),
        OutsideWhy::SymlinkLeaves
    );
    assert_eq!(
        outside_why(g.resolve("out_rel/secret")),
        OutsideWhy::SymlinkLeaves
    );
    assert_eq!(outside_why(g.resolve("hop1")), OutsideWhy::SymlinkLeaves);
    // Not even to come back in again.
    assert_eq!(
        outside_why(g.resolve("out_dir/../root/file.txt")),
        OutsideWhy::SymlinkLeaves
    );
    // Missing directories below an outward link are never "inside".
    assert_eq!(
        outside_why(g.resolve("out_dir/new/deeper/f.txt")),
        OutsideWhy::SymlinkLeaves
    );
}

#[test]
fn dangling_and_looping_symlinks_are_refused() {
    let t = Tree::new();
    symlink("nowhere.txt", t.root.join("dangling_in")).unwrap();
    symlink(t.base.join("outside/nowhere"), t.root.join("dangling_out")).unwrap();
    symlink("loop_b", t.root.join("loop_a")).unwrap();
    symlink("loop_a", t.root.join("loop_b")).unwrap();
    symlink("self", t.root.join("self")).unwrap();
    symlink("missing/../x", t.root.join("dangling_dotdot")).unwrap();
    let g = t.guard();
    assert_eq!(
        outside_why(g.resolve("dangling_in")),
        OutsideWhy::SymlinkDangles
    );
    // A link out is refused as leaving before anything outside is looked
    // at: whether its target exists is never asked.
    assert_eq!(
        outside_why(g.resolve("dangling_out")),
        OutsideWhy::SymlinkLeaves
    );
    assert_eq!(
        outside_why(g.resolve("dangling_dotdot")),
        OutsideWhy::SymlinkDangles
    );
    assert_eq!(outside_why(g.resolve("loop_a")), OutsideWhy::SymlinkLoops);
    assert_eq!(outside_why(g.resolve("self/x")), OutsideWhy::SymlinkLoops);
}

#[test]
fn rule5_a_root_given_through_a_symlink_works_under_both_spellings() {
    let t = Tree::new();
    let alias = t.base.join("alias");
    symlink(&t.root, &alias).unwrap();
    let g = Guard::new(&[&alias]).unwrap();
    assert_eq!(g.primary(), t.root.as_path());
    let via_alias = format!("{}/file.txt", alias.display());
    let via_real = format!("{}/file.txt", t.root.display());
    assert_eq!(g.resolve(&via_alias).unwrap().real, t.root.join("file.txt"));
    assert_eq!(g.resolve(&via_real).unwrap().real, t.root.join("file.txt"));
}

#[test]
fn rule5_a_missing_root_is_an_error_naming_it() {
    let t = Tree::new();
    let missing = t.base.join("nope");
    match Guard::new(&[&missing]) {
        Err(RootError::Missing(p)) => assert_eq!(p, missing),
        other => panic!("expected a missing-root error, got {other:?}"),
    }
    match Guard::new(&[t.root.join("file.txt")]) {
        Err(RootError::NotADirectory(_)) => {}
        other => panic!("expected not-a-directory, got {other:?}"),
    }
}

#[test]
fn a_guard_without_a_root_is_refused() {
    let none: [&Path; 0] = [];
    assert!(matches!(Guard::new(&none), Err(RootError::None)));
}

#[test]
fn several_roots() {
    let t = Tree::new();
    let g = Guard::new(&[&t.root, &t.base.join("outside")]).unwrap();
    let second = format!("{}/outside/secret", t.base.display());
    let r = g.resolve(&second).unwrap();
    let second_root = g.roots().nth(1).unwrap().to_path_buf();
    assert_eq!(r.root.path(), second_root);
    assert_eq!(
        g.roots_display(),
        format!("{}, {}/outside", t.root.display(), t.base.display())
    );
    // A link from the first root into the second is inside the roots.
    symlink(t.base.join("outside"), t.root.join("to_second")).unwrap();
    assert_eq!(
        g.resolve("to_second/secret").unwrap().root,
        g.root_of(&second_root).unwrap()
    );
    assert_eq!(
        outside_why(g.resolve("../root_evil/secret")),
        OutsideWhy::Resolved
    );
}

#[test]
fn missing_paths_and_dotdot_after_missing() {
    let t = Tree::new();
    let g = t.guard();
    let r = g.resolve("new/dir/file.txt").unwrap();
    assert!(!r.exists());
    assert_eq!(r.real, t.root.join("new/dir/file.txt"));
    assert!(matches!(
        g.resolve("new/../file.txt"),
        Err(Refusal::Unresolvable { .. })
    ));
    // A file used as a directory: nothing exists below it.
    let r = g.resolve("file.txt/below").unwrap();
    assert!(!r.exists());
}

#[test]
fn the_root_itself_resolves() {
    let t = Tree::new();
    let g = t.guard();
    let r = g.resolve(".").unwrap();
    assert_eq!(r.real, t.root);
    assert!(r.is_dir());
    let r = g.resolve(&t.root.display().to_string()).unwrap();
    assert!(r.is_dir());
}

#[test]
fn open_read_refuses_fifos_without_blocking() {
    let t = Tree::new();
    let fifo = t.root.join("pipe");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo reads only the NUL-terminated path given.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let g = t.guard();
    let r = g.resolve("pipe").unwrap();
    let err = g.open_read(&r).unwrap_err();
    assert!(err.to_string().contains("named pipe"), "{err}");
}

#[test]
fn open_read_does_not_follow_a_symlink_swapped_in_after_the_check() {
    swapped_symlink_is_not_followed(|t| t.guard());
}

#[test]
fn the_portable_walk_does_not_follow_a_symlink_swapped_in_after_the_check() {
    swapped_symlink_is_not_followed(|t| t.guard().stepwise_only());
}

#[test]
fn the_portable_walk_refuses_fifos_and_reads_files() {
    let t = Tree::new();
    let g = t.guard().stepwise_only();
    let fifo = t.root.join("pipe");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo reads only the NUL-terminated path given.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let err = g.open_read(&g.resolve("pipe").unwrap()).unwrap_err();
    assert!(err.to_string().contains("named pipe"), "{err}");
    let (mut file, _) = g.open_read(&g.resolve("sub/deep/x.rs").unwrap()).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut file, &mut text).unwrap();
    assert_eq!(text, "fn main() {}\n");
}

fn swapped_symlink_is_not_followed(make_guard: impl Fn(&Tree) -> Guard) {
    let t = Tree::new();
    let g = make_guard(&t);
    let checked = g.resolve("sub/deep/x.rs").unwrap();
    // Between check and use, the directory is replaced by a link outside.
    fs::rename(t.root.join("sub/deep"), t.root.join("sub/moved")).unwrap();
    symlink(t.base.join("outside"), t.root.join("sub/deep")).unwrap();
    fs::write(t.base.join("outside/x.rs"), "outside content").unwrap();
    assert!(g.open_read(&checked).is_err());
    // The final component swapped for a link: refused as well.
    let checked = g.resolve("file.txt").unwrap();
    fs::remove_file(t.root.join("file.txt")).unwrap();
    symlink(t.base.join("outside/secret"), t.root.join("file.txt")).unwrap();
    assert!(g.open_read(&checked).is_err());
}

#[test]
fn lexical_normalisation_for_display() {
    assert_eq!(
        normalize_lexically(Path::new("/a/b/../c/./d")),
        PathBuf::from("/a/c/d")
    );
    assert_eq!(normalize_lexically(Path::new("/../..")), PathBuf::from("/"));
    assert_eq!(normalize_lexically(Path::new("/a/..")), PathBuf::from("/"));
}

// ---------------------------------------------------------------------------
// Property test: random trees, random requests.

/// Names the generator builds trees and requests from; a few are unusual on
/// purpose (unicode, spaces, a dot-name, a long name).
const NAMES: &[&str] = &[
    "a",
    "b",
    "c",
    "é",
    "sp ace",
    ".hidden",
    "long_name_long_name_long_name",
];

#[derive(Debug, Clone)]
enum Node {
    Dir(usize, usize),
    File(usize, usize),
    /// A link at (parent, name) with one of several kinds of target.
    Link(usize, usize, LinkTarget),
}

#[derive(Debug, Clone)]
enum LinkTarget {
    /// Relative, to another node's path (may be inside or point up and out).
    Relative(usize, usize),
    /// Absolute into the outside directory.
    Outside(usize),
    /// Nowhere.
    Dangling,
    /// To itself, or through the tree into a loop.
    Itself,
    /// Absolute to a node inside the root.
    AbsoluteInside(usize),
}

fn node() -> impl Strategy<Value = Node> {
    let name = 0..NAMES.len();
    let parent = 0usize..8;
    prop_oneof![
        3 => (parent.clone(), name.clone()).prop_map(|(p, n)| Node::Dir(p, n)),
        3 => (parent.clone(), name.clone()).prop_map(|(p, n)| Node::File(p, n)),
        4 => (parent, name, link_target()).prop_map(|(p, n, t)| Node::Link(p, n, t)),
    ]
}

fn link_target() -> impl Strategy<Value = LinkTarget> {
    prop_oneof![
        (0usize..8, 0usize..4).prop_map(|(n, ups)| LinkTarget::Relative(n, ups)),
        (0usize..3).prop_map(LinkTarget::Outside),
        Just(LinkTarget::Dangling),
        Just(LinkTarget::Itself),
        (0usize..8).prop_map(LinkTarget::AbsoluteInside),
    ]
}

/// A request: components drawn from the names, `..`, `.`, and names of the
/// outside directory; absolute or relative.
fn request() -> impl Strategy<Value = (bool, Vec<usize>)> {
    (
        any::<bool>(),
        prop::collection::vec(0usize..NAMES.len() + 3, 0..7),
    )
}

fn component(i: usize) -> &'static str {
    match i.checked_sub(NAMES.len()) {
        None => NAMES[i],
        Some(0) => "..",
        Some(1) => ".",
        _ => "outside",
    }
}

/// Builds the tree; returns every directory created (index 0 is the root).
fn build(root: &Path, outside: &Path, nodes: &[Node]) -> Vec<PathBuf> {
    let mut dirs = vec![root.to_path_buf()];
    let mut all: Vec<PathBuf> = vec![root.to_path_buf()];
    for n in nodes {
        match n {
            Node::Dir(p, name) => {
                let path = dirs[p % dirs.len()].join(NAMES[*name]);
                if fs::create_dir(&path).is_ok() {
                    dirs.push(path.clone());
                    all.push(path);
                }
            }
            Node::File(p, name) => {
                let path = dirs[p % dirs.len()].join(NAMES[*name]);
                if fs::write(&path, "data").is_ok() {
                    all.push(path);
                }
            }
            Node::Link(p, name, target) => {
                let at = dirs[p % dirs.len()].join(NAMES[*name]);
                let target: PathBuf = match target {
                    LinkTarget::Relative(n, ups) => {
                        let mut t = PathBuf::new();
                        for _ in 0..*ups {
                            t.push("..");
                        }
                        let dest = &all[n % all.len()];
                        t.push(dest.strip_prefix(root).unwrap_or(dest));
                        t
                    }
                    LinkTarget::Outside(k) => outside.join(["secret", "dir", "missing"][*k]),
                    LinkTarget::Dangling => PathBuf::from("does-not-exist"),
                    LinkTarget::Itself => at.clone(),
                    LinkTarget::AbsoluteInside(n) => all[n % all.len()].clone(),
                };
                if symlink(&target, &at).is_ok() {
                    all.push(at);
                }
            }
        }
    }
    dirs
}

/// The kernel's answer for a path: the canonical path of its deepest
/// existing ancestor (following links), for comparison.
fn kernel_parent_inside(path: &Path, root: &Path) -> bool {
    let mut probe = path.to_path_buf();
    loop {
        if let Ok(real) = fs::canonicalize(&probe) {
            return real.starts_with(root);
        }
        if !probe.pop() {
            return false;
        }
    }
}

/// PROPTEST_CASES raises the case count for a deeper run.
fn cases_from_env(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases_from_env(300)))]

    #[test]
    fn guard_never_accepts_a_path_whose_real_location_is_outside(
        nodes in prop::collection::vec(node(), 0..14),
        requests in prop::collection::vec(request(), 1..12),
        portable in any::<bool>(),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("root");
        let outside = base.join("outside");
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(outside.join("dir")).unwrap();
        fs::write(outside.join("secret"), "secret").unwrap();
        let dirs = build(&root, &outside, &nodes);
        let guard = Guard::new(&[&root]).unwrap();
        // Half the cases take the walk kernels without openat2 use.
        let guard = if portable { guard.stepwise_only() } else { guard };

        for (absolute, parts) in requests {
            let rel: Vec<&str> = parts.iter().map(|&i| component(i)).collect();
            let rel = rel.join("/");
            let raw = if absolute { format!("{}/{rel}", root.display()) } else { rel.clone() };
            let kernel_path = if absolute { PathBuf::from(&raw) } else { root.join(&rel) };
            let verdict = guard.resolve(if raw.is_empty() { "." } else { &raw });
            match verdict {
                Ok(resolved) => {
                    prop_assert!(resolved.real.starts_with(&root), "{raw} -> {:?}", resolved.real);
                    match fs::canonicalize(&kernel_path) {
                        Ok(real) => {
                            // Exists: the kernel agrees on where it is.
                            prop_assert!(resolved.exists(), "{raw}: kernel finds {real:?}");
                            prop_assert_eq!(&real, &resolved.real, "{}", raw);
                        }
                        Err(_) => {
                            // Missing: nothing is there, not even a link, and
                            // what does exist above it is inside.
                            prop_assert!(!resolved.exists(), "{raw}");
                            prop_assert!(fs::symlink_metadata(&resolved.real).is_err(), "{raw}");
                            prop_assert!(kernel_parent_inside(&resolved.real, &root), "{raw}");
                        }
                    }
                }
                Err(_) => {
                    // Refusals are always allowed; completeness is checked below.
                }
            }
        }

        // Every real directory of the tree (reached without links) and
        // every new name in it is accepted.
        for dir in &dirs {
            let is_plain = dir.strip_prefix(&root).map(|rel| {
                let mut p = root.clone();
                rel.components().all(|c| {
                    p.push(c);
                    fs::symlink_metadata(&p).map(|m| m.is_dir()).unwrap_or(false)
                })
            }).unwrap_or(false);
            if !is_plain { continue; }
            let raw = dir.display().to_string();
            let r = guard.resolve(&raw);
            prop_assert!(r.as_ref().is_ok_and(Resolved::is_dir), "{raw}: {r:?}");
            let fresh = dir.join("fresh-name");
            let r = guard.resolve(&fresh.display().to_string());
            prop_assert!(r.as_ref().is_ok_and(|r| !r.exists() && r.real == fresh), "{fresh:?}: {r:?}");
        }
    }
}
