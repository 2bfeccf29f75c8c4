#!/usr/bin/env bash
# Checks rootbound against real MCP clients: the MCP Inspector CLI, the
# official Python SDK and Gemini CLI. Each is installed, at a pinned version,
# into a scratch folder outside the repository (reused between runs). Any
# failure, including a failed install, fails the script: nothing is skipped.
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
for tool in read_file write_file replace list_directory glob search_file_content read_many_files bash file_read; do
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

# --- Gemini CLI ------------------------------------------------------------------
npm_install "$scratch/gemini" "@google/gemini-cli@$GEMINI_CLI_VERSION"
project=$(mktemp -d)
home=$(mktemp -d)
trap 'rm -rf "$project" "$home"' EXIT
mkdir -p "$project/.gemini"
cat >"$project/.gemini/settings.json" <<JSON
{"mcpServers": {"rootbound": {"command": "$bin", "args": ["--root", "$repo"],
  "env": {"RUST_LOG": "warn"}, "timeout": 10000}}}
JSON
listing=$(cd "$project" && HOME="$home" GEMINI_CLI_TRUST_WORKSPACE=true \
  timeout 180 "$scratch/gemini/node_modules/.bin/gemini" mcp list 2>&1) || fail "gemini mcp list: $listing"
grep -q 'rootbound.*Connected' <<<"$listing" || fail "gemini mcp list did not connect: $listing"
step "Gemini CLI $GEMINI_CLI_VERSION: ok"
