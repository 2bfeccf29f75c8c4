//! Option tables of the small read-only programs (GNU coreutils and
//! friends). Each table lists every option rootbound accepts, spelled in
//! full; anything else is refused. Options that write files, run programs,
//! read lists of file names, or follow symbolic links through a recursive
//! walk are left out on purpose, and the notable ones are listed as refused
//! with the reason.

use super::options::{
    Examples, FLAG, OPT_TEXT, Operands, OptionRow, OptionsEnd, PATH, Parsed, Program, RefusedRow,
    TEXT, Words,
};
use crate::shell::refusal::{Refusal, refuse};

/// Where GNU's tools stop reading options. On Linux (glibc), where they are
/// GNU coreutils and diffutils, only at `--`: `getopt_long` permutes, so
/// `cat a -n` numbers lines. The BSD tools of macOS stop at the first
/// operand, and GNU's may stand before them in PATH, so there a word after
/// an operand that starts with `-` is refused.
const GNU: OptionsEnd = if cfg!(target_os = "linux") {
    OptionsEnd::Dashdash
} else {
    OptionsEnd::Differs
};

/// What GNU's tools share: they read options until `--` (or as [`GNU`]
/// says), and every operand is a file.
const GNU_TOOL: Program = Program {
    options_end: GNU,
    ..Program::BASE
};

const FOLLOWS_LINKS: &str = "follows symbolic links, which can lead out of the workspace";
const PATTERNS_FROM_FILE: &str = "reads patterns from a file of names, which cannot be checked";
const NAMES_FROM_FILE: &str =
    "reads the names of the files to open from a file, which cannot be checked";

const FILES0_FROM: RefusedRow = ("", "--files0-from", NAMES_FROM_FILE);

pub const CAT: Program = Program {
    name: "cat",
    options: &[
        ("-A", "--show-all", FLAG),
        ("-b", "--number-nonblank", FLAG),
        ("-e", "", FLAG),
        ("-E", "--show-ends", FLAG),
        ("-n", "--number", FLAG),
        ("-s", "--squeeze-blank", FLAG),
        ("-t", "", FLAG),
        ("-T", "--show-tabs", FLAG),
        ("-u", "", FLAG),
        ("-v", "--show-nonprinting", FLAG),
    ],
    examples: Examples {
        allowed: &["cat -n a.txt", "cat -A --squeeze-blank a.txt b.txt"],
        refused: &["cat --num a.txt", "cat /etc/passwd"],
    },
    ..GNU_TOOL
};

pub const HEAD: Program = Program {
    name: "head",
    options: &[
        ("-n", "--lines", TEXT),
        ("-c", "--bytes", TEXT),
        ("-q", "--quiet", FLAG),
        ("", "--silent", FLAG),
        ("-v", "--verbose", FLAG),
        ("-z", "--zero-terminated", FLAG),
    ],
    numbers: true,
    examples: Examples {
        allowed: &["head -n 5 a.txt", "head -5 a.txt", "head --bytes=100 a.txt"],
        refused: &["head --line=5 a.txt", "head ../a.txt"],
    },
    ..GNU_TOOL
};

pub const TAIL: Program = Program {
    name: "tail",
    options: &[
        ("-n", "--lines", TEXT),
        ("-c", "--bytes", TEXT),
        ("-f", "", FLAG),
        ("-F", "", FLAG),
        ("", "--follow", OPT_TEXT),
        ("", "--retry", FLAG),
        ("-s", "--sleep-interval", TEXT),
        ("", "--max-unchanged-stats", TEXT),
        ("-q", "--quiet", FLAG),
        ("", "--silent", FLAG),
        ("-v", "--verbose", FLAG),
        ("-z", "--zero-terminated", FLAG),
    ],
    numbers: true,
    examples: Examples {
        allowed: &["tail -n +3 a.txt", "tail --follow=name --retry log.txt"],
        refused: &["tail --pid=1 a.txt"],
    },
    ..GNU_TOOL
};

