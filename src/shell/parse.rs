//! A strict parser for the small shell subset `bash` accepts.
//!
//! Accepted: simple commands of literal words (unquoted, 'single-quoted',
//! "double-quoted" without expansions, backslash escapes), joined by `|`,
//! `&&`, `||`, `;` and newlines; the redirections `2>&1`, `>&2`,
//! `>/dev/null` and `2>/dev/null`; `#` comments. Descriptor numbers are read
//! as bash reads them (`echo x 3>/dev/null` redirects descriptor 3, which is
//! refused, rather than passing `3` as an argument). Everything else a shell would interpret —
//! expansions (`$`, backticks), substitutions, subshells and groups, brace
//! expansion, background jobs, here-documents, other redirections, an
//! assignment with no command after it, functions and control flow — is
//! refused with the offending text and the reason. Assignments before a
//! command (`RUST_BACKTRACE=1 cargo test`) are parsed as bash parses them
//! (an unquoted name, `=`, one word as the value, which is never globbed)
//! and kept apart from the words; the policy decides which names may be set. The parser never guesses: what it returns is exactly
//! the argv that will be executed (before glob expansion).

use super::refusal::{Refusal, refuse};

/// A whole command line: pipelines joined by connectors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    pub items: Vec<ListItem>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListItem {
    pub pipeline: Pipeline,
    /// How the next item depends on this one (None for the last).
    pub then: Option<Connector>,
}

/// What runs after a pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Connector {
    /// `&&`: only if it succeeded.
    And,
    /// `||`: only if it failed.
    Or,
    /// `;` or a newline: in any case.
    Seq,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    pub commands: Vec<SimpleCommand>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    /// `NAME=value` before the command's name, in order.
    pub assignments: Vec<(String, String)>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

/// The redirections that are accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Redirect {
    /// `2>&1`
    StderrToStdout,
    /// `>/dev/null` (or `1>/dev/null`)
    StdoutToNull,
    /// `2>/dev/null`
    StderrToNull,
    /// `>&2` (or `1>&2`)
    StdoutToStderr,
}

/// One word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Word {
    /// The literal value.
    pub value: String,
    /// If the word has unquoted glob characters: the pattern, with quoted
    /// characters escaped by backslashes, for expansion.
    pub glob: Option<String>,
    /// Whether any part of the word was quoted or escaped.
    pub quoted: bool,
    /// Where an assignment's `=` is, if the word is one as bash reads it:
    /// a valid name, unquoted and without glob characters, before it.
    pub assignment_at: Option<usize>,
}

/// Why `NAME=value` alone is refused: it would set a variable of a shell
/// that does not outlive the call.
const NO_COMMAND_AFTER_ASSIGNMENT: &str = "a variable assignment (NAME=value) with no command \
     after it sets nothing that outlives the call; put it before the command it is for \
     (`RUST_BACKTRACE=1 cargo test`)";

/// Words that start shell syntax this subset does not have.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "function", "time", "coproc", "[[", "]]", "{", "}", "!",
];

/// Parses a command line.
pub fn parse(input: &str) -> Result<CommandLine, Refusal> {
    let mut p = Parser {
        chars: input.char_indices().collect(),
        input,
        pos: 0,
    };
    p.command_line()
}

struct Parser<'a> {
    chars: Vec<(usize, char)>,
    input: &'a str,
    pos: usize,
}

