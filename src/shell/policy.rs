//! What may run (SECURITY.md 2), decided on fully parsed, expanded argv.
//! Pure: the only outside knowledge is the [`PathCheck`] it is given.
//!
//! A command runs if its words match an allow entry word by word (`git
//! status` admits `git status -s`, `ls` does not admit `lsof`), no deny entry
//! matches, it is not an interpreter or wrapper (in read-only mode), its
//! flags pass the rules of its program (unknown flags of governed programs
//! are refused), and every argument that could name a path stays inside the
//! roots.

use crate::config::{BashConfig, BashMode};

/// Programs that run in read-only mode.
pub const READ_ONLY_PROGRAMS: &[&str] = &[
    "cat",
    "head",
    "tail",
    "wc",
    "ls",
    "tree",
    "find",
    "grep",
    "rg",
    "egrep",
    "fgrep",
    "file",
    "stat",
    "du",
    "df",
    "pwd",
    "echo",
    "printf",
    "basename",
    "dirname",
    "realpath",
    "sort",
    "uniq",
    "cut",
    "tr",
    "diff",
    "cmp",
    "comm",
    "nl",
    "od",
    "xxd",
    "sha256sum",
    "md5sum",
    "true",
    "false",
    "which",
    "git",
];

/// git subcommands that only read.
pub const READ_ONLY_GIT: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "grep",
    "blame",
    "ls-files",
    "rev-parse",
    "branch",
];

/// Programs that run other programs or code: never in read-only mode.
pub const INTERPRETERS_AND_WRAPPERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "fish",
    "csh",
    "tcsh",
    "busybox",
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "deno",
    "bun",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "env",
    "xargs",
    "timeout",
    "nice",
    "nohup",
    "setsid",
    "stdbuf",
    "time",
    "watch",
    "eval",
    "exec",
    "command",
    "builtin",
    "sudo",
    "su",
    "doas",
    "chroot",
    "unshare",
    "nsenter",
    "flock",
    "ionice",
    "taskset",
    "script",
    "parallel",
    "strace",
    "gdb",
    "expect",
    "osascript",
    "pkexec",
    "runuser",
];

/// Why a command was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The offending part of the command line.
    pub part: String,
    pub reason: String,
}

fn refuse<T>(part: impl Into<String>, reason: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal {
        part: part.into(),
        reason: reason.into(),
    })
}

/// Decides whether an argument names a place outside the roots.
pub trait PathCheck {
    /// Err with the reason if `arg`, taken as a path relative to the
    /// working directory, leads outside the roots.
    fn check(&self, arg: &str) -> Result<(), String>;
}

/// The allow and deny lists of one configuration.
#[derive(Debug, Clone)]
pub struct Policy {
    mode: BashMode,
    /// Entries as word lists; `from_user` marks `--bash-allow` ones.
    allow: Vec<(Vec<String>, bool)>,
    deny: Vec<Vec<String>>,
}

fn split_words(entry: &str) -> Vec<String> {
    entry.split_whitespace().map(str::to_string).collect()
}

impl Policy {
    pub fn new(config: &BashConfig) -> Policy {
        let mut allow: Vec<(Vec<String>, bool)> = READ_ONLY_PROGRAMS
            .iter()
            .map(|p| (vec![p.to_string()], false))
            .collect();
        if config.mode == BashMode::Allowlist {
            allow.extend(
                config
                    .allow
                    .iter()
                    .map(|e| (split_words(e), true))
                    .filter(|(w, _)| !w.is_empty()),
            );
        }
        Policy {
            mode: config.mode,
            allow,
            deny: config
                .deny
                .iter()
                .map(|e| split_words(e))
                .filter(|w| !w.is_empty())
                .collect(),
        }
    }

