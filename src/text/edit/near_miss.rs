//! When `old_string` is not in the file, find where the model probably
//! meant, and say what differs, so its next try succeeds. Never applied.
//!
//! Cheap to run on a 20 MB file: the file is scanned with `memmem` for a few
//! distinctive words of `old_string`; only windows around those hits are
//! compared line by line.

use memchr::memmem;
use similar::TextDiff;

/// The closest region of the file to `old_string`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NearMiss {
    /// 1-based first and last line of the region.
    pub first_line: usize,
    pub last_line: usize,
    /// What differs, in words a model can act on.
    pub difference: String,
    /// The region's lines, numbered, shortened.
    pub excerpt: String,
}

/// How many hits of anchor words are followed up, at most.
const MAX_HITS: usize = 400;
/// Lines compared per candidate window, at most.
const MAX_WINDOW_LINES: usize = 30;
/// Below this average line similarity a region is not worth naming.
const MIN_SIMILARITY: f32 = 0.6;

/// Finds the region of `file` (LF-normalised) closest to `needle`
/// (LF-normalised `old_string`, known not to occur).
pub fn find(file: &str, needle: &str) -> Option<NearMiss> {
    if needle.trim().is_empty() || file.is_empty() {
        return None;
    }
    let lines = LineIndex::new(file);
    if let Some(found) = escaping_difference(file, needle, &lines) {
        return Some(found);
    }
    let needle_lines: Vec<&str> = needle
        .strip_suffix('\n')
        .unwrap_or(needle)
        .split('\n')
        .collect();
    let mut best: Option<(f32, usize)> = None;
    for start in candidate_starts(file, &needle_lines, &lines) {
        let score = window_similarity(&needle_lines, &lines, file, start);
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, start));
        }
    }
    let (score, start) = best?;
    if score < MIN_SIMILARITY {
        return None;
    }
    let count = needle_lines.len().min(lines.count() - start);
    let region: Vec<&str> = (start..start + count)
        .map(|i| lines.line(file, i))
        .collect();
    Some(NearMiss {
        first_line: start + 1,
        last_line: start + count,
        difference: describe_difference(&needle_lines, &region, start),
        excerpt: excerpt(&region, start),
    })
}

/// Line starts of a text, for line numbers and line slices.
struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        if starts.last() == Some(&text.len()) && !text.is_empty() {
            starts.pop();
        }
        LineIndex {
            starts,
            len: text.len(),
        }
    }

    fn count(&self) -> usize {
        self.starts.len()
    }

    /// 0-based line containing byte `offset`.
    fn line_of(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    fn line<'a>(&self, text: &'a str, i: usize) -> &'a str {
        let start = self.starts.get(i).copied().unwrap_or(self.len);
        let end = self.starts.get(i + 1).map_or(self.len, |&e| e - 1);
        text.get(start..end.max(start)).unwrap_or("")
    }
}

/// `old_string` written with escape sequences the file does not have (or
/// the other way round): the most common reason for a miss.
fn escaping_difference(file: &str, needle: &str, lines: &LineIndex) -> Option<NearMiss> {
    let unescaped = unescape(needle);
    let escaped = escape(needle);
    let (variant, difference) = if unescaped != needle && file.contains(&unescaped) {
        (
            unescaped,
            "old_string has escape sequences (such as \\n, \\t or \\\") where the file has the \
             plain characters; send the text exactly as the file has it"
                .to_string(),
        )
    } else if escaped != needle && file.contains(&escaped) {
        (
            escaped,
            "the file has escape sequences (such as \\\" or \\n) where old_string has plain \
             characters; copy them exactly as the file has them"
                .to_string(),
        )
    } else {
        return None;
    };
    let at = memmem::find(file.as_bytes(), variant.as_bytes())?;
    let first = lines.line_of(at);
    let last = lines.line_of(at + variant.len().saturating_sub(1));
    let region: Vec<&str> = (first..=last).map(|i| lines.line(file, i)).collect();
    Some(NearMiss {
        first_line: first + 1,
        last_line: last + 1,
        difference,
        excerpt: excerpt(&region, first),
    })
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(q @ ('"' | '\'' | '`' | '\\')) => out.push(q),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
        .replace('\t', "\\t")
}

/// Starting lines of windows worth comparing: where distinctive words of
/// the needle occur, shifted by the line they sit on in the needle.
fn candidate_starts(file: &str, needle_lines: &[&str], lines: &LineIndex) -> Vec<usize> {
    let mut anchors: Vec<&str> = needle_lines
        .iter()
        .flat_map(|l| l.split(|c: char| !c.is_alphanumeric() && c != '_'))
        .filter(|w| w.len() >= 3)
        .collect();
    anchors.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    anchors.dedup();
    if anchors.is_empty() {
        // No words: anchor on the longest trimmed line.
        if let Some(longest) = needle_lines
            .iter()
            .map(|l| l.trim())
            .max_by_key(|l| l.len())
            && !longest.is_empty()
        {
            anchors.push(longest);
        }
    }
    let mut starts = Vec::new();
    let mut hits = 0;
    for anchor in anchors.iter().take(4) {
        let on_lines: Vec<usize> = needle_lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.contains(anchor))
            .map(|(i, _)| i)
            .take(4)
            .collect();
        for at in memmem::find_iter(file.as_bytes(), anchor.as_bytes()) {
            hits += 1;
            if hits > MAX_HITS {
                break;
            }
            let line = lines.line_of(at);
            starts.extend(on_lines.iter().filter_map(|&j| line.checked_sub(j)));
        }
    }
    starts.sort_unstable();
    starts.dedup();
    starts
}

