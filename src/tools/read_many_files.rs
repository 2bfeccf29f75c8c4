//! `read_many_files` (docs/tools.md): the content of many files in one call,
//! gathered from paths, directories and glob patterns, in path order, with
//! a report of what was skipped and why.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use rmcp::model::ContentBlock;
use schemars::JsonSchema;
use serde::Deserialize;

use super::filters::{FILE_FILTERING, FileFilteringOptions, IgnoreSwitches, NestedSwitches};
use super::reads::media_block;
use super::{CallContext, State, ToolError, ToolResult, ToolSpec, cancellable, parse_args};
use crate::discovery::ignore_rules::{DirRules, IgnoreSet, IgnoredBy};
use crate::discovery::walk::{self, SEARCH_EXCLUDED_DIRS, TOO_DEEP_NOTE, Walk, WalkOptions};
use crate::fs::guard::{Guard, Refusal, Resolved};
use crate::fs::reading::{self, Block, Body, ReadFailure};
use crate::text::budget::client_len;
use crate::text::filekind::{self, Media};
use crate::text::lines::LineRange;
use crate::text::names::{Escaped, escape_name};
use crate::tools::params::{Alias, JsonObject};

/// Text returned in all, at most; files past it are named in a note.
pub const MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// Lines and characters per file, as read_file.
const DEFAULT_RANGE: LineRange = LineRange {
    start: 0,
    count: 2000,
};
/// Skipped files listed one by one, at most.
const MAX_SKIPPED_LISTED: usize = 50;

const TRUNCATION_WARNING: &str = "[WARNING: This file was truncated. To view the full content, use the 'read_file' tool on this specific file.]\n\n";
const NOTHING_READ: &str = "No files matching the criteria were found or all were skipped.";

/// What `useDefaultExcludes` leaves out (Gemini CLI's list): files below
/// the directories no walk enters and those search skips, with these
/// extensions, or with these names (letter case ignored, as Gemini CLI's
/// glob does).
const DEFAULT_EXCLUDED_EXTENSIONS: &[&str] = &[
    "bin", "exe", "dll", "so", "dylib", "class", "jar", "war", "zip", "tar", "gz", "bz2", "rar",
    "7z", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp", "pyc", "pyo",
];
const DEFAULT_EXCLUDED_NAMES: &[&str] = &[".DS_Store", ".env", "GEMINI.md"];

