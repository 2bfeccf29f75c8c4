//! Windows path semantics, as pure functions on text.
//!
//! The Windows guard (`guard/windows.rs`) reads every path through this
//! module: which spellings name the same place (`C:/x`, `C:\x`, `c:\X`,
//! `\\?\C:\x`), which are refused because Windows would not open them as
//! spelled (alternate data streams, device names, trailing dots and spaces),
//! and how a path is resolved to where it really is. Nothing here touches the
//! file system: resolution asks a [`Lookup`], which the Windows guard answers
//! with handles and `GetFinalPathNameByHandleW`, and the tests answer with a
//! table. So every rule is tested on every platform, Linux CI included.
//!
//! Rules, in the words Windows uses:
//! - A path starts with a drive (`C:\`) or a share (`\\server\share\`); the
//!   verbatim forms `\\?\C:\` and `\\?\UNC\server\share\` name the same
//!   places. `/` separates like `\`, except in verbatim paths (there it
//!   would be part of a name, which Windows refuses).
//! - `C:x` (relative to drive C's current directory, which the server does
//!   not have) and the device namespace (`\\.\`, `\\?\GLOBALROOT`, `\??\`,
//!   volume GUIDs) are refused.
//! - `..` is applied to the spelling before anything is looked up, as the
//!   Win32 layer does, and never climbs above the drive or share.
//! - Names compare case-insensitively, per UTF-16 unit of the basic plane,
//!   as NTFS's upcase table does: `C:\Root` contains `c:\root\x`.
//! - In a request, a name may not hold `:` (an alternate data stream,
//!   `file.txt::$DATA`, `file:stream`), `<>"|?*` or control characters, end
//!   in a dot or a space (Windows drops them, so `a.txt.` would open
//!   `a.txt`), or be a device name (`CON`, `PRN`, `AUX`, `NUL`, `COM0`-`COM9`,
//!   `LPT0`-`LPT9`, also with an extension, `nul.txt`). Names the file system
//!   reports (a listing, a final path) are taken as they are.
//! - 8.3 short names (`PROGRA~1`) are aliases the file system resolves; a
//!   path's real location is read from the handle of what it opens (long
//!   names, true case), and containment is decided on that, never on the
//!   spelling.

use std::io;

/// Where an absolute path starts.
#[derive(Debug, Clone)]
pub enum Prefix {
    /// A drive, `C:`; the letter is kept upper-case.
    Disk(char),
    /// A share, `\\server\share`, as spelled (compared case-insensitively).
    Unc { server: String, share: String },
}

impl Prefix {
    fn same(&self, other: &Prefix) -> bool {
        match (self, other) {
            (Prefix::Disk(a), Prefix::Disk(b)) => a == b,
            (
                Prefix::Unc { server, share },
                Prefix::Unc {
                    server: server2,
                    share: share2,
                },
            ) => same_name(server, server2) && same_name(share, share2),
            _ => false,
        }
    }
}

/// An absolute Windows path: a prefix and names, with `.` and `..` applied.
/// Deliberately not `PartialEq`: equality is case-insensitive ([`WinPath::same`]).
#[derive(Debug, Clone)]
pub struct WinPath {
    prefix: Prefix,
    names: Vec<String>,
}

/// How strictly the names of a path are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Names {
    /// A path from a request: every name must be one Windows opens as spelled.
    Request,
    /// A path the file system reported (a final path, a listed name): taken
    /// as it is.
    Reported,
}

/// Why a path is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// `C:x`: relative to a drive's current directory.
    DriveRelative(char),
    /// `\\.\...`, `\\?\` without a drive or `UNC\`, `\??\`.
    DeviceNamespace,
    /// `\\server` without a share.
    IncompleteShare,
    /// A name with `:`: an alternate data stream.
    Stream(String),
    /// A device name (`NUL`, `COM1`, `nul.txt`, ...).
    Reserved(String),
    /// A name ending in `.` or a space, which Windows drops.
    TrailingDotOrSpace(String),
    /// A character Windows does not allow in names.
    BadCharacter(String, char),
    /// `.` or `..` in a verbatim path, where Windows does not apply them.
    DotInVerbatim,
    /// A relative path with nothing to resolve it against.
    NotAbsolute,
}