pub const WC: Program = Program {
    name: "wc",
    options: &[
        ("-c", "--bytes", FLAG),
        ("-m", "--chars", FLAG),
        ("-l", "--lines", FLAG),
        ("-L", "--max-line-length", FLAG),
        ("-w", "--words", FLAG),
        ("", "--total", TEXT),
    ],
    refused: &[FILES0_FROM],
    examples: Examples {
        allowed: &["wc -l a.txt", "wc --total=never -w a.txt b.txt"],
        refused: &["wc --files0-from=list"],
    },
    ..GNU_TOOL
};

/// Options of `ls` that make it show a symlink itself rather than follow it.
const LS_NO_FOLLOW: &[&str] = &[
    "-l",
    "-d",
    "--directory",
    "-g",
    "-o",
    "-n",
    "--numeric-uid-gid",
];

pub const LS: Program = Program {
    name: "ls",
    options: &[
        ("-a", "--all", FLAG),
        ("-A", "--almost-all", FLAG),
        ("", "--author", FLAG),
        ("-b", "--escape", FLAG),
        ("", "--block-size", TEXT),
        ("-B", "--ignore-backups", FLAG),
        ("-c", "", FLAG),
        ("-C", "", FLAG),
        ("", "--color", OPT_TEXT),
        ("-d", "--directory", FLAG),
        ("-D", "--dired", FLAG),
        ("-f", "", FLAG),
        ("-F", "", FLAG),
        ("", "--classify", OPT_TEXT),
        ("", "--file-type", FLAG),
        ("", "--format", TEXT),
        ("", "--full-time", FLAG),
        ("-g", "", FLAG),
        ("", "--group-directories-first", FLAG),
        ("-G", "--no-group", FLAG),
        ("-h", "--human-readable", FLAG),
        ("", "--si", FLAG),
        // Not -H, --dereference-command-line and its -symlink-to-dir form:
        // they follow a link named in the roots to an outside directory or
        // file and show its entries or metadata.
        ("", "--hide", TEXT),
        ("", "--hyperlink", OPT_TEXT),
        ("", "--indicator-style", TEXT),
        ("-i", "--inode", FLAG),
        ("-I", "--ignore", TEXT),
        ("-k", "--kibibytes", FLAG),
        ("-l", "", FLAG),
        ("-m", "", FLAG),
        ("-n", "--numeric-uid-gid", FLAG),
        ("-N", "--literal", FLAG),
        ("-o", "", FLAG),
        ("-p", "", FLAG),
        ("-q", "--hide-control-chars", FLAG),
        ("", "--show-control-chars", FLAG),
        ("-Q", "--quote-name", FLAG),
        ("", "--quoting-style", TEXT),
        ("-r", "--reverse", FLAG),
        ("-R", "--recursive", FLAG),
        ("-s", "--size", FLAG),
        ("-S", "", FLAG),
        ("", "--sort", TEXT),
        ("", "--time", TEXT),
        ("", "--time-style", TEXT),
        ("-t", "", FLAG),
        ("-T", "--tabsize", TEXT),
        ("-u", "", FLAG),
        ("-U", "", FLAG),
        ("-v", "", FLAG),
        ("-w", "--width", TEXT),
        ("-x", "", FLAG),
        ("-X", "", FLAG),
        ("-Z", "--context", FLAG),
        ("", "--zero", FLAG),
        ("-1", "", FLAG),
    ],
    refused: &[("-L", "--dereference", FOLLOWS_LINKS)],
    operands: Operands::PathsNoFollowWith(LS_NO_FOLLOW),
    examples: Examples {
        allowed: &["ls -la src", "ls -l link", "ls --color=never -1"],
        refused: &[
            "ls -L src",
            "ls -H link",
            "ls --dereference-command-line link",
        ],
    },
    ..GNU_TOOL
};