/// The default exclude pattern that leaves out `rel` (a `/`-separated path
/// relative to its root), if any.
fn default_exclusion(rel: &str) -> Option<String> {
    let (dirs, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    let excluded = |dir: &str| {
        walk::DEFAULT_EXCLUDED_DIRS
            .iter()
            .chain(SEARCH_EXCLUDED_DIRS)
            .any(|d| d.eq_ignore_ascii_case(dir))
    };
    if let Some(dir) = dirs.split('/').find(|dir| excluded(dir)) {
        return Some(format!("**/{dir}/**"));
    }
    if let Some(n) = DEFAULT_EXCLUDED_NAMES
        .iter()
        .find(|n| n.eq_ignore_ascii_case(name))
    {
        return Some(format!("**/{n}"));
    }
    let (_, ext) = name.rsplit_once('.')?;
    let ext = ext.to_ascii_lowercase();
    DEFAULT_EXCLUDED_EXTENSIONS
        .contains(&ext.as_str())
        .then(|| format!("**/*.{ext}"))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadManyFilesParams {
    /// Files, directories or glob patterns to read, absolute or relative to
    /// the workspace roots, e.g. ["src/main.rs", "docs", "src/**/*.ts"]. A
    /// directory means every file beneath it.
    #[schemars(length(min = 1))]
    pub paths: Vec<String>,
    /// More glob patterns whose files are added, e.g. ["**/*.md"].
    pub include: Option<Vec<String>>,
    /// Glob patterns whose files are left out, e.g. ["**/*.test.ts"].
    pub exclude: Option<Vec<String>>,
    /// Whether directories are read recursively. Default true.
    #[schemars(extend("default" = true))]
    pub recursive: Option<bool>,
    /// Whether to skip archives, office documents, compiled Python files,
    /// .DS_Store and .env. Default true.
    #[serde(rename = "useDefaultExcludes")]
    #[schemars(rename = "useDefaultExcludes", extend("default" = true))]
    pub use_default_excludes: Option<bool>,
    /// Whether to leave out files that .gitignore files ignore (inside a git
    /// work tree). Default true.
    #[schemars(extend("default" = true))]
    pub respect_git_ignore: Option<bool>,
}

/// read_many_files as gemini-current advertises it (schema only).
#[derive(JsonSchema)]
#[allow(dead_code, reason = "only its schema is used: gemini-current's view")]
struct ReadManyCurrent {
    /// Files, directories or glob patterns to read, relative to the
    /// workspace roots or absolute, e.g. ["src/**/*.ts", "README.md"].
    #[schemars(length(min = 1))]
    include: Vec<String>,
    /// Glob patterns whose files are left out, e.g. ["**/*.test.ts"].
    exclude: Option<Vec<String>>,
    /// Whether directories are read recursively. Default true.
    #[schemars(extend("default" = true))]
    recursive: Option<bool>,
    /// Whether the default excludes apply. Default true.
    #[serde(rename = "useDefaultExcludes")]
    #[schemars(rename = "useDefaultExcludes", extend("default" = true))]
    use_default_excludes: Option<bool>,
    /// Which ignore files hide files; both do by default.
    file_filtering_options: Option<FileFilteringOptions>,
}

const ALIASES: &[Alias] = &[
    // Gemini CLI's spelling: the file list given as `include`.
    Alias {
        from: "include",
        to: "paths",
    },
    FILE_FILTERING[0],
    FILE_FILTERING[1],
];

/// What both dialects say after naming their parameters.
macro_rules! how_files_are_read {
    () => {
        "Each file is read as read_file reads it: at most 2000 lines, lines cut at 2000 \
    characters; a cut file starts with a warning, so read_file it in ranges for the rest. \
    Images, audio and PDF come back as content blocks only when asked for by name or \
    extension (\"media/*.png\"); other binary files are skipped. With useDefaultExcludes \
    (default true), node_modules, .git, build output (dist, build, coverage), editor \
    folders, archives, office and compiled files, .env, .DS_Store and GEMINI.md are left \
    out, even when named; set it to false to read them. Files .gitignore or .geminiignore \
    hide are left out too. The whole answer stays within the server's answer limit (39,000 \
    characters by default): files that do not fit are not shown. The answer ends with a list \
    of every file skipped and why, so you know what you did not get."
    };
}

const DESCRIPTION: &str = concat!(
    "Reads many files of the workspace in one call and returns their text, each under a '--- \
    <absolute path> ---' header, in path order, followed by '--- End of content ---'. paths \
    takes file paths, directories (every file below them is read) and glob patterns such as \
    \"src/**/*.ts\" or \"docs/*.md\", relative to the workspace roots or absolute; a path that \
    exists is taken literally even if it contains brackets. Glob matching ignores letter \
    case. exclude takes glob patterns of files to leave out. include adds more patterns.\n\n",
    how_files_are_read!()
);

const DESCRIPTION_CURRENT: &str = concat!(
    "Reads many files of the workspace in one call and returns their text, each under a '--- \
    <absolute path> ---' header, in path order, followed by '--- End of content ---'. \
    include takes file paths, directories (every file below them is read) and glob patterns \
    such as \"src/**/*.ts\" or \"docs/*.md\", relative to the workspace roots or absolute; a \
    path that exists is taken literally even if it contains brackets. Glob matching ignores \
    letter case. exclude takes glob patterns of files to leave out.\n\n",
    how_files_are_read!()
);

pub fn spec() -> ToolSpec {
    ToolSpec::reads("read_many_files", "Read Many Files")
        .params::<ReadManyFilesParams>()
        .accepts::<IgnoreSwitches>()
        .accepts::<NestedSwitches>()
        .aliases(ALIASES)
        .describe(DESCRIPTION)
        .current_schema::<ReadManyCurrent>("read_many_files", DESCRIPTION_CURRENT)
        .run(|ctx, args| Box::pin(run(ctx, args)))
}

/// How the gathering treats files.
struct Rules {
    /// For walks below a directory named as a path (depth-limited when not
    /// recursive).
    dir_walk: WalkOptions,
    /// For glob patterns (recursion is up to the pattern).
    glob_walk: WalkOptions,
    exclude: GlobSet,
    default_excludes: bool,
}

/// A file to read, and whether media in it may be returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asked {
    /// Named directly, or by a pattern naming its extension.
    ByName,
    /// Found under a directory or by a pattern that does not name media.
    Incidentally,
}

/// A file to read.
struct Wanted {
    real: PathBuf,
    /// The guard's answer, when gathering already asked for it.
    resolved: Option<Resolved>,
    asked: Asked,
}

/// Files gathered (by path, in path order) and files skipped with reasons.
#[derive(Default)]
struct Gathered {
    files: BTreeMap<String, Wanted>,
    skipped: BTreeMap<String, String>,
    /// What showing the names of found files escaped.
    escaped: Escaped,
    /// A walk met directories nested too deeply to open.
    too_deep: bool,
    /// The budget ran out before every pattern was looked at.
    timed_out: bool,
}

impl Gathered {
    /// How a file a walk found is named in the answer (escaped).
    fn shown(&mut self, path: &Path) -> String {
        let (shown, escaped) = escape_name(path.as_os_str().as_encoded_bytes());
        self.escaped.add(escaped);
        shown.into_owned()
    }

    fn add(&mut self, shown: String, real: PathBuf, resolved: Option<Resolved>, asked: Asked) {
        self.skipped.remove(&shown);
        let entry = self.files.entry(shown).or_insert(Wanted {
            real,
            resolved,
            asked,
        });
        if asked == Asked::ByName {
            entry.asked = Asked::ByName;
        }
    }

    fn skip(&mut self, what: impl Into<String>, why: impl Into<String>) {
        let what = what.into();
        if !self.files.contains_key(&what) {
            self.skipped.entry(what).or_insert_with(|| why.into());
        }
    }
}

async fn run(ctx: CallContext, args: JsonObject) -> ToolResult {
    let params: ReadManyFilesParams = parse_args(&args)?;
    let hidden: IgnoreSwitches = parse_args(&args)?;
    let exclude = glob_set(params.exclude.as_deref().unwrap_or_default())?;
    let recursive = params.recursive.unwrap_or(true);
    let default_excludes = params.use_default_excludes.unwrap_or(true);
    let glob_walk = WalkOptions {
        respect_git_ignore: params.respect_git_ignore.unwrap_or(true),
        respect_gemini_ignore: hidden.respect_gemini_ignore.unwrap_or(true),
        // With the default excludes off, node_modules and the rest are read too.
        default_excludes,
        excluded_dirs: if default_excludes {
            SEARCH_EXCLUDED_DIRS
        } else {
            &[]
        },
        ..WalkOptions::default()
    };
    let rules = Rules {
        dir_walk: WalkOptions {
            max_depth: (!recursive).then_some(1),
            ..glob_walk.clone()
        },
        glob_walk,
        exclude,
        default_excludes,
    };
    let (paths, include) = (params.paths, params.include.unwrap_or_default());
    let state = ctx.state.clone();
    // Everything that grows with the request's lists runs on the blocking
    // pool, stoppable, and within the search budget: a list of a million
    // names must not hold the protocol thread.
    cancellable(move |stop| {
        let deadline = Instant::now() + state.config.search_timeout;
        let patterns = merge_patterns(paths, include);
        let gathered = gather(&state, &patterns, &rules, stop, deadline);
        Ok(render(&state, gathered, stop, deadline))
    })
    .await
}

/// `paths`, then the `include` entries not among them, each once, in
/// order (linear: the lists come from the request and can be long).
fn merge_patterns(paths: Vec<String>, include: Vec<String>) -> Vec<String> {
    let mut seen: HashSet<String> = HashSet::with_capacity(paths.len() + include.len());
    let mut out = Vec::with_capacity(paths.len() + include.len());
    for p in paths {
        seen.insert(p.clone());
        out.push(p);
    }
    for p in include {
        if seen.insert(p.clone()) {
            out.push(p);
        }
    }
    out
}

fn glob_set(patterns: &[String]) -> Result<GlobSet, ToolError> {
    let mut set = GlobSetBuilder::new();
    for p in patterns {
        crate::text::globs::check_size(p).map_err(ToolError::new)?;
        let glob = GlobBuilder::new(p.trim_start_matches("./"))
            .literal_separator(true)
            .case_insensitive(true)
            .empty_alternates(true)
            .build()
            .map_err(|e| ToolError(format!("Invalid glob pattern \"{p}\": {e}")))?;
        set.add(glob);
        // A pattern without '/' also matches at any depth, by file name.
        if !p.contains('/')
            && let Ok(g) = GlobBuilder::new(&format!("**/{p}"))
                .literal_separator(true)
                .case_insensitive(true)
                .build()
        {
            set.add(g);
        }
    }
    crate::text::globs::set(&set).map_err(ToolError::new)
}

fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', '{'])
}

/// What one pattern came to, over all roots.
#[derive(Default)]
struct PatternResult {
    /// Files it named or matched (kept or skipped for a reason).
    matched: bool,
    /// The pattern was empty.
    empty: bool,
    /// The budget ran out before the pattern was looked at.
    unvisited: bool,
    /// Why it could not be used, if it never matched.
    refusal: Option<Refusal>,
}

/// A pattern to match against walked paths, below one root.
struct GlobJob {
    /// The pattern's index in the request's list.
    index: usize,
    /// The pattern, relative to the root.
    rel: String,
}

fn gather(
    state: &State,
    patterns: &[String],
    rules: &Rules,
    stop: &AtomicBool,
    deadline: Instant,
) -> Gathered {
    let guard = &state.guard;
    let mut out = Gathered::default();
    let mut cache = IgnoreCache::default();
    let mut results: Vec<PatternResult> = Vec::with_capacity(patterns.len());
    // Patterns that are not existing paths, by root: matched in one walk
    // per root and starting directory, not one walk each (20,000 names of
    // missing files were 20,000 walks of the whole root).
    let mut jobs: BTreeMap<PathBuf, Vec<GlobJob>> = BTreeMap::new();
    for (index, pattern) in patterns.iter().enumerate() {
        let mut result = PatternResult::default();
        if stop.load(Ordering::Relaxed) || Instant::now() >= deadline {
            out.timed_out = !stop.load(Ordering::Relaxed);
            result.unvisited = true;
            results.push(result);
            continue;
        }
        if pattern.trim().is_empty() {
            result.empty = true;
            results.push(result);
            continue;
        }
        let raw = pattern.replace('\\', "/");
        if Path::new(&raw).is_absolute() || raw.starts_with("file://") {
            match guard.resolve(&raw) {
                Ok(resolved) if resolved.exists() => {
                    result.matched = true;
                    literal(guard, resolved, rules, &mut cache, stop, &mut out);
                }
                Ok(resolved) => {
                    // Not there: a glob below the root that holds it.
                    let root = resolved.root().path().to_path_buf();
                    if let Ok(rel) = resolved.display().strip_prefix(&root) {
                        let rel = rel.to_string_lossy().into_owned();
                        jobs.entry(root).or_default().push(GlobJob { index, rel });
                    }
                }
                Err(refusal) => result.refusal = Some(refusal),
            }
        } else {
            for root in guard.roots() {
                // As Gemini CLI: a pattern that names an existing path in
                // this root is taken literally (`app/[id]/page.tsx`), anything
                // else is a glob (letter case ignored).
                let candidate = root.join(&raw).display().to_string();
                match guard.resolve(&candidate) {
                    Ok(resolved) if resolved.exists() => {
                        result.matched = true;
                        literal(guard, resolved, rules, &mut cache, stop, &mut out);
                    }
                    Err(refusal @ Refusal::Outside { .. }) if !is_glob(&raw) => {
                        result.refusal = Some(refusal);
                    }
                    _ => {
                        let rel = raw.trim_start_matches("./").to_string();
                        jobs.entry(root.to_path_buf())
                            .or_default()
                            .push(GlobJob { index, rel });
                    }
                }
            }
        }
        results.push(result);
    }
    for (root, jobs) in &jobs {
        globs_in(
            guard,
            root,
            jobs,
            rules,
            &mut cache,
            stop,
            deadline,
            &mut results,
            &mut out,
        );
    }
    for (pattern, result) in patterns.iter().zip(results) {
        if result.matched {
            continue;
        }
        let raw = pattern.replace('\\', "/");
        let why = match result.refusal {
            _ if result.empty => "empty path".to_string(),
            _ if result.unvisited => "not looked at: the time for this call ran out".to_string(),
            Some(Refusal::Outside { .. }) => "outside the workspace roots".to_string(),
            Some(Refusal::Invalid(m)) => m,
            Some(Refusal::Unresolvable { reason, .. }) => reason,
            None if is_glob(&raw) => "no file matches this pattern".to_string(),
            None => "not found".to_string(),
        };
        out.skip(pattern.clone(), why);
    }
    out
}

/// An existing path named literally: a file, or a directory to expand.
fn literal<'g>(
    guard: &'g Guard,
    resolved: Resolved,
    rules: &Rules,
    cache: &mut IgnoreCache<'g>,
    stop: &AtomicBool,
    out: &mut Gathered,
) {
    if resolved.is_dir() {
        expand_dir(guard, resolved.real(), rules, stop, out);
        return;
    }
    let shown = resolved.display().display().to_string();
    let real = resolved.real().to_path_buf();
    let rel = root_relative(guard, &real);
    if rules.exclude.is_match(&rel) {
        return;
    }
    if rules.default_excludes
        && let Some(pattern) = default_exclusion(&rel)
    {
        out.skip(shown, format!("excluded by default ({pattern})"));
        return;
    }
    if let Some(by) = cache.ignored_by(guard, &real, &rules.glob_walk) {
        out.skip(shown, ignored_reason(by));
        return;
    }
    out.add(shown, real, Some(resolved), Asked::ByName);
}

