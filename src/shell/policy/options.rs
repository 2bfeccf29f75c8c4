//! The option-table engine: reads one program's arguments the way GNU
//! `getopt_long` (and git's parse-options) would, but accepts only options
//! spelled exactly as the program's table lists them.
//!
//! `getopt_long` and git accept any unique prefix of a long option
//! (`--open` for `--open-files-in-pager`), so a list of forbidden spellings
//! can never be complete. Here an option is either in the program's table,
//! spelled in full, or the command is refused. The table also says whether an
//! option takes a value and whether that value names a path; the program's
//! operand rule says which operands are paths. Every path is handed to the
//! [`PathCheck`], and an argument it cannot classify is refused.

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

/// A rule across a program's options, checked after parsing.
pub type CrossRule = fn(&Parsed<'_>) -> Result<(), Refusal>;

/// One governed program: its options, the options refused with a reason of
/// their own, and its operands.
pub struct Program {
    pub name: &'static str,
    pub options: &'static [(&'static str, Takes)],
    /// Tables shared with other programs (git's diff and revision options).
    pub shared: &'static [&'static [(&'static str, Takes)]],
    /// Options that exist but are refused, with why (for a useful message).
    pub refused: &'static [(&'static str, &'static str)],
    pub operands: Operands,
    /// Whether `-NUM` is an option (`head -5`, `grep -3`).
    pub numbers: bool,
    /// Rules across options, checked after parsing (`diff -r` needs
    /// `--no-dereference`).
    pub rules: Option<CrossRule>,
}

/// One option as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given<'a> {
    /// The option's name as the table spells it (`-n`, `--lines`).
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

/// An option of `program` by its exact spelling.
fn lookup(program: &Program, name: &str) -> Option<(&'static str, Takes)> {
    std::iter::once(program.options)
        .chain(program.shared.iter().copied())
        .flat_map(|table| table.iter())
        .find(|(n, _)| *n == name)
        .copied()
}

fn refused_option(program: &Program, name: &str, word: &str) -> Result<(), Refusal> {
    if let Some((_, why)) = program.refused.iter().find(|(n, _)| *n == name) {
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
/// as `getopt_long` does: options may follow operands; `--` ends options.
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
                (Takes::ValueOrDefault(_), None) => match args.get(i) {
                    Some(next) if !next.starts_with('-') => {
                        i += 1;
                        Some(next.as_str())
                    }
                    _ => None,
                },
                (Takes::Value(_), None) => {
                    let Some(next) = args.get(i) else {
                        return refuse(word, format!("`{name}` needs a value"));
                    };
                    i += 1;
                    Some(next.as_str())
                }
            };
            parsed.options.push(Given { name, value, word });
            continue;
        }
        // A whole word the table lists (`-vv`, xxd's `-ps`), then `-NUM`,
        // then a cluster of single-letter options (`-rn`, `-A3`, `-nA3`).
        refused_option(program, word, word)?;
        if let Some((name, takes)) = lookup(program, word) {
            let value = match takes {
                Takes::Value(_) => {
                    let Some(next) = args.get(i) else {
                        return refuse(word, format!("`{name}` needs a value"));
                    };
                    i += 1;
                    Some(next.as_str())
                }
                Takes::ValueOrDefault(_) => match args.get(i) {
                    Some(next) if !next.starts_with('-') => {
                        i += 1;
                        Some(next.as_str())
                    }
                    _ => None,
                },
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
        for (at, c) in letters.char_indices() {
            let mut buf = [0u8; 8];
            let short = format!("-{}", c.encode_utf8(&mut buf));
            refused_option(program, &short, word)?;
            let Some((name, takes)) = lookup(program, &short) else {
                return Err(unknown(program, &short, word));
            };
            let rest = &letters[at + c.len_utf8()..];
            match takes {
                Takes::Nothing => parsed.options.push(Given {
                    name,
                    value: None,
                    word,
                }),
                Takes::Attached(_) => {
                    parsed.options.push(Given {
                        name,
                        value: (!rest.is_empty()).then_some(rest),
                        word,
                    });
                    break;
                }
                Takes::ValueOrDefault(_) if rest.is_empty() => {
                    let value = match args.get(i) {
                        Some(next) if !next.starts_with('-') => {
                            i += 1;
                            Some(next.as_str())
                        }
                        _ => None,
                    };
                    parsed.options.push(Given { name, value, word });
                    break;
                }
                Takes::Value(_) | Takes::ValueOrDefault(_) => {
                    let value = if rest.is_empty() {
                        let Some(next) = args.get(i) else {
                            return refuse(word, format!("`{name}` needs a value"));
                        };
                        i += 1;
                        next.as_str()
                    } else {
                        rest
                    };
                    parsed.options.push(Given {
                        name,
                        value: Some(value),
                        word,
                    });
                    break;
                }
            }
        }
    }
    Ok(parsed)
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
            ("-n", TEXT),
            ("--lines", TEXT),
            ("-r", FLAG),
            ("-v", FLAG),
            ("-vv", FLAG),
            ("-f", PATH),
            ("--file", PATH),
            ("--color", OPT_TEXT),
            ("-U", OPT_TEXT),
        ],
        shared: &[],
        refused: &[("-R", "follows symbolic links")],
        operands: Operands::PatternThenPaths(&["-f", "--file"]),
        numbers: true,
        rules: None,
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
}
