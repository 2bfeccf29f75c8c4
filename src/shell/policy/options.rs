//! The option-table engine: reads one program's arguments the way that
//! program does, and accepts only options spelled exactly as its table lists
//! them.
//!
//! Programs differ in two things the table says: where their options end
//! ([`OptionsEnd`]: GNU `getopt_long` reads options after operands, xxd and
//! POSIX `getopt` stop at the first operand) and how they read a word that
//! starts with `-` ([`Words`]: a cluster of letters, as getopt; one option
//! per word, as xxd). A word the policy read as an option's value but the
//! program reads as an operand is a file nobody checked (`xxd -r -p in
//! -n/x out` writes `-n/x`), so each table states what its program does.
//!
//! `getopt_long` and git accept any unique prefix of a long option
//! (`--open` for `--open-files-in-pager`), so a list of forbidden spellings
//! can never be complete. Here an option is either in the program's table,
//! spelled in full, or the command is refused. A table has a row per option,
//! its short and long spelling side by side ([`OptionRow`]), each matched
//! exactly; the row also says whether the option takes a value and whether
//! that value names a path, and the program's operand rule says which
//! operands are paths. Every path is handed to the [`PathCheck`], and an
//! argument it cannot classify is refused.

use std::path::Path;

use crate::shell::refusal::{Refusal, refuse};

/// What an option's value, or an operand, is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Not a file name (a pattern, a number, a format).
    Text,
    /// A file the program opens, following a final symlink.
    Path,
    /// A file the program looks at without following a final symlink
    /// (`ls -l link`, `stat link`).
    PathNoFollow,
}

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    Nothing,
    /// A value, attached (`-n5`, `--lines=5`) or as the next word.
    Value(Kind),
    /// A value only when attached (`--color=auto`, `-U5`); alone it is a flag.
    Attached(Kind),
    /// A value attached, or the next word unless there is none or it starts
    /// with `-` (git's `--merged [<commit>]`).
    ValueOrDefault(Kind),
}

/// Shorthands for tables.
pub const FLAG: Takes = Takes::Nothing;
pub const TEXT: Takes = Takes::Value(Kind::Text);
pub const PATH: Takes = Takes::Value(Kind::Path);
pub const OPT_TEXT: Takes = Takes::Attached(Kind::Text);
pub const TEXT_OR_DEFAULT: Takes = Takes::ValueOrDefault(Kind::Text);

/// Which operands (non-option arguments) are paths.
#[derive(Debug, Clone, Copy)]
pub enum Operands {
    /// None are accepted.
    None,
    /// Every operand is a path.
    Paths,
    /// Every operand is a path whose final symlink is not followed.
    PathsNoFollow,
    /// Paths, not followed when any of these options is given (`ls -l`).
    PathsNoFollowWith(&'static [&'static str]),
    /// No operand is a path (`echo`, `tr`).
    Texts,
    /// The first operand is a pattern unless one of these options gave it;
    /// the rest are paths (`grep`, `rg`).
    PatternThenPaths(&'static [&'static str]),
    /// At most `n` operands, all paths (a further one would be an output
    /// file, as in `uniq IN OUT`).
    AtMostPaths(usize),
    /// The first `n` operands are paths, the rest are text (`cmp A B SKIP`).
    LeadingPaths(usize),
}

/// Where a program stops reading options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionsEnd {
    /// Only at `--`: options may follow operands (GNU `getopt_long`, which
    /// permutes; git's parse-options; ripgrep's lexopt; tree's own reader).
    Dashdash,
    /// At the first operand, too: every word after it is an operand, `--`
    /// and words that start with `-` included, and its program's operand
    /// rule says what it is (xxd's own reader; POSIX `getopt` and `getopts`;
    /// GNU tools whose option string starts with `+`, as basename and tr;
    /// git's `PARSE_OPT_STOP_AT_NON_OPTION`, as in `git grep`, `git config`).
    FirstOperand,
    /// Versions differ: GNU's read options after operands; BSD's (macOS),
    /// or a script's `getopts`, stop at the first operand; and which one
    /// PATH holds is not known. After the first operand a word that starts
    /// with `-` is refused, as one version would read it as an option and
    /// the other as a file; any other word is an operand in both.
    Differs,
}

