// The parity cases. Each runs through Gemini CLI's tool and through
// rootbound with the same arguments (Gemini's own spelling for that
// version; rootbound accepts every spelling in every dialect).
//
//   id      unique; the differences table refers to it
//   tool    read_file, write_file, replace, list_directory, glob, search, read_many_files
//   args    the arguments ({ROOT}, {ROOT2}: the roots), or
//   by      { '0.24': args, '0.61': args } when the versions spell them differently
//   only    '0.24' or '0.61' when a case exists in one version only
//   roots   main (default), multi (main + second), plain (no git), write (rebuilt per side)
//   write   true: runs in a fresh write tree; `files` are compared byte for byte after
//   kind    'schema': compares the declarations instead of a call

const cases = [];
const add = (c) => cases.push(c);

// --- declarations --------------------------------------------------------------
for (const tool of ['read_file', 'write_file', 'replace', 'list_directory', 'glob', 'search', 'read_many_files']) {
  add({ id: `${tool}/declaration`, tool, kind: 'schema' });
}

// --- read_file -------------------------------------------------------------------
const read = (id, file_path, extra = {}) => add({ id: `read_file/${id}`, tool: 'read_file', args: { file_path, ...extra } });
const readRange = (id, file_path, v24, v61) =>
  add({
    id: `read_file/${id}`,
    tool: 'read_file',
    by: { '0.24': { file_path, ...v24 }, '0.61': { file_path, ...v61 } },
  });

read('whole', 'lines.txt');
read('absolute', '{ROOT}/lines.txt');
read('no-final-newline', 'nofinal.txt');
read('empty', 'empty.txt');
read('blank-lines', 'blank-lines.txt');
read('crlf', 'crlf.txt');
read('mixed-endings', 'mixed.txt');
read('utf8-bom', 'bom8.txt');
read('utf16le-bom', 'utf16le.txt');
read('utf16be-bom', 'utf16be.txt');
read('invalid-utf8', 'latin1.txt');
read('unicode-name', 'unicode-ü.txt');
read('long-line', 'long-line.txt');
read('default-limit', 'big.txt');
read('tabs', 'tabs.txt');
readRange('range-middle', 'lines.txt', { offset: 2, limit: 3 }, { start_line: 3, end_line: 5 });
readRange('range-to-end', 'lines.txt', { offset: 7, limit: 50 }, { start_line: 8, end_line: 50 });
readRange('range-first', 'lines.txt', { offset: 0, limit: 1 }, { start_line: 1, end_line: 1 });
readRange('range-whole', 'lines.txt', { offset: 0, limit: 10 }, { start_line: 1, end_line: 10 });
readRange('range-start-only', 'big.txt', { offset: 2400 }, { start_line: 2401 });
readRange('range-limit-only', 'lines.txt', { limit: 4 }, { end_line: 4 });
readRange('range-past-end', 'lines.txt', { offset: 40, limit: 2 }, { start_line: 41, end_line: 42 });
readRange('range-long-line', 'long-line.txt', { offset: 0, limit: 1 }, { start_line: 1, end_line: 1 });
readRange('range-crlf', 'crlf.txt', { offset: 1, limit: 1 }, { start_line: 2, end_line: 2 });
readRange('range-utf16', 'utf16le.txt', { offset: 1, limit: 1 }, { start_line: 2, end_line: 2 });
readRange('range-big-file', 'sized/huge.txt', { offset: 0, limit: 2 }, { start_line: 1, end_line: 2 });
readRange('bad-offset', 'lines.txt', { offset: -1 }, { start_line: 0 });
readRange('bad-limit', 'lines.txt', { limit: 0 }, { end_line: 0 });
readRange('offset-as-string', 'lines.txt', { offset: '2' }, { start_line: '2' });
add({ id: 'read_file/start-after-end', tool: 'read_file', only: '0.61', args: { file_path: 'lines.txt', start_line: 5, end_line: 3 } });
add({ id: 'read_file/offset-null', tool: 'read_file', only: '0.24', args: { file_path: 'lines.txt', offset: null } });
read('not-found', 'missing.txt');
read('case-differs', 'readme.md');
read('case-differs-absolute', '{ROOT}/LINES.TXT');
read('directory', 'docs');
read('outside', '/etc/hostname');
read('outside-relative', '../outside.txt');
read('gemini-ignored', 'private/key.txt');
read('gemini-ignored-glob', 'token.secret');
read('git-ignored', 'ignored.txt');
read('png', 'media/pixel.png');
read('gif', 'media/anim.gif');
read('mp3', 'media/sound.mp3');
read('pdf', 'media/paper.pdf');
read('svg', 'media/logo.svg');
read('svg-too-large', 'media/huge.svg');
read('binary-sniffed', 'bin/tool.dat');
read('binary-extension', 'bin/archive.zip');
read('binary-class', 'bin/Main.class');
read('control-bytes', 'bin/controls.txt');
read('too-large', 'sized/huge.txt');
read('symlink-inside', 'links/to-lines.txt');
read('symlink-outside', 'links/outside.txt');
read('symlink-dangling', 'links/dangling.txt');
read('hidden-file', '.env');
read('in-node-modules', 'node_modules/dep/index.js');
read('empty-path', '');
read('null-path', null);
add({ id: 'read_file/missing-path', tool: 'read_file', args: {} });
add({ id: 'read_file/path-not-string', tool: 'read_file', args: { file_path: 7 } });

