//! Unified diffs for success messages: 3 lines of context, capped.
//!
//! Only the region between the common prefix and the common suffix of the
//! two texts is handed to `similar`, so diffing a one-line change in a 20 MB
//! file costs two `memcmp`-speed scans, not a diff of the whole file.

use std::time::{Duration, Instant};

use similar::{ChangeTag, TextDiff};

/// Lines of context around each change.
pub const CONTEXT: usize = 3;
/// Most diff lines shown.
pub const MAX_LINES: usize = 200;
/// Lines of a changed region handed to the diff algorithm, at most.
const MAX_INPUT_LINES: usize = 2000;
/// Time the diff algorithm may take before it settles for a coarser diff.
const DEADLINE: Duration = Duration::from_millis(20);

/// `diff` in a fenced Markdown block marked `diff`: clients that render
/// answers as Markdown (Gemini CLI does) otherwise eat its indentation.
/// The fence is longer than any run of backticks inside, so no line of
/// the diff can close it.
pub fn fenced(diff: &str) -> String {
    let longest_run = diff.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    format!("{fence}diff\n{diff}\n{fence}")
}

/// A unified diff of `old` → `new`, labelled with `name`; empty if equal.
pub fn unified(old: &str, new: &str, name: &str) -> String {
    if old == new {
        return String::new();
    }
    let (skip_lines, old_mid, new_mid) = changed_region(old, new);
    // Only MAX_LINES lines are shown: a change spanning thousands of lines
    // is diffed on its first part only, so its cost stays bounded.
    let (old_mid, old_cut) = first_lines(old_mid, MAX_INPUT_LINES);
    let (new_mid, new_cut) = first_lines(new_mid, MAX_INPUT_LINES);
    let diff = TextDiff::configure()
        .deadline(Instant::now() + DEADLINE)
        .diff_lines(old_mid, new_mid);
    let mut out = vec![format!("--- a/{name}"), format!("+++ b/{name}")];
    let mut body_lines = 0;
    let mut cut = 0;
    for group in diff.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_start = first.old_range().start;
        let old_len = last.old_range().end - old_start;
        let new_start = first.new_range().start;
        let new_len = last.new_range().end - new_start;
        let header = format!(
            "@@ -{} +{} @@",
            range_label(skip_lines + old_start, old_len),
            range_label(skip_lines + new_start, new_len)
        );
        let mut lines = vec![header];
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                let value = change.value();
                let text = value.strip_suffix('\n').unwrap_or(value);
                let text = text.strip_suffix('\r').unwrap_or(text);
                lines.push(format!("{sign}{text}"));
                if change.missing_newline() {
                    lines.push("\\ No newline at end of file".to_string());
                }
            }
        }
        for line in lines {
            if body_lines < MAX_LINES {
                out.push(line);
                body_lines += 1;
            } else {
                cut += 1;
            }
        }
    }
    if old_cut || new_cut {
        out.push(format!(
            "... (the change spans more than {MAX_INPUT_LINES} lines; the rest of the diff is not shown)"
        ));
    } else if cut > 0 {
        out.push(format!("... ({cut} more diff lines not shown)"));
    }
    out.join("\n")
}

/// The first `n` lines of `text`, and whether anything was cut.
fn first_lines(text: &str, n: usize) -> (&str, bool) {
    match memchr::memchr_iter(b'\n', text.as_bytes()).nth(n) {
        Some(at) => (&text[..at + 1], true),
        None => (text, false),
    }
}

/// Length of the common prefix of two byte strings, compared a block at a
/// time (`memcmp`) before the last block byte by byte.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let max = a.len().min(b.len());
    let mut at = 0;
    while at + BLOCK <= max && a[at..at + BLOCK] == b[at..at + BLOCK] {
        at += BLOCK;
    }
    at + a[at..max]
        .iter()
        .zip(&b[at..max])
        .take_while(|(x, y)| x == y)
        .count()
}

/// Length of the common suffix, at most `max` bytes.
fn common_suffix(a: &[u8], b: &[u8], max: usize) -> usize {
    const BLOCK: usize = 4096;
    let mut len = 0;
    while len + BLOCK <= max
        && a[a.len() - len - BLOCK..a.len() - len] == b[b.len() - len - BLOCK..b.len() - len]
    {
        len += BLOCK;
    }
    len + a[..a.len() - len]
        .iter()
        .rev()
        .zip(b[..b.len() - len].iter().rev())
        .take(max - len)
        .take_while(|(x, y)| x == y)
        .count()
}

