//! Ignore files: `.geminiignore` at each root, which hides files from every
//! tool (and refuses direct reads of them), and the git-ignore settings the
//! walkers use.
//!
//! Every ignore file is read through [`Guard::read_own_file`]: never through
//! a symlink (git does not follow a symlinked `.gitignore` either), never
//! blocking on a FIFO, and bounded in size. One that cannot be read that way
//! is skipped with a warning.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::fs::guard::{Guard, Listing};

/// The name of Gemini CLI's own ignore file, honoured at each root.
pub const GEMINI_IGNORE: &str = ".geminiignore";

/// Largest ignore file read; a bigger one is skipped with a warning.
const MAX_IGNORE_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Whether `path` (inside `root`) is hidden by the root's `.geminiignore`,
/// itself or through one of its parent directories.
pub fn is_gemini_ignored(guard: &Guard, root: &Path, path: &Path, is_dir: bool) -> bool {
    IgnoreSet::new(guard, root, false, true).gemini_says(path, is_dir)
}

/// The ignore rules that apply below one workspace root, evaluated per
/// directory: inside a git work tree, the `.gitignore` files from the
/// directory up to the tree's top (deepest first) and `.git/info/exclude`;
/// then the root's `.geminiignore`. That is the precedence the `ignore`
/// crate's walker uses. Used where single paths are checked (list_directory,
/// named files) and by the walk that counts ignored files, at a fraction of
/// the cost of a generic per-path matcher.
#[derive(Debug)]
pub struct IgnoreSet<'g> {
    guard: &'g Guard,
    respect_git: bool,
    gemini: Option<Gitignore>,
}

/// The rules for the entries of one directory.
#[derive(Debug, Clone, Default)]
pub struct DirRules {
    /// `.gitignore` matchers, deepest directory first.
    chain: Vec<Arc<Gitignore>>,
    /// The work tree's `.git/info/exclude`.
    exclude: Option<Arc<Gitignore>>,
    /// Inside a git work tree (else `.gitignore` files do not apply).
    in_repo: bool,
    /// The directory itself is ignored (and by which file): so is
    /// everything in it.
    ignored: Option<IgnoredBy>,
}

/// Which kind of ignore file hides a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IgnoredBy {
    /// A `.gitignore` (or `.git/info/exclude`).
    Git,
    /// The root's `.geminiignore`.
    Gemini,
}

impl<'g> IgnoreSet<'g> {
    /// Rules for paths below `root` (a workspace root).
    pub fn new(guard: &'g Guard, root: &Path, respect_git: bool, respect_gemini: bool) -> Self {
        IgnoreSet {
            guard,
            respect_git,
            gemini: respect_gemini
                .then(|| load(guard, root, &root.join(GEMINI_IGNORE)))
                .flatten(),
        }
    }

    /// The rules for the entries of `dir`, built from scratch (reads the
    /// `.gitignore` of `dir` and of each parent up to the work tree's top).
    pub fn dir_rules(&self, dir: &Path) -> DirRules {
        let top = if self.respect_git {
            find_git_root(self.guard, dir)
        } else {
            None
        };
        let Some(top) = top else {
            return DirRules {
                ignored: self.gemini_says(dir, true).then_some(IgnoredBy::Gemini),
                ..DirRules::default()
            };
        };
        let mut rules = self.repo_top_rules(&top);
        rules.ignored = self.gemini_says(&top, true).then_some(IgnoredBy::Gemini);
        let below: Vec<&Path> = dir.ancestors().take_while(|a| *a != top).collect();
        for ancestor in below.into_iter().rev() {
            rules = self.child_rules(&rules, ancestor);
        }
        rules
    }

    /// The rules for the entries of `dir`, given the rules of its parent.
    pub fn child_rules(&self, parent: &DirRules, dir: &Path) -> DirRules {
        if let Some(by) = self.ignored_by(parent, dir, true) {
            return DirRules {
                ignored: Some(by),
                ..parent.clone()
            };
        }
        if self.respect_git && self.guard.has_entry(&dir.join(".git")) {
            // A work tree of its own starts here.
            return self.repo_top_rules(dir);
        }
        let mut rules = parent.clone();
        if rules.in_repo
            && let Some(gi) = load(self.guard, dir, &dir.join(".gitignore"))
        {
            rules.chain.insert(0, Arc::new(gi));
        }
        rules
    }