pub const TREE: Program = Program {
    name: "tree",
    options: &[
        ("-a", "", FLAG),
        ("-d", "", FLAG),
        ("-f", "", FLAG),
        ("-x", "", FLAG),
        ("-L", "", TEXT),
        ("-P", "", TEXT),
        ("-I", "", TEXT),
        ("", "--gitignore", FLAG),
        ("", "--ignore-case", FLAG),
        ("", "--matchdirs", FLAG),
        ("", "--metafirst", FLAG),
        ("", "--prune", FLAG),
        ("", "--info", FLAG),
        ("", "--noreport", FLAG),
        ("", "--charset", TEXT),
        ("", "--filelimit", TEXT),
        ("-q", "", FLAG),
        ("-N", "", FLAG),
        ("-Q", "", FLAG),
        ("-p", "", FLAG),
        ("-u", "", FLAG),
        ("-g", "", FLAG),
        ("-s", "", FLAG),
        ("-h", "", FLAG),
        ("", "--si", FLAG),
        ("", "--du", FLAG),
        ("-D", "", FLAG),
        ("", "--timefmt", TEXT),
        ("-F", "", FLAG),
        ("", "--inodes", FLAG),
        ("", "--device", FLAG),
        ("-v", "", FLAG),
        ("-t", "", FLAG),
        ("-c", "", FLAG),
        ("-U", "", FLAG),
        ("-r", "", FLAG),
        ("", "--dirsfirst", FLAG),
        ("", "--filesfirst", FLAG),
        ("", "--sort", TEXT),
        ("-i", "", FLAG),
        ("-A", "", FLAG),
        ("-S", "", FLAG),
        ("-n", "", FLAG),
        ("-C", "", FLAG),
        ("-J", "", FLAG),
        ("-X", "", FLAG),
    ],
    refused: &[
        ("-o", "", "writes its output to a file"),
        (
            "-l",
            "",
            "follows symbolic links to directories, which can lead out of the workspace",
        ),
        ("-R", "", "writes HTML files into the directories it lists"),
        (
            "",
            "--fromfile",
            "reads the listing from a file, which cannot be checked",
        ),
    ],
    // tree's own reader takes options anywhere; a letter that takes a
    // value takes the next word and the cluster reads on (`-Po x out` is
    // `-P x -o out`), digits attached only to `-L` (`-L2`; tree before
    // 2.1.3 exits on the digit instead, having done nothing).
    options_end: OptionsEnd::Dashdash,
    words: Words::NextWord(&["-L"]),
    examples: Examples {
        allowed: &["tree -L 2 src", "tree -a --gitignore -I target"],
        refused: &[
            "tree -o out.txt",
            "tree -l src",
            "tree -Po x out.txt",
            "tree --fromfile list",
        ],
    },
    ..Program::BASE
};

pub const FILE: Program = Program {
    name: "file",
    options: &[
        ("-b", "--brief", FLAG),
        ("-c", "--checking-printout", FLAG),
        ("-E", "", FLAG),
        ("-e", "--exclude", TEXT),
        ("", "--exclude-quiet", TEXT),
        ("", "--extension", FLAG),
        ("-F", "--separator", TEXT),
        ("-h", "--no-dereference", FLAG),
        ("-i", "--mime", FLAG),
        ("", "--mime-type", FLAG),
        ("", "--mime-encoding", FLAG),
        ("-k", "--keep-going", FLAG),
        ("-l", "--list", FLAG),
        ("-m", "--magic-file", PATH),
        ("-N", "--no-pad", FLAG),
        ("-n", "--no-buffer", FLAG),
        ("-p", "--preserve-date", FLAG),
        ("-P", "--parameter", TEXT),
        ("-r", "--raw", FLAG),
        ("-s", "--special-files", FLAG),
        ("-0", "--print0", FLAG),
        ("-S", "--no-sandbox", FLAG),
    ],
    refused: &[
        ("-C", "--compile", "writes a compiled magic file"),
        (
            "-f",
            "--files-from",
            "reads the names of the files to examine from a file, which cannot be checked",
        ),
        ("-L", "--dereference", FOLLOWS_LINKS),
        ("-z", "", "can run decompression programs"),
        ("-z", "--uncompress", "can run decompression programs"),
        (
            "-Z",
            "--uncompress-noreport",
            "can run decompression programs",
        ),
    ],
    operands: Operands::PathsNoFollow,
    // file uses the C library's `getopt_long`, which permutes on BSD too.
    options_end: OptionsEnd::Dashdash,
    examples: Examples {
        allowed: &["file -b a.txt", "file --mime-type a.txt"],
        refused: &["file -z a.gz", "file -f list", "file -L link"],
    },
    ..Program::BASE
};

