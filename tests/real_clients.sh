#!/usr/bin/env bash
# Checks rootbound against real MCP clients: the MCP Inspector CLI, the
# official Python SDK and Gemini CLI, then the Gemini CLI extension as a
# release ships it. Each client is installed, at a pinned version, into a
# scratch folder outside the repository (reused between runs). Any failure,
# including a failed install, fails the script: nothing is skipped.
set -euo pipefail

INSPECTOR_VERSION=2.12.0
GEMINI_CLI_VERSION=0.61.0
MCP_PYTHON_VERSION=2.3.0

repo=$(cd "$(dirname "$0")/.." && pwd)
scratch=${ROOTBOUND_CLIENTS_DIR:-${TMPDIR:-/tmp}/rootbound-clients}
mkdir -p "$scratch"

fail() { echo "real clients: FAIL: $*" >&2; exit 1; }
step() { echo "real clients: $*" >&2; }

command -v node >/dev/null || fail "node is not installed"
command -v npm >/dev/null || fail "npm is not installed"
command -v python3 >/dev/null || fail "python3 is not installed"

(cd "$repo" && cargo build --quiet) || fail "cargo build"
bin="${CARGO_TARGET_DIR:-$repo/target}/debug/rootbound"

# npm_install DIR PACKAGE@VERSION: install once per version.
npm_install() {
  local dir=$1 spec=$2
  if [ "$(cat "$dir/.installed" 2>/dev/null)" != "$spec" ]; then
    step "installing $spec"
    rm -rf "$dir"
    mkdir -p "$dir"
    npm install --silent --no-audit --no-fund --prefix "$dir" "$spec" >"$dir/install.log" 2>&1 \
      || { tail -20 "$dir/install.log" >&2; fail "npm install $spec"; }
    echo "$spec" >"$dir/.installed"
  fi
}

# --- MCP Inspector CLI -------------------------------------------------------
npm_install "$scratch/inspector" "@modelcontextprotocol/inspector@$INSPECTOR_VERSION"
inspector="$scratch/inspector/node_modules/.bin/mcp-inspector"
run_inspector() {
  timeout 120 "$inspector" --cli -e RUST_LOG=warn "$bin" --root "$repo" "$@"
}
list=$(run_inspector --strict --method tools/list) || fail "inspector tools/list (exit $?)"
for tool in read_file write_file replace list_directory glob search_file_content read_many_files bash file_read undo_edit; do
  grep -q "\"name\": \"$tool\"" <<<"$list" || fail "inspector: $tool missing from tools/list"
done
call=$(run_inspector --method tools/call --tool-name read_file \
  --tool-args-json '{"path":"Cargo.toml","limit":2}' --format json -q) || fail "inspector tools/call (exit $?)"
grep -q 'Showing lines 1-2 of' <<<"$call" || fail "inspector: unexpected read_file result: $call"
grep -q '"isError":false' <<<"$call" || fail "inspector: read_file reported an error: $call"
set +e
run_inspector --method tools/call --tool-name read_file --tool-args-json '{"path":"/etc/passwd"}' \
  --format json -q >"$scratch/outside.json" 2>&1
status=$?
set -e
[ "$status" -eq 5 ] || fail "inspector: outside-root read should exit 5 (isError), got $status"
grep -q 'must be within one of the workspace directories' "$scratch/outside.json" \
  || fail "inspector: outside-root message missing: $(cat "$scratch/outside.json")"
# The Inspector's CLI does not declare elicitation: a command only the allow
# list refuses is refused, naming the option, and nothing runs.
asked_dir=$(mktemp -d)
set +e
timeout 120 "$inspector" --cli -e RUST_LOG=warn "$bin" --root "$asked_dir" --method tools/call \
  --tool-name bash --tool-args-json '{"command":"touch made.txt"}' --format json -q \
  >"$scratch/asked.json" 2>&1
set -e
[ ! -e "$asked_dir/made.txt" ] || fail "inspector: a command ran that nobody approved"
grep -q 'cannot ask the user' "$scratch/asked.json" && grep -q -- '--bash-allow' "$scratch/asked.json" \
  || fail "inspector: the refusal does not name the option: $(cat "$scratch/asked.json")"
rm -rf "$asked_dir"
step "MCP Inspector $INSPECTOR_VERSION: ok"

