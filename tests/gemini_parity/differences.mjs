// Every known, deliberate difference between rootbound and Gemini CLI's own
// tools: the one table (docs/tools.md; docs/differences.md is the
// users' version, one line per entry, kept in step by the harness).
//
// An entry names the cases it applies to (`cases`, or `match` for a rule
// that holds across a tool), what differs and why, and `normalize(gemini,
// ours, ctx)`, which removes exactly that difference from both results
// (each `{ error, text, files }`) and returns them. A case passes as a
// deliberate difference only if the results are equal once its entries
// have run; an entry that no longer changes its cases fails the run.

const MARK = (what) => ({ error: false, text: `<<${what}>>`, files: {} });
const both = (what) => (g, o) => [MARK(what), MARK(what)];

/** Applies `fn` to the text of one side. */
const mapText = (side, fn) => ({ ...side, text: fn(side.text) });

// --- read windows ------------------------------------------------------------

const NOTE =
  /^\nIMPORTANT: The file content has been truncated\.\nStatus: Showing lines (\d+)-(\d+) of (\d+) total lines\.\nAction: To read more of the file, you can use the (.*?) parameters in a subsequent 'read_file' call\. For example, to read the next section of the file, use \w+: \d+\.\n\n--- FILE CONTENT \(truncated\) ---\n([\s\S]*)$/;

/** A read_file answer as (first, last, total, content); a whole read has no note. */
function parseWindow(text) {
  const m = NOTE.exec(text);
  if (!m) return null;
  return { a: +m[1], b: +m[2], total: +m[3], params: m[4], content: m[5] };
}

/** One canonical form for a text window, whether or not a note came with it. */
function windowText(w, fallback) {
  if (!w) return `whole:${fallback.replace(/\n$/, '')}`;
  if (w.a === 1 && w.b === w.total && !w.content.includes('... [truncated]')) {
    return `whole:${w.content.replace(/\n$/, '')}`;
  }
  return `lines ${w.a}-${w.b} of ${w.total} (${w.params}):\n${w.content}`;
}

// --- orders --------------------------------------------------------------------

const byCodeUnits = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/** list_directory: sorts the [DIR] lines and the file lines, each group on its own. */
function sortListing(text) {
  const m = /^(Directory listing for [^\n]*:\n)([\s\S]*?)((?:\n\n\(\d+ ignored\))?)$/.exec(text);
  if (!m) return text;
  const lines = m[2] === '' ? [] : m[2].split('\n');
  const dirs = lines.filter((l) => l.startsWith('[DIR] ')).sort(byCodeUnits);
  const files = lines.filter((l) => !l.startsWith('[DIR] ')).sort(byCodeUnits);
  return m[1] + [...dirs, ...files].join('\n') + m[3];
}

/** search: sorts the `File:` blocks (names_only: the path lines). */
function sortSearch(text) {
  const head = text.indexOf(':\n---\n');
  if (head >= 0) {
    const body = text.slice(head + 6).replace(/\n---$/, '');
    const blocks = body.split('\n---\n').sort(byCodeUnits);
    return `${text.slice(0, head)}:\n---\n${blocks.join('\n---\n')}\n---`;
  }
  const names = /^(Found \d+ files with matches[^\n]*:\n)([\s\S]*)$/.exec(text);
  if (names) return names[1] + names[2].split('\n').sort(byCodeUnits).join('\n');
  return text;
}

/** read_many_files: the per-file blocks, and what follows them (terminator and report). */
function splitBlocks(text) {
  const end = text.indexOf('\n--- End of content ---');
  if (end < 0) return null;
  return { blocks: text.slice(0, end).split(/(?=^--- \/)/m).filter(Boolean), rest: text.slice(end) };
}

/** read_many_files without the blocks `drop` picks (nothing left: the "no files" answer). */
function dropBlocks(text, drop) {
  const parts = splitBlocks(text);
  if (!parts) return text;
  const kept = parts.blocks.filter((b) => !drop(b));
  if (kept.length === 0) {
    return 'No files matching the criteria were found or all were skipped.' + parts.rest.replace(/^\n--- End of content ---/, '');
  }
  return kept.join('') + parts.rest;
}