pub const STAT: Program = Program {
    name: "stat",
    options: &[
        ("-f", "--file-system", FLAG),
        ("-c", "--format", TEXT),
        ("", "--printf", TEXT),
        ("-t", "--terse", FLAG),
        ("", "--cached", TEXT),
    ],
    refused: &[("-L", "--dereference", FOLLOWS_LINKS)],
    operands: Operands::PathsNoFollow,
    examples: Examples {
        allowed: &["stat -c %s a.txt", "stat --terse a.txt"],
        refused: &["stat -L link", "stat --dereference link"],
    },
    ..GNU_TOOL
};

pub const DU: Program = Program {
    name: "du",
    options: &[
        ("-0", "--null", FLAG),
        ("-a", "--all", FLAG),
        ("", "--apparent-size", FLAG),
        ("-B", "--block-size", TEXT),
        ("-b", "--bytes", FLAG),
        ("-c", "--total", FLAG),
        ("-D", "--dereference-args", FLAG),
        ("-d", "--max-depth", TEXT),
        ("-H", "", FLAG),
        ("-h", "--human-readable", FLAG),
        ("", "--inodes", FLAG),
        ("-k", "", FLAG),
        ("-l", "--count-links", FLAG),
        ("-m", "", FLAG),
        ("-P", "--no-dereference", FLAG),
        ("-S", "--separate-dirs", FLAG),
        ("", "--si", FLAG),
        ("-s", "--summarize", FLAG),
        ("-t", "--threshold", TEXT),
        ("", "--time", OPT_TEXT),
        ("", "--time-style", TEXT),
        ("-x", "--one-file-system", FLAG),
        ("", "--exclude", TEXT),
    ],
    refused: &[
        FILES0_FROM,
        (
            "-L",
            "--dereference",
            "follows every symbolic link, which can lead out of the workspace",
        ),
        ("-X", "--exclude-from", PATTERNS_FROM_FILE),
    ],
    examples: Examples {
        allowed: &["du -sh src", "du --max-depth=1 -h ."],
        refused: &[
            "du -L src",
            "du --files0-from=list",
            "du --exclude-from=list src",
        ],
    },
    ..GNU_TOOL
};

pub const DF: Program = Program {
    name: "df",
    options: &[
        ("-a", "--all", FLAG),
        ("-B", "--block-size", TEXT),
        ("-h", "--human-readable", FLAG),
        ("-H", "--si", FLAG),
        ("-i", "--inodes", FLAG),
        ("-k", "", FLAG),
        ("-l", "--local", FLAG),
        ("", "--no-sync", FLAG),
        ("", "--output", OPT_TEXT),
        ("-P", "--portability", FLAG),
        ("", "--total", FLAG),
        ("-t", "--type", TEXT),
        ("-T", "--print-type", FLAG),
        ("-x", "--exclude-type", TEXT),
    ],
    examples: Examples {
        allowed: &["df -h .", "df --output=size,used ."],
        refused: &["df -h /etc"],
    },
    ..GNU_TOOL
};

pub const PWD: Program = Program {
    name: "pwd",
    options: &[("-L", "", FLAG), ("-P", "", FLAG)],
    operands: Operands::None,
    examples: Examples {
        allowed: &["pwd", "pwd -P"],
        refused: &["pwd src"],
    },
    ..GNU_TOOL
};

pub const BASENAME: Program = Program {
    name: "basename",
    options: &[
        ("-a", "--multiple", FLAG),
        ("-s", "--suffix", TEXT),
        ("-z", "--zero", FLAG),
    ],
    operands: Operands::Texts,
    // GNU's option string starts with `+`, and BSD's getopt stops too:
    // `basename /a/b.rs -s .rs` has three operands.
    options_end: OptionsEnd::FirstOperand,
    examples: Examples {
        allowed: &["basename -s .rs src/main.rs", "basename /a/b.rs -s .rs"],
        refused: &["basename --suffx=.rs a.rs"],
    },
    ..GNU_TOOL
};