/// How a program reads a word that starts with a single `-` and is not in
/// its table as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Words {
    /// getopt and git: a cluster of letters (`-rn` is `-r -n`); a letter that
    /// takes a value takes the rest of the word (`-n5`), or else the next.
    Getopt,
    /// lexopt (ripgrep): as getopt, but a value attached after `=` is what
    /// follows it (`-f=x` names `x`, where getopt would read `=x`).
    Lexopt,
    /// tree's own reader: a letter that takes a value takes the next word,
    /// and the letters after it are more options (`-Pa x` is `-P x -a`);
    /// the options listed take digits attached instead (`-L2`).
    NextWord(&'static [&'static str]),
    /// xxd's own reader: one option per word, never a cluster (xxd reads
    /// `-rp` as `-r` alone). A letter that takes a value may have it
    /// attached (`-c8`), but only if it does not start with a letter: xxd
    /// reads `-cols8` or `-names` as a long option (`-cols`, `-name`) and
    /// takes the next word as the value.
    Whole,
}

/// A rule across a program's options, checked after parsing.
pub type CrossRule = fn(&Parsed<'_>) -> Result<(), Refusal>;

/// One option: its short spelling and its long one (`""` where it has
/// none), and what it takes. The engine matches either spelling exactly, and
/// reports the one given ([`Given::name`]); an option with more spellings
/// than two (`-q`, `--quiet`, `--silent`) takes a row per extra one. "Short"
/// is the one-dash column: a letter (`-n`), or a whole word a program reads
/// as one option (`-vv`, ripgrep's `-uu`); xxd's one-dash long options
/// (`-cols`) stand in the long column beside their letter.
pub type OptionRow = (&'static str, &'static str, Takes);

/// An option that exists but is refused: its short and long spelling (`""`
/// where it has none), and why (for a useful message).
pub type RefusedRow = (&'static str, &'static str, &'static str);

/// Command lines that show what a table means. Each runs as written
/// through the policy, as the bash tool runs a command
/// (`policy/examples.rs`), so they stay true statements of it. Only that
/// test reads them.
#[cfg_attr(not(test), allow(dead_code))]
pub struct Examples {
    /// Lines the policy accepts.
    pub allowed: &'static [&'static str],
    /// Lines it refuses, by this table or by the paths in them.
    pub refused: &'static [&'static str],
}

/// One governed program: its options, the options refused with a reason of
/// their own, and its operands.
pub struct Program {
    pub name: &'static str,
    pub options: &'static [OptionRow],
    /// Tables shared with other programs (git's diff and revision options).
    pub shared: &'static [&'static [OptionRow]],
    /// Options that exist but are refused, with why.
    pub refused: &'static [RefusedRow],
    pub operands: Operands,
    /// Whether `-NUM` is an option (`head -5`, `grep -3`).
    pub numbers: bool,
    /// Where the program stops reading options.
    pub options_end: OptionsEnd,
    /// How it reads a word of options.
    pub words: Words,
    /// Rules across options, checked after parsing (`diff -r` needs
    /// `--no-dereference`).
    pub rules: Option<CrossRule>,
    /// What it accepts and refuses, by example.
    #[cfg_attr(not(test), allow(dead_code))]
    pub examples: Examples,
}

impl Program {
    /// What most tables share: no shared tables, no refused options, every
    /// operand a path, no `-NUM`, letters read as getopt clusters, options
    /// anywhere before `--`, no cross rules. A table states its name, its
    /// options, its examples and what differs, and takes the rest with
    /// `..Program::BASE` (or a family's base built on it).
    pub const BASE: Program = Program {
        name: "",
        options: &[],
        shared: &[],
        refused: &[],
        operands: Operands::Paths,
        numbers: false,
        options_end: OptionsEnd::Dashdash,
        words: Words::Getopt,
        rules: None,
        examples: Examples {
            allowed: &[],
            refused: &[],
        },
    };

    /// The rows of its own table, then of the shared ones: the order in
    /// which a spelling is looked up.
    pub fn rows(&self) -> impl Iterator<Item = &'static OptionRow> {
        std::iter::once(self.options)
            .chain(self.shared.iter().copied())
            .flatten()
    }
}

/// One option as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given<'a> {
    /// The option's spelling as the word gave it and its row writes it
    /// (`-n` or `--lines`, never one for the other), so a rule or operand
    /// list that tests names lists every spelling it means.
    pub name: &'static str,
    pub value: Option<&'a str>,
    /// The word it came from, for messages.
    pub word: &'a str,
}