    /// The rules for the entries of `dir`, which a walk has listed and
    /// decided to enter, given the rules of its parent. Whether `dir` holds
    /// `.git` or `.gitignore` is read off the listing instead of probed by
    /// name (most directories hold neither; a directory too big to list at
    /// once is asked instead), and `.gitignore` is read through the
    /// listing's own handle.
    ///
    /// Most directories add no rule: they share their parent's rules, at
    /// the cost of a reference count, not a copy.
    pub fn child_rules_listed(
        &self,
        parent: &Arc<DirRules>,
        dir: &Path,
        listing: &Listing,
    ) -> Arc<DirRules> {
        // A directory listed in batches is asked (one lookup), not searched.
        let holds = |name: &str| {
            if listing.is_complete() {
                listing.entries().any(|(entry, _)| entry == name)
            } else {
                listing.kind_of(OsStr::new(name)).is_some()
            }
        };
        let gitignore = || {
            let name = OsStr::new(".gitignore");
            if !holds(".gitignore") {
                return None;
            }
            let file = dir.join(name);
            match listing.read_own_file(name, MAX_IGNORE_FILE_BYTES) {
                Ok(bytes) => parse(dir, &file, &bytes?),
                Err(e) => {
                    tracing::warn!("{} is skipped: {e}", file.display());
                    None
                }
            }
        };
        if self.respect_git && holds(".git") {
            // A work tree of its own starts here.
            return Arc::new(DirRules {
                chain: gitignore().map(Arc::new).into_iter().collect(),
                exclude: self.exclude_rules(dir),
                in_repo: true,
                ignored: parent.ignored,
            });
        }
        if !parent.in_repo {
            return parent.clone();
        }
        match gitignore() {
            Some(gi) => {
                let mut rules = DirRules::clone(parent);
                rules.chain.insert(0, Arc::new(gi));
                Arc::new(rules)
            }
            None => parent.clone(),
        }
    }

    fn exclude_rules(&self, top: &Path) -> Option<Arc<Gitignore>> {
        load(
            self.guard,
            top,
            &top.join(".git").join("info").join("exclude"),
        )
        .map(Arc::new)
    }

    fn repo_top_rules(&self, top: &Path) -> DirRules {
        DirRules {
            chain: load(self.guard, top, &top.join(".gitignore"))
                .map(Arc::new)
                .into_iter()
                .collect(),
            exclude: self.exclude_rules(top),
            in_repo: true,
            ignored: None,
        }
    }

    /// Whether `path` (an entry of the directory `rules` belong to) is ignored.
    pub fn is_ignored(&self, rules: &DirRules, path: &Path, is_dir: bool) -> bool {
        self.ignored_by(rules, path, is_dir).is_some()
    }

    /// Which ignore file hides `path` (an entry of the directory `rules`
    /// belong to), if any.
    pub fn ignored_by(&self, rules: &DirRules, path: &Path, is_dir: bool) -> Option<IgnoredBy> {
        if rules.ignored.is_some() {
            return rules.ignored;
        }
        for gi in rules.chain.iter().chain(rules.exclude.iter()) {
            match gi.matched(path, is_dir) {
                ignore::Match::Ignore(_) => return Some(IgnoredBy::Git),
                ignore::Match::Whitelist(_) => return None,
                ignore::Match::None => {}
            }
        }
        self.gemini_says(path, is_dir).then_some(IgnoredBy::Gemini)
    }

    /// Whether the root's `.geminiignore` hides `path`, itself or through
    /// one of its parent directories.
    fn gemini_says(&self, path: &Path, is_dir: bool) -> bool {
        self.gemini.as_ref().is_some_and(|g| {
            path.starts_with(g.path()) && g.matched_path_or_any_parents(path, is_dir).is_ignore()
        })
    }
}

/// The top of the git work tree containing `dir` (a directory holding
/// `.git`), if any.
pub fn find_git_root(guard: &Guard, dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|a| guard.has_entry(&a.join(".git")))
        .map(Path::to_path_buf)
}

/// A gitignore-syntax file rooted at `root`, if it exists and has rules.
/// Opened directly (no existence check first: most directories have none).
fn load(guard: &Guard, root: &Path, file: &Path) -> Option<Gitignore> {
    let bytes = match guard.read_own_file(file, MAX_IGNORE_FILE_BYTES) {
        Ok(bytes) => bytes?,
        Err(e) => {
            tracing::warn!("{} is skipped: {e}", file.display());
            return None;
        }
    };
    parse(root, file, &bytes)
}

