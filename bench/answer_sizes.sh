#!/usr/bin/env bash
# The largest answers, with the answer budget off and at its default, in both
# dialects: a 5,000-line file read whole, a 2,000-match search, a
# 10,000-entry directory (listed and globbed) and 100 files read at once.
# Lengths are UTF-16 units, as Gemini CLI counts them.
#
#   bash bench/answer_sizes.sh [path/to/rootbound]   (default: the release build)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$repo/target/release/rootbound}
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
python3 - "$corpus" <<'PY'
import os, sys
root = sys.argv[1]
with open(f"{root}/five_thousand.txt", "w") as f:
    for i in range(5000):
        f.write(f"{i:05d} " + "lorem ipsum dolor sit amet consectetur adipiscing elit"[: 30 + i % 25] + "\n")
os.makedirs(f"{root}/dir10k")
for i in range(10000):
    open(f"{root}/dir10k/entry_{i:05d}.rs", "w").close()
os.makedirs(f"{root}/hundred")
for i in range(100):
    with open(f"{root}/hundred/f{i:03d}.txt", "w") as f:
        for j in range(140):
            f.write(f"file {i} line {j} some words to fill the line up\n")
with open(f"{root}/matches.txt", "w") as f:
    for i in range(2500):
        f.write(f"let needle_{i} = compute(value_{i}, other);\n")
PY
utf16_len() { python3 -c 'import sys; print(len(sys.stdin.read().rstrip("\n").encode("utf-16-le")) // 2)'; }
printf '%-15s %-6s %9s %9s %15s %9s %16s\n' dialect budget read_file search list_directory glob read_many_files
for dialect in gemini-0.24 gemini-current; do
  if [ "$dialect" = gemini-current ]; then path=file_path; dir=dir_path; else path=path; dir=path; fi
  for budget in off 39000; do
    run() { "$bin" --root "$corpus" --dialect "$dialect" --answer-budget "$budget" call "$1" "$2" 2>/dev/null | utf16_len; }
    printf '%-15s %-6s %9s %9s %15s %9s %16s\n' "$dialect" "$budget" \
      "$(run read_file "{\"$path\":\"five_thousand.txt\"}")" \
      "$(run search_file_content '{"pattern":"needle","total_max_matches":2000}')" \
      "$(run list_directory "{\"$dir\":\"dir10k\"}")" \
      "$(run glob '{"pattern":"dir10k/*.rs"}')" \
      "$(run read_many_files '{"paths":["hundred/*.txt"]}')"
  done
done