    /// What is allowed, for refusal messages.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "{} mode allows: {}, and git {} (read-only).",
            self.mode.as_str(),
            READ_ONLY_PROGRAMS
                .iter()
                .filter(|p| **p != "git")
                .copied()
                .collect::<Vec<_>>()
                .join(", "),
            READ_ONLY_GIT.join("/")
        );
        let extra: Vec<String> = self
            .allow
            .iter()
            .filter(|(_, user)| *user)
            .map(|(w, _)| w.join(" "))
            .collect();
        if !extra.is_empty() {
            out.push_str(&format!(" Also allowed: {}.", extra.join(", ")));
        }
        if !self.deny.is_empty() {
            let deny: Vec<String> = self.deny.iter().map(|w| w.join(" ")).collect();
            out.push_str(&format!(" Denied: {}.", deny.join(", ")));
        }
        out.push_str(
            " Combine commands with |, &&, || and ; only; no $, backticks, subshells, or \
             redirections other than >/dev/null, 2>/dev/null and 2>&1.",
        );
        out
    }

    /// Checks one simple command's final argv (after glob expansion).
    pub fn check(&self, argv: &[String], paths: &dyn PathCheck) -> Result<(), Refusal> {
        let Some(program) = argv.first() else {
            return refuse("", "empty command");
        };
        let line = argv.join(" ");
        if program.contains('/') {
            return refuse(
                program,
                "programs given as a path are not allowed; use the plain name of an allowed program",
            );
        }
        if program.contains(['*', '?', '[']) {
            return refuse(program, "glob characters are not allowed in a program name");
        }
        if let Some(entry) = self.deny.iter().find(|d| starts_with_words(argv, d)) {
            return refuse(
                &line,
                format!("`{}` is denied by configuration", entry.join(" ")),
            );
        }
        if self.mode == BashMode::ReadOnly && INTERPRETERS_AND_WRAPPERS.contains(&program.as_str())
        {
            return refuse(
                program,
                "interpreters and wrappers can run any code, so they are not allowed in read-only mode",
            );
        }
        let matched = self
            .allow
            .iter()
            .filter(|(entry, _)| starts_with_words(argv, entry))
            .max_by_key(|(entry, _)| entry.len());
        let Some((entry, from_user)) = matched else {
            return refuse(program, "this program is not on the allowlist");
        };
        program_rules(argv, entry.len(), *from_user)?;
        check_paths(argv, paths)
    }
}

/// `argv` begins with the words of `entry`.
fn starts_with_words(argv: &[String], entry: &[String]) -> bool {
    entry.len() <= argv.len() && entry.iter().zip(argv).all(|(e, a)| e == a)
}

/// Every argument that could name a path must stay inside the roots: plain
/// arguments, the values of `--opt=value`, and values attached to short
/// options (`-f/etc/x`).
fn check_paths(argv: &[String], paths: &dyn PathCheck) -> Result<(), Refusal> {
    for arg in argv.iter().skip(1) {
        let candidate = if let Some(rest) = arg.strip_prefix('-') {
            match rest.split_once('=') {
                Some((_, value)) => value,
                None => match rest.find(['/', '~', '.']) {
                    Some(at) if rest.len() > 1 => &rest[at..],
                    _ => continue,
                },
            }
        } else {
            arg.as_str()
        };
        if candidate.is_empty() {
            continue;
        }
        if let Err(why) = paths.check(candidate) {
            return refuse(
                arg,
                format!("it names a path outside the workspace roots ({why})"),
            );
        }
    }
    Ok(())
}

/// Flag rules of the governed programs.
fn program_rules(argv: &[String], entry_words: usize, from_user: bool) -> Result<(), Refusal> {
    let args = &argv[1..];
    match argv[0].as_str() {
        "find" => find_rules(args),
        "git" => git_rules(args, entry_words, from_user),
        "sort" => sort_rules(args),
        "sed" => sed_rules(args),
        "awk" | "gawk" | "mawk" => awk_rules(args),
        "tar" => tar_rules(args),
        "rg" => refuse_flags(
            args,
            &["--pre", "--pre-glob"],
            "runs a program for every file",
        ),
        "tree" => refuse_flags(args, &["-o"], "writes its output to a file"),
        "file" => refuse_flags(args, &["-C", "--compile"], "writes a compiled magic file"),
        "xxd" | "uniq" => at_most_one_operand(argv),
        _ => Ok(()),
    }
}