/// A token between words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Pipe,
    And,
    Or,
    Seq,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).map(|&(_, c)| c)
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).map(|&(_, c)| c)
    }

    fn offset(&self) -> usize {
        self.chars
            .get(self.pos)
            .map_or(self.input.len(), |&(o, _)| o)
    }

    /// The rest of the input from the current position, shortened, for messages.
    fn here(&self) -> String {
        let rest = &self.input[self.offset()..];
        let end = rest.char_indices().nth(24).map_or(rest.len(), |(i, _)| i);
        rest[..end].to_string()
    }

    fn command_line(&mut self) -> Result<CommandLine, Refusal> {
        let mut items: Vec<ListItem> = Vec::new();
        let mut commands: Vec<SimpleCommand> = Vec::new();
        let mut current = SimpleCommand::default();
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else { break };
            match c {
                '#' => self.skip_comment(),
                '\n' | '\r' | ';' | '|' | '&' => {
                    let at = self.here();
                    let op = self.operator()?;
                    if op == Op::Seq
                        && current.words.is_empty()
                        && current.assignments.is_empty()
                        && commands.is_empty()
                    {
                        // Blank lines and a leading or doubled newline are fine;
                        // a stray `;` is not.
                        if c == ';' {
                            return refuse(at, "syntax error: `;` with no command before it");
                        }
                        continue;
                    }
                    if current.words.is_empty() {
                        if !current.assignments.is_empty() {
                            return refuse(at, NO_COMMAND_AFTER_ASSIGNMENT);
                        }
                        return refuse(at, "syntax error: an operator with no command before it");
                    }
                    commands.push(std::mem::take(&mut current));
                    if op == Op::Pipe {
                        continue;
                    }
                    items.push(ListItem {
                        pipeline: Pipeline {
                            commands: std::mem::take(&mut commands),
                        },
                        then: Some(match op {
                            Op::And => Connector::And,
                            Op::Or => Connector::Or,
                            _ => Connector::Seq,
                        }),
                    });
                }
                '>' => {
                    let r = self.redirect(None)?;
                    current.redirects.push(r);
                }
                _ => {
                    let start = self.here();
                    let word = self.word()?;
                    // `2>...`, `1>...`, `3>...`: digits directly before `>`
                    // name a descriptor, as in bash.
                    if !word.quoted
                        && !word.value.is_empty()
                        && word.value.bytes().all(|b| b.is_ascii_digit())
                        && self.peek() == Some('>')
                    {
                        let r = self.redirect(Some(word.value.as_str()))?;
                        current.redirects.push(r);
                        continue;
                    }
                    if current.words.is_empty() {
                        if let Some(at) = word.assignment_at {
                            let value = word.value[at + 1..].to_string();
                            current
                                .assignments
                                .push((word.value[..at].to_string(), value));
                            continue;
                        }
                        check_command_word(&word, &start)?;
                    }
                    current.words.push(word);
                }
            }
        }
        if !current.words.is_empty() {
            commands.push(current);
        } else if !current.assignments.is_empty() {
            return refuse(self.input.trim_end(), NO_COMMAND_AFTER_ASSIGNMENT);
        } else if !current.redirects.is_empty() {
            return refuse(">", "a redirection with no command");
        }
        match (commands.is_empty(), items.last_mut()) {
            (false, _) => items.push(ListItem {
                pipeline: Pipeline { commands },
                then: None,
            }),
            (true, Some(last)) => match last.then {
                Some(Connector::Seq) => last.then = None,
                _ => {
                    return refuse(
                        self.input.trim_end(),
                        "syntax error: the command ends with an operator",
                    );
                }
            },
            (true, None) => {}
        }
        if items.is_empty() {
            return refuse("", "the command is empty");
        }
        if let Some(pos) = items.iter().position(|i| i.pipeline.commands.is_empty()) {
            return refuse(format!("item {}", pos + 1), "syntax error: empty command");
        }
        Ok(CommandLine { items })
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
    }

    fn skip_comment(&mut self) {
        while let Some(c) = self.peek() {
            if c == '\n' {
                break;
            }
            self.pos += 1;
        }
    }

    fn operator(&mut self) -> Result<Op, Refusal> {
        let at = self.here();
        let c = self.peek().unwrap_or(';');
        let next = self.peek_at(1);
        let (op, len) = match (c, next) {
            ('|', Some('|')) => (Op::Or, 2),
            ('|', Some('&')) => {
                return refuse(at, "`|&` (piping stderr) is not supported; use `2>&1 |`");
            }
            ('|', _) => (Op::Pipe, 1),
            ('&', Some('&')) => (Op::And, 2),
            ('&', Some('>')) => {
                return refuse(at, "`&>` redirection is not allowed; use `>/dev/null 2>&1`");
            }
            ('&', _) => return refuse(at, "background jobs (`&`) are not allowed"),
            (';', Some(';')) => {
                return refuse(at, "`;;` belongs to case statements, which are not allowed");
            }
            (';', Some('&')) => return refuse(at, "case-statement syntax is not allowed"),
            _ => (Op::Seq, 1),
        };
        self.pos += len;
        Ok(op)
    }

    /// A redirection starting at `>` (after an optional descriptor number).
    fn redirect(&mut self, fd: Option<&str>) -> Result<Redirect, Refusal> {
        let at = format!("{}{}", fd.unwrap_or(""), self.here());
        if !matches!(fd, None | Some("1" | "2")) {
            return refuse(
                at,
                "only descriptors 1 (output) and 2 (errors) may be redirected",
            );
        }
        self.pos += 1; // '>'
        if matches!(self.peek(), Some('>' | '|')) {
            return refuse(
                at,
                "only `>/dev/null`, `2>/dev/null`, `2>&1` and `>&2` redirections are allowed",
            );
        }
        if self.peek() == Some('&') {
            self.pos += 1;
            if fd == Some("2") && self.peek() == Some('1') && self.is_boundary(1) {
                self.pos += 1;
                return Ok(Redirect::StderrToStdout);
            }
            if fd != Some("2") && self.peek() == Some('2') && self.is_boundary(1) {
                self.pos += 1;
                return Ok(Redirect::StdoutToStderr);
            }
            return refuse(at, "only `2>&1` and `>&2` may duplicate a descriptor");
        }
        self.skip_blanks();
        let target_start = self.pos;
        let target = self.word()?;
        if target.value != "/dev/null" || target.quoted {
            self.pos = target_start;
            return refuse(
                at,
                "output may only be redirected to /dev/null (files cannot be written this way)",
            );
        }
        Ok(match fd {
            Some("2") => Redirect::StderrToNull,
            _ => Redirect::StdoutToNull,
        })
    }

    /// Whether the character `ahead` positions on ends a word.
    fn is_boundary(&self, ahead: usize) -> bool {
        matches!(
            self.peek_at(ahead),
            None | Some(' ' | '\t' | '\n' | '\r' | ';' | '|' | '&' | '>' | '<' | ')')
        )
    }

    /// One word: unquoted text, quotes and escapes until a blank or operator.
    fn word(&mut self) -> Result<Word, Refusal> {
        let mut word = WordBuilder::default();
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\n' | '\r' | ';' | '|' | '&' | '>' => break,
                '\'' => self.single_quoted(&mut word)?,
                '"' => self.double_quoted(&mut word)?,
                '\\' => self.escaped(&mut word)?,
                '*' | '?' | '[' => {
                    word.glob(c);
                    self.pos += 1;
                }
                '~' if word.tilde_expands() => {
                    return refuse(
                        self.here(),
                        "`~` (the home directory) is not expanded; name a path inside the \
                         workspace, or quote a literal ~",
                    );
                }
                _ => {
                    if let Some(why) = unquoted_syntax(c) {
                        return refuse(self.here(), why);
                    }
                    word.literal(c);
                    self.pos += 1;
                }
            }
        }
        Ok(word.finish())
    }

    /// `'...'`: every character literal.
    fn single_quoted(&mut self, word: &mut WordBuilder) -> Result<(), Refusal> {
        let start = self.here();
        self.pos += 1;
        loop {
            match self.peek() {
                None => return refuse(start, "unterminated single quote"),
                Some('\'') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(q) => {
                    word.quoted(q);
                    self.pos += 1;
                }
            }
        }
    }

    /// `"..."`: literal, with backslash escapes; `$` and backticks, which
    /// would expand, are refused.
    fn double_quoted(&mut self, word: &mut WordBuilder) -> Result<(), Refusal> {
        let start = self.here();
        self.pos += 1;
        loop {
            match self.peek() {
                None => return refuse(start, "unterminated double quote"),
                Some('"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some('$') => {
                    return refuse(
                        self.here(),
                        "`$` inside double quotes expands; use single quotes for a literal $",
                    );
                }
                Some('`') => {
                    return refuse(
                        self.here(),
                        "command substitution with backticks is not allowed",
                    );
                }
                Some('\\') => match self.peek_at(1) {
                    Some(e @ ('"' | '\\' | '$' | '`')) => {
                        word.quoted(e);
                        self.pos += 2;
                    }
                    Some('\n') => self.pos += 2,
                    _ => {
                        word.quoted('\\');
                        self.pos += 1;
                    }
                },
                Some(q) => {
                    word.quoted(q);
                    self.pos += 1;
                }
            }
        }
    }

    /// An unquoted backslash: the next character is literal; before a
    /// newline, a line continuation.
    fn escaped(&mut self, word: &mut WordBuilder) -> Result<(), Refusal> {
        match self.peek_at(1) {
            None => refuse("\\", "a backslash at the end of the command"),
            Some('\n') => {
                word.was_quoted = true;
                self.pos += 2;
                Ok(())
            }
            Some(e) => {
                word.quoted(e);
                self.pos += 2;
                Ok(())
            }
        }
    }
}