fn ignored_reason(by: IgnoredBy) -> &'static str {
    match by {
        IgnoredBy::Git => "ignored by .gitignore",
        IgnoredBy::Gemini => "ignored by .geminiignore",
    }
}

/// `real` relative to the root that holds it, `/`-separated.
fn root_relative(guard: &Guard, real: &Path) -> String {
    guard
        .containing_root(real)
        .and_then(|root| real.strip_prefix(root).ok())
        .map_or_else(
            || real.to_string_lossy().into_owned(),
            |r| r.to_string_lossy().into_owned(),
        )
}

/// Ignore rules for named files, built once per root and per directory.
#[derive(Default)]
struct IgnoreCache<'g> {
    sets: HashMap<PathBuf, Arc<IgnoreSet<'g>>>,
    dirs: HashMap<PathBuf, (Arc<IgnoreSet<'g>>, DirRules)>,
}

impl<'g> IgnoreCache<'g> {
    fn ignored_by(
        &mut self,
        guard: &'g Guard,
        real: &Path,
        options: &WalkOptions,
    ) -> Option<IgnoredBy> {
        let parent = real.parent()?;
        self.rules_for(guard, parent, options);
        let (set, rules) = self.dirs.get(parent)?;
        set.ignored_by(rules, real, false)
    }