/** read_many_files: sorts the `--- path ---` blocks before the terminator. */
function sortBlocks(text) {
  const parts = splitBlocks(text);
  if (!parts) return text;
  return parts.blocks.sort(byCodeUnits).join('') + parts.rest;
}

// --- write answers ------------------------------------------------------------

/** The first sentence of a write tool's success answer. */
function firstSentence(text) {
  return text
    .replace(/ Here is the updated code:\n[\s\S]*$/, '')
    .replace(/\n\n`{3,}diff\n--- a\/[\s\S]*$/, '')
    .replace(/ The content is unchanged\.$/, '');
}

/** File bytes as text with the style taken out: BOM, UTF-16, CRLF, final newline. */
function plainText(bytes) {
  if (bytes === null) return null;
  let text;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) text = bytes.subarray(2).toString('utf16le');
  else if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) text = bytes.subarray(3).toString('utf8');
  else text = bytes.toString('utf8');
  return Buffer.from(text.replace(/\r\n/g, '\n').replace(/\n$/, ''));
}

const TEMP_SUFFIX = / or (?:within )?the project temp directory: \S+$/;

// --- declarations -------------------------------------------------------------

/**
 * A declaration reduced to what a model's call depends on: the tool's name,
 * each parameter's name, type (integer and number alike) and minimum, and
 * which are required. Descriptions are rootbound's own words and differ by
 * design. `drop` leaves parameters out, `rename` maps names.
 */
function shape(text, { rename = {}, drop = [] } = {}) {
  const d = JSON.parse(text);
  if (!d) return text;
  const props = {};
  for (const [name, p] of Object.entries(d.parameters.properties ?? {})) {
    if (drop.includes(name)) continue;
    const type = p.type === 'integer' ? 'number' : p.type;
    const nested = p.properties ? `{${Object.keys(p.properties).sort().join(',')}}` : '';
    const min = p.minimum !== undefined ? `>=${p.minimum}` : '';
    props[rename[name] ?? name] = type + nested + min;
  }
  const required = (d.parameters.required ?? [])
    .filter((n) => !drop.includes(n))
    .map((n) => rename[n] ?? n)
    .sort();
  return JSON.stringify({ name: d.name, props: Object.fromEntries(Object.entries(props).sort()), required });
}

/**
 * How the gemini-0.24 declarations differ from Gemini CLI 0.24's, per tool:
 * `ours` maps rootbound's names onto Gemini CLI's and drops what rootbound
 * adds; `gemini` drops what rootbound accepts without advertising it.
 */
const DECLARED_024 = {
  read_file: { ours: { rename: { path: 'file_path' } } },
  write_file: {},
  replace: { gemini: { drop: ['instruction'] } },
  list_directory: {
    ours: { rename: { path: 'dir_path' }, drop: ['respect_git_ignore'] },
    gemini: { drop: ['file_filtering_options'] },
  },
  glob: { ours: { rename: { path: 'dir_path' } }, gemini: { drop: ['respect_gemini_ignore'] } },
  search: {
    ours: {
      rename: { path: 'dir_path' },
      drop: ['exclude_pattern', 'total_max_matches', 'max_matches_per_file', 'names_only'],
    },
    // Gemini CLI 0.24 declares no minimum for the context counts.
    gemini: {},
  },
  read_many_files: {
    ours: { rename: { paths: 'include' }, drop: ['include', 'respect_git_ignore'] },
    gemini: { drop: ['file_filtering_options'] },
  },
};

export const DIFFERENCES = [
  {
    id: 'declared-0.24',
    what: 'In the gemini-0.24 dialect the path parameters are called `path` (read_file, list_directory, glob, search_file_content) and read_many_files takes `paths` (plus `include` for more patterns); search_file_content also offers `exclude_pattern`, `total_max_matches`, `max_matches_per_file` and `names_only`, with minimums on its counts; replace\'s `instruction` is not advertised; the ignore switch is a flat `respect_git_ignore`. Integer parameters are `integer`, and the descriptions are rootbound\'s own words.',
    why: 'docs/tools.md\'s names, the same for every tool, with Gemini CLI\'s spellings (`file_path`, `dir_path`, `include`, `file_filtering_options`, `instruction`) accepted as aliases; Gemini CLI\'s text is not ours to copy, and ours teach at least as much, the added parameters included.',
    versions: ['0.24'],
    match: (c) => c.kind === 'schema',
    normalize: (g, o, { c }) => {
      const d = DECLARED_024[c.tool];
      let ours = shape(o.text, d.ours);
      if (c.tool === 'search') ours = ours.replace(/>=\d/g, '');
      return [mapText(g, (t) => shape(t, d.gemini)), { ...o, text: ours }];
    },
  },
  {
    id: 'declared-current',
    what: 'The gemini-current declarations have newer Gemini CLI\'s names, parameters and required lists, in rootbound\'s own words; integer parameters are `integer`.',
    why: 'Gemini CLI\'s text is not ours to copy; ours teach at least as much.',
    versions: ['0.61'],
    match: (c) => c.kind === 'schema',
    normalize: (g, o) => [mapText(g, (t) => shape(t)), mapText(o, (t) => shape(t))],
  },
  {
    id: 'param-names-0.24',
    what: 'A missing path is reported under rootbound\'s name for it (`path`, `paths`), not Gemini CLI 0.24\'s (`file_path`, `dir_path`, `include`).',
    why: 'The message names the parameter as the advertised schema does (see declared-0.24).',
    versions: ['0.24'],
    cases: ['read_file/missing-path', 'list_directory/missing-path', 'read_many_files/missing-include'],
    normalize: (g, o) => [g, mapText(o, (t) => t.replace(/'paths?'$/, (m) => (g.text.match(/'[a-z_]+'$/) ?? [m])[0]))],
  },
  {
    id: 'integer-type',
    what: 'A non-integer count or offset is reported as `must be integer`, where Gemini CLI says `must be number`.',
    why: 'The schema says `integer` (see own-descriptions); the message follows the schema.',
    versions: ['0.24'],
    cases: ['read_file/offset-as-string', 'read_file/offset-null', 'replace/expected-as-string'],
    normalize: (g, o) => [g, mapText(o, (t) => t.replace(/ must be integer$/, ' must be number'))],
  },
  {
    id: 'final-newline',
    what: 'A final newline does not start another line: "a\\nb\\n" has 2 lines, not 3, so totals, last-line numbers and whole-file reads differ by that phantom empty line.',
    why: 'Line numbers then agree with editors, wc -l and file_read, and a read that shows the whole file says so instead of announcing a truncation.',
    cases: [
      'read_file/long-line',
      'read_file/default-limit',
      'read_file/range-middle',
      'read_file/range-to-end',
      'read_file/range-first',
      'read_file/range-whole',
      'read_file/range-start-only',
      'read_file/range-limit-only',
      'read_file/range-long-line',
      'read_file/range-crlf',
      'read_file/range-utf16',
      'read_many_files/long-line',
      'read_many_files/multi-root',
    ],
    normalize: (g, o, { c }) => {
      if (c.tool === 'read_many_files') {
        // A cut file whose window reaches the phantom line ends with it.
        const fix = (t) => {
          const parts = splitBlocks(t);
          if (!parts) return t;
          const blocks = parts.blocks.map((b) => (b.includes('[WARNING: This file was truncated.') ? b.replace(/\n\n\n$/, '\n\n') : b));
          return blocks.join('') + parts.rest;
        };
        return [mapText(g, fix), o];
      }
      // Gemini CLI counts one more line; a window that reaches it shows it
      // as an empty last line.
      const gw = parseWindow(g.text);
      if (gw) {
        gw.total -= 1;
        if (gw.b > gw.total) {
          gw.b -= 1;
          gw.content = gw.content.replace(/\n$/, '');
        }
      }
      return [mapText(g, (t) => windowText(gw, t)), mapText(o, (t) => windowText(parseWindow(t), t))];
    },
  },
  {
    id: 'offset-past-end',
    what: 'A range that starts after the last line is an error that says how long the file is; Gemini CLI answers with an empty "lines 41-11" window.',
    why: 'An empty window reads like an empty file; the error tells the model what to ask for instead.',
    cases: ['read_file/range-past-end'],
    normalize: (g, o) =>
      /Showing lines (\d+)-(\d+)/.test(g.text) && o.error && /beyond the end of the file/.test(o.text)
        ? both('past the end')(g, o)
        : [g, o],
  },
  {
    id: 'range-over-20mb',
    what: 'A text file over 20 MB can be read with a line range (it is streamed); without one, the refusal adds how to ask for a range.',
    why: 'Logs and data files are often that big; a window of them costs no more than a small file, and the hint says how to get it.',
    cases: ['read_file/range-big-file', 'read_file/too-large'],
    normalize: (g, o) => {
      if (!o.error) return g.error && /^File size exceeds the 20MB limit/.test(g.text) ? both('ranged read of a big file')(g, o) : [g, o];
      return [g, mapText(o, (t) => (t.startsWith(g.text) ? g.text : t))];
    },
  },
  {
    id: 'no-temp-dir',
    what: 'The outside-the-workspace message lists only the workspace directories, without "or the project temp directory: ...".',
    why: 'rootbound has no project temp directory; naming one would invite the model to use a place it cannot reach.',
    match: (c) => /outside|symlink-(outside|dangling)/.test(c.id),
    normalize: (g, o) => [mapText(g, (t) => t.replace(TEMP_SUFFIX, '')), o],
  },
  {
    id: 'links-leaving-roots',
    what: 'A symlink that leaves the roots or dangles is left out of listings and glob results; a file symlink inside the roots is listed under its own path.',
    why: 'docs/security.md: nothing outside the roots is reached or named. Gemini CLI lists such links (0.24 even a link to a directory as a file), and newer versions list file links under their targets\' names.',
    cases: ['list_directory/links', 'glob/symlinks'],
    normalize: (g, o, { c }) => {
      if (c.tool === 'list_directory') {
        const drop = (t) => t.replace(/\noutside\.txt(?: \(\d+ bytes\))?/, '').replace(/\n\n\(1 ignored\)$/, '');
        return [mapText(g, drop), o];
      }
      // glob: only the file link inside the roots, under its own path.
      const onlyInRoot = /^Found 1 file\(s\)[^\n]*\n\S*\/links\/to-lines\.txt$/.test(o.text);
      return onlyInRoot ? both('only in-root file links listed')(g, o) : [g, o];
    },
  },
  {
    id: 'links-named-as-given',
    what: 'In gemini-current, a path through a symlink that leaves the roots or dangles is refused with the outside-the-workspace message naming the path as given; newer Gemini CLI names the link\'s target, or reports a dangling link\'s target as not found.',
    why: 'docs/security.md: no message names a place outside the roots, and a dangling link is refused wherever it points.',
    versions: ['0.61'],
    cases: ['read_file/symlink-dangling', 'read_file/symlink-outside'],
    normalize: (g, o) => {
      const asGiven = /^Path not in workspace: Attempted path "[^"]*\/links\/[^"]*" resolves outside/.test(o.text);
      if (!asGiven) return [g, o];
      const target = (t) => t.replace(/^Path not in workspace: Attempted path "[^"]*"/, 'outside');
      if (/^File not found: /.test(g.text)) return both('dangling link refused')(g, o);
      return [mapText(g, target), mapText(o, target)];
    },
  },
  {
    id: 'dir-patterns-hide-dirs',
    what: 'list_directory hides (and counts) a directory that a `dir/` pattern ignores (`logs/` in .gitignore, `private/` in .geminiignore); Gemini CLI lists such directories.',
    why: 'The pattern says the directory is ignored; listing it invites the model into files every other tool hides.',
    cases: [
      'list_directory/root',
      'list_directory/root-relative',
      'list_directory/ignore-param',
      'list_directory/no-git-ignore',
      'list_directory/no-gemini-ignore',
    ],
    normalize: (g, o) => {
      // The fixture's directories ignored by a `dir/` pattern.
      const hidden = ['logs', 'private'].filter(
        (d) => g.text.includes(`\n[DIR] ${d}\n`) && !o.text.includes(`\n[DIR] ${d}\n`),
      );
      if (hidden.length === 0) return [g, o];
      let t = g.text;
      for (const d of hidden) t = t.replace(`\n[DIR] ${d}\n`, '\n');
      const m = /\n\n\((\d+) ignored\)$/.exec(t);
      t = m ? t.replace(/\((\d+) ignored\)$/, `(${+m[1] + hidden.length} ignored)`) : `${t}\n\n(${hidden.length} ignored)`;
      return [{ ...g, text: t }, o];
    },
  },
  {
    id: 'git-ignored-readable',
    what: 'read_file reads a file that .gitignore ignores (a .geminiignore\'d file stays refused).',
    why: 'A model asked to read a file by name should get it; ignore files are for discovery (glob, search), and .env or build output may be exactly what the user means.',
    cases: ['read_file/git-ignored'],
    normalize: (g, o) =>
      g.error && /is ignored by configured ignore patterns\.$/.test(g.text) && !o.error ? both('git-ignored file read')(g, o) : [g, o],
  },
  {
    id: 'newer-blocked-paths',
    what: 'Files inside .git, node_modules or named .env are reachable like any other in gemini-current (write tools still refuse .git); newer Gemini CLI carves them out of the workspace.',
    why: 'The user chose the roots; library sources in node_modules answer real questions, and rootbound\'s own rules (no writes in .git, .geminiignore) already guard the rest.',
    versions: ['0.61'],
    cases: [
      'read_file/hidden-file',
      'read_file/in-node-modules',
      'list_directory/root',
      'list_directory/root-relative',
      'list_directory/ignore-param',
      'list_directory/no-git-ignore',
      'list_directory/no-gemini-ignore',
      'read_many_files/env-named-no-default-excludes',
      'read_many_files/js-no-default-excludes',
    ],
    normalize: (g, o, { c }) => {
      if (c.tool === 'read_file') {
        return /^Path not in workspace: /.test(g.text) && !o.error ? both('blocked segment read')(g, o) : [g, o];
      }
      if (c.tool === 'list_directory') {
        const drop = (t) =>
          t
            .replace(/\n\[DIR\] (?:\.git|node_modules)(?=\n)/g, '')
            .replace(/\n\.env \(\d+ bytes\)(?=\n)/, '');
        return [g, mapText(o, drop)];
      }
      return [g, mapText(o, (t) => dropBlocks(t, (b) => /^--- \S*\/(?:\.env|node_modules\/\S*) ---/.test(b)))];
    },
  },
  {
    id: 'crlf-as-is',
    what: 'read_file and read_many_files return a CRLF file\'s text as it is, `\\r` included; newer Gemini CLI drops the `\\r`.',
    why: 'The model sees the file\'s real line endings, which write_file and replace keep.',
    versions: ['0.61'],
    cases: ['read_file/crlf', 'read_file/mixed-endings', 'read_file/range-crlf', 'read_many_files/crlf-utf16', 'read_many_files/multi-root'],
    normalize: (g, o) => [g, mapText(o, (t) => t.replace(/\r(?=\n|$)/g, ''))],
  },
  {
    id: 'write-answers-with-diff',
    what: 'write_file and replace answer with the first sentence and then a unified diff of the change in a fenced diff block (or "The content is unchanged."); newer Gemini CLI follows it with the changed region as plain text.',
    why: 'A diff shows exactly what changed, including whitespace and line endings, so the model can check its edit without another read.',
    match: (c) => (c.tool === 'write_file' || c.tool === 'replace') && c.kind !== 'schema',
    normalize: (g, o) => [g.error ? g : mapText(g, firstSentence), o.error ? o : mapText(o, firstSentence)],
  },
  {
    id: 'write-keeps-style',
    what: 'write_file over an existing file keeps its CRLF endings, byte-order mark, UTF-16 encoding and final newline; Gemini CLI writes what it was given as UTF-8 (0.24 also drops the final newline).',
    why: 'A model writes LF text; the file\'s own style is kept so the change shows up in a diff as what it is, not as every line rewritten.',
    cases: [
      'write_file/overwrite',
      'write_file/overwrite-same',
      'write_file/overwrite-crlf',
      'write_file/overwrite-bom',
      'write_file/overwrite-utf16',
      'write_file/overwrite-empty-file',
    ],
    normalize: (g, o) => {
      const plain = (side) => ({ ...side, files: Object.fromEntries(Object.entries(side.files).map(([k, v]) => [k, plainText(v)])) });
      return [plain(g), plain(o)];
    },
  },
  {
    id: 'no-writes-in-git',
    what: 'write_file and replace refuse any path inside a .git directory.',
    why: 'Git\'s internal files are not edited by hand; a model that wants to change them should use git.',
    cases: ['write_file/into-git-dir', 'replace/into-git-dir'],
    normalize: (g, o) => (o.error && /^Refusing to write .*inside a \.git directory/.test(o.text) ? both('.git refused')(g, o) : [g, o]),
  },
  {
    id: 'placeholders-refused',
    what: 'Content with an omission placeholder line ("// ... rest of code ...") is refused by write_file and replace.',
    why: 'Written out, such a line deletes the code it stands for.',
    cases: ['write_file/omission-placeholder', 'replace/omission-placeholder'],
    normalize: (g, o) => (o.error && /omission placeholder/.test(o.text) && !g.error ? both('placeholder refused')(g, o) : [g, o]),
  },
  {
    id: 'no-fuzzy-edits',
    what: 'replace applies only exact matches (line endings aside); when old_string is not found it names the closest region and what differs, and changes nothing. Gemini CLI retries with whitespace-insensitive and regex matching and applies what that finds.',
    why: 'A fuzzy match can change the wrong place or mangle indentation; the near-miss report lets the model correct old_string itself.',
    cases: ['replace/near-miss-indentation'],
    normalize: (g, o) => (o.error && !g.error ? both('near miss reported')(g, o) : [g, o]),
  },
  {
    id: 'not-found-wording',
    what: 'When old_string is not found, the message is "Failed to edit, 0 occurrences found for old_string in <path>." and advice, without repeating old_string twice.',
    why: 'The model wrote old_string; the space goes to advice and to the closest region instead.',
    versions: ['0.24'],
    cases: ['replace/not-found', 'replace/empty-file'],
    normalize: (g, o) => [
      mapText(g, (t) => t.replace(/^Failed to edit, 0 occurrences found for old_string \([\s\S]*?\)\. Original old_string was \([\s\S]*?\) in (\S+)\. [\s\S]*$/, 'not found in $1')),
      mapText(o, (t) => t.replace(/^Failed to edit, 0 occurrences found for old_string in (\S+)\. [\s\S]*$/, 'not found in $1')),
    ],
  },
  {
    id: 'hints-name-offered-tools',
    what: 'In gemini-current, the not-found message says to use read_file, the tool this server offers, where Gemini CLI says ReadFile.',
    why: 'The extension turns Gemini CLI\'s own file tools off, so the model has no tool called ReadFile.',
    versions: ['0.61'],
    match: (c) => c.tool === 'replace' && c.kind !== 'schema',
    normalize: (g, o) => [g, mapText(o, (t) => t.replace('please use read_file to inspect', 'please use ReadFile to inspect'))],
  },
  {
    id: 'missing-file-hint',
    what: 'replace on a missing file adds how to create one (an empty old_string, or write_file).',
    why: 'It is the usual next step; saying it saves a turn.',
    cases: ['replace/missing-file'],
    normalize: (g, o) => [g, mapText(o, (t) => (t.startsWith(`${g.text}.`) ? g.text : t))],
  },
  {
    id: 'instruction-optional-0.24',
    what: 'In the gemini-0.24 dialect replace does not require `instruction`.',
    why: 'rootbound never sends the edit to another model, so the instruction has no use; gemini-current requires it, as newer Gemini CLI does.',
    versions: ['0.24'],
    cases: ['replace/no-instruction'],
    normalize: (g, o) => (/required property 'instruction'/.test(g.text) && !o.error ? both('instruction not required')(g, o) : [g, o]),
  },
  {
    id: 'utf16-edits',
    what: 'replace edits UTF-16 files (decoded, then encoded back with their byte-order mark); Gemini CLI reads them as UTF-8 and finds nothing.',
    why: 'Such files exist (Windows resource and log files); an edit should work on what the model read.',
    cases: ['replace/utf16-file'],
    normalize: (g, o) => (g.error && !o.error ? both('utf-16 edited')(g, o) : [g, o]),
  },
  {
    id: 'directory-wording',
    what: 'replace on a directory says "Path is a directory, not a file: <path>", not Node\'s "EISDIR: illegal operation on a directory, read".',
    why: 'Plain words with the path; the same message read_file and write_file give.',
    cases: ['replace/directory'],
    normalize: (g, o) => [mapText(g, (t) => (/^EISDIR/.test(t) ? o.text : t)), o],
  },
  {
    id: 'listing-missing-wording',
    what: 'list_directory on a missing path says "Error listing directory: <path> does not exist.", not Node\'s "ENOENT: no such file or directory, stat \'<path>\'".',
    why: 'Plain words; rootbound is not a Node program and its errors should not pretend to be.',
    cases: ['list_directory/missing'],
    normalize: (g, o) => [
      mapText(g, (t) => t.replace(/^Error listing directory: ENOENT: no such file or directory, stat '(.*)'$/, 'missing $1')),
      mapText(o, (t) => t.replace(/^Error listing directory: (.*) does not exist\.$/, 'missing $1')),
    ],
  },
  {
    id: 'name-order',
    what: 'Names and paths are ordered by their lower-case form, then by bytes (docs/tools.md); Gemini CLI uses locale collation (list_directory), code units (read_many_files) or ripgrep\'s discovery order (search), which varies from run to run.',
    why: 'One order everywhere, the same on every machine and every run, so results can be compared and cached.',
    match: (c) => ['list_directory', 'search', 'read_many_files'].includes(c.tool) && c.kind !== 'schema',
    normalize: (g, o, { c }) => {
      const sort = c.tool === 'list_directory' ? sortListing : c.tool === 'search' ? sortSearch : sortBlocks;
      return [mapText(g, sort), mapText(o, sort)];
    },
  },
  {
    id: 'search-keeps-indentation',
    what: 'search_file_content keeps each line\'s indentation (Gemini CLI 0.24 trims both ends of a line).',
    why: 'The next replace needs the exact text, indentation included; newer Gemini CLI keeps it too.',
    versions: ['0.24'],
    match: (c) => c.tool === 'search' && c.kind !== 'schema',
    normalize: (g, o) => [g, mapText(o, (t) => t.replace(/^(L\d+: )(.*)$/gm, (m, l, rest) => l + rest.trim()))],
  },
  {
    id: 'search-context',
    what: 'search_file_content shows the context lines `context`, `before` and `after` ask for (Gemini CLI 0.24 accepts them and shows none).',
    why: 'The parameters are declared; they should work.',
    versions: ['0.24'],
    cases: ['search/context', 'search/before-after'],
    normalize: (g, o) => [g, mapText(o, (t) => t.replace(/^L\d+- .*\n/gm, ''))],
  },
  {
    id: 'search-negative-context',
    what: 'A negative `context` is an argument error ("params/context must be >= 0"); Gemini CLI 0.24 passes it to ripgrep and shows ripgrep\'s usage error as a result.',
    why: 'The schema says the minimum; the validator tells the model in the usual words.',
    versions: ['0.24'],
    cases: ['search/negative-context'],
    normalize: (g, o) => (/ripgrep exited with code 2/.test(g.text) && /must be >= 0$/.test(o.text) ? both('negative context refused')(g, o) : [g, o]),
  },
  {
    id: 'search-line-cut',
    what: 'search_file_content cuts a shown line at 2000 characters with "... [truncated]" (as read_file does).',
    why: 'One minified line can otherwise fill the whole answer; newer Gemini CLI cuts too.',
    versions: ['0.24'],
    cases: ['search/long-line'],
    normalize: (g, o) => [mapText(g, (t) => t.replace(/^(L\d+: )(.{2000}).+$/gm, '$1$2... [truncated]')), o],
  },
  {
    id: 'search-cap-100',
    what: 'search_file_content returns at most 100 matches unless total_max_matches asks for more (Gemini CLI 0.24: 20,000).',
    why: 'Newer Gemini CLI\'s default; 20,000 lines would fill a model\'s context, and the note says how to get more.',
    versions: ['0.24'],
    cases: ['search/many-matches'],
    normalize: (g, o) => {
      const capped = g.text
        .replace(/^Found \d+ matches (for pattern .*?):\n/, 'Found 100 matches $1 (results limited to 100 matches for performance):\n')
        .replace(/^(L(\d+): .*\n)/gm, (line, _l, n) => (+n > 100 ? '' : line));
      return [{ ...g, text: capped }, o];
    },
  },
  {
    id: 'include-keeps-ignores',
    what: 'search_file_content\'s `include` narrows the search but never brings back what ignore files hide, and a search path below an ignored directory finds nothing there (ripgrep\'s --glob and explicit paths override ignore files).',
    why: '.geminiignore is the user\'s word on what models should not see; a filter should not undo it. Newer Gemini CLI filters these results out too.',
    versions: ['0.24'],
    cases: ['search/gemini-ignored-by-include', 'search/git-ignored-dir-path'],
    normalize: (g, o) => (!g.error && /^Found/.test(g.text) && /^No matches found/.test(o.text) ? both('ignored stays ignored')(g, o) : [g, o]),
  },
  {
    id: 'regex-errors',
    what: 'An invalid regular expression is reported as "Invalid regular expression pattern provided: <pattern>. Error: <reason>" with the Rust regex parser\'s reason; Gemini CLI 0.24 reports ripgrep\'s failure as a search result, newer Gemini CLI gives JavaScript\'s reason.',
    why: 'The pattern runs on Rust\'s regex syntax (ripgrep\'s), so its parser is the one that knows what is wrong.',
    cases: ['search/invalid-regex', 'search/invalid-regex-bracket', 'search/exclude-pattern-invalid'],
    normalize: (g, o, { version }) => {
      if (version === '0.24') {
        const m = /^Error during grep search operation: ripgrep exited with code 2: ([\s\S]*?)\n?$/.exec(g.text);
        return m ? [{ ...g, error: true, text: `reason: ${m[1]}` }, mapText(o, (t) => t.replace(/^Invalid regular expression pattern provided: [\s\S]*?\. Error: /, 'reason: '))] : [g, o];
      }
      const cut = (t) => t.replace(/\. Error: [\s\S]*$/, '. Error: <reason>');
      return [mapText(g, cut), mapText(o, cut)];
    },
  },
  {
    id: 'auto-context-counts',
    what: 'When gemini-current adds context around 1 to 3 matches and max_matches_per_file stopped a file, only matches are counted; newer Gemini CLI counts the after-context lines as matches.',
    why: 'The count should say how many lines matched.',
    versions: ['0.61'],
    cases: ['search/max-per-file'],
    normalize: (g, o) => (/^Found 17 matches/.test(g.text) && /^Found 2 matches/.test(o.text) ? both('auto-context count')(g, o) : [g, o]),
  },
  {
    id: 'directories-expand',
    what: 'read_many_files reads every file below a directory given as a path ("docs" or "docs/"); Gemini CLI matches the directory itself and reads nothing.',
    why: 'A model that names a directory wants its files.',
    cases: ['read_many_files/directory', 'read_many_files/directory-slash'],
    normalize: (g, o) => (/^No files matching/.test(g.text) && /^--- \//.test(o.text) ? both('directory read')(g, o) : [g, o]),
  },
  {
    id: 'skipped-report',
    what: 'read_many_files ends with a list of what it skipped and why (ignored by .gitignore or .geminiignore, excluded by default, binary, too large, not found, outside the roots).',
    why: 'Gemini CLI tells only the user; the model should know what it did not get, so it does not conclude a file is empty or missing.',
    match: (c) => c.tool === 'read_many_files' && c.kind !== 'schema',
    normalize: (g, o) => [g, mapText(o, (t) => t.replace(/\nSkipped \d+ file\(s\):\n[\s\S]*$/, ''))],
  },
  {
    id: 'media-named',
    what: 'read_many_files puts a "--- <path> ---" text block before each image, audio or PDF block.',
    why: 'Otherwise the model cannot tell which file an image came from.',
    cases: ['read_many_files/png-named', 'read_many_files/png-by-extension', 'read_many_files/pdf-named'],
    normalize: (g, o) => [g, mapText(o, (t) => t.replace(/--- \/[^\n]* ---\n\n(?=\[media )/g, ''))],
  },
  {
    id: 'binaries-skipped',
    what: 'read_many_files skips binary files and SVG files over 1 MB (listing them as skipped) instead of adding "Cannot display content of ..." blocks.',
    why: 'Those blocks carry no content; the skipped list says the same in one line each.',
    cases: ['read_many_files/binaries', 'read_many_files/media-not-asked'],
    normalize: (g, o) => [
      mapText(g, (t) => dropBlocks(t, (b) => /^--- [^\n]* ---\n\nCannot display content of /.test(b))),
      o,
    ],
  },
];