fn flag_name(arg: &str) -> &str {
    arg.split_once('=').map_or(arg, |(name, _)| name)
}

fn refuse_flags(args: &[String], flags: &[&str], why: &str) -> Result<(), Refusal> {
    for arg in args {
        let name = flag_name(arg);
        if flags.iter().any(|f| {
            name == *f
                || (f.len() == 2
                    && !f.starts_with("--")
                    && name.starts_with(f)
                    && !name.starts_with("--"))
        }) {
            return refuse(arg, format!("`{name}` {why}"));
        }
    }
    Ok(())
}

/// A second operand would be an output file.
fn at_most_one_operand(argv: &[String]) -> Result<(), Refusal> {
    let operands: Vec<&String> = argv
        .iter()
        .skip(1)
        .filter(|a| !a.starts_with('-') || *a == "-")
        .collect();
    if operands.len() > 1 {
        return refuse(
            argv.join(" "),
            format!(
                "a second operand of {} is an output file, which cannot be written",
                argv[0]
            ),
        );
    }
    Ok(())
}

const FIND_DANGEROUS: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];
const FIND_WITH_VALUE: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-type",
    "-xtype",
    "-maxdepth",
    "-mindepth",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-newer",
    "-anewer",
    "-cnewer",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-links",
    "-inum",
    "-samefile",
    "-lname",
    "-ilname",
    "-printf",
    "-regextype",
    "-used",
    "-fstype",
    "-newermt",
    "-newerct",
    "-newerat",
];
const FIND_FLAGS: &[&str] = &[
    "-print",
    "-print0",
    "-ls",
    "-empty",
    "-not",
    "-a",
    "-o",
    "-and",
    "-or",
    "-prune",
    "-depth",
    "-xdev",
    "-mount",
    "-follow",
    "-L",
    "-P",
    "-H",
    "-readable",
    "-writable",
    "-executable",
    "-false",
    "-true",
    "-quit",
    "-nouser",
    "-nogroup",
    "-noleaf",
    "-daystart",
    "-ignore_readdir_race",
    "(",
    ")",
    "!",
    ",",
];

fn find_rules(args: &[String]) -> Result<(), Refusal> {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if FIND_DANGEROUS.contains(&arg) {
            return refuse(arg, "runs programs, deletes or writes files");
        }
        if FIND_WITH_VALUE.contains(&arg) {
            i += 2;
            continue;
        }
        if arg.starts_with('-') && !FIND_FLAGS.contains(&arg) {
            return refuse(
                arg,
                "unknown find option (only options known to be safe are allowed)",
            );
        }
        i += 1;
    }
    Ok(())
}

const SORT_FLAGS: &[&str] = &[
    "-b",
    "-c",
    "-C",
    "-d",
    "-f",
    "-g",
    "-h",
    "-i",
    "-k",
    "-m",
    "-M",
    "-n",
    "-r",
    "-R",
    "-s",
    "-S",
    "-t",
    "-T",
    "-u",
    "-V",
    "-z",
    "--ignore-leading-blanks",
    "--check",
    "--dictionary-order",
    "--ignore-case",
    "--general-numeric-sort",
    "--human-numeric-sort",
    "--ignore-nonprinting",
    "--key",
    "--merge",
    "--month-sort",
    "--numeric-sort",
    "--reverse",
    "--random-sort",
    "--stable",
    "--buffer-size",
    "--field-separator",
    "--temporary-directory",
    "--unique",
    "--version-sort",
    "--zero-terminated",
    "--parallel",
];