    /// Builds (once) the rules of `dir`: from its parent's when the parent
    /// is inside the same root (one look for `.git` and `.gitignore`), from
    /// scratch for a root.
    fn rules_for(&mut self, guard: &'g Guard, dir: &Path, options: &WalkOptions) {
        if self.dirs.contains_key(dir) {
            return;
        }
        let root = guard.containing_root(dir).unwrap_or(dir).to_path_buf();
        let parent = dir.parent().filter(|p| *p != dir && p.starts_with(&root));
        if let Some(parent) = parent {
            self.rules_for(guard, parent, options);
            if let Some((set, parent_rules)) = self.dirs.get(parent) {
                let set = set.clone();
                let rules = set.child_rules(parent_rules, dir);
                self.dirs.insert(dir.to_path_buf(), (set, rules));
                return;
            }
        }
        let set = self
            .sets
            .entry(root.clone())
            .or_insert_with(|| {
                Arc::new(IgnoreSet::new(
                    guard,
                    &root,
                    options.respect_git_ignore,
                    options.respect_gemini_ignore,
                ))
            })
            .clone();
        let rules = set.dir_rules(dir);
        self.dirs.insert(dir.to_path_buf(), (set, rules));
    }
}

/// Every file below a directory (media only if a pattern asks for it).
fn expand_dir(guard: &Guard, dir: &Path, rules: &Rules, stop: &AtomicBool, out: &mut Gathered) {
    let walk = Walk::new(guard, dir, rules.dir_walk.clone());
    let per_thread = walk.files(stop, Vec::new, |found, f| {
        found.push(f.path.to_path_buf());
        true
    });
    out.too_deep |= walk.stopped_too_deep();
    for path in per_thread.into_iter().flatten() {
        let rel = root_relative(guard, &path);
        consider(path, &rel, rules, Asked::Incidentally, out);
    }
}

