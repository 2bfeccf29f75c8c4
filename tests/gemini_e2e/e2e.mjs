#!/usr/bin/env node
// End-to-end checks through Gemini CLI as the client, with scripted model
// turns instead of a model (its hidden `--fake-responses FILE` flag). Each
// run leaves the last model request unanswered, so Gemini CLI fails with "No
// more mock responses" and writes that whole request (the tool declarations
// it offered and every functionResponse) to
// $TMPDIR/gemini-client-error-Turn.run-sendMessageStream-*.json: exactly what
// a model would have received. The assertions read that request.
//
// Run by run.sh, which installs Gemini CLI, builds or picks the binary and
// assembles the extension, then passes them in the environment:
//   GEMINI_BIN          the gemini executable (0.61.0)
//   ROOTBOUND_BIN       the rootbound binary under test
//   ROOTBOUND_EXTENSION an assembled extension folder (bin/rootbound inside)
//   E2E_SCRATCH         a scratch folder for homes, projects and dumps
//   E2E_ONLY            optional: run only the groups whose name contains it
// The interactive group also needs tmux.
//
// Every check is reported; the exit status is 1 if any failed.
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";

const geminiBin = required("GEMINI_BIN");
const rootboundBin = required("ROOTBOUND_BIN");
const extensionSource = required("ROOTBOUND_EXTENSION");
const scratch = required("E2E_SCRATCH");
const only = process.env.E2E_ONLY ?? "";

function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`gemini e2e: FAIL: ${name} is not set (run tests/gemini_e2e/run.sh)`);
    process.exit(1);
  }
  return value;
}

// --- What the model may be offered -----------------------------------------

const SERVER = "rootbound";
const READ_TOOLS = {
  "gemini-0.24": ["read_file", "list_directory", "glob", "search_file_content", "read_many_files", "file_read"],
  "gemini-current": ["read_file", "list_directory", "glob", "grep_search", "read_many_files", "file_read"],
};
const WRITE_TOOLS = ["write_file", "replace", "undo_edit"];
// Gemini CLI's own file tools, which the extension turns off.
const BUILT_IN_FILE_TOOLS = ["read_file", "write_file", "replace", "list_directory", "glob", "grep_search", "read_many_files"];

// Names a message could use for a tool: the snake_case names of both
// dialects and Gemini CLI's display names. Plain words ("glob", "replace",
// "Edit") are left out: they are ordinary English in a message.
const TOOL_MENTIONS = [
  "read_file", "write_file", "list_directory", "search_file_content", "grep_search",
  "read_many_files", "file_read", "run_shell_command",
  "ReadFile", "WriteFile", "ReadFolder", "FindFiles", "SearchText", "ReadManyFiles",
];

const BASH_MODES = {
  "read-only": [],
  allowlist: ["--bash-allow", "touch"],
  "workspace-write": ["--bash-mode", "workspace-write"],
  off: ["--bash-mode", "off"],
};

// The three ways to connect: a configured server in each dialect, and the
// extension as a release ships it (gemini-current, built-ins excluded).
const CLIENTS = {
  "configured gemini-0.24": { kind: "configured", dialect: "gemini-0.24" },
  "configured gemini-current": { kind: "configured", dialect: "gemini-current" },
  extension: { kind: "extension", dialect: "gemini-current" },
};

// --- Reporting --------------------------------------------------------------

const results = [];
function check(group, name, ok, detail = "") {
  results.push({ group, name, ok });
  const mark = ok ? "ok  " : "FAIL";
  console.log(`gemini e2e: ${mark} [${group}] ${name}${ok || !detail ? "" : `\n    ${detail}`}`);
}
function note(message) {
  console.log(`gemini e2e: ${message}`);
}
function excerpt(text, length = 600) {
  return text.length <= length ? text : `${text.slice(0, length)} ... (${text.length} characters)`;
}

// --- Fixtures ---------------------------------------------------------------