// --- write_file ------------------------------------------------------------------
const write = (id, file_path, content, files, extra = {}) =>
  add({ id: `write_file/${id}`, tool: 'write_file', write: true, args: { file_path, content }, files, ...extra });

write('create', '{ROOT}/new.txt', 'brand new\n', ['new.txt']);
write('create-nested', '{ROOT}/a/b/c.txt', 'nested\n', ['a/b/c.txt']);
write('create-relative', 'rel/new.txt', 'relative\n', ['rel/new.txt']);
write('create-empty', '{ROOT}/blank.txt', '', ['blank.txt']);
write('create-no-final-newline', '{ROOT}/nofinal-new.txt', 'no newline at end', ['nofinal-new.txt']);
write('create-crlf-content', '{ROOT}/crlf-new.txt', 'one\r\ntwo\r\n', ['crlf-new.txt']);
write('create-dollars', '{ROOT}/dollars.txt', 'a $1 $& $$ $` b\n', ['dollars.txt']);
write('create-unicode', '{ROOT}/ünï.txt', 'grüße 日本\n', ['ünï.txt']);
write('overwrite', '{ROOT}/plain.txt', 'replaced\ncontent\n', ['plain.txt']);
write('overwrite-same', '{ROOT}/plain.txt', 'first\nsecond\nthird\n', ['plain.txt']);
write('overwrite-crlf', '{ROOT}/crlf.txt', 'alpha\nbeta\ndelta\n', ['crlf.txt']);
write('overwrite-no-final-newline', '{ROOT}/nofinal.txt', 'first\nsecond\nthird', ['nofinal.txt']);
write('overwrite-adds-final-newline', '{ROOT}/nofinal.txt', 'first\nsecond\n', ['nofinal.txt']);
write('overwrite-bom', '{ROOT}/bom8.txt', 'bom line\nchanged\n', ['bom8.txt']);
write('overwrite-utf16', '{ROOT}/utf16le.txt', 'wide\nchanged\n', ['utf16le.txt']);
write('overwrite-empty-file', '{ROOT}/empty.txt', 'now full\n', ['empty.txt']);
write('truncate-to-empty', '{ROOT}/plain.txt', '', ['plain.txt']);
write('directory', '{ROOT}/sub', 'x\n', ['sub/deep.txt']);
write('outside', '/tmp/rootbound-parity-outside.txt', 'x\n', []);
write('into-git-dir', '{ROOT}/.git/config', '[core]\n', ['.git/config']);
write('omission-placeholder', '{ROOT}/code.js', 'function add(a, b) {\n  // ... rest of code ...\n}\n', ['code.js']);
write('empty-path', '', 'x\n', []);
add({ id: 'write_file/missing-content', tool: 'write_file', write: true, args: { file_path: '{ROOT}/x.txt' }, files: ['x.txt'] });
add({ id: 'write_file/null-content', tool: 'write_file', write: true, args: { file_path: '{ROOT}/x.txt', content: null }, files: ['x.txt'] });
add({ id: 'write_file/content-not-string', tool: 'write_file', write: true, args: { file_path: '{ROOT}/x.txt', content: 5 }, files: ['x.txt'] });

