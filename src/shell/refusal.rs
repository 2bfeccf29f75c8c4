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
}

impl Refusal {
    pub fn new(part: impl Into<String>, reason: impl Into<String>) -> Refusal {
        Refusal {
            part: part.into(),
            reason: reason.into(),
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