let counter = 0;
function freshDir(label) {
  counter += 1;
  const dir = path.join(scratch, `${String(counter).padStart(3, "0")}-${label.replace(/[^a-z0-9.-]+/gi, "-")}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

// A 5,000-line file of code-like lines of varied length (about 50
// characters on average, as in the issue: Gemini CLI's default window of
// 2,000 lines is over 100 KB, well past its 40,000-character cut). Each line
// starts with its number, so a reader can tell which lines came back.
const BIG_LINES = Array.from({ length: 5000 }, (_, i) => {
  const n = String(i + 1).padStart(5, "0");
  const body = ["let value = compute(input, 42);", "if (ready) { return cache.get(key) ?? fallback; }",
    "// a comment that explains why this line exists in the first place", "}", "x += 1;",
    "const message = `line ${n} of the sample file`;"][i % 6];
  return `L${n} ${body}`;
});

function makeProject(label) {
  const project = freshDir(`${label}-project`);
  fs.writeFileSync(path.join(project, "big.txt"), `${BIG_LINES.join("\n")}\n`);
  fs.writeFileSync(path.join(project, "code.rs"), "fn main() {\n    let x = 1;\n    println!(\"{}\", x);\n}\n");
  fs.writeFileSync(path.join(project, "victim.txt"), "remove me\n");
  return project;
}

function makeHome(label) {
  const home = freshDir(`${label}-home`);
  fs.mkdirSync(path.join(home, ".gemini"), { recursive: true });
  fs.writeFileSync(
    path.join(home, ".gemini", "settings.json"),
    JSON.stringify({
      security: { auth: { selectedType: "gemini-api-key" } },
      general: { disableAutoUpdate: true },
      privacy: { usageStatisticsEnabled: false },
    }),
  );
  return home;
}

/// `rootbound setup gemini` under `home`, as a user runs it.
function runSetup(home, group) {
  const run = spawnSync(rootboundBin, ["setup", "gemini"], {
    env: { PATH: process.env.PATH, HOME: home },
    encoding: "utf8",
  });
  const policy = path.join(home, ".gemini", "policies", "rootbound.toml");
  check(group, "rootbound setup gemini writes the user policy", run.status === 0 && fs.existsSync(policy),
    `exit ${run.status}: ${run.stdout}${run.stderr}`);
  return run.stdout;
}

/// Connects the server for `client` in `mode` under `home` and `project`.
function connect(client, mode, home, project, group) {
  const modeArgs = BASH_MODES[mode];
  if (client.kind === "configured") {
    const args = ["--root", project, "--dialect", client.dialect, ...modeArgs];
    fs.mkdirSync(path.join(project, ".gemini"), { recursive: true });
    fs.writeFileSync(
      path.join(project, ".gemini", "settings.json"),
      JSON.stringify({ mcpServers: { [SERVER]: { command: rootboundBin, args, env: { RUST_LOG: "warn" } } } }),
    );
    return;
  }
  // The extension as shipped, with the mode's options added to its server's
  // arguments (the shipped one has none: read-only).
  const extension = freshDir(`${group}-extension`);
  fs.cpSync(extensionSource, extension, { recursive: true });
  const manifestPath = path.join(extension, "gemini-extension.json");
  const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
  manifest.mcpServers[SERVER].args.push(...modeArgs);
  fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  const linked = spawnSync(geminiBin, ["extensions", "link", extension, "--consent"], {
    env: baseEnv(home, freshDir(`${group}-link-tmp`)),
    encoding: "utf8",
    timeout: 120_000,
  });
  const ok = linked.status === 0 && /linked successfully/.test(linked.stdout + linked.stderr);
  if (!ok) {
    check(group, "gemini extensions link --consent", false, `exit ${linked.status}: ${linked.stdout}${linked.stderr}`);
  }
}

function baseEnv(home, tmp) {
  // Nothing inherited but PATH: CI's variables change Gemini CLI's behaviour.
  return {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: tmp,
    LANG: "C.UTF-8",
    GEMINI_API_KEY: "not-a-real-key",
    GEMINI_CLI_TRUST_WORKSPACE: "true",
  };
}

// --- Driving Gemini CLI -----------------------------------------------------

// The model router's side call comes first; without its answer it would eat
// the first scripted turn.
const ROUTER_ANSWER = {
  method: "generateContent",
  response: {
    candidates: [{
      content: { role: "model", parts: [{ text: "{\"complexity_reasoning\": \"simple\", \"complexity_score\": 1}" }] },
      finishReason: "STOP",
    }],
  },
};

function modelTurn(calls) {
  return {
    method: "generateContentStream",
    response: [{
      candidates: [{
        content: { role: "model", parts: calls.map(([name, args]) => ({ functionCall: { name, args } })) },
        finishReason: "STOP",
      }],
      usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 },
    }],
  };
}

/// Runs `gemini -p` with the scripted `turns` (each a list of [tool, args]
/// calls) and returns the request the model would receive after the last.
function runGemini({ home, project, turns, approvalMode = "default", label }) {
  const tmp = freshDir(`${label}-tmp`);
  const responses = path.join(tmp, "responses.jsonl");
  fs.writeFileSync(responses, [ROUTER_ANSWER, ...turns.map(modelTurn)].map((r) => JSON.stringify(r)).join("\n") + "\n");
  const run = spawnSync(
    geminiBin,
    ["-p", "Work on the files in this project.", "--fake-responses", responses,
      "--output-format", "stream-json", "--approval-mode", approvalMode],
    { cwd: project, env: baseEnv(home, tmp), encoding: "utf8", timeout: 240_000, maxBuffer: 64 << 20 },
  );
  const dumps = fs.readdirSync(tmp).filter((f) => f.startsWith("gemini-client-error-Turn.run-sendMessageStream-")).sort();
  if (dumps.length === 0) {
    throw new Error(`Gemini CLI left no request dump (exit ${run.status}, ${run.signal ?? "no signal"}):\n` +
      `${excerpt(run.stdout ?? "", 3000)}\n${excerpt(run.stderr ?? "", 3000)}`);
  }
  const dump = JSON.parse(fs.readFileSync(path.join(tmp, dumps.at(-1)), "utf8"));
  const message = dump.error?.message ?? "";
  const marker = "got request:\n";
  const at = message.indexOf(marker);
  if (at < 0) throw new Error(`the dump holds no request: ${excerpt(message)}`);
  const request = JSON.parse(message.slice(at + marker.length));
  const offered = (request.config?.tools ?? []).flatMap((t) => t.functionDeclarations ?? []).map((d) => d.name);
  const functionResponses = request.contents.flatMap((c) => c.parts ?? [])
    .filter((p) => p.functionResponse)
    .map((p) => p.functionResponse);
  return { offered, functionResponses, stdout: run.stdout };
}

const mcpName = (tool) => `mcp_${SERVER}_${tool}`;
const ours = (offered) => offered.filter((n) => n.startsWith(`mcp_${SERVER}_`)).map((n) => n.slice(`mcp_${SERVER}_`.length));

/// The text of a functionResponse: `output` for a result, `error` for a
/// failure (Gemini CLI re-wraps an isError result's text, JSON-escaped).
function responseText(functionResponse) {
  const r = functionResponse.response ?? {};
  return typeof r.output === "string" ? r.output : typeof r.error === "string" ? r.error : JSON.stringify(r);
}

function noClientCut(group, what, functionResponses) {
  const cut = functionResponses.filter((r) => /Output too large|characters omitted/.test(JSON.stringify(r)));
  check(group, `${what}: no answer cut by Gemini CLI ("Output too large", "characters omitted")`, cut.length === 0,
    cut.map((r) => excerpt(responseText(r).replace(/\n(L\d{5} [^\n]*\n)+/g, "\n[file lines]\n"), 800)).join("\n    ---\n    "));
}

// --- 1. Which tools headless mode offers -------------------------------------

function toolsOffered() {
  const table = [];
  const cases = [];
  for (const [clientName, client] of Object.entries(CLIENTS)) {
    for (const mode of Object.keys(BASH_MODES)) {
      for (const setup of [true, false]) {
        // Without setup every mode gives the same answer (none of ours);
        // the configured 0.24 server shows it in every mode, the others once.
        if (!setup && mode !== "read-only" && clientName !== "configured gemini-0.24") continue;
        cases.push({ clientName, client, mode, setup, approval: "default" });
      }
      // Auto-edit runs Gemini CLI's own write_file and replace; after setup
      // it runs ours too, and a bash that may write still is not offered.
      if (mode === "read-only" || mode === "workspace-write") {
        cases.push({ clientName, client, mode, setup: true, approval: "auto_edit" });
      }
    }
  }
  for (const { clientName, client, mode, setup, approval } of cases) {
    const group = `tools offered: ${clientName}, bash ${mode}, ${setup ? "after setup" : "no setup"}, ${approval}`;
    const home = makeHome("tools");
    const project = makeProject("tools");
    if (setup) runSetup(home, group);
    connect(client, mode, home, project, group);
    let run;
    try {
      run = runGemini({ home, project, turns: [], label: "tools", approvalMode: approval });
    } catch (e) {
      check(group, "Gemini CLI ran", false, e.message);
      continue;
    }
    const offered = ours(run.offered);
    table.push(`${clientName.padEnd(26)} ${mode.padEnd(13)} ${(setup ? "setup" : "none").padEnd(6)} ${approval.padEnd(9)} ${offered.join(", ") || "(none)"}`);
    if (!setup) {
      check(group, "none of the server's tools without a policy (headless)", offered.length === 0,
        `offered: ${offered.join(", ")}`);
    } else {
      const edits = approval === "auto_edit" ? WRITE_TOOLS : [];
      const expected = [...READ_TOOLS[client.dialect], ...(mode === "read-only" ? ["bash"] : []), ...edits].sort();
      check(group, `exactly the read-only tools${mode === "read-only" ? " and bash" : ""}${edits.length ? ", write_file, replace and undo_edit" : ""}`,
        JSON.stringify([...offered].sort()) === JSON.stringify(expected),
        `offered: ${offered.join(", ")}; expected: ${expected.join(", ")}`);
    }
    if (client.kind === "extension") {
      const builtIns = run.offered.filter((n) => BUILT_IN_FILE_TOOLS.includes(n));
      check(group, "Gemini CLI's built-in file tools are off", builtIns.length === 0, `still offered: ${builtIns.join(", ")}`);
    }
  }
  note(`tools offered to the model by headless gemini -p, ours only:\n    ${"client".padEnd(26)} ${"bash mode".padEnd(13)} policy ${"approval".padEnd(9)} tools\n    ${table.join("\n    ")}`);
}

// --- 2. A long read, followed to its end --------------------------------------

/// The lines of the file a read_file answer shows, in order.
function fileLinesIn(text) {
  return text.split("\n").filter((line) => /^L\d{5} /.test(line));
}

function longRead() {
  for (const [clientName, client] of Object.entries(CLIENTS)) {
    const group = `long read: ${clientName}, after setup, default approval`;
    const home = makeHome("read");
    const project = makeProject("read");
    runSetup(home, group);
    connect(client, "read-only", home, project, group);
    const current = client.dialect === "gemini-current";
    const firstArgs = current ? { file_path: "big.txt" } : { path: "big.txt" };
    const turns = [[[mcpName("read_file"), firstArgs]]];
    const seen = [];
    let allResponses = [];
    let reachedEnd = false;
    let failure = "";
    // Each run replays the turns so far plus the one the last note asked
    // for, as a model following the notes would.
    for (let step = 0; step < 30; step += 1) {
      let run;
      try {
        run = runGemini({ home, project, turns, label: `read-${step}` });
      } catch (e) {
        failure = e.message;
        break;
      }
      const answers = run.functionResponses.filter((r) => r.name === mcpName("read_file"));
      if (answers.length !== turns.length) {
        failure = `expected ${turns.length} read_file answers, got ${answers.length}: ` +
          excerpt(JSON.stringify(run.functionResponses), 1500);
        break;
      }
      const last = answers.at(-1);
      if (last.response?.error !== undefined) {
        failure = `read_file failed: ${excerpt(responseText(last), 1500)}`;
        break;
      }
      allResponses = answers;
      const text = responseText(last);
      seen.push(...fileLinesIn(text));
      const next = current ? /start_line: (\d+)/.exec(text) : /offset: (\d+)/.exec(text);
      // A window that ends at the file's last line still carries a note
      // (Gemini CLI's own read_file does the same, pointing past the end):
      // a model stops at "Showing lines A-N of N".
      const shown = /Showing lines (\d+)-(\d+) of (\d+)/.exec(text);
      if (!next || (shown && shown[2] === shown[3])) {
        reachedEnd = true;
        if (next) note(`[${group}] the last window (${shown[0]}) still says: ${next[0]}`);
        break;
      }
      const position = Number(next[1]);
      turns.push([[mcpName("read_file"), current ? { file_path: "big.txt", start_line: position } : { path: "big.txt", offset: position }]]);
    }
    if (failure) {
      check(group, "the reads ran", false, failure);
      continue;
    }
    check(group, `the model was offered read_file and ran it (${turns.length} reads)`, allResponses.length > 0);
    noClientCut(group, "every read_file answer", allResponses);
    check(group, "following the continuation notes reaches the file's last line", reachedEnd,
      `still a note after ${turns.length} reads`);
    const whole = seen.length === BIG_LINES.length && seen.every((line, i) => line === BIG_LINES[i]);
    const firstMissing = BIG_LINES.findIndex((line) => !seen.includes(line));
    check(group, "the answers give every line of the file once, in order", whole,
      `got ${seen.length} lines of ${BIG_LINES.length}` +
        (firstMissing >= 0 ? `; first missing: line ${firstMissing + 1}` : "") +
        `; reads: ${turns.map((t) => JSON.stringify(t[0][1])).join(" ")}`);
  }
}

// --- 3. A failed replace, bash refused and allowed -----------------------------

function editsAndBash() {
  for (const [clientName, client] of Object.entries(CLIENTS)) {
    const current = client.dialect === "gemini-current";
    // Writes are offered in headless mode only with --approval-mode yolo
    // (as Gemini CLI's own write tools); the server still refuses what its
    // bash mode does not allow.
    const group = `replace and bash: ${clientName}, bash read-only, yolo`;
    const home = makeHome("edit");
    const project = makeProject("edit");
    runSetup(home, group);
    connect(client, "read-only", home, project, group);
    const replaceArgs = { file_path: "code.rs", old_string: "let y = 1;", new_string: "let y = 2;" };
    if (current) replaceArgs.instruction = "Change y from 1 to 2.";
    let run;
    try {
      run = runGemini({
        home, project, approvalMode: "yolo", label: "edit",
        turns: [
          [[mcpName("replace"), replaceArgs]],
          [[mcpName("bash"), { command: "rm victim.txt" }]],
          [[mcpName("bash"), { command: "wc -l big.txt" }]],
        ],
      });
    } catch (e) {
      check(group, "Gemini CLI ran", false, e.message);
      continue;
    }
    const byTool = (tool) => run.functionResponses.filter((r) => r.name === mcpName(tool));
    const [replaced] = byTool("replace");
    const [refused, counted] = byTool("bash");
    const offeredOurs = ours(run.offered);
    if (!replaced || !refused || !counted) {
      check(group, "every call was answered", false, excerpt(JSON.stringify(run.functionResponses), 2000));
      continue;
    }
    const hint = responseText(replaced);
    check(group, "the failed replace reaches the model as an error with the closest text",
      replaced.response?.error !== undefined && /closest text is at lines 2-2/.test(hint) && /let x = 1;/.test(hint),
      excerpt(hint, 1200));
    const mentioned = TOOL_MENTIONS.filter((name) => new RegExp(`\\b${name}\\b`).test(hint));
    const foreign = mentioned.filter((name) => !offeredOurs.includes(name));
    note(`[${group}] the replace hint names: ${mentioned.join(", ") || "(no tool)"}; the model was offered: ${offeredOurs.join(", ")}`);
    check(group, "the replace hint names only tools the server offers", foreign.length === 0,
      `names ${foreign.join(", ")}, which the server does not offer: ${excerpt(hint, 800)}`);
    check(group, "bash refuses rm in read-only mode, and the model is told why",
      /Command refused: `rm`/.test(responseText(refused)) && fs.existsSync(path.join(project, "victim.txt")),
      excerpt(responseText(refused), 600));
    check(group, "Gemini CLI cannot be asked, so the refusal names the option that would allow rm",
      // The text as Gemini CLI hands it on holds its quotes JSON-escaped.
      /--bash-allow \\?"rm\\?"/.test(responseText(refused)) && /cannot ask the user/.test(responseText(refused)),
      excerpt(responseText(refused), 1200));
    check(group, "bash runs a read-only command", /5000 big\.txt/.test(responseText(counted)),
      excerpt(responseText(counted), 600));
  }

  // Writing commands where the mode allows them.
  const writable = [
    ["configured gemini-0.24", "workspace-write", "rm victim.txt", (p) => !fs.existsSync(path.join(p, "victim.txt"))],
    ["configured gemini-current", "workspace-write", "rm victim.txt", (p) => !fs.existsSync(path.join(p, "victim.txt"))],
    ["extension", "workspace-write", "rm victim.txt", (p) => !fs.existsSync(path.join(p, "victim.txt"))],
    ["configured gemini-0.24", "allowlist", "touch made.txt", (p) => fs.existsSync(path.join(p, "made.txt"))],
    ["extension", "allowlist", "touch made.txt", (p) => fs.existsSync(path.join(p, "made.txt"))],
  ];
  for (const [clientName, mode, command, happened] of writable) {
    const group = `bash allowed: ${clientName}, bash ${mode}, yolo`;
    const home = makeHome("bash");
    const project = makeProject("bash");
    runSetup(home, group);
    connect(CLIENTS[clientName], mode, home, project, group);
    let run;
    try {
      run = runGemini({ home, project, approvalMode: "yolo", label: "bash", turns: [[[mcpName("bash"), { command }]]] });
    } catch (e) {
      check(group, "Gemini CLI ran", false, e.message);
      continue;
    }
    const [answer] = run.functionResponses.filter((r) => r.name === mcpName("bash"));
    check(group, `\`${command}\` runs and does its work`,
      answer !== undefined && answer.response?.error === undefined && happened(project),
      excerpt(answer ? responseText(answer) : JSON.stringify(run.functionResponses), 800));
  }
}