impl Problem {
    /// The refusal as a model reads it; `raw` is the path as requested.
    pub fn message(&self, raw: &str) -> String {
        match self {
            Problem::DriveRelative(letter) => format!(
                "The path '{raw}' is relative to the current directory of drive {letter}:; give \
                 an absolute path ({letter}:\\...) or one relative to the workspace."
            ),
            Problem::DeviceNamespace => format!(
                "The path '{raw}' is in the Windows device namespace; only drive paths \
                 (C:\\...) and share paths (\\\\server\\share\\...) are accepted."
            ),
            Problem::IncompleteShare => {
                format!("The path '{raw}' names a server but no share (\\\\server\\share\\...).")
            }
            Problem::Stream(name) => format!(
                "The path '{raw}' names an alternate data stream ('{name}'): ':' is not \
                 allowed in a file name."
            ),
            Problem::Reserved(name) => format!(
                "The path '{raw}' uses '{name}', a reserved device name on Windows; choose \
                 another name."
            ),
            Problem::TrailingDotOrSpace(name) => format!(
                "The path '{raw}' has a name ending in a dot or a space ('{name}'), which \
                 Windows drops; name the file without it."
            ),
            Problem::BadCharacter(name, c) => format!(
                "The path '{raw}' has the character {c:?} in '{name}', which Windows does not \
                 allow in file names."
            ),
            Problem::DotInVerbatim => format!(
                "The path '{raw}' is a verbatim path (\\\\?\\) with '.' or '..' in it, which \
                 Windows does not resolve there."
            ),
            Problem::NotAbsolute => format!("The path '{raw}' is not absolute."),
        }
    }
}

/// How a spelling starts.
enum Start<'a> {
    Absolute {
        prefix: Prefix,
        rest: &'a str,
        verbatim: bool,
    },
    /// `\x`: the drive (or share) of the base.
    Rooted(&'a str),
    Relative(&'a str),
}

fn is_separator(c: char) -> bool {
    c == '\\' || c == '/'
}

/// `C:` at the start of `s`: the upper-case letter and what follows.
fn drive(s: &str) -> Option<(char, &str)> {
    let mut chars = s.chars();
    let letter = chars.next().filter(char::is_ascii_alphabetic)?;
    (chars.next() == Some(':')).then(|| (letter.to_ascii_uppercase(), &s[2..]))
}

/// `server\share\rest` → server, share and `\rest`.
fn share(s: &str, verbatim: bool) -> Result<(String, String, &str), Problem> {
    let separates = |c: char| c == '\\' || (!verbatim && c == '/');
    let (server, after) = s.split_once(separates).unwrap_or((s, ""));
    let (share, _) = after.split_once(separates).unwrap_or((after, ""));
    if server.is_empty() || share.is_empty() {
        return Err(Problem::IncompleteShare);
    }
    let rest = &after[share.len()..];
    Ok((server.to_string(), share.to_string(), rest))
}

fn split_start(raw: &str) -> Result<Start<'_>, Problem> {
    if let Some(rest) = raw.strip_prefix(r"\\?\") {
        if rest.len() >= 4 && rest[..4].eq_ignore_ascii_case(r"UNC\") {
            let (server, share, rest) = share(&rest[4..], true)?;
            return Ok(Start::Absolute {
                prefix: Prefix::Unc { server, share },
                rest,
                verbatim: true,
            });
        }
        if let Some((letter, rest)) = drive(rest)
            && (rest.is_empty() || rest.starts_with('\\'))
        {
            return Ok(Start::Absolute {
                prefix: Prefix::Disk(letter),
                rest,
                verbatim: true,
            });
        }
        return Err(Problem::DeviceNamespace);
    }
    if raw.starts_with(r"\??\") {
        return Err(Problem::DeviceNamespace);
    }
    let mut chars = raw.chars();
    let (first, second, third, fourth) = (chars.next(), chars.next(), chars.next(), chars.next());
    if first.is_some_and(is_separator) && second.is_some_and(is_separator) {
        // `\\.\`, `//./`, `//?/`: the device namespace in other spellings.
        if matches!(third, Some('.' | '?')) && fourth.is_none_or(is_separator) {
            return Err(Problem::DeviceNamespace);
        }
        let (server, share, rest) = share(&raw[2..], false)?;
        return Ok(Start::Absolute {
            prefix: Prefix::Unc { server, share },
            rest,
            verbatim: false,
        });
    }
    if let Some((letter, rest)) = drive(raw) {
        if !rest.starts_with(is_separator) {
            return Err(Problem::DriveRelative(letter));
        }
        return Ok(Start::Absolute {
            prefix: Prefix::Disk(letter),
            rest,
            verbatim: false,
        });
    }
    if first.is_some_and(is_separator) {
        return Ok(Start::Rooted(raw));
    }
    Ok(Start::Relative(raw))
}