// --- replace ---------------------------------------------------------------------
const INSTRUCTION = 'Apply the change described by old_string and new_string.';
const replace = (id, file, old_string, new_string, files, extra = {}) =>
  add({
    id: `replace/${id}`,
    tool: 'replace',
    write: true,
    args: { file_path: file, instruction: INSTRUCTION, old_string, new_string, ...(extra.args ?? {}) },
    by: extra.by,
    files,
    only: extra.only,
  });
const both = (common, v24, v61) => ({
  '0.24': { instruction: INSTRUCTION, ...common, ...v24 },
  '0.61': { instruction: INSTRUCTION, ...common, ...v61 },
});

replace('single', '{ROOT}/plain.txt', 'second', 'SECOND', ['plain.txt']);
replace('multi-line', '{ROOT}/code.js', '  return a + b;\n}', '  const sum = a + b;\n  return sum;\n}', ['code.js']);
replace('delete-text', '{ROOT}/plain.txt', 'second\n', '', ['plain.txt']);
replace('not-found', '{ROOT}/plain.txt', 'fourth', 'x', ['plain.txt']);
replace('near-miss-indentation', '{ROOT}/indent.py', 'if x:\n    return 1', 'if y:\n    return 1', ['indent.py']);
replace('several-found', '{ROOT}/repeat.txt', 'foo', 'qux', ['repeat.txt']);
add({
  id: 'replace/all-occurrences',
  tool: 'replace',
  write: true,
  by: both({ file_path: '{ROOT}/repeat.txt', old_string: 'foo', new_string: 'qux' }, { expected_replacements: 3 }, { allow_multiple: true }),
  files: ['repeat.txt'],
});
replace('expected-two-found-three', '{ROOT}/repeat.txt', 'foo', 'qux', ['repeat.txt'], {
  only: '0.24',
  args: { expected_replacements: 2 },
});
replace('expected-zero', '{ROOT}/repeat.txt', 'foo', 'qux', ['repeat.txt'], { only: '0.24', args: { expected_replacements: 0 } });
replace('expected-as-string', '{ROOT}/repeat.txt', 'foo', 'qux', ['repeat.txt'], { only: '0.24', args: { expected_replacements: '3' } });
replace('allow-multiple-one', '{ROOT}/plain.txt', 'third', '3rd', ['plain.txt'], { only: '0.61', args: { allow_multiple: true } });
replace('allow-multiple-none', '{ROOT}/plain.txt', 'zzz', '3rd', ['plain.txt'], { only: '0.61', args: { allow_multiple: true } });
replace('identical', '{ROOT}/plain.txt', 'second', 'second', ['plain.txt']);
replace('create', '{ROOT}/created.txt', '', 'created\n', ['created.txt']);
replace('create-nested', '{ROOT}/x/y/z.txt', '', 'deep\n', ['x/y/z.txt']);
replace('create-existing', '{ROOT}/plain.txt', '', 'x\n', ['plain.txt']);
replace('missing-file', '{ROOT}/nope.txt', 'a', 'b', ['nope.txt']);
replace('crlf-file', '{ROOT}/crlf.txt', 'beta', 'BETA', ['crlf.txt']);
replace('crlf-multi-line', '{ROOT}/crlf.txt', 'alpha\nbeta', 'alpha\nnew\nbeta', ['crlf.txt']);
replace('crlf-in-old-string', '{ROOT}/crlf.txt', 'alpha\r\nbeta', 'ALPHA\r\nBETA', ['crlf.txt']);
replace('no-final-newline', '{ROOT}/nofinal.txt', 'second', 'last', ['nofinal.txt']);
replace('at-end-adds-newline', '{ROOT}/nofinal.txt', 'second', 'second\n', ['nofinal.txt']);
replace('dollar-patterns', '{ROOT}/dollar.txt', '10', "$1 $& $$ $' $`", ['dollar.txt']);
replace('dollar-in-old', '{ROOT}/dollar.txt', 'cost = 10', 'price = $10', ['dollar.txt']);
replace('bom-file', '{ROOT}/bom8.txt', 'next', 'after', ['bom8.txt']);
replace('utf16-file', '{ROOT}/utf16le.txt', 'chars', 'glyphs', ['utf16le.txt']);
replace('empty-file', '{ROOT}/empty.txt', 'x', 'y', ['empty.txt']);
replace('unicode', '{ROOT}/plain.txt', 'first', 'première', ['plain.txt']);
replace('relative-path', 'plain.txt', 'first', 'one', ['plain.txt']);
replace('outside', '/etc/hostname', 'a', 'b', []);
replace('into-git-dir', '{ROOT}/.git/HEAD', 'ref', 'x', []);
replace('directory', '{ROOT}/sub', 'a', 'b', []);
replace('omission-placeholder', '{ROOT}/code.js', '  return a - b;', '  // ... rest of code ...', ['code.js']);
add({
  id: 'replace/no-instruction',
  tool: 'replace',
  write: true,
  args: { file_path: '{ROOT}/plain.txt', old_string: 'first', new_string: '1st' },
  files: ['plain.txt'],
});
add({
  id: 'replace/missing-new-string',
  tool: 'replace',
  write: true,
  args: { file_path: '{ROOT}/plain.txt', instruction: INSTRUCTION, old_string: 'first' },
  files: ['plain.txt'],
});
add({
  id: 'replace/null-old-string',
  tool: 'replace',
  write: true,
  args: { file_path: '{ROOT}/plain.txt', instruction: INSTRUCTION, old_string: null, new_string: 'x' },
  files: ['plain.txt'],
});

