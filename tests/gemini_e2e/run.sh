#!/usr/bin/env bash
# End-to-end checks through Gemini CLI 0.61.0 as the client, driven by
# scripted model turns (`--fake-responses`), for the configured server in
# both dialects and for the linked extension: which tools headless mode
# offers per bash mode with and without `rootbound setup gemini`, a long
# read followed to its end with no answer cut by the client, a failed
# replace's hint, bash refused and allowed, and which calls an interactive
# session (in tmux) asks about. The checks are in e2e.mjs.
#
# Gemini CLI is installed, pinned, into a scratch folder outside the
# repository (shared with tests/real_clients.sh). Anything missing fails the
# script: nothing is skipped.
#
#   ROOTBOUND_BIN=path   the binary to test (default: this tree, built debug)
#   E2E_ONLY=group       run one group of e2e.mjs: setup, tools, read, edits, interactive
set -euo pipefail

GEMINI_CLI_VERSION=0.61.0

repo=$(cd "$(dirname "$0")/../.." && pwd)
clients=${ROOTBOUND_CLIENTS_DIR:-${TMPDIR:-/tmp}/rootbound-clients}
mkdir -p "$clients"

fail() { echo "gemini e2e: FAIL: $*" >&2; exit 1; }
step() { echo "gemini e2e: $*" >&2; }

command -v node >/dev/null || fail "node is not installed"
command -v npm >/dev/null || fail "npm is not installed"
command -v tmux >/dev/null || fail "tmux is not installed (the interactive checks read Gemini CLI's screen)"

if [ -n "${ROOTBOUND_BIN:-}" ]; then
  bin=$ROOTBOUND_BIN
  [ -x "$bin" ] || fail "ROOTBOUND_BIN=$bin is not an executable"
else
  (cd "$repo" && cargo build --quiet) || fail "cargo build"
  bin="${CARGO_TARGET_DIR:-$repo/target}/debug/rootbound"
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
"$bin" setup --help >/dev/null 2>&1 || fail "$bin has no setup command (built from an older tree?)"
step "testing $bin"

# npm_install DIR PACKAGE@VERSION: install once per version (as real_clients.sh).
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
npm_install "$clients/gemini" "@google/gemini-cli@$GEMINI_CLI_VERSION"
gemini="$clients/gemini/node_modules/.bin/gemini"
version=$("$gemini" --version 2>/dev/null) || fail "$gemini --version"
[ "$version" = "$GEMINI_CLI_VERSION" ] || fail "Gemini CLI is $version, not $GEMINI_CLI_VERSION"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/rootbound-gemini-e2e.XXXXXX")
if [ -z "${E2E_KEEP:-}" ]; then
  trap 'rm -rf "$scratch"' EXIT
else
  step "keeping $scratch"
fi

# The extension folder as a release archive holds it.
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) target=x86_64-unknown-linux-gnu ;;
  Linux-aarch64) target=aarch64-unknown-linux-gnu ;;
  *) fail "the extension checks run on Linux x86_64 or aarch64" ;;
esac
node "$repo/packaging/assemble.mjs" extension --target "$target" --binary "$bin" \
  --out "$scratch/extension" >/dev/null || fail "assemble the extension"

GEMINI_BIN=$gemini ROOTBOUND_BIN=$bin ROOTBOUND_EXTENSION="$scratch/extension" \
  E2E_SCRATCH="$scratch/runs" node "$repo/tests/gemini_e2e/e2e.mjs" \
  || fail "see the checks above"
step "all checks passed"