/// A program's arguments, read against its table.
#[derive(Debug, Default)]
pub struct Parsed<'a> {
    pub options: Vec<Given<'a>>,
    pub operands: Vec<&'a str>,
    /// How many operands came after `--`.
    pub after_dashdash: usize,
    /// Where `--` stood among the arguments, if it did.
    pub dashdash_at: Option<usize>,
}

impl Parsed<'_> {
    /// Whether an option was given in this spelling (`-r` is not
    /// `--recursive`: see [`Given::name`]).
    pub fn has(&self, name: &str) -> bool {
        self.options.iter().any(|o| o.name == name)
    }

    pub fn has_any(&self, names: &[&str]) -> bool {
        names.iter().any(|n| self.has(n))
    }
}

/// Decides whether a path argument stays inside the roots.
pub trait PathCheck {
    /// Err with the reason if `arg`, taken relative to `base` (itself
    /// relative to the working directory; empty for the working directory),
    /// leads outside the roots or cannot be checked. `follow_last`: whether
    /// the program follows a symlink in the final component.
    fn check(&self, base: &Path, arg: &str, follow_last: bool) -> Result<(), String>;
}

/// Reads `args` (the words after the program name) against `program`'s
/// table and checks every path in them. `base`: the directory relative
/// paths start from (empty: the working directory).
pub fn check<'a>(
    program: &Program,
    args: &'a [String],
    paths: &dyn PathCheck,
    base: &Path,
) -> Result<Parsed<'a>, Refusal> {
    if let Some(only) = help_or_version(program.name, args)? {
        return Ok(only);
    }
    let parsed = parse(program, args)?;
    if let Some(rules) = program.rules {
        rules(&parsed)?;
    }
    for given in &parsed.options {
        let kind = lookup(program, given.name).and_then(|(_, takes)| takes.kind());
        if let (Some(value), Some(kind @ (Kind::Path | Kind::PathNoFollow))) = (given.value, kind) {
            check_path(paths, base, value, kind, given.word)?;
        }
    }
    check_operands(program, &parsed, paths, base)?;
    Ok(parsed)
}

/// `--help` and `--version` only ever stand alone: nothing may follow them.
fn help_or_version<'a>(name: &str, args: &'a [String]) -> Result<Option<Parsed<'a>>, Refusal> {
    let Some(at) = args.iter().position(|a| a == "--help" || a == "--version") else {
        return Ok(None);
    };
    if args.len() == 1 {
        return Ok(Some(Parsed::default()));
    }
    refuse(
        &args[at],
        format!("`{name} {}` must be given alone", args[at]),
    )
}

impl Takes {
    fn kind(self) -> Option<Kind> {
        match self {
            Takes::Nothing => None,
            Takes::Value(k) | Takes::Attached(k) | Takes::ValueOrDefault(k) => Some(k),
        }
    }
}

/// The row's spelling equal to `name`, if either is (`""` stands for no
/// spelling and matches nothing).
fn spelled(short: &'static str, long: &'static str, name: &str) -> Option<&'static str> {
    [short, long]
        .into_iter()
        .find(|spelling| !spelling.is_empty() && *spelling == name)
}

/// An option of `program` by its exact spelling: the spelling as its table
/// writes it, and what it takes. The first row with that spelling wins.
fn lookup(program: &Program, name: &str) -> Option<(&'static str, Takes)> {
    program
        .rows()
        .find_map(|&(short, long, takes)| Some((spelled(short, long, name)?, takes)))
}

fn refused_option(program: &Program, name: &str, word: &str) -> Result<(), Refusal> {
    if let Some((_, _, why)) = program
        .refused
        .iter()
        .find(|(short, long, _)| spelled(short, long, name).is_some())
    {
        return refuse(word, format!("`{} {name}` {why}", program.name));
    }
    Ok(())
}

fn unknown(program: &Program, name: &str, word: &str) -> Refusal {
    Refusal::new(
        word,
        format!(
            "`{name}` is not an option of {} that rootbound knows to be safe; options must be \
             spelled in full (abbreviations are refused), and only listed ones are accepted",
            program.name
        ),
    )
}