// --- 4. setup itself, through the real client's loader ---------------------------

function setupOutput() {
  const group = "rootbound setup gemini";
  const home = makeHome("setup");
  const first = spawnSync(rootboundBin, ["setup", "gemini", "--dry-run"], { env: { PATH: process.env.PATH, HOME: home }, encoding: "utf8" });
  const policy = path.join(home, ".gemini", "policies", "rootbound.toml");
  check(group, "--dry-run prints the file and writes nothing",
    first.status === 0 && /Would create/.test(first.stdout) && !fs.existsSync(policy), first.stdout + first.stderr);
  const created = runSetup(home, group);
  check(group, "prints the path and the content it wrote", created.includes(policy) && created.includes("toolAnnotations = { readOnlyHint = true }"), created);
  const again = runSetup(home, group);
  check(group, "running it again changes nothing", /nothing changed/.test(again), again);
  const viaGeminiHome = makeHome("setup-gemini-cli-home");
  const other = spawnSync(rootboundBin, ["setup", "gemini"], {
    env: { PATH: process.env.PATH, HOME: home, GEMINI_CLI_HOME: viaGeminiHome }, encoding: "utf8",
  });
  check(group, "GEMINI_CLI_HOME wins over HOME, as in Gemini CLI",
    other.status === 0 && fs.existsSync(path.join(viaGeminiHome, ".gemini", "policies", "rootbound.toml")), other.stdout + other.stderr);
}