/// Gitignore rules read from `file`, rooted at `root`, if there are any.
fn parse(root: &Path, file: &Path, bytes: &[u8]) -> Option<Gitignore> {
    let text = String::from_utf8_lossy(bytes);
    let mut builder = GitignoreBuilder::new(root);
    for line in text.lines() {
        if let Err(e) = builder.add_line(Some(file.to_path_buf()), line) {
            tracing::warn!("{}: {e}", file.display());
        }
    }
    builder.build().ok().filter(|g| !g.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_ignore_hides_files_and_directories() {
        let dir = tempfile::tempdir().unwrap();
        let root = &std::fs::canonicalize(dir.path()).unwrap();
        let guard = Guard::new(&[root]).unwrap();
        std::fs::write(
            root.join(GEMINI_IGNORE),
            "secret.txt\nprivate/\n*.key\n!keep.key\n",
        )
        .unwrap();
        assert!(is_gemini_ignored(
            &guard,
            root,
            &root.join("secret.txt"),
            false
        ));
        assert!(is_gemini_ignored(
            &guard,
            root,
            &root.join("a/secret.txt"),
            false
        ));
        assert!(is_gemini_ignored(
            &guard,
            root,
            &root.join("private/x.rs"),
            false
        ));
        assert!(is_gemini_ignored(&guard, root, &root.join("id.key"), false));
        assert!(!is_gemini_ignored(
            &guard,
            root,
            &root.join("keep.key"),
            false
        ));
        assert!(!is_gemini_ignored(
            &guard,
            root,
            &root.join("public.txt"),
            false
        ));
        assert!(!is_gemini_ignored(&guard, root, root, true));
    }

    #[test]
    fn ignore_set_follows_gitignore_precedence() {
        let dir = tempfile::tempdir().unwrap();
        let root = &std::fs::canonicalize(dir.path()).unwrap();
        let guard = Guard::new(&[root]).unwrap();
        std::fs::create_dir_all(root.join(".git/info")).unwrap();
        std::fs::write(root.join(".git/info/exclude"), "excluded.txt\n").unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\nbuild/\n").unwrap();
        std::fs::create_dir_all(root.join("sub/build")).unwrap();
        std::fs::write(root.join("sub/.gitignore"), "!keep.log\nlocal.txt\n").unwrap();
        std::fs::write(root.join(GEMINI_IGNORE), "secret/\n").unwrap();
        let set = IgnoreSet::new(&guard, root, true, true);
        let top = set.dir_rules(root);
        assert!(set.is_ignored(&top, &root.join("a.log"), false));
        assert!(set.is_ignored(&top, &root.join("excluded.txt"), false));
        assert!(set.is_ignored(&top, &root.join("secret"), true));
        assert!(!set.is_ignored(&top, &root.join("a.txt"), false));
        let sub = set.dir_rules(&root.join("sub"));
        assert!(
            !set.is_ignored(&sub, &root.join("sub/keep.log"), false),
            "whitelisted deeper"
        );
        assert!(set.is_ignored(&sub, &root.join("sub/other.log"), false));
        assert!(set.is_ignored(&sub, &root.join("sub/local.txt"), false));
        assert!(set.is_ignored(&sub, &root.join("sub/build"), true));
        // Everything below an ignored directory is ignored.
        let build = set.dir_rules(&root.join("sub/build"));
        assert!(set.is_ignored(&build, &root.join("sub/build/x.rs"), false));
        let walked = set.child_rules(&sub, &root.join("sub/build"));
        assert!(set.is_ignored(&walked, &root.join("sub/build/x.rs"), false));
        // Without respect for git, only .geminiignore applies.
        let no_git = IgnoreSet::new(&guard, root, false, true);
        let r = no_git.dir_rules(root);
        assert!(!no_git.is_ignored(&r, &root.join("a.log"), false));
        assert!(no_git.is_ignored(&r, &root.join("secret/x"), false));
    }

    #[test]
    fn gitignore_applies_only_inside_a_work_tree() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "*.log\n").unwrap();
        let guard = Guard::new(&[dir.path()]).unwrap();
        let set = IgnoreSet::new(&guard, dir.path(), true, true);
        let rules = set.dir_rules(dir.path());
        assert!(!set.is_ignored(&rules, &dir.path().join("a.log"), false));
    }

    #[test]
    fn no_file_means_nothing_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let guard = Guard::new(&[dir.path()]).unwrap();
        assert!(!is_gemini_ignored(
            &guard,
            dir.path(),
            &dir.path().join("x"),
            false
        ));
    }
}