# --- Python SDK ----------------------------------------------------------------
venv="$scratch/venv"
if [ "$(cat "$venv/.installed" 2>/dev/null)" != "mcp==$MCP_PYTHON_VERSION" ]; then
  step "installing mcp==$MCP_PYTHON_VERSION"
  rm -rf "$venv"
  python3 -m venv "$venv" || fail "python3 -m venv"
  "$venv/bin/pip" install --quiet "mcp==$MCP_PYTHON_VERSION" || fail "pip install mcp==$MCP_PYTHON_VERSION"
  echo "mcp==$MCP_PYTHON_VERSION" >"$venv/.installed"
fi
timeout 120 "$venv/bin/python" "$repo/tests/clients/python_client.py" "$bin" "$repo" || fail "python client"
step "Python mcp $MCP_PYTHON_VERSION: ok"
# Asking the user (elicitation), in both protocol eras.
for era in legacy 2026-07-28; do
  timeout 300 "$venv/bin/python" "$repo/tests/clients/python_ask.py" "$bin" "$era" \
    || fail "python ask ($era)"
done
step "Python mcp $MCP_PYTHON_VERSION: asking the user: ok"

# --- Gemini CLI ------------------------------------------------------------------
npm_install "$scratch/gemini" "@google/gemini-cli@$GEMINI_CLI_VERSION"
gemini="$scratch/gemini/node_modules/.bin/gemini"
project=$(mktemp -d)
home=$(mktemp -d)
ext_dir=$(mktemp -d)
ext_home=$(mktemp -d)
ext_project=$(mktemp -d)
planted=$(mktemp -d)
marks=$(mktemp -d)
tmux_session="rootbound-extension-$$"
cleanup() {
  tmux kill-session -t "$tmux_session" 2>/dev/null || true
  rm -rf "$project" "$home" "$ext_dir" "$ext_home" "$ext_project" "$planted" "$marks"
}
trap cleanup EXIT
mkdir -p "$project/.gemini"
cat >"$project/.gemini/settings.json" <<JSON
{"mcpServers": {"rootbound": {"command": "$bin", "args": ["--root", "$repo"],
  "env": {"RUST_LOG": "warn"}, "timeout": 10000}}}
JSON
listing=$(cd "$project" && HOME="$home" GEMINI_CLI_TRUST_WORKSPACE=true \
  timeout 180 "$gemini" mcp list 2>&1) || fail "gemini mcp list: $listing"
grep -q 'rootbound.*Connected' <<<"$listing" || fail "gemini mcp list did not connect: $listing"
step "Gemini CLI $GEMINI_CLI_VERSION: ok"

# --- What a command leaves behind, as Gemini CLI reads it ----------------------
# A project's .gemini/settings.json names MCP servers that Gemini CLI starts with
# the user's rights. First the control: planted by hand, `gemini mcp list` starts
# the named program (so the check below can fail). Then the same plant made by a
# command in rootbound's writable full shell must not make it start.
git -C "$planted" init -q
cat >"$planted/plant.sh" <<SH
mkdir -p .gemini && printf '{"mcpServers": {"planted": {"command": "touch", "args": ["%s"]}}}\n' "$marks/\$1" >.gemini/settings.json
SH
(cd "$planted" && sh plant.sh control)
(cd "$planted" && HOME="$home" GEMINI_CLI_TRUST_WORKSPACE=true timeout 180 "$gemini" mcp list >/dev/null 2>&1) || true
[ -e "$marks/control" ] || fail "control: gemini mcp list did not start the server a planted settings file names"
rm -rf "$planted/.gemini"
answer=$(timeout 60 "$bin" --root "$planted" --bash-mode workspace-write call bash '{"command": "sh plant.sh planted"}' 2>&1) \
  || fail "the planting call failed: $answer"
grep -q 'the command created .gemini; it was renamed to .gemini.rootbound-quarantine' <<<"$answer" \
  || fail "the answer does not say the planted settings were set aside: $answer"
(cd "$planted" && HOME="$home" GEMINI_CLI_TRUST_WORKSPACE=true timeout 180 "$gemini" mcp list >/dev/null 2>&1) || true
[ -e "$marks/planted" ] && fail "gemini mcp list started a server that a sandboxed command planted"
step "Gemini CLI: settings planted by a command are set aside, and start nothing"