fn sort_rules(args: &[String]) -> Result<(), Refusal> {
    for arg in args {
        let name = flag_name(arg);
        if name == "-o"
            || name.starts_with("-o") && !name.starts_with("--")
            || name == "--output"
            || name == "--compress-program"
        {
            return refuse(arg, "writes to a file or runs a program");
        }
        if name.starts_with('-')
            && name != "-"
            && !known_short_cluster(name, SORT_FLAGS, "ktSTo")
            && !SORT_FLAGS.contains(&name)
        {
            return refuse(
                arg,
                "unknown sort option (only options known to be safe are allowed)",
            );
        }
    }
    Ok(())
}

/// A cluster of short flags (`-nr`, `-k2`, `-t,`): every letter known; a
/// letter in `takes_value` ends the cluster (the rest is its value).
fn known_short_cluster(arg: &str, known: &[&str], takes_value: &str) -> bool {
    let Some(letters) = arg.strip_prefix('-') else {
        return false;
    };
    if letters.starts_with('-') || letters.is_empty() {
        return false;
    }
    if letters.chars().all(|c| c.is_ascii_digit()) {
        return true;
    }
    for (i, c) in letters.char_indices() {
        if !known.contains(&format!("-{c}").as_str()) {
            return false;
        }
        if takes_value.contains(c) {
            return i + c.len_utf8() <= letters.len();
        }
    }
    true
}

fn sed_rules(args: &[String]) -> Result<(), Refusal> {
    let mut script_given = false;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let name = flag_name(arg);
        if name == "--in-place"
            || (name.starts_with('-') && !name.starts_with("--") && name.contains('i'))
        {
            return refuse(arg, "edits files in place");
        }
        if name == "-f" || name == "--file" || (name.starts_with("-f") && !name.starts_with("--")) {
            return refuse(arg, "reads its script from a file, which cannot be checked");
        }
        if name == "-e" || name == "--expression" {
            let script = if arg.contains('=') {
                arg.split_once('=').map_or("", |(_, v)| v)
            } else {
                i += 1;
                args.get(i).map_or("", String::as_str)
            };
            check_sed_script(script)?;
            script_given = true;
        } else if name.starts_with('-') && name != "-" {
            if ![
                "-n",
                "-E",
                "-r",
                "-s",
                "-z",
                "-u",
                "--quiet",
                "--silent",
                "--regexp-extended",
                "--separate",
                "--null-data",
                "--posix",
                "--debug",
            ]
            .contains(&name)
                && !known_short_cluster(name, &["-n", "-E", "-r", "-s", "-z", "-u"], "")
            {
                return refuse(
                    arg,
                    "unknown sed option (only options known to be safe are allowed)",
                );
            }
        } else if !script_given {
            check_sed_script(arg)?;
            script_given = true;
        }
        i += 1;
    }
    Ok(())
}

/// Accepts only scripts built from addresses, `s///` and `y///` with safe
/// flags, and commands that print or delete: never `e`, `w`, `W`, `r`, `R`.
pub fn check_sed_script(script: &str) -> Result<(), Refusal> {
    let chars: Vec<char> = script.chars().collect();
    let bad = |why: &str| refuse(script, format!("sed script: {why}"));
    let mut i = 0;
    // Skips a delimited part starting after the delimiter; returns the index after the closing one.
    let skip_part = |mut j: usize, delim: char| -> Option<usize> {
        while j < chars.len() {
            match chars[j] {
                '\\' => j += 2,
                c if c == delim => return Some(j + 1),
                '\n' => return None,
                _ => j += 1,
            }
        }
        None
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\n' | ';' | '{' | '}' | '!' | ',' | '$' | '~' | '+' => i += 1,
            '0'..='9' => i += 1,
            '/' => match skip_part(i + 1, '/') {
                Some(next) => {
                    i = next;
                    while i < chars.len() && matches!(chars[i], 'I' | 'M') {
                        i += 1;
                    }
                }
                None => return bad("unterminated address"),
            },
            '\\' => {
                let Some(&delim) = chars.get(i + 1) else {
                    return bad("unterminated address");
                };
                match skip_part(i + 2, delim) {
                    Some(next) => i = next,
                    None => return bad("unterminated address"),
                }
            }
            's' | 'y' => {
                let Some(&delim) = chars.get(i + 1) else {
                    return bad("incomplete command");
                };
                if delim == '\\' || delim == '\n' {
                    return bad("bad delimiter");
                }
                let Some(mid) = skip_part(i + 2, delim) else {
                    return bad("unterminated command");
                };
                let Some(end) = skip_part(mid, delim) else {
                    return bad("unterminated command");
                };
                i = end;
                while i < chars.len() && !matches!(chars[i], ';' | '\n' | '}' | ' ' | '\t') {
                    let flag = chars[i];
                    if c == 'y' || !matches!(flag, 'g' | 'i' | 'I' | 'm' | 'M' | 'p' | '0'..='9') {
                        return bad(&format!(
                            "flag `{flag}` is not allowed (it can write files or run commands)"
                        ));
                    }
                    i += 1;
                }
            }
            'p' | 'd' | 'D' | 'q' | 'Q' | '=' | 'n' | 'N' | 'P' | 'g' | 'G' | 'h' | 'H' | 'x'
            | 'l' | 'z' => i += 1,
            other => {
                return bad(&format!(
                    "command `{other}` is not allowed (only s, y and printing/deleting commands)"
                ));
            }
        }
    }
    Ok(())
}