/// Splits arguments into options (checked against the table) and operands,
/// as the program does: `--` ends options, and so does the first operand
/// where the program's [`OptionsEnd`] says so.
pub fn parse<'a>(program: &Program, args: &'a [String]) -> Result<Parsed<'a>, Refusal> {
    let mut parsed = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let word = args[i].as_str();
        i += 1;
        if parsed.dashdash_at.is_some() {
            parsed.operands.push(word);
            parsed.after_dashdash += 1;
            continue;
        }
        if !parsed.operands.is_empty() {
            match program.options_end {
                OptionsEnd::Dashdash => {}
                OptionsEnd::FirstOperand => {
                    parsed.operands.push(word);
                    continue;
                }
                OptionsEnd::Differs if word.starts_with('-') && word != "-" => {
                    return refuse(
                        word,
                        format!(
                            "`{word}` comes after an operand, and some versions of {} read it as \
                             an option, others as a file; give options before the operands (a \
                             file whose name starts with `-` as `./{word}`)",
                            program.name
                        ),
                    );
                }
                OptionsEnd::Differs => {
                    parsed.operands.push(word);
                    continue;
                }
            }
        }
        if word == "--" {
            parsed.dashdash_at = Some(i - 1);
            continue;
        }
        if word == "-" || !word.starts_with('-') {
            parsed.operands.push(word);
            continue;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (&word[..n.len() + 2], Some(v)),
                None => (word, None),
            };
            refused_option(program, name, word)?;
            let Some((name, takes)) = lookup(program, name) else {
                return Err(unknown(program, name, word));
            };
            let value = match (takes, attached) {
                (Takes::Nothing, None) => None,
                (Takes::Nothing, Some(_)) => {
                    return refuse(word, format!("`{name}` takes no value"));
                }
                (Takes::Attached(_), v) => v,
                (Takes::Value(_) | Takes::ValueOrDefault(_), Some(v)) => Some(v),
                (Takes::ValueOrDefault(_), None) => optional_next(args, &mut i),
                (Takes::Value(_), None) => Some(next(args, &mut i, name, word)?),
            };
            parsed.options.push(Given { name, value, word });
            continue;
        }
        // A whole word the table lists (`-vv`, xxd's `-ps`), then `-NUM`,
        // then a word of options read as the program reads it.
        refused_option(program, word, word)?;
        if let Some((name, takes)) = lookup(program, word) {
            let value = match takes {
                Takes::Value(_) => Some(next(args, &mut i, name, word)?),
                Takes::ValueOrDefault(_) => optional_next(args, &mut i),
                Takes::Nothing | Takes::Attached(_) => None,
            };
            parsed.options.push(Given { name, value, word });
            continue;
        }
        let letters = &word[1..];
        if program.numbers && letters.bytes().all(|b| b.is_ascii_digit()) {
            parsed.options.push(Given {
                name: "-NUM",
                value: Some(letters),
                word,
            });
            continue;
        }
        if program.words == Words::Whole {
            parsed.options.push(whole_word(program, word)?);
            continue;
        }
        cluster(program, args, &mut i, word, &mut parsed.options)?;
    }
    Ok(parsed)
}

/// The next word, as the value `name` needs.
fn next<'a>(args: &'a [String], i: &mut usize, name: &str, word: &str) -> Result<&'a str, Refusal> {
    let Some(next) = args.get(*i) else {
        return refuse(word, format!("`{name}` needs a value"));
    };
    *i += 1;
    Ok(next.as_str())
}

/// The next word as an optional value: taken unless it starts with `-`.
fn optional_next<'a>(args: &'a [String], i: &mut usize) -> Option<&'a str> {
    let next = args.get(*i).filter(|next| !next.starts_with('-'))?;
    *i += 1;
    Some(next.as_str())
}