/// Average similarity (0..1) of the needle's lines and the file's lines
/// from `start`, whitespace at the ends ignored.
fn window_similarity(needle_lines: &[&str], lines: &LineIndex, file: &str, start: usize) -> f32 {
    let n = needle_lines.len().min(MAX_WINDOW_LINES);
    let mut total = 0.0;
    for (i, want) in needle_lines.iter().take(n).enumerate() {
        let have = if start + i < lines.count() {
            lines.line(file, start + i)
        } else {
            ""
        };
        total += line_similarity(want.trim(), have.trim());
    }
    total / n as f32
}

fn line_similarity(a: &str, b: &str) -> f32 {
    if a == b {
        return 1.0;
    }
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    TextDiff::from_chars(a, b).ratio()
}

fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn describe_difference(needle: &[&str], region: &[&str], start: usize) -> String {
    let pairs = || needle.iter().zip(region.iter());
    if pairs().all(|(a, b)| a.trim() == b.trim()) {
        let indent = pairs().any(|(a, b)| a.trim_end() != b.trim_end());
        return if indent {
            "the indentation differs; copy the leading whitespace exactly (tabs versus spaces, \
             and how many)"
                .to_string()
        } else {
            "only trailing whitespace at the ends of lines differs".to_string()
        };
    }
    if pairs().all(|(a, b)| collapse_whitespace(a) == collapse_whitespace(b)) {
        return "the whitespace inside the lines differs (spaces, tabs or line breaks)".to_string();
    }
    for (i, (want, have)) in pairs().enumerate() {
        if want.trim() != have.trim() {
            return format!(
                "line {} of the file reads `{}` where old_string has `{}`",
                start + i + 1,
                shorten(have.trim(), 120),
                shorten(want.trim(), 120)
            );
        }
    }
    "old_string has more lines than the file has from there".to_string()
}

fn excerpt(region: &[&str], start: usize) -> String {
    const MAX_LINES: usize = 8;
    let mut out: Vec<String> = region
        .iter()
        .take(MAX_LINES)
        .enumerate()
        .map(|(i, l)| format!("{}: {}", start + i + 1, shorten(l, 160)))
        .collect();
    if region.len() > MAX_LINES {
        out.push(format!("... ({} more lines)", region.len() - MAX_LINES));
    }
    out.join("\n")
}

fn shorten(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "fn main() {\n    let value = compute(1, 2);\n    println!(\"{value}\");\n}\n\nfn compute(a: i32, b: i32) -> i32 {\n\ta + b\n}\n";

    #[test]
    fn indentation_difference_is_named_with_its_lines() {
        let miss = find(FILE, "fn compute(a: i32, b: i32) -> i32 {\n    a + b\n}").unwrap();
        assert_eq!((miss.first_line, miss.last_line), (6, 8));
        assert!(
            miss.difference.contains("indentation"),
            "{}",
            miss.difference
        );
        assert!(
            miss.excerpt.starts_with("6: fn compute"),
            "{}",
            miss.excerpt
        );
    }

    #[test]
    fn inner_whitespace_difference() {
        let miss = find(FILE, "let value  =  compute(1,2);").unwrap();
        assert_eq!(miss.first_line, 2);
        assert!(miss.difference.contains("line 2"), "{}", miss.difference);
        let miss = find(FILE, "let value = compute(1,  2);").unwrap();
        assert!(
            miss.difference.contains("whitespace inside"),
            "{}",
            miss.difference
        );
    }

    #[test]
    fn escaping_difference() {
        let miss = find(FILE, "println!(\\\"{value}\\\");").unwrap();
        assert_eq!(miss.first_line, 3);
        assert!(
            miss.difference.contains("escape sequences"),
            "{}",
            miss.difference
        );
        let miss = find(FILE, "fn main() {\\n    let value").unwrap();
        assert_eq!((miss.first_line, miss.last_line), (1, 2));
    }

    #[test]
    fn a_changed_word_is_shown_side_by_side() {
        let miss = find(
            FILE,
            "    let value = compute(3, 2);\n    println!(\"{value}\");",
        )
        .unwrap();
        assert_eq!(miss.first_line, 2);
        assert!(
            miss.difference.contains("compute(1, 2)") && miss.difference.contains("compute(3, 2)")
        );
    }

    #[test]
    fn nothing_similar_means_no_hint() {
        assert_eq!(find(FILE, "completely unrelated words here"), None);
        assert_eq!(find(FILE, "   "), None);
        assert_eq!(find("", "x"), None);
    }
}
