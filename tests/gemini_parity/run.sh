#!/usr/bin/env bash
# Runs the Gemini CLI parity harness for both dialects: Gemini CLI's own tool
# code (@google/gemini-cli-core 0.24.0 and 0.61.0, pinned by package-lock.json)
# beside the rootbound binary, on fixture trees built at run time. Everything
# is installed into a scratch folder outside the repository (reused between
# runs). A missing Node, npm or ripgrep, a failed install, a difference the
# table does not list, or a stale table entry fails the script: nothing is
# skipped.
#
# usage: tests/gemini_parity/run.sh [harness options, e.g. --only search/ --verbose]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
scratch=${ROOTBOUND_PARITY_DIR:-${TMPDIR:-/tmp}/rootbound-parity}

fail() { echo "gemini parity: FAIL: $*" >&2; exit 1; }
step() { echo "gemini parity: $*" >&2; }

command -v node >/dev/null || fail "node is not installed (Node 20 or newer is needed)"
command -v npm >/dev/null || fail "npm is not installed"
command -v rg >/dev/null || fail "ripgrep (rg) is not installed; Gemini CLI's search tool runs it (Debian: apt-get install ripgrep)"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || fail "Node $(node --version) is too old; Gemini CLI needs Node 20 or newer"

# Gemini CLI's packages, exactly as the lockfile pins them.
modules="$scratch/modules"
want=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$modules/.installed" 2>/dev/null)" != "$want" ]; then
  step "installing @google/gemini-cli-core 0.24.0 and 0.61.0 into $modules"
  rm -rf "$modules"
  mkdir -p "$modules"
  cp "$here/package.json" "$here/package-lock.json" "$modules/"
  (cd "$modules" && npm ci --no-audit --no-fund --ignore-scripts >install.log 2>&1) \
    || { tail -20 "$modules/install.log" >&2; fail "npm ci"; }
  echo "$want" >"$modules/.installed"
fi

# Where each version looks for ripgrep: 0.24 in ~/.gemini/tmp/bin (it would
# download one), 0.61 in its package's vendor/ripgrep. Both get this one.
rg_bin=$(command -v rg)
home="$scratch/home"
mkdir -p "$home/.gemini/tmp/bin"
ln -sf "$rg_bin" "$home/.gemini/tmp/bin/rg"
arch=$(node -p 'process.arch')
vendor="$modules/node_modules/gemini-core-0.61/vendor/ripgrep"
mkdir -p "$vendor"
ln -sf "$rg_bin" "$vendor/rg-linux-$arch"

(cd "$repo" && cargo build --quiet) || fail "cargo build"
bin="${CARGO_TARGET_DIR:-$repo/target}/debug/rootbound"

status=0
for version in 0.24 0.61; do
  HOME="$home" node "$here/harness.mjs" --version "$version" --modules "$modules/node_modules" \
    --bin "$bin" --work "$scratch/trees" "$@" || status=1
done
[ "$status" -eq 0 ] || fail "differences from Gemini CLI that the table does not list (see above)"
step "ok: both versions match, apart from the differences in tests/gemini_parity/differences.mjs"