/// Why an unquoted character starts shell syntax this subset does not have.
fn unquoted_syntax(c: char) -> Option<&'static str> {
    Some(match c {
        '<' => "input redirection, here-documents and process substitution are not allowed",
        '(' | ')' => "subshells and grouping `( )` are not allowed (quote a literal parenthesis)",
        '{' | '}' => {
            "braces are not allowed unquoted (brace expansion and groups); quote them if literal"
        }
        '$' => {
            "`$` expansions (variables, $(...), $'...', arithmetic) are not allowed; quote a \
             literal $ with single quotes"
        }
        '`' => "command substitution with backticks is not allowed",
        _ => return None,
    })
}

/// A word as it is read: its literal value, and the glob pattern it stands
/// for (quoted characters escaped).
struct WordBuilder {
    value: String,
    pattern: String,
    has_glob: bool,
    was_quoted: bool,
    /// The last character was an unquoted `=` or `:`.
    after_separator: bool,
    /// Everything so far is unquoted literal text (no glob character).
    plain: bool,
    /// Where the first `=` is, when what came before it is a name.
    assignment_at: Option<usize>,
}

impl Default for WordBuilder {
    fn default() -> WordBuilder {
        WordBuilder {
            value: String::new(),
            pattern: String::new(),
            has_glob: false,
            was_quoted: false,
            after_separator: false,
            plain: true,
            assignment_at: None,
        }
    }
}