# --- Gemini CLI extension ------------------------------------------------------
# The extension folder as a release archive holds it (gemini-extension.json,
# GEMINI.md, bin/rootbound), linked into a scratch HOME.
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) target=x86_64-unknown-linux-gnu ;;
  Linux-aarch64) target=aarch64-unknown-linux-gnu ;;
  *) fail "the extension check runs on Linux x86_64 or aarch64" ;;
esac
node "$repo/packaging/assemble.mjs" extension --target "$target" --binary "$bin" --out "$ext_dir/rootbound" \
  >/dev/null || fail "assemble the extension"
linked=$(HOME="$ext_home" timeout 120 "$gemini" extensions link "$ext_dir/rootbound" --consent 2>&1) \
  || fail "gemini extensions link: $linked"
grep -q 'Extension "rootbound" linked successfully' <<<"$linked" || fail "gemini extensions link: $linked"
listing=$(cd "$ext_project" && HOME="$ext_home" GEMINI_CLI_TRUST_WORKSPACE=true \
  timeout 180 "$gemini" mcp list 2>&1) || fail "gemini mcp list (extension): $listing"
grep -q "rootbound (from rootbound): $ext_dir/rootbound/bin/rootbound --root $ext_project .*Connected" \
  <<<"$listing" || fail "the extension's server did not connect: $listing"
step "Gemini CLI extension: linked, Connected"

# Which tools the model gets: the extension's excludeTools must remove
# Gemini CLI's built-in file tools and none of ours (Gemini CLI matches an
# excluded plain name such as read_file against MCP tools too). Only the
# interactive UI lists the active tools, so it runs in tmux with a dummy API
# key (no prompt is typed, so nothing is asked of a model).
command -v tmux >/dev/null || fail "tmux is not installed (needed to read Gemini CLI's tool list)"
mkdir -p "$ext_home/.gemini"
echo '{"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"disableAutoUpdate": true},
  "privacy": {"usageStatisticsEnabled": false}}' \
  >"$ext_home/.gemini/settings.json"
# Gemini CLI starts its interactive UI only outside CI: with CI (or a
# similar variable) set, as on a CI machine, it runs one prompt and exits.
# So it runs with an environment of its own, nothing inherited.
tmux new-session -d -s "$tmux_session" -x 200 -y 100 \
  "cd '$ext_project' && env -i PATH='$PATH' TERM=xterm-256color LANG=C.UTF-8 HOME='$ext_home' \
     GEMINI_API_KEY=not-a-real-key GEMINI_CLI_TRUST_WORKSPACE=true '$gemini';
   echo \"Gemini CLI exited with status \$?\"; sleep 600"
# pane_wait PATTERN SECONDS: waits until the pane's text matches PATTERN.
pane_wait() {
  local deadline=$((SECONDS + $2))
  while [ $SECONDS -lt $deadline ]; do
    pane=$(tmux capture-pane -t "$tmux_session" -p -S -300 2>/dev/null || true)
    grep -Eq "$1" <<<"$pane" && return 0
    sleep 1
  done
  tmux has-session -t "$tmux_session" 2>/dev/null || fail "the tmux session running Gemini CLI ended"
  fail "Gemini CLI's screen never showed /$1/: $pane"
}
# pane_type TEXT: types a command and presses Enter.
pane_type() {
  tmux send-keys -t "$tmux_session" "$1" && sleep 1 && tmux send-keys -t "$tmux_session" Enter
}
pane_wait 'Type your message' 120
# The server may still be starting: ask again until it is ready.
for _ in 1 2 3 4 5 6; do
  pane_type '/mcp list'
  sleep 5
  tmux capture-pane -t "$tmux_session" -p -S -300 | grep -q 'rootbound (from rootbound) - Ready' && break
done
pane_wait 'rootbound \(from rootbound\) - Ready \(10 tools\)' 5
pane_type '/tools'
pane_wait 'Available Gemini CLI tools:' 30
sleep 1
pane=$(tmux capture-pane -t "$tmux_session" -p -S -300)
builtins=$(sed -n '/Available Gemini CLI tools:/,$p' <<<"$pane")
for tool in read_file write_file replace list_directory glob grep_search read_many_files; do
  grep -q "($tool)" <<<"$builtins" && fail "Gemini CLI's built-in $tool is still active: $builtins"
done
step "Gemini CLI extension: all 10 rootbound tools active, the built-in file tools excluded"