/// `a,b` as unified diffs write ranges (1-based start; `a-1,0` for empty).
fn range_label(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

/// The differing middle of two texts, widened to whole lines plus context:
/// returns how many lines were skipped at the start and the two middles.
fn changed_region<'a, 'b>(old: &'a str, new: &'b str) -> (usize, &'a str, &'b str) {
    let mut prefix = common_prefix(old.as_bytes(), new.as_bytes());
    while !old.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = old.len().min(new.len()) - prefix;
    let mut suffix = common_suffix(old.as_bytes(), new.as_bytes(), max_suffix);
    while !old.is_char_boundary(old.len() - suffix) || !new.is_char_boundary(new.len() - suffix) {
        suffix -= 1;
    }
    // Back the start up to a line start, CONTEXT lines earlier.
    let mut start = old[..prefix].rfind('\n').map_or(0, |i| i + 1);
    let mut skip_lines = memchr::memchr_iter(b'\n', &old.as_bytes()[..start]).count();
    for _ in 0..CONTEXT {
        if start == 0 {
            break;
        }
        start = old[..start - 1].rfind('\n').map_or(0, |i| i + 1);
        skip_lines -= 1;
    }
    // Move each end forward to a line end, then CONTEXT more lines.
    let widen_end = |text: &str, changed_end: usize| -> usize {
        let mut end = changed_end;
        for _ in 0..=CONTEXT {
            match text[end..].find('\n') {
                Some(i) => end += i + 1,
                None => return text.len(),
            }
        }
        end
    };
    let old_end = widen_end(old, old.len() - suffix);
    let new_end = widen_end(new, new.len() - suffix);
    // `start` is a line start common to both (it lies within the prefix).
    (skip_lines, &old[start..old_end], &new[start..new_end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_outlasts_any_backticks_inside() {
        assert_eq!(fenced("-a\n+b"), "```diff\n-a\n+b\n```");
        assert_eq!(fenced(" ```\n+````x"), "`````diff\n ```\n+````x\n`````");
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn one_change_deep_in_a_file_has_correct_line_numbers() {
        let old = numbered(1000);
        let new = old.replace("line 500\n", "changed 500\n");
        let diff = unified(&old, &new, "f.txt");
        assert_eq!(
            diff,
            "--- a/f.txt\n+++ b/f.txt\n@@ -497,7 +497,7 @@\n line 497\n line 498\n line 499\n-line 500\n+changed 500\n line 501\n line 502\n line 503"
        );
    }

    #[test]
    fn insertion_at_the_start_and_deletion_at_the_end() {
        let diff = unified("a\nb\n", "x\na\nb\n", "f");
        assert!(diff.contains("@@ -1,2 +1,3 @@\n+x\n a\n b"), "{diff}");
        let diff = unified("a\nb\nc\n", "a\nb\n", "f");
        assert!(diff.contains("@@ -1,3 +1,2 @@\n a\n b\n-c"), "{diff}");
    }

    #[test]
    fn missing_final_newline_is_marked() {
        let diff = unified("a\n", "a\nb", "f");
        assert!(diff.ends_with("+b\n\\ No newline at end of file"), "{diff}");
    }

    #[test]
    fn long_diffs_are_capped_with_a_note() {
        let old = numbered(500);
        let new: String = (1..=500).map(|i| format!("other {i}\n")).collect();
        let diff = unified(&old, &new, "f");
        let lines: Vec<&str> = diff.lines().collect();
        assert_eq!(lines.len(), 2 + MAX_LINES + 1);
        assert!(lines.last().unwrap().contains("more diff lines not shown"));
    }

    #[test]
    fn changes_inside_multibyte_characters() {
        let diff = unified("é\n", "è\n", "f");
        assert_eq!(diff, "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-é\n+è");
    }

    #[test]
    fn huge_changes_are_diffed_on_their_first_part_only() {
        let old = numbered(20_000);
        let new: String = (1..=20_000).map(|i| format!("other {i}\n")).collect();
        let diff = unified(&old, &new, "f");
        assert!(diff.lines().count() <= 2 + MAX_LINES + 1);
        assert!(
            diff.ends_with("the rest of the diff is not shown)"),
            "{}",
            &diff[diff.len() - 120..]
        );
        assert!(diff.contains("-line 1\n"));
    }

    #[test]
    fn prefix_and_suffix_scans_cross_blocks() {
        let a = "x".repeat(10_000) + "A" + &"y".repeat(9_000);
        let b = "x".repeat(10_000) + "B" + &"y".repeat(9_000);
        assert_eq!(common_prefix(a.as_bytes(), b.as_bytes()), 10_000);
        assert_eq!(common_suffix(a.as_bytes(), b.as_bytes(), 9_000), 9_000);
        assert_eq!(common_prefix(b"abc", b"abd"), 2);
        assert_eq!(common_suffix(b"xbc", b"abc", 2), 2);
    }

    #[test]
    fn equal_texts_have_no_diff() {
        assert_eq!(unified("same", "same", "f"), "");
    }
}
