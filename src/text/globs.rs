//! Compiling glob patterns from requests without a panic and without an
//! answer that echoes a huge pattern back.
//!
//! globset's `Glob::compile_matcher` panics when the regex it builds is too
//! big to compile (a pattern of a few hundred kilobytes is enough), and the
//! panic's message holds the whole regex: a 1 MB pattern became a 1 MB
//! answer. Patterns are refused by size first, and matchers are built as a
//! one-glob `GlobSet`, whose build returns an error instead of panicking.

use globset::{Glob, GlobSet, GlobSetBuilder};

/// Longest glob pattern (in bytes) a request may give: the longest path a
/// request may name. A real pattern is a path with a few wildcards.
pub const MAX_GLOB_BYTES: usize = 4096;

/// Refuses a pattern too long to be a path pattern, in a message that does
/// not repeat it.
pub fn check_size(pattern: &str) -> Result<(), String> {
    if pattern.len() > MAX_GLOB_BYTES {
        return Err(format!(
            "The glob pattern is {} bytes long; at most {MAX_GLOB_BYTES} bytes are accepted.",
            pattern.len()
        ));
    }
    Ok(())
}

/// Builds a matcher for one glob: the size check, then a one-glob set
/// (never a panic). The error names no more of the pattern than its size.
pub fn matcher(glob: Glob) -> Result<GlobSet, String> {
    check_size(glob.glob())?;
    GlobSetBuilder::new()
        .add(glob)
        .build()
        .map_err(|_| "The glob pattern is too complex to compile.".to_string())
}

/// Builds a set of globs; the error (a glob too complex for the regex
/// engine) does not echo them.
pub fn set(builder: &GlobSetBuilder) -> Result<GlobSet, String> {
    builder
        .build()
        .map_err(|_| "The glob patterns are too complex to compile.".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use globset::GlobBuilder;

    #[test]
    fn a_pattern_too_large_is_refused_by_size_with_a_short_message() {
        let huge = "a".repeat(1_000_000);
        let err = check_size(&huge).unwrap_err();
        assert!(err.len() < 200, "{err}");
        let glob = GlobBuilder::new(&huge).build().unwrap();
        let err = matcher(glob).unwrap_err();
        assert!(err.len() < 200, "{err}");
    }

    #[test]
    fn ordinary_patterns_match_as_before() {
        let m = matcher(
            GlobBuilder::new("src/**/*.rs")
                .literal_separator(true)
                .build()
                .unwrap(),
        )
        .unwrap();
        assert!(m.is_match("src/a/b.rs"));
        assert!(!m.is_match("lib/b.rs"));
    }
}
