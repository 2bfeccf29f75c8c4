//! The one reason a command line does not run, whichever layer refused it:
//! the parser, glob expansion, the policy or git's repository checks.

use std::fmt;

/// Why a command was refused: the offending part of the line and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The offending part of the command line, as the caller wrote it (or
    /// as it was expanded). Never a name the path guard refused.
    pub part: String,
    /// What is wrong, and where useful what to do instead.
    pub reason: String,
    /// When only the allow list stands in the way, every command of the
    /// line it refused; the user may approve them (docs/security.md,
    /// "Asking the user"). Empty for every other refusal: no approval makes
    /// a line with a path outside the roots, a denied command, an option a
    /// table refuses or a syntax error run.
    pub asks: Vec<Ask>,
}

/// A command the allow list refused and the user could approve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    /// The command's words, after glob expansion, exactly as they would run.
    pub argv: Vec<String>,
    /// The allow entry that would admit it: the program and its
    /// subcommand (`cargo build`), as `--bash-allow` takes it.
    pub prefix: Vec<String>,
    /// Why the policy refused it, in the policy's words.
    pub reason: String,
}

impl Refusal {
    pub fn new(part: impl Into<String>, reason: impl Into<String>) -> Refusal {
        Refusal {
            part: part.into(),
            reason: reason.into(),
            asks: Vec::new(),
        }
    }

    /// A refusal the user may overrule: `argv` is not on the allow list.
    pub fn askable(
        part: impl Into<String>,
        argv: &[String],
        prefix: Vec<String>,
        reason: impl Into<String>,
    ) -> Refusal {
        let reason = reason.into();
        Refusal {
            part: part.into(),
            reason: reason.clone(),
            asks: vec![Ask {
                argv: argv.to_vec(),
                prefix,
                reason,
            }],
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.part, self.reason)
    }
}

/// `Err(Refusal)` in one call.
pub fn refuse<T>(part: impl Into<String>, reason: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal::new(part, reason))
}
