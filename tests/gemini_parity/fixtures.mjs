// Fixture trees for the parity harness, built at run time. Each tree is a
// map from a relative path to what it holds; every file and directory gets
// a fixed old modification time (so glob's recency order does not depend on
// when the run started) unless the entry names its own.

import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

/** Long ago: older than glob's 24-hour recency window. */
export const OLD = new Date('2021-03-04T05:06:07Z');
const MINUTE = 60 * 1000;

const file = (content, extra = {}) => ({ kind: 'file', content, ...extra });
const link = (target) => ({ kind: 'link', target });
const dir = (extra = {}) => ({ kind: 'dir', ...extra });
/** A file modified `minutes` ago (inside glob's recency window). */
const recent = (content, minutes) => file(content, { mtime: new Date(Date.now() - minutes * MINUTE) });

function numbered(n, prefix = 'line') {
  let out = '';
  for (let i = 1; i <= n; i++) out += `${prefix} ${i}\n`;
  return out;
}

function utf16le(text, bom = true) {
  const body = Buffer.from(text, 'utf16le');
  return bom ? Buffer.concat([Buffer.from([0xff, 0xfe]), body]) : body;
}

function utf16be(text) {
  const body = Buffer.from(text, 'utf16le');
  body.swap16();
  return Buffer.concat([Buffer.from([0xfe, 0xff]), body]);
}

// The smallest valid images and sounds: enough for content sniffing.
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);
const GIF = Buffer.from('474946383961010001000000002c00000000010001000002024401003b', 'hex');
const MP3 = Buffer.concat([Buffer.from('ID3\x03\x00\x00\x00\x00\x00\x00', 'latin1'), Buffer.alloc(64, 0x55)]);
const PDF = Buffer.from('%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n', 'latin1');
const BINARY = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x00, 0x00, 0x11, 0x22]);

const SOURCE_TS = `import { thing } from './thing';

export function handler(req: Request) {
    // TODO: validate the request
    const value = thing(req);
    return value;
}
`;

const SOURCE_RS = `fn main() {
    let answer = 42; // TODO tidy
    println!("{answer}");
}

struct Point {
\tx: i32,
\ty: i32,
}
`;

const SOURCE_PY = `def greet(name):
    """Say hello."""
    return f"Hello, {name}"   


class Greeter:
    pass
`;

/** The main tree: a small git project with every kind of file. */
function mainTree() {
  const big = numbered(2500);
  const longLine = 'x'.repeat(2500);
  return {
    '.git': 'git',
    '.gitignore': file('ignored.txt\nlogs/\n*.cache\nallignored/*\n'),
    '.geminiignore': file('private/\n*.secret\n'),
    'README.md': file('# Demo\n\nA demo project. TODO: write more.\n'),
    'Readme.txt': file('plain readme\n'),
    'GEMINI.md': file('Project notes for the model.\n'),
    'lines.txt': file(numbered(10)),
    'nofinal.txt': file('alpha\nbeta\ngamma'),
    'empty.txt': file(''),
    'blank-lines.txt': file('\n\n\n'),
    'crlf.txt': file('one\r\ntwo\r\nthree\r\n'),
    'mixed.txt': file('a\r\nb\nc\r\n'),
    'bom8.txt': file(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('with bom\nsecond\n')])),
    'utf16le.txt': file(utf16le('sixteen\nle text\n')),
    'utf16be.txt': file(utf16be('sixteen\nbe text\n')),
    'latin1.txt': file(Buffer.from('caf\xe9 au lait\n', 'latin1')),
    'unicode-ü.txt': file('grüße\n日本語\n'),
    'long-line.txt': file(`${longLine}\nshort\n`),
    'big.txt': file(big),
    'tabs.txt': file('\tindented with tab\n    four spaces\n  two  \n'),
    'ignored.txt': file('ignored by git TODO\n'),
    'logs/app.txt': file('log line TODO\n'),
    'data.cache': file('cache TODO\n'),
    'token.secret': file('hunter2 TODO\n'),
    'private/key.txt': file('private key TODO\n'),
    'private/notes.md': file('private notes\n'),
    '.env': file('SECRET=shh TODO\n'),
    '.env.example': file('SECRET=\n'),
    '.github/workflows/ci.yml': file('name: ci # TODO\n'),
    '.hidden/inner.txt': file('hidden TODO\n'),
    'node_modules/dep/index.js': file('module.exports = 1; // TODO\n'),
    'dist/out.js': file('built(); // TODO\n'),
    'build/out.txt': file('build output TODO\n'),
    'coverage/report.txt': file('coverage TODO\n'),
    '.vscode/settings.json': file('{"todo": "TODO"}\n'),
    '__pycache__/m.pyc': file(BINARY),
    'app.log': file('log TODO\n'),
    'scratch.tmp': file('tmp TODO\n'),
    'src/handler.ts': file(SOURCE_TS),
    'src/main.rs': file(SOURCE_RS),
    'src/util.js': file('export const util = () => 1; // todo lower\n'),
    'src/deep/nested/greet.py': file(SOURCE_PY),
    'src/deep/nested/GEMINI.md': file('nested notes\n'),
    'src/Component.tsx': file('export const C = () => <div>TODO</div>;\n'),
    'app/[id]/page.tsx': file('export default function Page() { return "id"; }\n'),
    'app/i/page.tsx': file('export default function I() { return "i"; }\n'),
    'app/(group)/layout.tsx': file('export default function Layout() { return null; }\n'),
    'docs/guide.md': file('# Guide\n\nSteps. TODO\n'),
    'docs/api.md': file('# API\n'),
    'docs/empty-dir': dir(),
    'media/pixel.png': file(PNG),
    'media/anim.gif': file(GIF),
    'media/sound.mp3': file(MP3),
    'media/paper.pdf': file(PDF),
    'media/logo.svg': file('<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>\n'),
    'media/huge.svg': file(`<svg xmlns="http://www.w3.org/2000/svg">${'<!-- pad -->'.repeat(95000)}</svg>\n`),
    'bin/tool.dat': file(BINARY),
    'bin/archive.zip': file(Buffer.from('PK\x03\x04not really a zip\n', 'latin1')),
    'bin/Main.class': file(Buffer.from('cafebabe text after\n', 'latin1')),
    'bin/controls.txt': file(Buffer.from(Array.from({ length: 100 }, (_, i) => (i % 3 === 0 ? 0x41 : 0x01)))),
    'links/to-lines.txt': link('../lines.txt'),
    'links/to-docs': link('../docs'),
    'links/outside.txt': link('/etc/hostname'),
    'links/dangling.txt': link('../nope.txt'),
    'case/Alpha.txt': file('A\n'),
    'case/beta.txt': file('b\n'),
    'case/Gamma.txt': file('G\n'),
    'case/delta': dir(),
    'case/Echo': dir(),
    'case/_under.txt': file('u\n'),
    'case/10.txt': file('ten\n'),
    'case/9.txt': file('nine\n'),
    'recent/newest.md': recent('newest TODO\n', 1),
    'recent/older.md': recent('older\n', 30),
    'recent/ancient.md': file('ancient\n'),
    'allignored/a.txt': file('a\n'),
    'allignored/b.txt': file('b\n'),
    'onlygit/.git': 'gitdir',
    'regex/special.txt': file('a+b\n(paren)\n[bracket]\nprice: $5\nback\\slash\n'),
    'regex/many.txt': file('match\n'.repeat(150)),
    'dup/a.txt': file('dup one\ndup two\n'),
    'sized/huge.txt': file(Buffer.alloc(21 * 1024 * 1024 + 5, 'abcdefghi\n')),
    'dup/link.txt': link('a.txt'),
  };
}

