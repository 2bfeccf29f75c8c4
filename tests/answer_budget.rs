//! The answer budget (`--answer-budget`, docs/tools.md): every answer fits
//! it as a client counts it, a cut ends at a whole line or entry, and
//! following the notes from the start gives back every line exactly once.

mod common;

use common::{Scratch, Server, all_text};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;

/// What Gemini CLI measures: UTF-16 units, plus six for each closing tag of
/// its wrapper, which it escapes.
fn client_len(text: &str) -> usize {
    text.encode_utf16().count() + 6 * text.matches("</untrusted_context>").count()
}

fn total_len(result: &CallToolResult) -> usize {
    result
        .content
        .iter()
        .map(|c| match c {
            ContentBlock::Text(t) => client_len(&t.text),
            _ => 0,
        })
        .sum()
}

/// Files whose lines are all under read_file's 2,000-character cut, so
/// that the pages must add up to the file exactly.
fn corpus(dir: &Scratch) -> Vec<(&'static str, String)> {
    let mut files = Vec::new();
    let mut varied = String::new();
    for i in 0..5000 {
        varied.push_str(&format!("line {i} {}\n", "x".repeat(i * 7 % 130)));
    }
    files.push(("varied.txt", varied));
    // Wide characters (two UTF-16 units each) and the wrapper's closing tag.
    let mut wide = String::new();
    for i in 0..1500 {
        wide.push_str(&format!(
            "{i} {} é </untrusted_context> {}\n",
            "😀".repeat(i % 40),
            "ü".repeat(i % 17)
        ));
    }
    files.push(("wide.txt", wide));
    // CRLF, empty lines and no newline at the end.
    let mut crlf = String::new();
    for i in 0..3000 {
        if i % 5 == 0 {
            crlf.push_str("\r\n");
        } else {
            crlf.push_str(&format!("{i}: {}\r\n", "y".repeat(i % 300)));
        }
    }
    crlf.push_str("last line without a newline");
    files.push(("crlf.txt", crlf));
    // Lines near the cut (1,990 characters) and a small file.
    let long: String = (0..400)
        .map(|i| format!("{i:04}{}\n", "z".repeat(1986)))
        .collect();
    files.push(("long_lines.txt", long));
    files.push(("small.txt", "one\ntwo\n".to_string()));
    for (name, text) in &files {
        dir.file(name, text);
    }
    files
}

/// The next 0-based line a read_file note asks for, and the content after
/// the note; None when the answer is the file itself.
fn split_note(answer: &str) -> Option<(usize, usize, &str)> {
    let rest = answer.strip_prefix("\nIMPORTANT: The file content has been truncated.\n")?;
    let status = rest.split("Status: Showing lines ").nth(1)?;
    let (range, _) = status.split_once(" of ")?;
    let (first, last) = range.split_once('-')?;
    let (_, content) = rest.split_once("--- FILE CONTENT (truncated) ---\n")?;
    let first: usize = first.parse().ok()?;
    let last: usize = last.parse().ok()?;
    // The note's own continuation names the line after the last shown.
    let next = if let Some(at) = rest.find("use offset: ") {
        rest[at + 12..].split('.').next()?.parse::<usize>().ok()?
    } else {
        let at = rest.find("use start_line: ")?;
        rest[at + 16..].split('.').next()?.parse::<usize>().ok()? - 1
    };
    assert_eq!(
        next, last,
        "the continuation must be the first line not shown"
    );
    Some((first - 1, last, content))
}

