#!/usr/bin/env bash
# Fuzzes the bash planner (parse + expand + policy) for a bounded time:
# never a panic, and an accepted line runs exactly the argv that was checked
# (src/shell/fuzzing.rs). New inputs go to a scratch copy of the corpus, so
# the committed corpus (fuzz/corpus/bash_plan) only changes when someone
# copies interesting inputs back on purpose.
#   fuzz/run.sh [SECONDS]      (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}

if ! rustup toolchain list | grep -q '^nightly'; then
  echo "fuzz: installing the nightly toolchain (cargo fuzz needs it)" >&2
  rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz" >&2
  cargo install --locked cargo-fuzz
fi

mkdir -p fuzz/artifacts
scratch=$(mktemp -d "${TMPDIR:-/tmp}/rootbound-fuzz-corpus.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cp fuzz/corpus/bash_plan/* "$scratch/"
cargo +nightly fuzz run bash_plan "$scratch" fuzz/corpus/bash_plan -- \
  -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=4096 \
  -artifact_prefix=fuzz/artifacts/