/// Parses `raw` into an absolute path: relative and rooted (`\x`) spellings
/// are resolved against `base` (the primary root), `.` and `..` are applied,
/// and with [`Names::Request`] every name is checked.
pub fn parse(raw: &str, base: Option<&WinPath>, names: Names) -> Result<WinPath, Problem> {
    let (mut path, rest, verbatim) = match split_start(raw)? {
        Start::Absolute {
            prefix,
            rest,
            verbatim,
        } => (
            WinPath {
                prefix,
                names: Vec::new(),
            },
            rest,
            verbatim,
        ),
        Start::Rooted(rest) => {
            let base = base.ok_or(Problem::NotAbsolute)?;
            let path = WinPath {
                prefix: base.prefix.clone(),
                names: Vec::new(),
            };
            (path, rest, false)
        }
        Start::Relative(rest) => (base.ok_or(Problem::NotAbsolute)?.clone(), rest, false),
    };
    let separates = |c: char| c == '\\' || (!verbatim && c == '/');
    for name in rest.split(separates) {
        match name {
            "" => continue,
            "." | ".." if verbatim && names == Names::Request => {
                return Err(Problem::DotInVerbatim);
            }
            "." => continue,
            ".." => {
                // Win32 stops at the drive or share: `C:\..` is `C:\`.
                path.names.pop();
                continue;
            }
            _ => {}
        }
        if names == Names::Request {
            check_name(name)?;
        }
        path.names.push(name.to_string());
    }
    Ok(path)
}

/// Whether Windows opens `name` as spelled, as a file or directory name.
pub fn check_name(name: &str) -> Result<(), Problem> {
    if let Some(c) = name
        .chars()
        .find(|&c| c < ' ' || matches!(c, '<' | '>' | '"' | '|' | '?' | '*' | '/' | '\\'))
    {
        return Err(Problem::BadCharacter(name.to_string(), c));
    }
    if name.contains(':') {
        return Err(Problem::Stream(name.to_string()));
    }
    if name.ends_with('.') || name.ends_with(' ') {
        return Err(Problem::TrailingDotOrSpace(name.to_string()));
    }
    if is_device_name(name) {
        return Err(Problem::Reserved(name.to_string()));
    }
    Ok(())
}

/// `CON`, `PRN`, `AUX`, `NUL`, `CONIN$`, `CONOUT$`, `COM0`-`COM9`,
/// `LPT0`-`LPT9` (and with superscript digits), in any case, with or
/// without an extension or trailing spaces before it: Win32 maps them to
/// devices in every directory.
pub fn is_device_name(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ');
    let upper = stem.to_uppercase();
    if matches!(
        upper.as_str(),
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
    ) {
        return true;
    }
    let Some(number) = upper
        .strip_prefix("COM")
        .or_else(|| upper.strip_prefix("LPT"))
    else {
        return false;
    };
    let mut digits = number.chars();
    matches!(
        (digits.next(), digits.next()),
        (Some('0'..='9' | '¹' | '²' | '³'), None)
    )
}

/// The upper-case form of a character as NTFS compares names: the simple
/// mapping, for characters of the basic plane only (NTFS's upcase table has
/// one entry per UTF-16 unit), and only where it is one character.
fn upcase(c: char) -> char {
    if u32::from(c) > 0xFFFF {
        return c;
    }
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) if u32::from(u) <= 0xFFFF => u,
        _ => c,
    }
}

/// Whether two names are the same name to Windows.
pub fn same_name(a: &str, b: &str) -> bool {
    a.chars().map(upcase).eq(b.chars().map(upcase))
}

impl WinPath {
    /// The drive or share root of this path (`C:\`).
    pub fn prefix_root(&self) -> WinPath {
        WinPath {
            prefix: self.prefix.clone(),
            names: Vec::new(),
        }
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The path with only its first `count` names.
    pub fn truncated(&self, count: usize) -> WinPath {
        WinPath {
            prefix: self.prefix.clone(),
            names: self.names[..count.min(self.names.len())].to_vec(),
        }
    }

    pub fn join(&self, name: &str) -> WinPath {
        let mut path = self.clone();
        path.names.push(name.to_string());
        path
    }

    /// The same place, compared as Windows compares names.
    pub fn same(&self, other: &WinPath) -> bool {
        self.names.len() == other.names.len() && self.starts_with(other)
    }

    /// Whether `base` is this path or one of its ancestors, by whole names
    /// compared case-insensitively (`C:\Root` contains `c:\root\x`, not
    /// `C:\Root_evil`).
    pub fn starts_with(&self, base: &WinPath) -> bool {
        self.prefix.same(&base.prefix)
            && base.names.len() <= self.names.len()
            && base
                .names
                .iter()
                .zip(&self.names)
                .all(|(a, b)| same_name(a, b))
    }

    /// The spelling people read: `C:\dir\file`, `\\server\share\dir`.
    pub fn display(&self) -> String {
        let prefix = match &self.prefix {
            Prefix::Disk(letter) => format!("{letter}:"),
            Prefix::Unc { server, share } => format!(r"\\{server}\{share}"),
        };
        self.with_names(prefix)
    }

    /// The spelling Windows takes literally (no `..`, no device names, no
    /// length limit): `\\?\C:\dir\file`, `\\?\UNC\server\share\dir`.
    pub fn verbatim(&self) -> String {
        let prefix = match &self.prefix {
            Prefix::Disk(letter) => format!(r"\\?\{letter}:"),
            Prefix::Unc { server, share } => format!(r"\\?\UNC\{server}\{share}"),
        };
        self.with_names(prefix)
    }

    /// `prefix` followed by each name after a backslash (just a backslash
    /// for the volume's root).
    fn with_names(&self, mut out: String) -> String {
        if self.names.is_empty() {
            out.push('\\');
        }
        for name in &self.names {
            out.push('\\');
            out.push_str(name);
        }
        out
    }
}

/// A `file://` URI's path as Windows spells it: `/C:/x` is `C:/x`.
pub fn from_uri_path(path: &str) -> &str {
    match path.strip_prefix('/') {
        Some(rest) if drive(rest).is_some() => rest,
        _ => path,
    }
}

/// What is at a path, its last name not followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    Directory,
    File,
    /// A symbolic link or a junction (a name-surrogate reparse point).
    Link,
}

