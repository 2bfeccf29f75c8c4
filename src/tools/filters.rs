//! Parameters the discovery tools share (list_directory, glob, search,
//! read_many_files): the ignore-file switches and Gemini CLI's spellings of
//! them. Kept here so that no tool imports another.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::tools::params::Alias;

/// Gemini CLI's nested form of the ignore switches (schema only: the
/// aliases fold its fields into the flat switches).
#[derive(Debug, JsonSchema)]
#[allow(dead_code, reason = "only its schema is used; aliases read the values")]
pub struct FileFilteringOptions {
    /// Whether to leave out what .gitignore files (and .git/info/exclude)
    /// ignore; they apply only inside a git work tree. Default true.
    pub respect_git_ignore: Option<bool>,
    /// Whether to leave out what the workspace root's .geminiignore ignores.
    /// Default true.
    pub respect_gemini_ignore: Option<bool>,
}

/// Accepted by every discovery tool, advertised by some dialects only.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct IgnoreSwitches {
    /// Whether to leave out what the workspace root's .geminiignore ignores.
    /// Default true.
    pub respect_gemini_ignore: Option<bool>,
}

/// The nested switches, accepted (and type-checked) by every discovery tool.
#[derive(Debug, JsonSchema)]
#[allow(dead_code, reason = "only its schema is used; aliases read the values")]
pub struct NestedSwitches {
    /// The ignore switches, nested as Gemini CLI spells them.
    pub file_filtering_options: Option<FileFilteringOptions>,
}

/// Accepted by search, which advertises no git switch of its own.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GitSwitch {
    /// Whether to leave out what .gitignore files ignore. Default true.
    pub respect_git_ignore: Option<bool>,
}

/// The nested spellings, folded into the flat switches.
pub const FILE_FILTERING: [Alias; 2] = [
    Alias {
        from: "file_filtering_options.respect_git_ignore",
        to: "respect_git_ignore",
    },
    Alias {
        from: "file_filtering_options.respect_gemini_ignore",
        to: "respect_gemini_ignore",
    },
];

/// `dir_path` for `path`, and the nested switches (list_directory, glob).
pub const DIR_AND_FILTERS: &[Alias] = &[
    Alias {
        from: "dir_path",
        to: "path",
    },
    FILE_FILTERING[0],
    FILE_FILTERING[1],
];