/// Whether `text` is a shell variable name.
pub fn is_name(text: &str) -> bool {
    !text.is_empty()
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !text.starts_with(|c: char| c.is_ascii_digit())
}

impl WordBuilder {
    fn literal(&mut self, c: char) {
        if c == '=' && self.plain && self.assignment_at.is_none() && is_name(&self.value) {
            self.assignment_at = Some(self.value.len());
        }
        self.value.push(c);
        self.pattern.push(c);
        self.after_separator = matches!(c, '=' | ':');
    }

    fn glob(&mut self, c: char) {
        self.has_glob = true;
        self.plain = false;
        self.literal(c);
    }

    fn quoted(&mut self, c: char) {
        self.was_quoted = true;
        self.plain = false;
        self.value.push(c);
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            self.pattern.push('\\');
        }
        self.pattern.push(c);
        self.after_separator = false;
    }

    /// Whether an unquoted `~` here would be expanded by bash: at the start
    /// of a word, or after `=` or `:` (as in `prefix=~/x`).
    fn tilde_expands(&self) -> bool {
        self.value.is_empty() && !self.was_quoted || self.after_separator
    }

    fn finish(self) -> Word {
        Word {
            glob: self.has_glob.then_some(self.pattern),
            value: self.value,
            quoted: self.was_quoted,
            assignment_at: self.assignment_at,
        }
    }
}

