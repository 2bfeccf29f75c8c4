#!/usr/bin/env node
// Assembles what a release ships from a built binary, into folders ready to
// archive, `npm pack` or `npm publish`. The release workflow
// (.github/workflows/release.yml) and the tests (tests/npm_package.sh,
// tests/real_clients.sh) run it the same way:
//
//   node packaging/assemble.mjs platform --target T --binary B --out D
//       D/rootbound-<os>-<cpu>/: the npm package holding the binary for T
//   node packaging/assemble.mjs main --out D
//       D/rootbound/: the npm launcher package (npm/rootbound) with the licence
//   node packaging/assemble.mjs extension --target T --binary B --out D
//       D/: a Gemini CLI extension (gemini-extension.json, GEMINI.md,
//       bin/rootbound), as the release's <os>.<cpu>.rootbound archive holds it
//   node packaging/assemble.mjs name --target T
//       prints <os>.<cpu>, the prefix Gemini CLI looks for in release assets
//
// T is a Rust target of packaging/targets.json. Every command checks that the
// npm packages and the extension carry the crate's version (Cargo.toml).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.dirname(here);

function fail(message) {
  console.error(`assemble: ${message}`);
  process.exit(1);
}

function options(args) {
  const out = {};
  for (let i = 0; i < args.length; i += 2) {
    const key = args[i];
    if (!key.startsWith("--") || i + 1 >= args.length) fail(`bad argument: ${key}`);
    out[key.slice(2)] = args[i + 1];
  }
  return out;
}

function readJson(rel) {
  return JSON.parse(fs.readFileSync(path.join(repo, rel), "utf8"));
}

function writeJson(file, value) {
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + "\n");
}

function crateVersion() {
  const toml = fs.readFileSync(path.join(repo, "Cargo.toml"), "utf8");
  const section = toml.split(/^\[/m).find((s) => s.startsWith("package]"));
  const match = section && section.match(/^version\s*=\s*"([^"]+)"/m);
  if (!match) fail("no version in Cargo.toml's [package]");
  return match[1];
}

const targets = readJson("packaging/targets.json");
const launcher = readJson("npm/rootbound/package.json");
const extension = readJson("gemini-extension.json");
const version = crateVersion();
for (const [file, v] of [
  ["npm/rootbound/package.json", launcher.version],
  ["gemini-extension.json", extension.version],
]) {
  if (v !== version) fail(`${file} has version ${v}, Cargo.toml ${version}`);
}

function target(name) {
  if (!name) fail("--target is required");
  const t = targets[name];
  if (!t) fail(`unknown target ${name}; known: ${Object.keys(targets).join(", ")}`);
  return t;
}

function copyBinary(binary, dest) {
  if (!binary || !fs.existsSync(binary) || !fs.statSync(binary).isFile()) {
    fail(`--binary ${binary} is not a file`);
  }
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  fs.copyFileSync(binary, dest);
  fs.chmodSync(dest, 0o755);
}

const packageName = (t) => `rootbound-${t.os}-${t.cpu}`;

function platformPackage({ target: name, binary, out }) {
  const t = target(name);
  if (!out) fail("--out is required");
  const dir = path.join(out, packageName(t));
  fs.rmSync(dir, { recursive: true, force: true });
  copyBinary(binary, path.join(dir, "bin", t.exe));
  fs.copyFileSync(path.join(repo, "LICENSE"), path.join(dir, "LICENSE"));
  writeJson(path.join(dir, "package.json"), {
    name: packageName(t),
    version,
    description: `The rootbound binary for ${t.os} ${t.cpu}, installed by the rootbound package.`,
    license: launcher.license,
    os: [t.os],
    cpu: [t.cpu],
    ...(t.libc ? { libc: [t.libc] } : {}),
    files: [`bin/${t.exe}`],
    preferUnplugged: true,
  });
  fs.writeFileSync(
    path.join(dir, "README.md"),
    `# ${packageName(t)}\n\nThe \`rootbound\` binary for ${name}. Install the \`rootbound\` package ` +
      "instead: it depends on this one and runs the binary that fits your machine.\n"
  );
  console.log(dir);
}

function mainPackage({ out }) {
  if (!out) fail("--out is required");
  const wanted = Object.values(targets).map(packageName).sort();
  const listed = Object.keys(launcher.optionalDependencies || {}).sort();
  if (JSON.stringify(wanted) !== JSON.stringify(listed)) {
    fail(`optionalDependencies list ${listed.join(", ")}; targets.json makes ${wanted.join(", ")}`);
  }
  for (const [name, range] of Object.entries(launcher.optionalDependencies)) {
    if (range !== version) fail(`optionalDependencies.${name} is ${range}, not ${version}`);
  }
  const dir = path.join(out, "rootbound");
  fs.rmSync(dir, { recursive: true, force: true });
  fs.cpSync(path.join(repo, "npm", "rootbound"), dir, { recursive: true });
  fs.chmodSync(path.join(dir, "bin", "rootbound.js"), 0o755);
  fs.copyFileSync(path.join(repo, "LICENSE"), path.join(dir, "LICENSE"));
  console.log(dir);
}

function extensionFolder({ target: name, binary, out }) {
  const t = target(name);
  if (!out) fail("--out is required");
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  for (const file of ["gemini-extension.json", "GEMINI.md", "LICENSE"]) {
    fs.copyFileSync(path.join(repo, file), path.join(out, file));
  }
  copyBinary(binary, path.join(out, "bin", t.exe));
  console.log(out);
}

const [command, ...rest] = process.argv.slice(2);
const args = options(rest);
if (command === "platform") platformPackage(args);
else if (command === "main") mainPackage(args);
else if (command === "extension") extensionFolder(args);
else if (command === "name") console.log(`${target(args.target).os}.${target(args.target).cpu}`);
else fail("usage: assemble.mjs platform|main|extension|name --target T [--binary B] [--out D]");
