// The parity harness: runs every case of cases.mjs through Gemini CLI's own
// tool code and through rootbound (the real binary, over MCP, in the
// matching --dialect), on the same fixture trees, and compares what the
// model sees and the bytes written. A difference passes only if the table
// in differences.mjs describes it; anything else fails the run, and so does
// a table entry that no longer matches any difference.
//
// usage: node harness.mjs --version 0.24|0.61 --modules DIR --bin ROOTBOUND --work DIR
//        [--only SUBSTRING] [--verbose] [--dump]

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Gemini, GEMINI_NAMES, mediaMarker, resolveCore } from './gemini.mjs';
import { Rootbound } from './mcp_client.mjs';
import { buildTree, readBytes } from './fixtures.mjs';
import { CASES } from './cases.mjs';
import { DIFFERENCES } from './differences.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const out = { verbose: false };
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--verbose') out.verbose = true;
    else if (a === '--dump') out.dump = true;
    else out[a.replace(/^--/, '')] = argv[++i];
  }
  for (const k of ['version', 'modules', 'bin', 'work']) {
    if (!out[k]) throw new Error(`missing --${k}`);
  }
  return out;
}

const DIALECT = { '0.24': 'gemini-0.24', '0.61': 'gemini-current' };

/** Root sets the cases run in; `write` is rebuilt before each side of a write case. */
const ROOT_SETS = {
  main: ['main'],
  multi: ['main', 'second'],
  plain: ['plain'],
  write: ['write'],
};

/** Replaces {ROOT}, {ROOT2} in strings anywhere inside args. */
function fill(value, roots) {
  if (typeof value === 'string') {
    return value.replaceAll('{ROOT2}', roots[1] ?? '').replaceAll('{ROOT}', roots[0]);
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, roots));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, roots)]));
  }
  return value;
}

/** What the model sees from rootbound's CallToolResult. */
function oursSeen(result) {
  const parts = (result.content ?? []).map((block) => {
    switch (block.type) {
      case 'text':
        return block.text;
      case 'image':
      case 'audio':
        return mediaMarker(block.mimeType, block.data);
      case 'resource':
        return mediaMarker(block.resource.mimeType, block.resource.blob ?? block.resource.text);
      default:
        return JSON.stringify(block);
    }
  });
  return { error: result.isError === true, text: parts.join('') };
}

function sameSeen(a, b) {
  if (a.error !== b.error || a.text !== b.text) return false;
  const keys = new Set([...Object.keys(a.files ?? {}), ...Object.keys(b.files ?? {})]);
  for (const k of keys) {
    const x = a.files?.[k] ?? null;
    const y = b.files?.[k] ?? null;
    if (x === null || y === null ? x !== y : !x.equals(y)) return false;
  }
  return true;
}

function clone(seen) {
  const files = {};
  for (const [k, v] of Object.entries(seen.files ?? {})) files[k] = v === null ? null : Buffer.from(v);
  return { error: seen.error, text: seen.text, files };
}

/** Where the two texts first differ, with a little context. */
function firstDifference(a, b) {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const from = Math.max(0, i - 80);
  return {
    at: i,
    gemini: JSON.stringify(a.slice(from, i + 160)),
    ours: JSON.stringify(b.slice(from, i + 160)),
  };
}

function describeFiles(seen) {
  return Object.entries(seen.files ?? {})
    .map(([k, v]) => `${k}: ${v === null ? '(absent)' : JSON.stringify(v.toString('latin1')).slice(0, 300)}`)
    .join('\n      ');
}