/// The first word of a simple command (after any assignments): no
/// reserved word.
fn check_command_word(word: &Word, at: &str) -> Result<(), Refusal> {
    if !word.quoted && RESERVED.contains(&word.value.as_str()) {
        return refuse(
            at,
            format!(
                "`{}` starts shell syntax (control flow, groups, negation) that is not allowed",
                word.value
            ),
        );
    }
    if word.value.is_empty() {
        return refuse(at, "the command name is empty");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<Vec<String>>> {
        parse(line)
            .unwrap()
            .items
            .iter()
            .map(|i| {
                i.pipeline
                    .commands
                    .iter()
                    .map(|c| c.words.iter().map(|w| w.value.clone()).collect())
                    .collect()
            })
            .collect()
    }

    fn refused(line: &str) -> Refusal {
        parse(line).expect_err(line)
    }

    #[test]
    fn simple_commands_pipes_and_lists() {
        assert_eq!(words("ls -la"), vec![vec![vec!["ls", "-la"]]]);
        assert_eq!(
            words("grep -rn foo . | head -5"),
            vec![vec![vec!["grep", "-rn", "foo", "."], vec!["head", "-5"]]]
        );
        let line = parse("a && b || c; d\ne").unwrap();
        let connectors: Vec<Option<Connector>> = line.items.iter().map(|i| i.then).collect();
        assert_eq!(
            connectors,
            vec![
                Some(Connector::And),
                Some(Connector::Or),
                Some(Connector::Seq),
                Some(Connector::Seq),
                None
            ]
        );
        assert_eq!(words("echo hi;"), vec![vec![vec!["echo", "hi"]]]);
        assert_eq!(words("\n\necho hi\n\n"), vec![vec![vec!["echo", "hi"]]]);
        assert_eq!(
            words("echo a # a comment; rm -rf /"),
            vec![vec![vec!["echo", "a"]]]
        );
    }

    #[test]
    fn quoting_and_escapes() {
        assert_eq!(
            words(r#"echo 'a b' "c d" e\ f"#),
            vec![vec![vec!["echo", "a b", "c d", "e f"]]]
        );
        assert_eq!(
            words(r#"echo "q\"q" 'it''s' "a\\b" "\n""#),
            vec![vec![vec!["echo", "q\"q", "its", "a\\b", "\\n"]]]
        );
        assert_eq!(words(r"grep 'a$' x"), vec![vec![vec!["grep", "a$", "x"]]]);
        assert_eq!(words("echo a\\\nb"), vec![vec![vec!["echo", "ab"]]]);
        assert_eq!(
            words("grep '(a|b)' f"),
            vec![vec![vec!["grep", "(a|b)", "f"]]]
        );
        assert_eq!(
            words("echo '{}' \"{x}\""),
            vec![vec![vec!["echo", "{}", "{x}"]]]
        );
    }

    #[test]
    fn globs_are_marked_and_quoted_parts_escaped() {
        let line = parse(r#"ls *.rs "*.md" src/[ab]*.txt a'*'b*"#).unwrap();
        let ws = &line.items[0].pipeline.commands[0].words;
        assert_eq!(ws[1].glob.as_deref(), Some("*.rs"));
        assert_eq!(ws[2].glob, None);
        assert_eq!(ws[3].glob.as_deref(), Some("src/[ab]*.txt"));
        assert_eq!(ws[4].glob.as_deref(), Some("a\\*b*"));
    }

    #[test]
    fn accepted_redirections() {
        let line = parse(
            "git status 2>&1 | head; ls >/dev/null; ls 2>/dev/null; ls > /dev/null; ls 1>/dev/null; ls >&2",
        )
        .unwrap();
        let r: Vec<Vec<Redirect>> = line
            .items
            .iter()
            .flat_map(|i| i.pipeline.commands.iter().map(|c| c.redirects.clone()))
            .collect();
        assert_eq!(
            r,
            vec![
                vec![Redirect::StderrToStdout],
                vec![],
                vec![Redirect::StdoutToNull],
                vec![Redirect::StderrToNull],
                vec![Redirect::StdoutToNull],
                vec![Redirect::StdoutToNull],
                vec![Redirect::StdoutToStderr]
            ]
        );
    }

    #[test]
    fn every_expansion_and_substitution_is_refused() {
        for line in [
            "echo $HOME",
            "echo ${HOME}",
            "echo $(id)",
            "echo `id`",
            "echo \"$(id)\"",
            "echo \"`id`\"",
            "echo $'\\x41'",
            "echo $((1+2))",
            "cat <(ls)",
            "diff <(ls) >(cat)",
            "echo {a,b}",
            "echo a{1..3}",
            "(ls)",
            "{ ls; }",
            "ls &",
            "cat <<EOF\nx\nEOF",
            "cat <<< hi",
            "cat < file",
            "ls > out.txt",
            "ls >> out.txt",
            "ls 2> err.txt",
            "ls &> /dev/null",
            "ls |& cat",
            "FOO=x",
            "FOO=x && ls",
            "FOO=x; ls",
            "FOO=x | ls",
            "if true; then ls; fi",
            "for f in a; do ls; done",
            "while true; do ls; done",
            "f() { ls; }",
            "function f { ls; }",
            "! ls",
            "time ls",
            "[[ -f x ]]",
            "case x in a) ls;; esac",
            "echo 'unterminated",
            "echo \"unterminated",
            "ls ;; ls",
            "; ls",
            "ls && ",
            "| ls",
            "ls | | wc",
            "ls > \"/dev/null\"",
            "",
            "   ",
        ] {
            refused(line);
        }
    }

    #[test]
    fn refusals_name_the_part_and_the_reason() {
        let e = refused("ls && echo $(cat /etc/passwd)");
        assert!(e.part.starts_with("$(cat"), "{e:?}");
        assert!(e.reason.contains('$'), "{e:?}");
        let e = refused("ls > out.txt");
        assert!(e.reason.contains("/dev/null"), "{e:?}");
        let e = refused("FOO=bar");
        assert!(e.reason.contains("assignment"), "{e:?}");
    }

    fn assignments(line: &str) -> Vec<(String, String)> {
        let parsed = parse(line).unwrap();
        parsed.items[0].pipeline.commands[0].assignments.clone()
    }

    #[test]
    fn assignments_before_a_command_are_kept_apart_as_bash_reads_them() {
        let pair = |n: &str, v: &str| (n.to_string(), v.to_string());
        assert_eq!(
            assignments("RUST_BACKTRACE=1 RUST_LOG='a b' cargo test"),
            vec![pair("RUST_BACKTRACE", "1"), pair("RUST_LOG", "a b")]
        );
        assert_eq!(
            words("RUST_BACKTRACE=1 cargo test"),
            vec![vec![vec!["cargo", "test"]]]
        );
        // The value is one word, never globbed; `=` inside it is literal.
        assert_eq!(assignments("A=*.rs=x ls"), vec![pair("A", "*.rs=x")]);
        assert_eq!(assignments("A= ls"), vec![pair("A", "")]);
        // Not assignments: a quoted or globbed name, an invalid name, or
        // after the command's name (then an argument, as in bash).
        for line in [
            "'A'=1 ls", "\\A=1 ls", "A*=1 ls", "1A=1 ls", "-A=1 ls", "=1 ls",
        ] {
            assert!(
                parse(line).map_or(true, |l| l.items[0].pipeline.commands[0]
                    .assignments
                    .is_empty()),
                "{line}"
            );
        }
        assert_eq!(assignments("ls A=1"), vec![]);
        assert_eq!(words("ls A=1"), vec![vec![vec!["ls", "A=1"]]]);
        // In each command of a pipeline.
        let parsed = parse("A=1 cargo test | B=2 tail -5").unwrap();
        let second = &parsed.items[0].pipeline.commands[1];
        assert_eq!(second.assignments, vec![pair("B", "2")]);
        // `$` and `~` stay refused in a value.
        assert!(parse("A=$HOME ls").is_err());
        assert!(parse("A=~/x ls").is_err());
    }

    #[test]
    fn newlines_and_carriage_returns_separate_commands() {
        assert_eq!(
            words("ls\rcat x"),
            vec![vec![vec!["ls"]], vec![vec!["cat", "x"]]]
        );
        assert_eq!(
            words("ls\ncat x"),
            vec![vec![vec!["ls"]], vec![vec!["cat", "x"]]]
        );
    }

    #[test]
    fn descriptor_numbers_are_read_as_bash_reads_them() {
        for line in [
            "echo x 3>/dev/null",
            "echo x 10>/dev/null",
            "echo 3>&1",
            "ls 2>&3",
        ] {
            refused(line);
        }
        assert_eq!(words("echo 3 >/dev/null"), vec![vec![vec!["echo", "3"]]]);
        assert_eq!(words("echo '3'>/dev/null"), vec![vec![vec!["echo", "3"]]]);
    }

    #[test]
    fn tilde_is_refused_where_bash_would_expand_it() {
        for line in [
            "cat ~/.ssh/id_rsa",
            "ls ~",
            "ls ~root",
            "make prefix=~/x",
            "a b:~/c",
        ] {
            let e = refused(line);
            assert!(e.reason.contains('~'), "{line}: {e:?}");
        }
        assert_eq!(
            words("echo '~' a~ \\~ x=\"~\""),
            vec![vec![vec!["echo", "~", "a~", "~", "x=~"]]]
        );
    }

    #[test]
    fn equals_signs_in_arguments_are_fine() {
        assert_eq!(
            words("git log --format=%H -n1"),
            vec![vec![vec!["git", "log", "--format=%H", "-n1"]]]
        );
        assert_eq!(words("echo a=b"), vec![vec![vec!["echo", "a=b"]]]);
    }
}