fn awk_rules(args: &[String]) -> Result<(), Refusal> {
    let mut program_given = false;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let name = flag_name(arg);
        if name == "-f" || name == "--file" || (name.starts_with("-f") && !name.starts_with("--")) {
            return refuse(
                arg,
                "reads its program from a file, which cannot be checked",
            );
        }
        if name == "-F" || name == "-v" {
            i += 2;
            continue;
        }
        if name.starts_with("-F")
            || name.starts_with("-v")
            || name.starts_with("--field-separator")
            || name.starts_with("--assign")
        {
            i += 1;
            continue;
        }
        if name.starts_with('-') && name != "-" {
            return refuse(arg, "unknown awk option (only -F and -v are allowed)");
        }
        if !program_given {
            let compact: String = arg.chars().filter(|c| !c.is_whitespace()).collect();
            if compact.contains("system(") || compact.contains("system\"") {
                return refuse(arg, "awk's system() runs commands");
            }
            let bytes = arg.as_bytes();
            let lone_pipe = bytes.iter().enumerate().any(|(k, &b)| {
                b == b'|' && bytes.get(k + 1) != Some(&b'|') && (k == 0 || bytes[k - 1] != b'|')
            });
            if lone_pipe {
                return refuse(arg, "pipes in awk programs run commands");
            }
            program_given = true;
        }
        i += 1;
    }
    Ok(())
}

const TAR_SAFE_SHORT: &str = "tvfzjJxcCOpP";

fn tar_rules(args: &[String]) -> Result<(), Refusal> {
    for (k, arg) in args.iter().enumerate() {
        let name = flag_name(arg);
        if [
            "--to-command",
            "--use-compress-program",
            "--checkpoint-action",
            "--rsh-command",
            "--info-script",
            "--new-volume-script",
            "--index-file",
        ]
        .contains(&name)
        {
            return refuse(arg, "runs programs or writes outside the archive's files");
        }
        let first_bundle = k == 0 && !arg.starts_with('-');
        if name.starts_with("--") {
            if ![
                "--list",
                "--extract",
                "--get",
                "--create",
                "--file",
                "--gzip",
                "--gunzip",
                "--bzip2",
                "--xz",
                "--zstd",
                "--directory",
                "--to-stdout",
                "--verbose",
                "--exclude",
                "--wildcards",
                "--strip-components",
                "--no-same-owner",
                "--no-same-permissions",
                "--keep-old-files",
                "--skip-old-files",
            ]
            .contains(&name)
            {
                return refuse(
                    arg,
                    "unknown tar option (only options known to be safe are allowed)",
                );
            }
        } else if (name.starts_with('-') || first_bundle) && name != "-" {
            let letters = name.trim_start_matches('-');
            if let Some(bad) = letters.chars().find(|c| !TAR_SAFE_SHORT.contains(*c)) {
                return refuse(arg, format!("tar option `{bad}` is not allowed"));
            }
        }
    }
    Ok(())
}