pub const DIRNAME: Program = Program {
    name: "dirname",
    options: &[("-z", "--zero", FLAG)],
    operands: Operands::Texts,
    examples: Examples {
        allowed: &["dirname /usr/bin/env", "dirname -z a/b"],
        refused: &["dirname --zer a/b"],
    },
    ..GNU_TOOL
};

pub const REALPATH: Program = Program {
    name: "realpath",
    options: &[
        ("-e", "--canonicalize-existing", FLAG),
        ("-m", "--canonicalize-missing", FLAG),
        ("-L", "--logical", FLAG),
        ("-P", "--physical", FLAG),
        ("-q", "--quiet", FLAG),
        ("", "--relative-to", PATH),
        ("", "--relative-base", PATH),
        ("-s", "--strip", FLAG),
        ("", "--no-symlinks", FLAG),
        ("-z", "--zero", FLAG),
    ],
    examples: Examples {
        allowed: &["realpath -e src", "realpath --relative-to=src a.txt"],
        refused: &["realpath --relative-to=/etc a.txt"],
    },
    ..GNU_TOOL
};

pub const SORT: Program = Program {
    name: "sort",
    options: &[
        ("-b", "--ignore-leading-blanks", FLAG),
        ("-d", "--dictionary-order", FLAG),
        ("-f", "--ignore-case", FLAG),
        ("-g", "--general-numeric-sort", FLAG),
        ("-i", "--ignore-nonprinting", FLAG),
        ("-M", "--month-sort", FLAG),
        ("-h", "--human-numeric-sort", FLAG),
        ("-n", "--numeric-sort", FLAG),
        ("-R", "--random-sort", FLAG),
        ("", "--random-source", PATH),
        ("-r", "--reverse", FLAG),
        ("", "--sort", TEXT),
        ("-V", "--version-sort", FLAG),
        ("-c", "", FLAG),
        ("", "--check", OPT_TEXT),
        ("-C", "", FLAG),
        ("", "--debug", FLAG),
        ("-k", "--key", TEXT),
        ("-m", "--merge", FLAG),
        ("-s", "--stable", FLAG),
        ("-S", "--buffer-size", TEXT),
        ("-t", "--field-separator", TEXT),
        ("-u", "--unique", FLAG),
        ("-z", "--zero-terminated", FLAG),
        ("", "--parallel", TEXT),
    ],
    refused: &[
        ("-o", "--output", "writes its output to a file"),
        ("", "--compress-program", "runs a program"),
        (
            "-T",
            "--temporary-directory",
            "writes temporary files into a directory",
        ),
        FILES0_FROM,
    ],
    examples: Examples {
        allowed: &["sort -t/ -k2 a.txt", "sort -rn a.txt"],
        refused: &[
            "sort -o out.txt a.txt",
            "sort --compress-program=sh a.txt",
            "sort -T tmp a.txt",
        ],
    },
    ..GNU_TOOL
};

pub const UNIQ: Program = Program {
    name: "uniq",
    options: &[
        ("-c", "--count", FLAG),
        ("-d", "--repeated", FLAG),
        ("-D", "", FLAG),
        ("", "--all-repeated", OPT_TEXT),
        ("-f", "--skip-fields", TEXT),
        ("", "--group", OPT_TEXT),
        ("-i", "--ignore-case", FLAG),
        ("-s", "--skip-chars", TEXT),
        ("-u", "--unique", FLAG),
        ("-w", "--check-chars", TEXT),
        ("-z", "--zero-terminated", FLAG),
    ],
    operands: Operands::AtMostPaths(1),
    examples: Examples {
        allowed: &["uniq -c a.txt", "uniq -f 1 a.txt"],
        refused: &["uniq a.txt out.txt"],
    },
    ..GNU_TOOL
};

pub const CUT: Program = Program {
    name: "cut",
    options: &[
        ("-b", "--bytes", TEXT),
        ("-c", "--characters", TEXT),
        ("-d", "--delimiter", TEXT),
        ("-f", "--fields", TEXT),
        ("-n", "", FLAG),
        ("", "--complement", FLAG),
        ("-s", "--only-delimited", FLAG),
        ("", "--output-delimiter", TEXT),
        ("-z", "--zero-terminated", FLAG),
    ],
    examples: Examples {
        allowed: &["cut -d/ -f2 a.txt", "cut --complement -c1-3 a.txt"],
        refused: &["cut -d, -f1 /etc/passwd"],
    },
    ..GNU_TOOL
};