/// How one pattern is matched against a walked path (relative to its
/// root, `/`-separated).
enum PathTest {
    /// No glob characters: the path itself, letter case ignored (ASCII, as
    /// the glob engine ignores it), looked up in a table; the pattern in
    /// lower case.
    Literal(String),
    Glob(GlobSet),
}

/// One pattern of a walk: its index in the request, how it matches, and
/// whether the media it finds are read.
type StartTest = (usize, PathTest, Asked);

/// Glob patterns relative to `root`, matched case-insensitively against
/// the paths below it, in one walk per starting directory (a pattern's
/// literal leading directories, when they exist with that spelling; else
/// the root). Marks each pattern that matched anything (ignored files
/// included: they are listed as skipped, with the reason).
#[allow(clippy::too_many_arguments)]
fn globs_in<'g>(
    guard: &'g Guard,
    root: &Path,
    jobs: &[GlobJob],
    rules: &Rules,
    cache: &mut IgnoreCache<'g>,
    stop: &AtomicBool,
    deadline: Instant,
    results: &mut [PatternResult],
    out: &mut Gathered,
) {
    let Ok(root_resolved) = guard.resolve_absolute(root) else {
        return;
    };
    // Patterns by the directory their walk starts in.
    let mut by_start: BTreeMap<PathBuf, (Resolved, Vec<StartTest>)> = BTreeMap::new();
    let mut starts: HashMap<PathBuf, Resolved> = HashMap::new();
    for job in jobs {
        let pattern = job.rel.as_str();
        let test = if is_glob(pattern) {
            let Ok(glob) = GlobBuilder::new(pattern)
                .literal_separator(true)
                .case_insensitive(true)
                .empty_alternates(true)
                .build()
            else {
                continue;
            };
            let Ok(matcher) = crate::text::globs::matcher(glob) else {
                continue;
            };
            PathTest::Glob(matcher)
        } else {
            PathTest::Literal(pattern.to_ascii_lowercase())
        };
        let asked = if names_media(pattern) {
            Asked::ByName
        } else {
            Asked::Incidentally
        };
        let (prefix, _) = literal_prefix(pattern);
        let start = starts
            .entry(prefix.clone())
            .or_insert_with(|| match guard.resolve_absolute(&root.join(&prefix)) {
                Ok(r) if r.is_dir() => r,
                _ => root_resolved.clone(),
            })
            .clone();
        by_start
            .entry(start.real().to_path_buf())
            .or_insert_with(|| (start, Vec::new()))
            .1
            .push((job.index, test, asked));
    }
    let timed_out = AtomicBool::new(false);
    for (start, tests) in by_start.values() {
        let mut literals: HashMap<String, Vec<usize>> = HashMap::new();
        let mut globs: Vec<(usize, &GlobSet)> = Vec::new();
        for (i, (_, test, _)) in tests.iter().enumerate() {
            match test {
                PathTest::Literal(lower) => literals.entry(lower.clone()).or_default().push(i),
                PathTest::Glob(set) => globs.push((i, set)),
            }
        }
        let start_rel = root_relative(guard, start.real());
        let walk = Walk::new(guard, start.real(), rules.glob_walk.clone());
        let per_thread = walk.classified(stop, Vec::new, |found, f| {
            if Instant::now() >= deadline {
                timed_out.store(true, Ordering::Relaxed);
                return false;
            }
            let rel = if start_rel.is_empty() {
                f.rel.to_string()
            } else {
                format!("{start_rel}/{}", f.rel)
            };
            let mut hits: Vec<usize> = literals
                .get(&rel.to_ascii_lowercase())
                .cloned()
                .unwrap_or_default();
            hits.extend(
                globs
                    .iter()
                    .filter(|(_, set)| set.is_match(&rel))
                    .map(|(i, _)| *i),
            );
            if !hits.is_empty() {
                found.push((f.path.to_path_buf(), rel, f.is_ignored(), hits));
            }
            true
        });
        out.too_deep |= walk.stopped_too_deep();
        for (path, rel, ignored, hits) in per_thread.into_iter().flatten() {
            let mut asked = Asked::Incidentally;
            for &i in &hits {
                let (index, _, by) = &tests[i];
                if let Some(result) = results.get_mut(*index) {
                    result.matched = true;
                }
                if *by == Asked::ByName {
                    asked = Asked::ByName;
                }
            }
            if ignored {
                if rules.exclude.is_match(&rel) {
                    continue;
                }
                let why = cache
                    .ignored_by(guard, &path, &rules.glob_walk)
                    .map_or("ignored by .gitignore or .geminiignore", ignored_reason);
                let shown = out.shown(&path);
                out.skip(shown, why);
                continue;
            }
            consider(path, &rel, rules, asked, out);
        }
    }
    out.timed_out |= timed_out.load(Ordering::Relaxed);
}