async function main() {
  const opts = parseArgs(process.argv);
  const version = opts.version;
  const dialect = DIALECT[version];
  if (!dialect) throw new Error(`unknown version ${version}`);
  // Gemini CLI's debug logging (JIT memory discovery, failed binary
  // sniffs of links) goes to console.debug and console.warn.
  console.debug = () => {};
  console.warn = () => {};
  const core = await import(resolveCore(opts.modules, version));

  const work = path.join(opts.work, version);
  const rootOf = (tree) => path.join(work, tree);
  for (const tree of ['main', 'second', 'plain', 'write']) buildTree(tree, rootOf(tree));

  const sides = {};
  for (const [set, trees] of Object.entries(ROOT_SETS)) {
    const roots = trees.map(rootOf);
    sides[set] = {
      roots,
      gemini: await Gemini.create(core, version, roots),
      ours: await new Rootbound(opts.bin, roots, dialect).start(),
    };
  }

  const cases = CASES.filter((c) => !c.only || c.only === version).filter(
    (c) => !opts.only || c.id.includes(opts.only),
  );
  const ids = new Set();
  for (const c of CASES) {
    if (ids.has(c.id)) throw new Error(`duplicate case id ${c.id}`);
    ids.add(c.id);
  }
  const table = DIFFERENCES.filter((d) => !d.versions || d.versions.includes(version));
  for (const d of DIFFERENCES) {
    for (const id of d.cases ?? []) {
      if (!ids.has(id)) throw new Error(`difference ${d.id} names unknown case ${id}`);
    }
  }
  const used = new Map(table.map((d) => [d.id, 0]));
  const stale = [];
  const failures = [];
  const stats = {};

  for (const c of cases) {
    const set = c.roots ?? (c.write ? 'write' : 'main');
    const side = sides[set];
    const roots = side.roots;
    const toolName = GEMINI_NAMES[version][c.tool];
    let gemini;
    let ours;
    if (c.kind === 'schema') {
      gemini = { error: false, text: JSON.stringify(side.gemini.declaration(c.tool), null, 1) };
      const listed = (await side.ours.tools()).find((t) => t.name === toolName);
      ours = {
        error: false,
        text: JSON.stringify(
          listed ? { name: listed.name, description: listed.description, parameters: listed.inputSchema } : null,
          null,
          1,
        ),
      };
    } else {
      const args = fill(c.by?.[version] ?? c.args, roots);
      const run = async (who) => {
        if (c.write) {
          buildTree('write', roots[0]);
          if (c.setup) c.setup(roots[0]);
        }
        let seen;
        if (who === 'gemini') seen = await side.gemini.call(c.tool, args);
        else {
          // A write case gets a session of its own, as each Gemini CLI call
          // here is on its own: the tree was just rebuilt behind the
          // session's back, and a session that had read or written these
          // files would rightly refuse to overwrite a change it has not seen.
          const session = c.write ? await new Rootbound(opts.bin, roots, dialect).start() : side.ours;
          try {
            seen = oursSeen(await session.call(toolName, args));
          } catch (e) {
            seen = { error: true, text: `(protocol) ${e.message}` };
          } finally {
            if (session !== side.ours) await session.stop();
          }
        }
        seen.files = {};
        for (const f of c.files ?? []) seen.files[f] = readBytes(path.join(roots[0], f));
        return seen;
      };
      gemini = await run('gemini');
      ours = await run('ours');
    }

    const ctx = { c, roots, version };
    const tool = c.tool;
    stats[tool] ??= { cases: 0, equal: 0, deliberate: 0, failed: 0 };
    stats[tool].cases++;
    const applicable = table.filter((d) => (d.cases ? d.cases.includes(c.id) : d.match?.(c, version)));
    if (sameSeen(gemini, ours)) {
      stats[tool].equal++;
      for (const d of applicable) {
        if (d.cases) stale.push(`${d.id}: case ${c.id} shows no difference any more`);
      }
      if (opts.verbose) console.log(`equal       ${c.id}`);
      continue;
    }
    let g = clone(gemini);
    let o = clone(ours);
    const needed = [];
    for (const d of applicable) {
      const [g2, o2] = d.normalize(clone(g), clone(o), ctx);
      if (!sameSeen(g2, g) || !sameSeen(o2, o)) {
        needed.push(d.id);
        used.set(d.id, used.get(d.id) + 1);
      } else if (d.cases) {
        stale.push(`${d.id}: does not change case ${c.id}`);
      }
      g = g2;
      o = o2;
    }
    if (sameSeen(g, o)) {
      stats[tool].deliberate++;
      if (opts.verbose) console.log(`deliberate  ${c.id}  (${needed.join(', ')})`);
      continue;
    }
    stats[tool].failed++;
    if (opts.dump) {
      console.log(`DUMP ${c.id}\n  gemini: ${JSON.stringify(g)}\n  ours:   ${JSON.stringify(o)}`);
    }
    const diff = firstDifference(g.text, o.text);
    failures.push(
      `FAIL ${c.id}\n` +
        `  error flag: gemini ${g.error}, ours ${o.error}\n` +
        `  after the table's ${needed.length ? needed.join(', ') : '(no entries)'}; first difference at ${diff.at}:\n` +
        `    gemini: ${diff.gemini}\n` +
        `    ours:   ${diff.ours}\n` +
        (Object.keys(g.files).length ? `  files gemini:\n      ${describeFiles(g)}\n  files ours:\n      ${describeFiles(o)}\n` : ''),
    );
  }

  for (const d of table) {
    if (used.get(d.id) === 0 && !opts.only) stale.push(`${d.id}: no case needed it`);
  }
  // Every entry must be on the user page, and the page must list no other.
  const page = fs.readFileSync(path.join(here, '..', '..', 'docs', 'differences.md'), 'utf8');
  const onPage = new Set([...page.matchAll(/<!-- ([a-z0-9.-]+) -->/g)].map((m) => m[1]));
  for (const d of DIFFERENCES) {
    if (!onPage.has(d.id)) stale.push(`${d.id}: missing from docs/differences.md`);
    onPage.delete(d.id);
  }
  for (const id of onPage) stale.push(`docs/differences.md lists ${id}, which the table does not`);

  for (const s of Object.values(sides)) await s.ours.stop();

  for (const f of failures) console.log(f);
  for (const s of stale) console.log(`STALE ${s}`);
  console.log(`\nGemini CLI ${version} (rootbound --dialect ${dialect}):`);
  console.log('tool              cases  equal  deliberate  failed');
  const total = { cases: 0, equal: 0, deliberate: 0, failed: 0 };
  for (const [tool, s] of Object.entries(stats)) {
    console.log(
      `${tool.padEnd(17)} ${String(s.cases).padStart(5)}  ${String(s.equal).padStart(5)}  ${String(s.deliberate).padStart(10)}  ${String(s.failed).padStart(6)}`,
    );
    for (const k of Object.keys(total)) total[k] += s[k];
  }
  console.log(
    `${'total'.padEnd(17)} ${String(total.cases).padStart(5)}  ${String(total.equal).padStart(5)}  ${String(total.deliberate).padStart(10)}  ${String(total.failed).padStart(6)}`,
  );
  if (failures.length || stale.length) {
    console.log(`\n${failures.length} case(s) failed, ${stale.length} stale table entr(ies)`);
    process.exit(1);
  }
}

main().catch((e) => {
  console.error(e.stack ?? e);
  process.exit(2);
});