/** A second root, for multi-root calls. */
function secondTree() {
  return {
    'second.txt': file('second root TODO\n'),
    'notes/plan.md': file('# Plan\n'),
  };
}

/** A tree outside any git repository: .gitignore must not apply. */
function plainTree() {
  return {
    '.gitignore': file('skip.txt\n'),
    'skip.txt': file('not a git tree, so not ignored\n'),
    'keep.txt': file('kept\n'),
  };
}

/** The tree write cases start from; reset before each side runs. */
function writeTree() {
  return {
    'plain.txt': file('first\nsecond\nthird\n'),
    'nofinal.txt': file('first\nsecond'),
    'crlf.txt': file('alpha\r\nbeta\r\ngamma\r\n'),
    'bom8.txt': file(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('bom line\nnext\n')])),
    'utf16le.txt': file(utf16le('wide\nchars\n')),
    'repeat.txt': file('foo\nbar\nfoo\nbaz\nfoo\n'),
    'code.js': file('function add(a, b) {\n  return a + b;\n}\n\nfunction sub(a, b) {\n  return a - b;\n}\n'),
    'indent.py': file('def f():\n    if x:\n        return 1\n    return 2\n'),
    'dollar.txt': file('cost = 10\n'),
    'sub/deep.txt': file('deep\n'),
    'empty.txt': file(''),
    'readonly-dir': dir(),
  };
}

export const TREES = {
  main: mainTree,
  second: secondTree,
  plain: plainTree,
  write: writeTree,
};

/** Removes everything inside `root` (keeping `root` itself, whose inode a running server holds). */
export function clearDir(root) {
  fs.mkdirSync(root, { recursive: true });
  for (const name of fs.readdirSync(root)) {
    fs.rmSync(path.join(root, name), { recursive: true, force: true });
  }
}

/** Builds tree `name` inside `root` (emptied first). */
export function buildTree(name, root) {
  clearDir(root);
  const spec = TREES[name]();
  const dirs = new Set();
  const later = [];
  for (const [rel, entry] of Object.entries(spec)) {
    const full = path.join(root, rel);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    for (let d = path.dirname(rel); d !== '.'; d = path.dirname(d)) dirs.add(path.join(root, d));
    if (entry === 'git') {
      execFileSync('git', ['init', '-q', root]);
      continue;
    }
    if (entry === 'gitdir') {
      // A directory called .git below the root: not a work tree of its own.
      fs.mkdirSync(full, { recursive: true });
      fs.writeFileSync(path.join(full, 'HEAD'), 'ref: refs/heads/main\n');
      later.push([full, OLD]);
      continue;
    }
    switch (entry.kind) {
      case 'file':
        fs.writeFileSync(full, entry.content);
        later.push([full, entry.mtime ?? OLD]);
        break;
      case 'dir':
        fs.mkdirSync(full, { recursive: true });
        dirs.add(full);
        break;
      case 'link':
        fs.symlinkSync(entry.target, full);
        break;
      default:
        throw new Error(`unknown fixture entry ${rel}`);
    }
  }
  for (const [full, mtime] of later) fs.utimesSync(full, mtime, mtime);
  for (const d of dirs) fs.utimesSync(d, OLD, OLD);
  fs.utimesSync(root, OLD, OLD);
}

/** The bytes of a file after a write case, or null if it does not exist. */
export function readBytes(full) {
  try {
    return fs.readFileSync(full);
  } catch {
    return null;
  }
}