pub const TR: Program = Program {
    name: "tr",
    options: &[
        ("-c", "", FLAG),
        ("-C", "--complement", FLAG),
        ("-d", "--delete", FLAG),
        ("-s", "--squeeze-repeats", FLAG),
        ("-t", "--truncate-set1", FLAG),
    ],
    operands: Operands::Texts,
    // GNU's option string starts with `+` (`tr a -d` maps `a` to `-`), and
    // BSD's getopt stops there too.
    options_end: OptionsEnd::FirstOperand,
    examples: Examples {
        allowed: &["tr / _", "tr -d a", "tr a -d"],
        refused: &["tr --del a"],
    },
    ..GNU_TOOL
};

/// `diff -r` follows symbolic links unless told not to.
fn diff_rules(parsed: &Parsed<'_>) -> Result<(), Refusal> {
    if parsed.has_any(&["-r", "--recursive"]) && !parsed.has("--no-dereference") {
        let word = parsed
            .options
            .iter()
            .find(|o| o.name == "-r" || o.name == "--recursive")
            .map_or("-r", |o| o.word);
        return refuse(
            word,
            "a recursive diff follows symbolic links out of the workspace; add --no-dereference",
        );
    }
    Ok(())
}

pub const DIFF: Program = Program {
    name: "diff",
    options: &[
        ("", "--normal", FLAG),
        ("-q", "--brief", FLAG),
        ("-s", "--report-identical-files", FLAG),
        ("-c", "", FLAG),
        ("-C", "", TEXT),
        ("", "--context", OPT_TEXT),
        ("-u", "", FLAG),
        ("-U", "", TEXT),
        ("", "--unified", OPT_TEXT),
        ("-e", "--ed", FLAG),
        ("-n", "--rcs", FLAG),
        ("-y", "--side-by-side", FLAG),
        ("-W", "--width", TEXT),
        ("", "--left-column", FLAG),
        ("", "--suppress-common-lines", FLAG),
        ("-p", "--show-c-function", FLAG),
        ("-F", "--show-function-line", TEXT),
        ("", "--label", TEXT),
        ("-t", "--expand-tabs", FLAG),
        ("-T", "--initial-tab", FLAG),
        ("", "--tabsize", TEXT),
        ("", "--suppress-blank-empty", FLAG),
        ("-r", "--recursive", FLAG),
        ("", "--no-dereference", FLAG),
        ("-N", "--new-file", FLAG),
        ("", "--unidirectional-new-file", FLAG),
        ("", "--ignore-file-name-case", FLAG),
        ("", "--no-ignore-file-name-case", FLAG),
        ("-x", "--exclude", TEXT),
        ("-S", "--starting-file", TEXT),
        ("", "--from-file", PATH),
        ("", "--to-file", PATH),
        ("-i", "--ignore-case", FLAG),
        ("-E", "--ignore-tab-expansion", FLAG),
        ("-Z", "--ignore-trailing-space", FLAG),
        ("-b", "--ignore-space-change", FLAG),
        ("-w", "--ignore-all-space", FLAG),
        ("-B", "--ignore-blank-lines", FLAG),
        ("-I", "--ignore-matching-lines", TEXT),
        ("-a", "--text", FLAG),
        ("", "--strip-trailing-cr", FLAG),
        ("-D", "--ifdef", TEXT),
        ("", "--line-format", TEXT),
        ("", "--old-line-format", TEXT),
        ("", "--new-line-format", TEXT),
        ("", "--unchanged-line-format", TEXT),
        ("-d", "--minimal", FLAG),
        ("", "--horizon-lines", TEXT),
        ("", "--speed-large-files", FLAG),
        ("", "--color", OPT_TEXT),
        ("", "--palette", TEXT),
    ],
    refused: &[
        ("-l", "--paginate", "runs the pr program"),
        ("-X", "--exclude-from", PATTERNS_FROM_FILE),
    ],
    // GNU diff and macOS's (FreeBSD's, through `getopt_long`) both permute.
    options_end: OptionsEnd::Dashdash,
    rules: Some(diff_rules),
    examples: Examples {
        allowed: &["diff -u a.txt b.txt", "diff -r --no-dereference src other"],
        refused: &[
            "diff -r src other",
            "diff -l a.txt b.txt",
            "diff --exclude-from=list a.txt b.txt",
        ],
    },
    ..GNU_TOOL
};