/// A cluster of single-letter options (`-rn`, `-A3`, `-nA3`), read as
/// `program`'s [`Words`] say.
fn cluster<'a>(
    program: &Program,
    args: &'a [String],
    i: &mut usize,
    word: &'a str,
    options: &mut Vec<Given<'a>>,
) -> Result<(), Refusal> {
    let mut rest = &word[1..];
    while let Some(c) = rest.chars().next() {
        rest = &rest[c.len_utf8()..];
        let short = format!("-{c}");
        refused_option(program, &short, word)?;
        let Some((name, takes)) = lookup(program, &short) else {
            return Err(unknown(program, &short, word));
        };
        let value = match (takes, program.words) {
            (Takes::Nothing, _) => None,
            (Takes::Attached(_), _) => {
                options.push(Given {
                    name,
                    value: (!rest.is_empty()).then_some(rest),
                    word,
                });
                return Ok(());
            }
            (Takes::ValueOrDefault(_), _) if rest.is_empty() => optional_next(args, i),
            // tree takes the value from the next word (or digits right
            // after the letter, for the options listed) and reads on.
            (Takes::Value(_) | Takes::ValueOrDefault(_), Words::NextWord(digits)) => {
                let n = if digits.contains(&name) {
                    rest.bytes().take_while(u8::is_ascii_digit).count()
                } else {
                    0
                };
                if n > 0 {
                    let value = &rest[..n];
                    rest = &rest[n..];
                    Some(value)
                } else {
                    Some(next(args, i, name, word)?)
                }
            }
            (Takes::Value(_) | Takes::ValueOrDefault(_), words) => {
                let value = if rest.is_empty() {
                    next(args, i, name, word)?
                } else if words == Words::Lexopt {
                    rest.strip_prefix('=').unwrap_or(rest)
                } else {
                    rest
                };
                options.push(Given {
                    name,
                    value: Some(value),
                    word,
                });
                return Ok(());
            }
        };
        options.push(Given { name, value, word });
    }
    Ok(())
}

/// A word of [`Words::Whole`] the table does not list as a whole: a letter
/// that takes a value, with the value attached (`-c8`, `-n/x`).
fn whole_word<'a>(program: &Program, word: &'a str) -> Result<Given<'a>, Refusal> {
    let mut chars = word[1..].chars();
    let short = chars.next().map(|c| format!("-{c}")).unwrap_or_default();
    let rest = chars.as_str();
    refused_option(program, &short, word)?;
    match lookup(program, &short) {
        Some((name, takes)) if takes.kind().is_some() => {
            if rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
                return refuse(
                    word,
                    format!(
                        "{} reads `{word}` by its first letters, as a long option that takes the \
                         next word; give the value of `{name}` as a word of its own",
                        program.name
                    ),
                );
            }
            Ok(Given {
                name,
                value: Some(rest),
                word,
            })
        }
        _ => refuse(
            word,
            format!(
                "`{word}` is not an option of {} that rootbound knows to be safe; it reads one \
                 option per word (`-r -p`, not `-rp`), spelled in full",
                program.name
            ),
        ),
    }
}

fn check_path(
    paths: &dyn PathCheck,
    base: &Path,
    value: &str,
    kind: Kind,
    word: &str,
) -> Result<(), Refusal> {
    if kind == Kind::Text {
        return Ok(());
    }
    paths
        .check(base, value, kind == Kind::Path)
        .map_err(|why| Refusal::new(word, why))
}