// --- list_directory ----------------------------------------------------------------
const ls = (id, dir_path, extra = {}) =>
  add({ id: `list_directory/${id}`, tool: 'list_directory', args: { dir_path, ...extra.args }, roots: extra.roots });

ls('root', '{ROOT}');
ls('root-relative', '.');
ls('subdir', 'docs');
ls('nested', 'src/deep');
ls('empty', 'docs/empty-dir');
ls('ordering', 'case');
ls('hidden-dir', '.github');
ls('links', 'links');
ls('not-a-directory', 'lines.txt');
ls('missing', 'nope');
ls('outside', '/etc');
ls('outside-relative', '..');
ls('ignore-param', '{ROOT}', { args: { ignore: ['*.txt', 'src'] } });
ls('ignore-param-question', 'case', { args: { ignore: ['?.txt'] } });
ls('all-ignored', 'allignored');
ls('git-ignored-dir', 'logs');
ls('gemini-ignored-dir', 'private');
ls('no-git-ignore', '{ROOT}', { args: { file_filtering_options: { respect_git_ignore: false } } });
ls('no-gemini-ignore', '{ROOT}', { args: { file_filtering_options: { respect_gemini_ignore: false } } });
ls('nested-git-dir', 'onlygit');
ls('media', 'media');
ls('no-git-tree', '{ROOT}', { roots: 'plain' });
ls('second-root', '{ROOT2}', { roots: 'multi' });
add({ id: 'list_directory/missing-path', tool: 'list_directory', args: {} });
add({ id: 'list_directory/ignore-not-array', tool: 'list_directory', args: { dir_path: '.', ignore: '*.txt' } });

// --- glob ---------------------------------------------------------------------------
const glob = (id, pattern, extra = {}) =>
  add({ id: `glob/${id}`, tool: 'glob', args: { pattern, ...extra.args }, roots: extra.roots });