#[tokio::test]
async fn following_read_files_notes_gives_every_line_once_at_any_budget() {
    let dir = Scratch::new();
    let files = corpus(&dir);
    for budget in [5000usize, 7919, 12345, 39000] {
        for dialect in ["gemini-0.24", "gemini-current"] {
            let budget_arg = budget.to_string();
            let server = Server::start(
                &[&dir.path],
                &["--answer-budget", &budget_arg, "--dialect", dialect],
            )
            .await;
            for (name, text) in &files {
                let expected: Vec<&str> = text
                    .strip_suffix('\n')
                    .unwrap_or(text)
                    .split('\n')
                    .collect();
                let mut got: Vec<String> = Vec::new();
                let mut args = json!({"path": name});
                let mut calls = 0;
                loop {
                    calls += 1;
                    assert!(calls < 20_000, "{name}: the notes never reach the end");
                    let result = server.call("read_file", args.clone()).await;
                    assert_ne!(result.is_error, Some(true), "{}", all_text(&result));
                    assert!(
                        total_len(&result) <= budget,
                        "{name} at {budget} ({dialect}): {} characters",
                        total_len(&result)
                    );
                    let answer = all_text(&result);
                    let Some((start, last, content)) = split_note(&answer) else {
                        assert!(got.is_empty(), "{name}: a note disappeared midway");
                        got = expected.iter().map(|l| l.to_string()).collect();
                        assert_eq!(answer, *text, "{name}: a whole answer is the file");
                        break;
                    };
                    assert_eq!(
                        start,
                        got.len(),
                        "{name}: a page starts where the last ended"
                    );
                    got.extend(content.split('\n').map(str::to_string));
                    assert_eq!(got.len(), last, "{name}: the note counts the lines shown");
                    if last >= expected.len() {
                        break;
                    }
                    args = if dialect == "gemini-current" {
                        json!({"file_path": name, "start_line": last + 1})
                    } else {
                        json!({"path": name, "offset": last})
                    };
                }
                assert_eq!(got.len(), expected.len(), "{name} at {budget} ({dialect})");
                assert!(
                    got == expected,
                    "{name} at {budget} ({dialect}): lines differ"
                );
            }
        }
    }
}

#[tokio::test]
async fn following_file_reads_notes_gives_every_line_once() {
    let dir = Scratch::new();
    let files = corpus(&dir);
    for budget in [5000usize, 9000, 39000] {
        let budget_arg = budget.to_string();
        let server = Server::start(&[&dir.path], &["--answer-budget", &budget_arg]).await;
        for (name, text) in &files {
            let expected: Vec<String> = text
                .strip_suffix('\n')
                .unwrap_or(text)
                .split('\n')
                .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
                .collect();
            let mut got = Vec::new();
            let mut start = 1;
            loop {
                let result = server
                    .call("file_read", json!({"path": name, "start_line": start}))
                    .await;
                assert!(total_len(&result) <= budget, "{name} at {budget}");
                let answer = all_text(&result);
                let mut lines = answer.split('\n').skip(1).peekable();
                let mut next = None;
                while let Some(line) = lines.next() {
                    if lines.peek().is_none() && line.starts_with("[Output capped") {
                        let at = line.find("start_line: ").unwrap() + 12;
                        next = Some(line[at..].trim_end_matches(".]").parse::<usize>().unwrap());
                        break;
                    }
                    let (number, text) = line.split_once('\t').unwrap();
                    assert_eq!(number.trim().parse::<usize>().unwrap(), got.len() + 1);
                    got.push(text.to_string());
                }
                match next {
                    Some(n) => {
                        assert_eq!(n, got.len() + 1, "{name}: continue after the last shown");
                        start = n;
                    }
                    None => break,
                }
            }
            assert!(got == expected, "{name} at {budget}: lines differ");
        }
    }
}