fn check_operands(
    program: &Program,
    parsed: &Parsed<'_>,
    paths: &dyn PathCheck,
    base: &Path,
) -> Result<(), Refusal> {
    let ops = &parsed.operands;
    let all = |kind: Kind| -> Result<(), Refusal> {
        ops.iter()
            .try_for_each(|op| check_path(paths, base, op, kind, op))
    };
    match program.operands {
        Operands::None => match ops.first() {
            Some(op) => refuse(*op, format!("{} takes no operands", program.name)),
            None => Ok(()),
        },
        Operands::Paths => all(Kind::Path),
        Operands::PathsNoFollow => all(Kind::PathNoFollow),
        Operands::PathsNoFollowWith(options) => all(if parsed.has_any(options) {
            Kind::PathNoFollow
        } else {
            Kind::Path
        }),
        Operands::Texts => Ok(()),
        Operands::PatternThenPaths(pattern_options) => {
            let skip = usize::from(!parsed.has_any(pattern_options));
            ops.iter()
                .skip(skip)
                .try_for_each(|op| check_path(paths, base, op, Kind::Path, op))
        }
        Operands::AtMostPaths(n) => {
            if ops.len() > n {
                return refuse(
                    ops[n],
                    format!(
                        "{} takes at most {n} file operand{}; another would be an output file, \
                         which cannot be written",
                        program.name,
                        if n == 1 { "" } else { "s" }
                    ),
                );
            }
            all(Kind::Path)
        }
        Operands::LeadingPaths(n) => ops
            .iter()
            .take(n)
            .try_for_each(|op| check_path(paths, base, op, Kind::Path, op)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Paths are inside unless they start with `/` or contain `..`.
    pub struct Lexical;
    impl PathCheck for Lexical {
        fn check(&self, base: &Path, arg: &str, _follow: bool) -> Result<(), String> {
            let joined = base.join(arg);
            let s = joined.to_string_lossy();
            if s.starts_with('/') || s.contains("..") {
                Err(format!("{arg} is outside"))
            } else {
                Ok(())
            }
        }
    }

    const DEMO: Program = Program {
        name: "demo",
        options: &[
            ("-n", "--lines", TEXT),
            ("-r", "", FLAG),
            ("-v", "", FLAG),
            ("-vv", "", FLAG),
            ("-f", "--file", PATH),
            ("", "--color", OPT_TEXT),
            ("-U", "", OPT_TEXT),
        ],
        refused: &[("-R", "", "follows symbolic links")],
        operands: Operands::PatternThenPaths(&["-f", "--file"]),
        numbers: true,
        ..Program::BASE
    };

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    fn ok(line: &str) -> Vec<(String, Option<String>)> {
        let args = words(line);
        let parsed = check(&DEMO, &args, &Lexical, Path::new("")).unwrap();
        parsed
            .options
            .iter()
            .map(|g| (g.name.to_string(), g.value.map(str::to_string)))
            .collect()
    }

    fn refused(line: &str) -> Refusal {
        let args = words(line);
        check(&DEMO, &args, &Lexical, Path::new("")).expect_err(line)
    }

    #[test]
    fn options_are_read_like_getopt_long() {
        assert_eq!(
            ok("-rn 5 pat x"),
            [("-r".into(), None), ("-n".into(), Some("5".into()))]
        );
        assert_eq!(ok("-n5 pat"), [("-n".into(), Some("5".into()))]);
        assert_eq!(ok("--lines=5 pat"), [("--lines".into(), Some("5".into()))]);
        assert_eq!(ok("--lines 5 pat"), [("--lines".into(), Some("5".into()))]);
        assert_eq!(ok("pat x -r"), [("-r".into(), None)]);
        assert_eq!(ok("-vv pat"), [("-vv".into(), None)]);
        assert_eq!(ok("-12 pat"), [("-NUM".into(), Some("12".into()))]);
        assert_eq!(ok("--color pat"), [("--color".into(), None)]);
        assert_eq!(
            ok("--color=never pat"),
            [("--color".into(), Some("never".into()))]
        );
        assert_eq!(ok("-U3 pat"), [("-U".into(), Some("3".into()))]);
        // After `--` everything is an operand.
        assert_eq!(ok("pat -- -r"), []);
    }

    #[test]
    fn abbreviations_and_unknown_options_are_refused() {
        for line in [
            "--line=5 pat",
            "--li 5 pat",
            "--colo pat",
            "-x pat",
            "-rx pat",
        ] {
            let e = refused(line);
            assert!(e.reason.contains("spelled in full"), "{line}: {e:?}");
        }
        assert!(refused("-R pat").reason.contains("follows symbolic links"));
        assert!(refused("-rR pat").reason.contains("follows symbolic links"));
        assert!(refused("-r --lines").reason.contains("needs a value"));
        assert!(refused("-r=1 pat").reason.contains("not an option"));
    }

    #[test]
    fn paths_in_values_and_operands_are_checked() {
        assert!(refused("pat ../x").reason.contains("outside"));
        assert!(refused("-f/etc/x").reason.contains("outside"));
        assert!(refused("--file=/etc/x").reason.contains("outside"));
        assert!(refused("--file /etc/x").reason.contains("outside"));
        // The pattern is text, unless -f gave the patterns.
        assert_eq!(ok("/etc/ x"), []);
        assert!(refused("-f p /etc/x").reason.contains("outside"));
    }

    #[test]
    fn help_and_version_stand_alone() {
        assert_eq!(ok("--help"), []);
        assert_eq!(ok("--version"), []);
        assert!(refused("--help pat").reason.contains("alone"));
        assert!(refused("pat --version").reason.contains("alone"));
    }

    /// `line` read by `program` (DEMO with other ways of reading): its
    /// options, and its operands.
    fn read(program: &Program, line: &str) -> Result<(Vec<String>, Vec<String>), Refusal> {
        let args = words(line);
        let parsed = check(program, &args, &Lexical, Path::new(""))?;
        let options = parsed
            .options
            .iter()
            .map(|g| match g.value {
                Some(v) => format!("{}={v}", g.name),
                None => g.name.to_string(),
            })
            .collect();
        let operands = parsed.operands.iter().map(|o| o.to_string()).collect();
        Ok((options, operands))
    }

    #[test]
    fn the_first_operand_ends_options_where_the_program_says_so() {
        let first = Program {
            options_end: OptionsEnd::FirstOperand,
            ..DEMO
        };
        assert_eq!(
            read(&first, "-r pat x -r -n 5").unwrap(),
            (vec!["-r".into()], words("pat x -r -n 5"))
        );
        // A word after the operand that looks like an option is an operand,
        // checked by the operand rule: here a path.
        assert!(
            read(&first, "pat x -n/../y")
                .unwrap_err()
                .reason
                .contains("outside")
        );
        // `--` after an operand is an operand too; before one it ends options.
        assert_eq!(read(&first, "pat -- x").unwrap().1, words("pat -- x"));
        assert_eq!(read(&first, "-- -r x").unwrap(), (vec![], words("-r x")));
        // The getopt reading of DEMO takes the same words as options.
        assert_eq!(
            ok("pat x -r -n 5"),
            [("-r".into(), None), ("-n".into(), Some("5".into()))]
        );
    }

    #[test]
    fn where_versions_differ_an_option_after_an_operand_is_refused() {
        let differs = Program {
            options_end: OptionsEnd::Differs,
            ..DEMO
        };
        for line in ["pat x -r", "pat -n 5", "pat -- x", "pat --lines=5"] {
            let e = read(&differs, line).unwrap_err();
            assert!(e.reason.contains("some versions"), "{line}: {e:?}");
        }
        assert_eq!(
            read(&differs, "-r pat - x").unwrap(),
            (vec!["-r".into()], words("pat - x"))
        );
        assert_eq!(read(&differs, "-r -- pat -x").unwrap().1, words("pat -x"));
    }

    #[test]
    fn lexopt_drops_the_equals_sign_of_an_attached_value() {
        let lexopt = Program {
            words: Words::Lexopt,
            ..DEMO
        };
        assert_eq!(read(&lexopt, "-f=x").unwrap().0, ["-f=x"]);
        assert_eq!(read(&lexopt, "-rf=x").unwrap().0, ["-r", "-f=x"]);
        assert!(
            read(&lexopt, "-f=/etc/x")
                .unwrap_err()
                .reason
                .contains("outside")
        );
        // getopt keeps it: `=/etc/x` is a relative name.
        assert_eq!(ok("-f=/etc/x"), [("-f".into(), Some("=/etc/x".into()))]);
    }

    #[test]
    fn tree_reads_values_from_the_next_word_and_reads_on() {
        let tree = Program {
            words: Words::NextWord(&["-n"]),
            ..DEMO
        };
        // `-fr` is `-f NEXT -r`: the next word is the file, not `r`.
        assert_eq!(
            read(&tree, "-fr p x").unwrap(),
            (vec!["-f=p".into(), "-r".into()], words("x"))
        );
        assert!(
            read(&tree, "-fr /etc/x")
                .unwrap_err()
                .reason
                .contains("outside")
        );
        // Digits right after a listed letter are its value; the rest reads on.
        assert_eq!(read(&tree, "-n5r pat").unwrap().0, ["-n=5", "-r"]);
        assert_eq!(read(&tree, "-rn 5 pat").unwrap().0, ["-r", "-n=5"]);
        assert!(
            read(&tree, "-fR x")
                .unwrap_err()
                .reason
                .contains("follows symbolic links")
        );
    }

    #[test]
    fn a_program_that_reads_one_option_per_word_gets_no_clusters() {
        let whole = Program {
            words: Words::Whole,
            ..DEMO
        };
        assert_eq!(
            read(&whole, "-r -vv -n5 pat").unwrap().0,
            ["-r", "-vv", "-n=5"]
        );
        assert_eq!(read(&whole, "-n/x pat").unwrap().0, ["-n=/x"]);
        assert_eq!(read(&whole, "-n -r pat").unwrap().0, ["-n=-r"]);
        // xxd reads `-rn` as `-r` alone, and `-nfoo` as a long option `-n…`
        // that takes the next word: neither is read as the table would.
        let e = read(&whole, "-rn 5 pat").unwrap_err();
        assert!(e.reason.contains("one option per word"), "{e:?}");
        let e = read(&whole, "-nfoo pat").unwrap_err();
        assert!(e.reason.contains("word of its own"), "{e:?}");
        assert!(
            read(&whole, "-Rx pat")
                .unwrap_err()
                .reason
                .contains("follows symbolic links")
        );
    }
}