// --- 5. Prompts in an interactive session -------------------------------------

// Gemini CLI starts its interactive UI only on a terminal and outside CI, so
// it runs in tmux with an environment of its own; the screen is read back.
function tmux(...args) {
  return spawnSync("tmux", args, { encoding: "utf8" });
}

function interactivePrompts() {
  if (spawnSync("tmux", ["-V"]).status !== 0) {
    check("interactive", "tmux is installed (needed to read Gemini CLI's screen)", false);
    return;
  }
  const cases = [
    ["configured gemini-0.24", true],
    ["extension", true],
    ["configured gemini-0.24", false],
  ];
  for (const [clientName, setup] of cases) {
    const client = CLIENTS[clientName];
    const group = `interactive: ${clientName}, ${setup ? "after setup" : "no setup"}, default approval`;
    const home = makeHome("interactive");
    const project = makeProject("interactive");
    if (setup) runSetup(home, group);
    connect(client, "read-only", home, project, group);
    const tmp = freshDir("interactive-tmp");
    const responses = path.join(tmp, "responses.jsonl");
    const readArgs = client.dialect === "gemini-current" ? { file_path: "code.rs" } : { path: "code.rs" };
    const turns = [
      [[mcpName("read_file"), readArgs]],
      [[mcpName("write_file"), { file_path: "new.txt", content: "new\n" }]],
    ];
    fs.writeFileSync(responses, [ROUTER_ANSWER, ...turns.map(modelTurn)].map((r) => JSON.stringify(r)).join("\n") + "\n");
    const session = `rootbound-e2e-${process.pid}-${counter}`;
    const env = Object.entries({ ...baseEnv(home, tmp), TERM: "xterm-256color" })
      .map(([k, v]) => `${k}='${v}'`).join(" ");
    const started = tmux("new-session", "-d", "-s", session, "-x", "200", "-y", "80",
      `cd '${project}' && env -i ${env} '${geminiBin}' --fake-responses '${responses}' -i 'Read code.rs, then write new.txt.'; sleep 600`);
    if (started.status !== 0) {
      check(group, "tmux started Gemini CLI", false, started.stderr);
      continue;
    }
    // Waits until the screen shows the write's question, or the read's.
    let screen = "";
    const deadline = Date.now() + 120_000;
    const question = (tool) => new RegExp(`Allow execution of MCP tool "${tool}" from server "${SERVER}"`);
    while (Date.now() < deadline) {
      screen = tmux("capture-pane", "-t", session, "-p", "-S", "-200").stdout ?? "";
      if (question("write_file").test(screen) || question("read_file").test(screen)) break;
      spawnSync("sleep", ["1"]);
    }
    tmux("kill-session", "-t", session);
    const screenExcerpt = excerpt(screen.replace(/\n\s*\n/g, "\n"), 3000);
    if (setup) {
      check(group, "read_file runs without a question", !question("read_file").test(screen) && /✓\s+read_file/.test(screen), screenExcerpt);
      check(group, "write_file asks first, as Gemini CLI's own write tools do", question("write_file").test(screen), screenExcerpt);
    } else {
      check(group, "without setup even read_file asks first", question("read_file").test(screen), screenExcerpt);
    }
    check(group, "nothing was written while the question is open", !fs.existsSync(path.join(project, "new.txt")));
  }
}

// --- Main -------------------------------------------------------------------

const groups = [
  ["setup", setupOutput],
  ["tools", toolsOffered],
  ["read", longRead],
  ["edits", editsAndBash],
  ["interactive", interactivePrompts],
];
for (const [name, run] of groups) {
  if (only && !name.includes(only)) continue;
  const started = Date.now();
  try {
    run();
  } catch (e) {
    check(name, "the group ran to its end", false, e.stack ?? String(e));
  }
  note(`${name}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
}
const failed = results.filter((r) => !r.ok);
note(`${results.length - failed.length} of ${results.length} checks passed`);
if (failed.length > 0) {
  console.log(`gemini e2e: FAILED:\n${failed.map((r) => `    [${r.group}] ${r.name}`).join("\n")}`);
  process.exit(1);
}
