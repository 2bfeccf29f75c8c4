//! Ignore files: `.geminiignore` at each root, which hides files from every
//! tool (and refuses direct reads of them), and the git-ignore settings the
//! walkers use.

use std::path::Path;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The name of Gemini CLI's own ignore file, honoured at each root.
pub const GEMINI_IGNORE: &str = ".geminiignore";

/// The rules of `root/.geminiignore`, or None if there is no such file (or
/// it holds no rules).
pub fn gemini_ignore(root: &Path) -> Option<Gitignore> {
    let file = root.join(GEMINI_IGNORE);
    if !file.is_file() {
        return None;
    }
    let mut builder = GitignoreBuilder::new(root);
    if let Some(e) = builder.add(&file) {
        tracing::warn!("{}: {e}", file.display());
    }
    match builder.build() {
        Ok(rules) if !rules.is_empty() => Some(rules),
        Ok(_) => None,
        Err(e) => {
            tracing::warn!("{}: {e}", file.display());
            None
        }
    }
}

/// Whether `path` (inside `root`) is hidden by the root's `.geminiignore`,
/// itself or through one of its parent directories.
pub fn is_gemini_ignored(root: &Path, path: &Path, is_dir: bool) -> bool {
    let Some(rules) = gemini_ignore(root) else {
        return false;
    };
    let Ok(rel) = path.strip_prefix(root) else {
        return false;
    };
    if rel.as_os_str().is_empty() {
        return false;
    }
    rules.matched_path_or_any_parents(rel, is_dir).is_ignore()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_ignore_hides_files_and_directories() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join(GEMINI_IGNORE),
            "secret.txt\nprivate/\n*.key\n!keep.key\n",
        )
        .unwrap();
        assert!(is_gemini_ignored(root, &root.join("secret.txt"), false));
        assert!(is_gemini_ignored(root, &root.join("a/secret.txt"), false));
        assert!(is_gemini_ignored(root, &root.join("private/x.rs"), false));
        assert!(is_gemini_ignored(root, &root.join("id.key"), false));
        assert!(!is_gemini_ignored(root, &root.join("keep.key"), false));
        assert!(!is_gemini_ignored(root, &root.join("public.txt"), false));
        assert!(!is_gemini_ignored(root, root, true));
    }

    #[test]
    fn no_file_means_nothing_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_gemini_ignored(dir.path(), &dir.path().join("x"), false));
    }
}