/// The leading components of a relative pattern that hold no glob
/// characters (the directory a walk can start in), and the rest.
fn literal_prefix(pattern: &str) -> (PathBuf, String) {
    let mut prefix = PathBuf::new();
    let mut components = Path::new(pattern).components().peekable();
    while let Some(c) = components.next() {
        let is_last = components.peek().is_none();
        match c {
            Component::Normal(n) if !is_last && !is_glob(&n.to_string_lossy()) => prefix.push(n),
            _ => break,
        }
    }
    let rest = Path::new(pattern)
        .strip_prefix(&prefix)
        .map(|r| r.to_string_lossy().into_owned())
        .unwrap_or_else(|_| pattern.to_string());
    (prefix, rest)
}

/// Whether a pattern names an image, audio or PDF extension (then the media
/// it finds are read).
fn names_media(pattern: &str) -> bool {
    let lower = pattern.to_ascii_lowercase();
    [Media::Image, Media::Audio, Media::Pdf]
        .into_iter()
        .flat_map(filekind::media_extensions)
        .any(|ext| {
            lower.contains(&format!(".{ext}"))
                || lower.contains(&format!("{{{ext}"))
                || lower.contains(&format!(",{ext}"))
        })
}

/// Applies the excludes to a file found by a walk; `rel` is relative to its
/// root.
fn consider(path: PathBuf, rel: &str, rules: &Rules, asked: Asked, out: &mut Gathered) {
    let shown = out.shown(&path);
    if rules.exclude.is_match(rel) {
        return;
    }
    if rules.default_excludes
        && let Some(pattern) = default_exclusion(rel)
    {
        out.skip(shown, format!("excluded by default ({pattern})"));
        return;
    }
    out.add(shown, path, None, asked);
}