/// git: read-only subcommands (unless the user allowed more), never options
/// that change what git runs or where it writes.
fn git_rules(args: &[String], entry_words: usize, from_user: bool) -> Result<(), Refusal> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let name = flag_name(arg);
        match name {
            "--no-pager"
            | "-P"
            | "--no-replace-objects"
            | "--literal-pathspecs"
            | "--no-optional-locks" => i += 1,
            "--version" | "--help" => return Ok(()),
            _ if name.starts_with('-') => {
                return refuse(
                    arg,
                    "git options before the subcommand can change what git runs (-c, -C, --exec-path, --git-dir, ...) and are not allowed",
                );
            }
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else {
        return refuse("git", "a git subcommand is needed");
    };
    let rest = &args[i + 1..];
    for arg in rest {
        let name = flag_name(arg);
        if [
            "--output",
            "--upload-pack",
            "--receive-pack",
            "--exec",
            "--ext-diff",
            "--textconv",
            "--open-files-in-pager",
            "-O",
            "--config-env",
            "--exec-path",
            "--run",
            "--git-dir",
            "--work-tree",
        ]
        .contains(&name)
            || (name.starts_with("-O") && !name.starts_with("--") && sub == "grep")
        {
            return refuse(arg, "this git option runs programs or writes files");
        }
    }
    // A user entry longer than `git` (e.g. `git commit`) admitted this subcommand.
    if from_user && entry_words > 1 {
        return Ok(());
    }
    if !READ_ONLY_GIT.contains(&sub.as_str()) {
        return refuse(
            format!("git {sub}"),
            format!(
                "only read-only git subcommands are allowed ({})",
                READ_ONLY_GIT.join(", ")
            ),
        );
    }
    if sub == "branch" {
        let listing = rest.iter().any(|a| matches!(a.as_str(), "-l" | "--list"));
        for arg in rest {
            let name = flag_name(arg);
            let known = [
                "-a",
                "--all",
                "-r",
                "--remotes",
                "-l",
                "--list",
                "-v",
                "-vv",
                "--verbose",
                "--show-current",
                "--contains",
                "--no-contains",
                "--merged",
                "--no-merged",
                "--sort",
                "--format",
                "--points-at",
                "--column",
                "--no-column",
                "--color",
                "--no-color",
                "-i",
                "--ignore-case",
                "--omit-empty",
            ];
            if name.starts_with('-') && !known.contains(&name) {
                return refuse(
                    arg,
                    "this git branch option changes branches; only listing is allowed",
                );
            }
            if !name.starts_with('-') && !listing {
                return refuse(
                    arg,
                    "`git branch NAME` creates a branch; use `git branch --list PATTERN` to list",
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Inside;
    impl PathCheck for Inside {
        fn check(&self, arg: &str) -> Result<(), String> {
            if arg.starts_with('/') && !arg.starts_with("/root/ws") || arg.contains("..") {
                Err(format!("{arg} is outside"))
            } else {
                Ok(())
            }
        }
    }

    fn config(mode: BashMode, allow: &[&str], deny: &[&str]) -> BashConfig {
        BashConfig {
            mode,
            allow: allow.iter().map(|s| s.to_string()).collect(),
            deny: deny.iter().map(|s| s.to_string()).collect(),
            timeout: std::time::Duration::from_secs(60),
        }
    }

    fn argv(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    fn ro() -> Policy {
        Policy::new(&config(BashMode::ReadOnly, &[], &[]))
    }

    fn allowed(p: &Policy, line: &str) -> bool {
        p.check(&argv(line), &Inside).is_ok()
    }

    #[test]
    fn read_only_allowlist_is_matched_word_by_word() {
        let p = ro();
        for ok in [
            "ls -la",
            "cat README.md",
            "grep -rn foo src",
            "git status -s",
            "git log --oneline -n 5",
            "wc -l x",
            "echo hi",
        ] {
            assert!(allowed(&p, ok), "{ok}");
        }
        for bad in [
            "lsof",
            "rm -rf x",
            "cp a b",
            "mv a b",
            "curl http://x",
            "touch x",
            "chmod 777 x",
            "make",
            "cargo build",
        ] {
            assert!(!allowed(&p, bad), "{bad}");
        }
    }

    #[test]
    fn programs_as_paths_and_globs_are_refused() {
        let p = ro();
        for bad in ["/bin/ls", "./ls", "../bin/cat x", "bin/cat", "l*", "c?t x"] {
            assert!(!allowed(&p, bad), "{bad}");
        }
    }

    #[test]
    fn interpreters_and_wrappers_are_refused_in_read_only_mode_even_if_listed() {
        let p = Policy::new(&config(BashMode::ReadOnly, &["python3", "env"], &[]));
        for bad in [
            "sh -c ls",
            "bash -c ls",
            "python3 -c 1",
            "env ls",
            "xargs ls",
            "timeout 5 ls",
            "nice ls",
            "sudo ls",
            "eval ls",
            "exec ls",
            "command ls",
            "perl -e 1",
            "node x.js",
        ] {
            let e = p.check(&argv(bad), &Inside).unwrap_err();
            assert!(!e.reason.is_empty(), "{bad}");
        }
        let e = p.check(&argv("env ls"), &Inside).unwrap_err();
        assert!(e.reason.contains("interpreters"), "{e:?}");
    }

    #[test]
    fn allowlist_mode_adds_user_prefixes_and_deny_wins() {
        let p = Policy::new(&config(
            BashMode::Allowlist,
            &["cargo test", "git commit", "python3"],
            &["git log", "cargo test --release"],
        ));
        assert!(allowed(&p, "cargo test --lib"));
        assert!(!allowed(&p, "cargo build"));
        assert!(!allowed(&p, "cargo testx"));
        assert!(allowed(&p, "git commit -m x"));
        assert!(allowed(&p, "python3 x.py"));
        assert!(!allowed(&p, "git log"));
        assert!(!allowed(&p, "cargo test --release"));
        assert!(allowed(&p, "ls"));
        let ro_with_deny = Policy::new(&config(BashMode::ReadOnly, &[], &["cat"]));
        assert!(!allowed(&ro_with_deny, "cat x"));
    }

    #[test]
    fn find_dangerous_and_unknown_flags() {
        let p = ro();
        assert!(allowed(&p, "find . -name *.rs -type f -maxdepth 3 -print"));
        assert!(allowed(&p, "find src -newer Cargo.toml -not -name x"));
        for bad in [
            "find . -exec rm {} ;",
            "find . -execdir sh",
            "find . -ok rm",
            "find . -delete",
            "find . -fprint out",
            "find . -fprintf out %p",
            "find . -fls out",
            "find . -unknownflag",
        ] {
            assert!(!allowed(&p, bad), "{bad}");
        }
    }

    #[test]
    fn sed_awk_sort_tar_rules() {
        let p = Policy::new(&config(BashMode::Allowlist, &["sed", "awk", "tar"], &[]));
        assert!(allowed(&p, "sed -n 1,5p file"));
        assert!(allowed(&p, "sed s/a/b/g file"));
        assert!(allowed(&p, "sed -E -e s|x|y|2 file"));
        for bad in [
            "sed -i s/a/b/ f",
            "sed -ni p f",
            "sed --in-place s/a/b/ f",
            "sed -f script f",
            "sed s/a/b/w out f",
            "sed s/a/b/e f",
            "sed 1e date f",
            "sed w out f",
            "sed r /etc/passwd f",
            "sed 1R x f",
        ] {
            assert!(!allowed(&p, bad), "{bad}");
        }
        assert!(allowed(&p, "awk -F, {print$1} f"));
        for bad in [
            "awk {system(\"id\")} f",
            "awk {print|\"sh\"} f",
            "awk -f prog f",
            "awk --exec x f",
        ] {
            assert!(!allowed(&p, bad), "{bad}");
        }
        assert!(allowed(&p, "awk {if(a||b)print} f"));
        let ro = ro();
        assert!(allowed(&ro, "sort -n -k2 -t, file"));
        assert!(allowed(&ro, "sort -nr file"));
        for bad in [
            "sort -o out file",
            "sort -oout file",
            "sort --output=out file",
            "sort --compress-program=sh file",
            "sort --unknown f",
        ] {
            assert!(!allowed(&ro, bad), "{bad}");
        }
        assert!(allowed(&p, "tar -tzf a.tgz"));
        assert!(allowed(&p, "tar tzf a.tgz"));
        for bad in [
            "tar --to-command=sh -xf a.tar",
            "tar -I sh -xf a.tar",
            "tar --use-compress-program=sh -xf a",
            "tar --checkpoint-action=exec=sh -cf a x",
            "tar -F x -cf a y",
        ] {
            assert!(!allowed(&p, bad), "{bad}");
        }
    }

    #[test]
    fn git_is_read_only_without_config_or_directory_tricks() {
        let p = ro();
        for ok in [
            "git status",
            "git log -p",
            "git diff HEAD~1",
            "git show HEAD",
            "git grep foo",
            "git blame src/x.rs",
            "git ls-files",
            "git rev-parse HEAD",
            "git branch",
            "git branch -a",
            "git branch --list feat*",
            "git --no-pager log",
        ] {
            assert!(allowed(&p, ok), "{ok}");
        }
        for bad in [
            "git commit -m x",
            "git push",
            "git checkout x",
            "git reset --hard",
            "git clean -fd",
            "git config x y",
            "git -c core.pager=sh log",
            "git -C /tmp status",
            "git --config-env=x=y log",
            "git --exec-path=/tmp log",
            "git --git-dir=/x log",
            "git diff --output=out",
            "git log --ext-diff",
            "git grep -O foo",
            "git grep --open-files-in-pager foo",
            "git fetch --upload-pack=sh",
            "git branch newname",
            "git branch -d old",
            "git branch -m a b",
            "git",
            "git statusx",
        ] {
            assert!(!allowed(&p, bad), "{bad}");
        }
    }

    #[test]
    fn writers_among_the_defaults_are_refused() {
        let p = ro();
        for bad in [
            "rg --pre sh foo",
            "rg --pre=./x foo",
            "tree -o out",
            "file -C -m x",
            "xxd in out",
            "uniq in out",
        ] {
            assert!(!allowed(&p, bad), "{bad}");
        }
        assert!(allowed(&p, "xxd in") && allowed(&p, "uniq -c in") && allowed(&p, "rg foo src"));
    }

    #[test]
    fn every_path_argument_is_checked() {
        let p = ro();
        for bad in [
            "cat /etc/passwd",
            "cat ../secret",
            "ls src/../..",
            "grep -r x /etc",
            "cat --file=/etc/passwd",
            "grep -f/etc/shadow x",
            "diff a ../b",
            "git log -- ../x",
            "tail -n 5 /var/log/syslog",
        ] {
            let e = p.check(&argv(bad), &Inside).unwrap_err();
            assert!(e.reason.contains("outside"), "{bad}: {e:?}");
        }
        assert!(allowed(&p, "cat /root/ws/file"));
        assert!(allowed(&p, "head -n 5 src/main.rs"));
    }

    #[test]
    fn the_summary_lists_what_is_allowed() {
        let s = Policy::new(&config(BashMode::Allowlist, &["cargo test"], &["git log"])).summary();
        assert!(
            s.contains("cat, head") && s.contains("git status/log/diff"),
            "{s}"
        );
        assert!(
            s.contains("Also allowed: cargo test") && s.contains("Denied: git log"),
            "{s}"
        );
        assert!(s.contains("allowlist mode"));
    }
}