/// The file system as resolution sees it.
pub trait Lookup {
    /// What is known of an existing object (its metadata).
    type Found;

    /// Where `path` really is, every link on the way followed, as the file
    /// system names the handle it opens (long names, true case), and what is
    /// there. An error of kind `NotFound` when it, or the target of a link on
    /// the way, does not exist.
    fn final_path(&self, path: &WinPath) -> io::Result<(WinPath, Self::Found)>;

    fn is_dir(found: &Self::Found) -> bool;

    /// What is at `path`, its last name not followed; None if nothing is.
    fn entry(&self, path: &WinPath) -> io::Result<Option<Entry>>;
}

/// Windows' `ERROR_CANT_RESOLVE_FILENAME`: too many links, a loop.
pub const LOOP_ERROR: i32 = 1921;

/// Where a path really is.
#[derive(Debug, Clone)]
pub enum Resolution<Found> {
    Exists {
        real: WinPath,
        found: Found,
    },
    /// Its parents up to the first missing name exist; `real` is the real
    /// location of the deepest existing one with the missing names after it.
    Missing {
        real: WinPath,
    },
}

/// Why a path cannot be resolved.
#[derive(Debug)]
pub enum Fault {
    /// A link on the way leads nowhere (wherever it points).
    Dangles,
    /// Links on the way form a loop.
    Loops,
    Io(io::Error),
}

fn fault(e: io::Error) -> Fault {
    if e.raw_os_error() == Some(LOOP_ERROR) {
        Fault::Loops
    } else {
        Fault::Io(e)
    }
}

/// Something on the way is missing (or a file stands where a directory is
/// needed), as opposed to a failure.
fn is_missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Resolves `path` (already absolute and checked) to where it really is.
/// The whole path is looked up in one go; only when something on the way is
/// missing are its names looked at one by one, to tell a missing name from
/// a dangling link (refused, since a later write could go through it). The
/// caller decides containment on the real location.
pub fn resolve<L: Lookup>(path: &WinPath, fs: &L) -> Result<Resolution<L::Found>, Fault> {
    match fs.final_path(path) {
        Ok((real, found)) => return Ok(Resolution::Exists { real, found }),
        Err(e) if is_missing(&e) => {}
        Err(e) => return Err(fault(e)),
    }
    let count = path.names.len();
    for at in 0..count {
        let here = path.truncated(at + 1);
        let more_follow = at + 1 < count;
        match fs.entry(&here).map_err(fault)? {
            None => return missing_from(path, at, fs),
            Some(Entry::Link) => match fs.final_path(&here) {
                Ok((_, found)) if more_follow && !L::is_dir(&found) => {
                    return missing_from(path, at + 1, fs);
                }
                Ok(_) => {}
                Err(e) if is_missing(&e) => return Err(Fault::Dangles),
                Err(e) => return Err(fault(e)),
            },
            Some(Entry::File) if more_follow => return missing_from(path, at + 1, fs),
            Some(_) => {}
        }
    }
    // Everything exists after all: created since the first look.
    let (real, found) = fs.final_path(path).map_err(fault)?;
    Ok(Resolution::Exists { real, found })
}

/// `path`'s first `existing` names exist, the rest do not.
fn missing_from<L: Lookup>(
    path: &WinPath,
    existing: usize,
    fs: &L,
) -> Result<Resolution<L::Found>, Fault> {
    let (mut real, _) = fs.final_path(&path.truncated(existing)).map_err(fault)?;
    real.names.extend(path.names[existing..].iter().cloned());
    Ok(Resolution::Missing { real })
}

#[cfg(test)]
mod tests;