#[tokio::test]
async fn big_listings_searches_and_batches_fit_and_say_what_is_left_out() {
    let dir = Scratch::new();
    for i in 0..10_000 {
        dir.file(&format!("many/entry_{i:05}.txt"), "");
    }
    let mut matches = String::new();
    for i in 0..2500 {
        matches.push_str(&format!("needle {i} {}\n", "n".repeat(40)));
    }
    dir.file("found.txt", &matches);
    for i in 0..100 {
        dir.file(
            &format!("batch/file_{i:03}.txt"),
            format!("content of {i}\n").repeat(400),
        );
    }
    const BUDGET: usize = 39000;
    for dialect in ["gemini-0.24", "gemini-current"] {
        let server = Server::start(&[&dir.path], &["--dialect", dialect]).await;
        let dir_param = if dialect == "gemini-current" {
            "dir_path"
        } else {
            "path"
        };

        let listing = server
            .call("list_directory", json!({ dir_param: "many" }))
            .await;
        assert!(total_len(&listing) <= BUDGET, "{}", total_len(&listing));
        let text = all_text(&listing);
        let shown = text.lines().filter(|l| l.starts_with("entry_")).count();
        assert!(shown > 1000, "{shown}");
        assert!(
            text.contains(&format!(
                "... and {} more entries not listed",
                10_000 - shown
            )),
            "{}",
            &text[text.len() - 300..]
        );

        let glob = server.call("glob", json!({"pattern": "many/*.txt"})).await;
        assert!(total_len(&glob) <= BUDGET);
        let text = all_text(&glob);
        let shown = text.lines().filter(|l| l.contains("entry_")).count();
        assert!(
            text.contains(&format!("... and {} more files not listed", 10_000 - shown)),
            "{}",
            &text[text.len() - 300..]
        );

        let search = server
            .call(
                "search_file_content",
                json!({"pattern": "needle", "total_max_matches": 2000}),
            )
            .await;
        assert!(total_len(&search) <= BUDGET);
        let text = all_text(&search);
        let shown = text.lines().filter(|l| l.starts_with('L')).count();
        assert!(shown > 500, "{shown}");
        assert!(
            text.contains(&format!("{shown} of the 2000 matches are shown")),
            "{}",
            &text[text.len() - 400..]
        );
        // The last line shown is whole: the next is the one after it.
        let last = text.lines().rfind(|l| l.starts_with('L')).unwrap();
        assert_eq!(
            last,
            format!("L{shown}: needle {} {}", shown - 1, "n".repeat(40))
        );

        let batch = server
            .call("read_many_files", json!({"paths": ["batch/*.txt"]}))
            .await;
        assert!(total_len(&batch) <= BUDGET, "{}", total_len(&batch));
        let text = all_text(&batch);
        let read = text
            .lines()
            .filter(|l| l.starts_with("--- ") && l.contains("batch/file_"))
            .count();
        assert!(read > 3, "{read}");
        // Every file is either shown whole or listed with the reason.
        assert!(
            text.contains(&format!("Skipped {} file(s):", 100 - read)),
            "{}",
            &text[text.len() - 600..]
        );
        assert!(text.contains("not shown: the answer stops at 39000 characters"));
        for i in 0..100 {
            let name = format!("batch/file_{i:03}.txt");
            let shown = text.contains(&format!("{name} ---"));
            let listed = text.contains(&format!("{name}: not shown"));
            let counted = text.contains("more");
            assert!(
                shown || listed || counted,
                "{name} is neither shown nor skipped"
            );
            assert!(!(shown && listed), "{name} is both shown and skipped");
        }
    }
}

#[tokio::test]
async fn off_keeps_answers_whole_and_anything_unshaped_is_cut_at_a_line() {
    let dir = Scratch::new();
    let text: String = (0..5000).map(|i| format!("row {i}\n")).collect();
    dir.file("rows.txt", &text);
    let server = Server::start(&[&dir.path], &["--answer-budget", "off"]).await;
    let answer = server
        .ok_text("read_file", json!({"path": "rows.txt", "limit": 5000}))
        .await;
    assert!(
        answer.ends_with("row 4999\n"),
        "{}",
        &answer[answer.len() - 40..]
    );

    // bash's answer is shaped by its own cap; a budget below it cuts the
    // answer at a whole line, saying so.
    let server = Server::start(&[&dir.path], &["--answer-budget", "5000"]).await;
    let result = server
        .call("bash", json!({"command": "cat rows.txt"}))
        .await;
    assert!(total_len(&result) <= 5000, "{}", total_len(&result));
    let answer = all_text(&result);
    let (body, note) = answer.rsplit_once('\n').unwrap();
    assert!(
        note.starts_with("[rootbound cut this answer at 5000 characters: the first "),
        "{note}"
    );
    let shown: usize = note
        .split("the first ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert_eq!(body.lines().count(), shown);
    // The last line shown is a whole row.
    let last = body.lines().last().unwrap();
    let n: usize = last.strip_prefix("row ").unwrap().parse().unwrap();
    assert!(text.contains(&format!("row {n}\nrow {}\n", n + 1)));
}
