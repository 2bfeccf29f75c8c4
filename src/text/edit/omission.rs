//! Omission placeholders: lines like `// ... rest of code ...` that a model
//! writes instead of code it left out. Writing them would silently delete
//! that code, so write_file and replace refuse content that has one.

/// The first line of `text` that reads as an omission placeholder.
pub fn find_placeholder(text: &str) -> Option<&str> {
    text.lines().find(|line| is_placeholder(line))
}

/// Whether one line reads as a placeholder: after trimming, an optional
/// leading `//` or `#`, optional surrounding parentheses and an optional
/// leading `...`, it starts with "rest of code/method(s)" or "unchanged
/// code/method(s)" (any case) and ends with `...` (or `…`).
pub fn is_placeholder(line: &str) -> bool {
    let mut s = line.trim();
    if !(s.ends_with("...") || s.ends_with('…') || s.ends_with("...)") || s.ends_with("…)")) {
        return false;
    }
    for prefix in ["//", "#"] {
        if let Some(rest) = s.strip_prefix(prefix) {
            s = rest.trim();
            break;
        }
    }
    if let Some(inner) = s.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        s = inner.trim();
    }
    let lower = s.to_lowercase();
    let Some(body) = lower
        .strip_suffix("...")
        .or_else(|| lower.strip_suffix('…'))
    else {
        return false;
    };
    let body = body.trim_start_matches(['.', '…']).trim_start();
    const STARTS: &[&str] = &[
        "rest of code",
        "rest of the code",
        "rest of method",
        "rest of methods",
        "rest of the method",
        "rest of the methods",
        "unchanged code",
        "unchanged method",
        "unchanged methods",
    ];
    STARTS.iter().any(|start| {
        body.strip_prefix(start).is_some_and(|after| {
            after.is_empty() || after.starts_with([' ', '.', ',', ':', ';', '…'])
        })
    })
}

/// A placeholder line in `new` that is not already present in `old` (a
/// replace may keep a placeholder the file already had).
pub fn new_placeholder<'a>(old: &str, new: &'a str) -> Option<&'a str> {
    new.lines()
        .filter(|line| is_placeholder(line))
        .find(|line| !old.lines().any(|o| o.trim() == line.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_recognised() {
        for line in [
            "// ... rest of code ...",
            "// rest of code ...",
            "# rest of methods ...",
            "    (rest of method ...)",
            "// Unchanged code ...",
            "// unchanged methods here ...",
            "REST OF CODE...",
            "// ... rest of the code …",
        ] {
            assert!(is_placeholder(line), "{line}");
        }
    }

    #[test]
    fn ordinary_lines_are_not_placeholders() {
        for line in [
            "// rest of code follows below",
            "let rest = 1; // ...",
            "// the rest of codes ...x",
            "println!(\"...\");",
            "// rest of coder ...",
            "",
            "...",
            "// restore code ...",
        ] {
            assert!(!is_placeholder(line), "{line}");
        }
    }

    #[test]
    fn replace_may_keep_a_placeholder_the_file_had() {
        let old = "fn a() {}\n// ... rest of code ...\n";
        let new = "fn b() {}\n// ... rest of code ...\n";
        assert_eq!(new_placeholder(old, new), None);
        assert_eq!(
            new_placeholder("fn a() {}", "fn b() {}\n  // rest of methods ..."),
            Some("  // rest of methods ...")
        );
    }
}