glob('markdown-everywhere', '**/*.md');
glob('top-level', '*.txt');
glob('braces', 'src/**/*.{ts,tsx}');
glob('character-class', 'case/[ab]*.txt');
glob('question-mark', 'case/?.txt');
glob('literal-brackets', 'app/[id]/page.tsx');
glob('brackets-as-class', 'app/[ix]/page.tsx');
glob('literal-parens', 'app/(group)/layout.tsx');
glob('case-insensitive', 'README.MD');
glob('case-sensitive', 'README.MD', { args: { case_sensitive: true } });
glob('no-match', '**/*.nothing');
glob('no-match-ignored', 'ignored.txt');
glob('some-ignored', '**/*.txt', { args: { dir_path: 'logs' } });
glob('dotfiles', '**/.env*');
glob('hidden-dir', '.github/**');
glob('in-node-modules', '**/index.js');
glob('dir-path', '*.md', { args: { dir_path: 'docs' } });
glob('dir-path-absolute', '**/*.py', { args: { dir_path: '{ROOT}/src' } });
glob('dir-path-outside', '*', { args: { dir_path: '/etc' } });
glob('dir-path-missing', '*', { args: { dir_path: 'nope' } });
glob('dir-path-file', '*', { args: { dir_path: 'lines.txt' } });
glob('empty-pattern', '');
glob('blank-pattern', '   ');
glob('no-git-ignore', '**/*.cache', { args: { respect_git_ignore: false } });
glob('no-gemini-ignore', '**/*.secret', { args: { respect_gemini_ignore: false } });
glob('recent-first', 'recent/*.md');
glob('symlinks', 'links/*');
glob('absolute-pattern', '{ROOT}/docs/*.md');
glob('dot-slash', './src/*.rs');
glob('media', 'media/*.{png,gif}');
glob('multi-root', '**/*.md', { roots: 'multi' });
glob('multi-root-no-match', '**/*.nothing', { roots: 'multi' });
glob('multi-root-ignored', 'ignored.txt', { roots: 'multi' });
glob('no-git-tree', '*.txt', { roots: 'plain' });
add({ id: 'glob/missing-pattern', tool: 'glob', args: {} });
add({ id: 'glob/case-sensitive-not-boolean', tool: 'glob', args: { pattern: '*.md', case_sensitive: 'yes' } });

// --- search_file_content / grep_search ---------------------------------------------
const search = (id, pattern, extra = {}) => {
  const { include, ...rest } = extra.args ?? {};
  const v24 = { pattern, ...rest };
  const v61 = { pattern, ...rest };
  if (include !== undefined) {
    v24.include = include;
    v61.include_pattern = include;
  }
  add({ id: `search/${id}`, tool: 'search', by: { '0.24': v24, '0.61': v61 }, roots: extra.roots, only: extra.only });
};

search('everywhere', 'TODO');
search('regex', 'fn\\s+main');
search('one-match', 'Say hello');
search('two-matches', 'greet');
search('include-name', 'TODO', { args: { include: '*.md' } });
search('include-path', 'return', { args: { include: 'src/**/*.ts' } });
search('include-braces', 'TODO', { args: { include: '*.{ts,tsx,rs}' } });
search('dir-path', 'TODO', { args: { dir_path: 'src' } });
search('dir-path-absolute', 'TODO', { args: { dir_path: '{ROOT}/docs' } });
search('single-file', 'answer', { args: { dir_path: 'src/main.rs' } });
search('no-match', 'zzz-no-such-text');
search('no-match-filter', 'zzz-no-such-text', { args: { include: '*.rs' } });
search('invalid-regex', 'foo(');
search('invalid-regex-bracket', '[a-');
search('fixed-strings', 'a+b', { args: { fixed_strings: true } });
search('regex-specials', 'price: \\$5');
search('case-insensitive', 'todo');
search('case-sensitive', 'todo', { args: { case_sensitive: true } });
search('context', 'answer', { args: { context: 1 } });
search('before-after', 'Greeter', { args: { before: 2, after: 1 } });
search('negative-context', 'answer', { args: { context: -1 } });
search('indentation', 'indented|four spaces|two', { args: { dir_path: 'tabs.txt' } });
search('trailing-whitespace', 'Hello, \\{name\\}');
search('long-line', 'x{20}', { args: { dir_path: 'long-line.txt' } });
search('many-matches', 'match', { args: { dir_path: 'regex' } });
search('hidden-by-include', 'SECRET', { args: { include: '.env*' } });
search('hidden-dir-path', 'TODO', { args: { dir_path: '.github' } });
search('hidden-not-searched', 'hidden TODO');
search('gemini-ignored-by-include', 'hunter2', { args: { include: '*.secret' } });
search('git-ignored-dir-path', 'TODO', { args: { dir_path: 'logs' } });
search('no-ignore', 'TODO', { args: { no_ignore: true } });
search('utf16', 'sixteen');
search('binary-skipped', 'ELF');
search('class-file-text', 'cafebabe');
search('symlinked-file', 'dup', { args: { dir_path: 'dup' } });
search('unicode', 'grüße');
search('dir-path-outside', 'x', { args: { dir_path: '/etc' } });
search('dir-path-missing', 'x', { args: { dir_path: 'nope' } });
search('no-git-tree', 'not a git tree', { roots: 'plain' });
search('multi-root-default', 'second root');
search('names-only', 'TODO', { only: '0.61', args: { names_only: true, dir_path: 'src' } });
search('max-per-file', 'match', { only: '0.61', args: { max_matches_per_file: 2, dir_path: 'regex' } });
search('total-max', 'match', { only: '0.61', args: { total_max_matches: 5, dir_path: 'regex' } });
search('exclude-pattern', 'TODO', { only: '0.61', args: { exclude_pattern: 'Demo|Guide|validate', dir_path: '.' } });
search('exclude-pattern-invalid', 'TODO', { only: '0.61', args: { exclude_pattern: '(' } });
search('total-max-zero', 'match', { only: '0.61', args: { total_max_matches: 0 } });
add({ id: 'search/missing-pattern', tool: 'search', args: {} });