pub const CMP: Program = Program {
    name: "cmp",
    options: &[
        ("-b", "--print-bytes", FLAG),
        ("-i", "--ignore-initial", TEXT),
        ("-l", "--verbose", FLAG),
        ("-n", "--bytes", TEXT),
        ("-s", "--quiet", FLAG),
        ("", "--silent", FLAG),
    ],
    operands: Operands::LeadingPaths(2),
    examples: Examples {
        allowed: &["cmp a.bin b.bin", "cmp -l a.bin b.bin 10"],
        refused: &["cmp a.bin /etc/passwd"],
    },
    ..GNU_TOOL
};

pub const COMM: Program = Program {
    name: "comm",
    options: &[
        ("-1", "", FLAG),
        ("-2", "", FLAG),
        ("-3", "", FLAG),
        ("", "--check-order", FLAG),
        ("", "--nocheck-order", FLAG),
        ("", "--output-delimiter", TEXT),
        ("", "--total", FLAG),
        ("-z", "--zero-terminated", FLAG),
    ],
    examples: Examples {
        allowed: &["comm -12 a.txt b.txt", "comm --check-order a.txt b.txt"],
        refused: &["comm -4 a.txt b.txt"],
    },
    ..GNU_TOOL
};

pub const NL: Program = Program {
    name: "nl",
    options: &[
        ("-b", "--body-numbering", TEXT),
        ("-d", "--section-delimiter", TEXT),
        ("-f", "--footer-numbering", TEXT),
        ("-h", "--header-numbering", TEXT),
        ("-i", "--line-increment", TEXT),
        ("-l", "--join-blank-lines", TEXT),
        ("-n", "--number-format", TEXT),
        ("-p", "--no-renumber", FLAG),
        ("-s", "--number-separator", TEXT),
        ("-v", "--starting-line-number", TEXT),
        ("-w", "--number-width", TEXT),
    ],
    examples: Examples {
        allowed: &["nl -ba a.txt", "nl --number-width=3 a.txt"],
        refused: &["nl ../a.txt"],
    },
    ..GNU_TOOL
};

pub const OD: Program = Program {
    name: "od",
    options: &[
        ("-A", "--address-radix", TEXT),
        ("", "--endian", TEXT),
        ("-j", "--skip-bytes", TEXT),
        ("-N", "--read-bytes", TEXT),
        ("-S", "", TEXT),
        ("", "--strings", OPT_TEXT),
        ("-t", "--format", TEXT),
        ("-v", "--output-duplicates", FLAG),
        ("-w", "--width", OPT_TEXT),
        ("", "--traditional", FLAG),
        ("-a", "", FLAG),
        ("-b", "", FLAG),
        ("-c", "", FLAG),
        ("-d", "", FLAG),
        ("-f", "", FLAG),
        ("-i", "", FLAG),
        ("-l", "", FLAG),
        ("-o", "", FLAG),
        ("-s", "", FLAG),
        ("-x", "", FLAG),
    ],
    examples: Examples {
        allowed: &["od -An -tx1 a.bin", "od -c --read-bytes=16 a.bin"],
        refused: &["od --skip=4 a.bin"],
    },
    ..GNU_TOOL
};

