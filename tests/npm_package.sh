#!/usr/bin/env bash
# Checks the npm packages the way a user meets them: assembles the launcher
# package and this machine's platform package from a fresh build
# (packaging/assemble.mjs), packs both with `npm pack`, installs the two tarballs
# into an empty project with no registry reachable (the registry is set to a
# closed local port and npm runs --offline), then runs `npx rootbound` there:
# --version, a one-shot call, an MCP session over stdin/stdout through the
# launcher, exit statuses, and the message when the platform package is
# missing. Needs node, npm and a Rust toolchain; any failure fails the script.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "npm package: FAIL: $*" >&2; exit 1; }
step() { echo "npm package: $*" >&2; }

command -v node >/dev/null || fail "node is not installed"
command -v npm >/dev/null || fail "npm is not installed"

(cd "$repo" && cargo build --quiet) || fail "cargo build"
bin="${CARGO_TARGET_DIR:-$repo/target}/debug/rootbound"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) target=x86_64-unknown-linux-gnu platform=linux-x64 ;;
  Linux-aarch64) target=aarch64-unknown-linux-gnu platform=linux-arm64 ;;
  *) fail "this check runs on Linux x86_64 or aarch64, not $(uname -s) $(uname -m)" ;;
esac
version=$(node -p 'require(process.argv[1]).version' "$repo/npm/rootbound/package.json")

scratch=$(mktemp -d "${TMPDIR:-/tmp}/rootbound-npm.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# No registry: an address where nothing listens, offline mode, an empty cache
# and no user configuration. Whatever npm would fetch fails at once.
export npm_config_registry=http://127.0.0.1:9/
export npm_config_offline=true
export npm_config_cache="$scratch/cache"
export npm_config_userconfig="$scratch/npmrc"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
touch "$scratch/npmrc"

node "$repo/packaging/assemble.mjs" platform --target "$target" --binary "$bin" --out "$scratch/pkgs" >/dev/null \
  || fail "assemble platform package"
node "$repo/packaging/assemble.mjs" main --out "$scratch/pkgs" >/dev/null || fail "assemble main package"
for pkg in "rootbound-$platform" rootbound; do
  (cd "$scratch/pkgs/$pkg" && npm pack --silent --pack-destination "$scratch" >/dev/null) \
    || fail "npm pack $pkg"
done
main_tgz="$scratch/rootbound-$version.tgz"
platform_tgz="$scratch/rootbound-$platform-$version.tgz"
[ -f "$main_tgz" ] && [ -f "$platform_tgz" ] || fail "npm pack made: $(ls "$scratch")"

# What the tarballs hold: the launcher and licence; the binary, executable.
listing=$(tar -tvzf "$platform_tgz")
grep -Eq -- '-rwx.* package/bin/rootbound$' <<<"$listing" || fail "binary missing or not executable: $listing"
grep -q 'package/LICENSE' <<<"$listing" || fail "no LICENSE in the platform package: $listing"
listing=$(tar -tzf "$main_tgz" | sort | tr '\n' ' ')
[ "$listing" = "package/LICENSE package/README.md package/bin/rootbound.js package/package.json " ] \
  || fail "unexpected files in the main package: $listing"
step "packed $(basename "$main_tgz") and $(basename "$platform_tgz")"

project="$scratch/project"
mkdir -p "$project"
echo '{"name": "demo", "private": true}' >"$project/package.json"
(cd "$project" && npm install --silent "$platform_tgz" "$main_tgz") >"$scratch/install.log" 2>&1 \
  || { cat "$scratch/install.log" >&2; fail "offline npm install of the two tarballs"; }
[ -x "$project/node_modules/rootbound-$platform/bin/rootbound" ] || fail "the binary is not executable once installed"

# npx finds the local package's bin, which is the launcher.
out=$(cd "$project" && npx --offline rootbound --version) || fail "npx rootbound --version"
[ "$out" = "rootbound $version" ] || fail "npx rootbound --version said: $out"

out=$(cd "$project" && npx --offline rootbound --root "$repo/fixtures" call read_file \
  '{"path":"text/settings.crlf.ini","limit":2}') || fail "npx rootbound call read_file"
grep -q 'Showing lines 1-2 of 7' <<<"$out" || fail "unexpected read_file answer: $out"

set +e
out=$(cd "$project" && npx --offline rootbound --root "$repo/fixtures" call read_file '{"path":"/etc/passwd"}' 2>&1)
status=$?
set -e
[ "$status" -eq 1 ] || fail "a tool error should exit 1 through the launcher, got $status: $out"
grep -q 'must be within one of the workspace directories' <<<"$out" || fail "outside-root message: $out"

# An MCP session through the launcher: initialize, initialized, tools/list.
session=$(printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"npm-check","version":"0"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
  | (cd "$project" && timeout 60 npx --offline rootbound --root "$repo/fixtures")) \
  || fail "MCP session through npx"
grep -q '"id":1' <<<"$session" && grep -q '"name":"rootbound"' <<<"$session" \
  || fail "no initialize reply: $session"
grep -q '"id":2' <<<"$session" && grep -q '"name":"read_many_files"' <<<"$session" \
  || fail "no tools/list reply: $session"
step "npx rootbound: --version, call, exit status and an MCP session work offline"

# `npx --package` from an empty folder, as `npx rootbound` does for a user
# who has not installed it (here from the tarballs, as there is no registry).
empty="$scratch/empty"
mkdir -p "$empty"
out=$(cd "$empty" && npx --offline --yes --package "$platform_tgz" --package "$main_tgz" -- rootbound --version) \
  || fail "npx --package tarballs rootbound --version"
[ "$out" = "rootbound $version" ] || fail "npx --package said: $out"
step "npx --package (no project): ok"

# Without the platform package, the launcher says what is missing.
mv "$project/node_modules/rootbound-$platform" "$scratch/moved"
set +e
out=$(cd "$project" && npx --offline rootbound --version 2>&1)
status=$?
set -e
[ "$status" -eq 1 ] || fail "a missing platform package should exit 1, got $status: $out"
grep -q "the package rootbound-$platform is not installed" <<<"$out" || fail "missing-package message: $out"
step "missing platform package: explained"
step ok