/// One file's outcome.
enum Piece {
    /// The file's whole block: `--- path ---`, its text, a blank line.
    Text {
        shown: String,
        block: String,
    },
    Media {
        shown: String,
        block: Box<ContentBlock>,
    },
    Skipped {
        shown: String,
        why: String,
    },
}

fn read_one(state: &State, shown: &str, wanted: &Wanted) -> Piece {
    let skipped = |why: String| Piece::Skipped {
        shown: shown.to_string(),
        why,
    };
    let guard = &state.guard;
    let (real, asked) = (wanted.real.as_path(), wanted.asked);
    let resolved = match &wanted.resolved {
        Some(r) => r.clone(),
        None => match guard.resolve_absolute(real) {
            Ok(r) => r,
            Err(_) => return skipped("outside the workspace roots".into()),
        },
    };
    let opened = match reading::open(guard, &resolved) {
        Ok(o) => o,
        Err(e) => return skipped(failure_reason(e)),
    };
    state
        .seen
        .read(resolved.display(), opened.real(), opened.version().clone());
    let prefix = format!("--- {shown} ---\n\n");
    let body =
        match reading::read_block(opened, DEFAULT_RANGE, &prefix, "\n\n", &state.line_indexes) {
            Ok(Block::Whole(block)) => {
                return Piece::Text {
                    shown: shown.to_string(),
                    block,
                };
            }
            Ok(Block::Other(body)) => body,
            Err(e) => return skipped(failure_reason(e)),
        };
    match body {
        Body::Text { window } => {
            let warning = if window.is_whole_file() {
                ""
            } else {
                TRUNCATION_WARNING
            };
            let text = window.into_text();
            let mut block = String::with_capacity(prefix.len() + warning.len() + text.len() + 2);
            block.push_str(&prefix);
            block.push_str(warning);
            block.push_str(&text);
            block.push_str("\n\n");
            Piece::Text {
                shown: shown.to_string(),
                block,
            }
        }
        Body::Media { kind, mime, base64 } => match asked {
            Asked::ByName => Piece::Media {
                shown: shown.to_string(),
                block: Box::new(media_block(kind, mime, base64, real)),
            },
            Asked::Incidentally => {
                skipped(format!("{mime} file not asked for by name or extension"))
            }
        },
        Body::Binary => skipped("binary file".into()),
        Body::SvgTooLarge => skipped("SVG file larger than 1MB".into()),
    }
}

fn failure_reason(e: ReadFailure) -> String {
    match e {
        ReadFailure::NotFound => "not found".into(),
        ReadFailure::IsDirectory => "a directory".into(),
        ReadFailure::TooLarge { size, .. } => format!(
            "too large ({}MB; the limit is 20MB)",
            reading::megabytes(size)
        ),
        ReadFailure::NotRegular(why) => format!("not a regular file ({why})"),
        ReadFailure::Io(e) => format!("unreadable ({e})"),
    }
}