/// xxd spells its long options with one dash (`-cols`, `-ps`), reads one
/// option per word, and stops at its first operand; a second operand is its
/// output file, which `AtMostPaths(1)` refuses.
pub const XXD: Program = Program {
    name: "xxd",
    options: &[
        ("-a", "-autoskip", FLAG),
        ("-b", "-bits", FLAG),
        ("-C", "-capitalize", FLAG),
        ("-c", "-cols", TEXT),
        ("-E", "-EBCDIC", FLAG),
        ("-e", "", FLAG),
        ("-g", "-groupsize", TEXT),
        ("-i", "-include", FLAG),
        ("-l", "-len", TEXT),
        ("-n", "-name", TEXT),
        ("-o", "-offset", TEXT),
        ("-p", "-postscript", FLAG),
        ("", "-ps", FLAG),
        ("", "-plain", FLAG),
        ("-r", "-revert", FLAG),
        ("-R", "", TEXT),
        ("-d", "", FLAG),
        ("-s", "-seek", TEXT),
        ("-u", "", FLAG),
        ("-v", "-version", FLAG),
        ("-h", "-help", FLAG),
    ],
    operands: Operands::AtMostPaths(1),
    // xxd's own reader stops at the first operand: in `xxd -r -p in -n/x`,
    // `-n/x` is the output file.
    options_end: OptionsEnd::FirstOperand,
    words: Words::Whole,
    examples: Examples {
        allowed: &["xxd -l 16 a.bin", "xxd -c8 -g1 a.bin", "xxd -r -p a.hex"],
        refused: &[
            "xxd a.bin out.bin",
            "xxd -rp a.hex",
            "xxd -r -p a.hex -n/x",
            "xxd -cols8 a.bin",
        ],
    },
    ..Program::BASE
};

const SUM_OPTIONS: &[OptionRow] = &[
    ("-b", "--binary", FLAG),
    ("-t", "--text", FLAG),
    ("", "--tag", FLAG),
    ("", "--untagged", FLAG),
    ("-z", "--zero", FLAG),
];
const SUM_REFUSED: &[RefusedRow] = &[("-c", "--check", NAMES_FROM_FILE)];

pub const SHA256SUM: Program = Program {
    name: "sha256sum",
    options: SUM_OPTIONS,
    refused: SUM_REFUSED,
    examples: Examples {
        allowed: &["sha256sum a.txt", "sha256sum --tag -b a.txt"],
        refused: &["sha256sum -c sums.txt"],
    },
    ..GNU_TOOL
};

pub const MD5SUM: Program = Program {
    name: "md5sum",
    options: SUM_OPTIONS,
    refused: SUM_REFUSED,
    examples: Examples {
        allowed: &["md5sum a.txt"],
        refused: &["md5sum --check sums.txt"],
    },
    ..GNU_TOOL
};

pub const WHICH: Program = Program {
    name: "which",
    options: &[("-a", "", FLAG), ("-s", "", FLAG)],
    operands: Operands::Texts,
    // Debian's which is a script reading `getopts`, which stops at the first
    // operand; GNU which (other distributions) permutes.
    options_end: OptionsEnd::Differs,
    examples: Examples {
        allowed: &["which git", "which -a ls"],
        refused: &["which ls -a", "which --all ls"],
    },
    ..Program::BASE
};

/// Programs whose arguments are all text and which read no file: `echo`,
/// `printf`, `true`, `false`. GNU echo prints unknown options as text.
pub const TEXT_ONLY: &[&str] = &["echo", "printf", "true", "false"];

/// The tables of this module, by program name.
pub const ALL: &[&Program] = &[
    &CAT, &HEAD, &TAIL, &WC, &LS, &TREE, &FILE, &STAT, &DU, &DF, &PWD, &BASENAME, &DIRNAME,
    &REALPATH, &SORT, &UNIQ, &CUT, &TR, &DIFF, &CMP, &COMM, &NL, &OD, &XXD, &SHA256SUM, &MD5SUM,
    &WHICH,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_table_lists_an_option_twice_or_both_allows_and_refuses_it() {
        for program in ALL {
            let mut seen = std::collections::HashSet::new();
            for name in program
                .options
                .iter()
                .flat_map(|(short, long, _)| [short, long])
                .filter(|name| !name.is_empty())
            {
                assert!(seen.insert(*name), "{}: {name} twice", program.name);
                assert!(
                    !program
                        .refused
                        .iter()
                        .any(|(short, long, _)| short == name || long == name),
                    "{}: {name} both allowed and refused",
                    program.name
                );
            }
        }
    }
}