// --- read_many_files ---------------------------------------------------------------
const many = (id, include, extra = {}) =>
  add({ id: `read_many_files/${id}`, tool: 'read_many_files', args: { include, ...extra.args }, roots: extra.roots });

many('one-file', ['lines.txt']);
many('several-files', ['lines.txt', 'nofinal.txt', 'empty.txt']);
many('glob', ['docs/*.md']);
many('glob-recursive', ['src/**/*.ts']);
many('two-globs', ['src/**/*.ts', 'src/**/*.rs']);
many('markdown-everywhere', ['**/*.md']);
many('directory', ['docs']);
many('directory-slash', ['docs/']);
many('literal-brackets', ['app/[id]/page.tsx']);
many('literal-parens', ['app/(group)/layout.tsx']);
many('env-named', ['.env']);
many('env-named-no-default-excludes', ['.env'], { args: { useDefaultExcludes: false } });
many('node-modules-named', ['node_modules/dep/index.js']);
many('js-default-excludes', ['**/*.js']);
many('js-no-default-excludes', ['**/*.js'], { args: { useDefaultExcludes: false } });
many('gemini-md', ['**/GEMINI.md']);
many('gemini-ignored', ['private/key.txt']);
many('gemini-ignored-glob', ['private/*']);
many('git-ignored', ['ignored.txt']);
many('git-ignored-glob', ['logs/*.txt']);
many('no-git-ignore', ['ignored.txt'], { args: { file_filtering_options: { respect_git_ignore: false } } });
many('no-gemini-ignore', ['private/key.txt'], { args: { file_filtering_options: { respect_gemini_ignore: false } } });
many('png-named', ['media/pixel.png']);
many('png-by-extension', ['media/*.png']);
many('media-not-asked', ['media/*']);
many('pdf-named', ['media/paper.pdf']);
many('binaries', ['bin/*']);
many('exclude', ['docs/*.md'], { args: { exclude: ['**/api.md'] } });
many('exclude-dir', ['src/**'], { args: { exclude: ['src/deep/**'] } });
many('no-match', ['nothing*.zzz']);
many('missing-file', ['missing.txt']);
many('outside', ['/etc/hostname']);
many('truncated', ['big.txt']);
many('long-line', ['long-line.txt']);
many('crlf-utf16', ['crlf.txt', 'utf16le.txt']);
many('too-large', ['sized/huge.txt']);
many('case-insensitive', ['readme.MD']);
many('hidden-dir', ['.github/**']);
many('symlinks', ['links/*']);
many('multi-root', ['*.txt'], { roots: 'multi' });
many('no-git-tree', ['*.txt'], { roots: 'plain' });
many('empty-list', []);
add({ id: 'read_many_files/missing-include', tool: 'read_many_files', args: {} });
add({ id: 'read_many_files/include-not-array', tool: 'read_many_files', args: { include: 'lines.txt' } });

export const CASES = cases;