/// Reads the gathered files (in parallel) and assembles the answer.
fn render(
    state: &State,
    gathered: Gathered,
    stop: &AtomicBool,
    deadline: Instant,
) -> Vec<ContentBlock> {
    let Gathered {
        files,
        skipped,
        escaped,
        too_deep,
        timed_out,
    } = gathered;
    let mut skipped: Vec<(String, String)> = skipped.into_iter().collect();
    let mut ordered: Vec<(String, Wanted)> = files.into_iter().collect();
    walk::sort_by_path(&mut ordered, |(s, _)| s);
    let late = AtomicBool::new(false);
    let pieces = read_all(state, &ordered, stop, deadline, &late);

    // Every text block counts against one limit: the answer budget, or
    // without one a fixed cap that keeps the server's memory bounded.
    let limit = state.config.answer_budget.limit_or(MAX_OUTPUT_BYTES);
    let content_room = limit.saturating_sub(client_len(END_OF_CONTENT) + tail_room(limit));
    let mut blocks = Vec::new();
    let mut used = 0usize;
    for piece in pieces {
        match piece {
            Piece::Text { shown, block } => {
                let cost = client_len(&block);
                if used + cost > content_room {
                    skipped.push((
                        shown,
                        format!(
                            "not shown: the answer stops at {limit} characters; read it with \
                             read_file, or name fewer files"
                        ),
                    ));
                    continue;
                }
                used += cost;
                blocks.push(ContentBlock::text(block));
            }
            Piece::Media { shown, block } => {
                let header = format!("--- {shown} ---\n\n");
                used += client_len(&header);
                blocks.push(ContentBlock::text(header));
                blocks.push(*block);
            }
            Piece::Skipped { shown, why } => skipped.push((shown, why)),
        }
    }
    let mut tail = Vec::new();
    if let Some(note) = escaped.note() {
        tail.push(note);
    }
    if too_deep {
        tail.push(TOO_DEEP_NOTE.to_string());
    }
    if timed_out || late.load(Ordering::Relaxed) {
        tail.push(format!(
            "Stopped after {} s, the time a call may take: some patterns or files were not \
             looked at (listed as skipped). Name fewer files, or narrower patterns.",
            state.config.search_timeout.as_secs()
        ));
    }
    if !skipped.is_empty() {
        walk::sort_by_path(&mut skipped, |(s, _)| s);
        let notes: usize = tail.iter().map(|t| client_len(t) + 1).sum();
        let room = limit.saturating_sub(used + client_len(END_OF_CONTENT) + notes + 1);
        tail.insert(0, skipped_list(&skipped, room));
    }
    // The list of what was left out follows, each part on its own lines.
    let tail = tail
        .into_iter()
        .map(|t| ContentBlock::text(format!("\n{t}")));
    if blocks.is_empty() {
        let mut out = vec![ContentBlock::text(NOTHING_READ)];
        out.extend(tail);
        return out;
    }
    blocks.push(ContentBlock::text(END_OF_CONTENT));
    blocks.extend(tail);
    blocks
}

/// The block after the files' contents.
const END_OF_CONTENT: &str = "\n--- End of content ---";

/// What the content leaves for the notes after it and the list of skipped
/// files (which takes whatever the content did not use).
fn tail_room(limit: usize) -> usize {
    (limit / 5).min(4000)
}

/// "Skipped N file(s):" and one line per file with its reason, as many as
/// fit in `room` (at most [`MAX_SKIPPED_LISTED`]), then how many more.
fn skipped_list(skipped: &[(String, String)], room: usize) -> String {
    let mut list = format!("Skipped {} file(s):", skipped.len());
    // Room for the last line, whose count is at most the widest.
    let more_line = |n: usize| format!("\n- ... and {n} more");
    let room = room.saturating_sub(client_len(&more_line(skipped.len())));
    let mut listed = 0;
    for (what, why) in skipped.iter().take(MAX_SKIPPED_LISTED) {
        let line = format!("\n- {what}: {why}");
        if client_len(&list) + client_len(&line) > room {
            break;
        }
        list.push_str(&line);
        listed += 1;
    }
    if listed < skipped.len() {
        list.push_str(&more_line(skipped.len() - listed));
    }
    list
}

/// Reads files on a few threads, keeping their order.
/// A file past the budget (or in a cancelled call) is not read: it is
/// listed as skipped, and `late` says so.
fn read_all(
    state: &State,
    files: &[(String, Wanted)],
    stop: &AtomicBool,
    deadline: Instant,
    late: &AtomicBool,
) -> Vec<Piece> {
    let read_one = |state: &State, shown: &str, wanted: &Wanted| {
        if stop.load(Ordering::Relaxed) || Instant::now() >= deadline {
            late.store(true, Ordering::Relaxed);
            return Piece::Skipped {
                shown: shown.to_string(),
                why: "not read: the time for this call ran out".to_string(),
            };
        }
        read_one(state, shown, wanted)
    };
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8);
    if files.len() < 64 || threads < 2 {
        return files.iter().map(|(s, w)| read_one(state, s, w)).collect();
    }
    let chunk = files.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                let read_one = &read_one;
                scope.spawn(move || {
                    part.iter()
                        .map(|(s, w)| read_one(state, s, w))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(pieces) => pieces,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_prefix_of_patterns() {
        assert_eq!(literal_prefix("src/**/*.rs").0, PathBuf::from("src"));
        assert_eq!(literal_prefix("a/b/*.md").0, PathBuf::from("a/b"));
        assert_eq!(literal_prefix("**/*.md").0, PathBuf::new());
        assert_eq!(literal_prefix("*.md").0, PathBuf::new());
        assert_eq!(literal_prefix("x/y[0].txt").0, PathBuf::from("x"));
    }

    #[test]
    fn media_asked_by_extension() {
        assert!(names_media("docs/*.PDF"));
        assert!(names_media("**/*.{png,jpg}"));
        assert!(!names_media("src/**/*.rs"));
    }
}
