#!/usr/bin/env python3
"""The cost of the journal of edits on a small edit: the same replace in a
1 KB file through two servers of one binary, one with --no-journal, one
journaling (its state directory in a temporary directory), interleaved in
one run. Every edit writes content not seen before.

    bench/journal_bench.py [--bin target/release/rootbound] [--calls 300]

bench/edit_bench.py compares the same two configurations over 1 KB to
20 MB edits in one server each, where the large edits' journal writes also
load the disk the small edits sync to.
"""
import argparse
import os
import shutil
import statistics
import tempfile

from mcp_client import McpClient


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target",
                                                  "release", "rootbound"))
    ap.add_argument("--calls", type=int, default=300)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    try:
        sides = []
        for k, extra in enumerate((["--no-journal"], [])):
            root = os.path.join(tmp, f"root{k}")
            os.mkdir(root)
            with open(os.path.join(root, "a.rs"), "w") as f:
                f.write("".join(f"let value_{i} = compute({i});\n" for i in range(40)))
            sides.append(McpClient([a.bin, "--root", root, "--state-dir", os.path.join(tmp, f"state{k}"), *extra],
                                   "journal_bench"))
        times = [[], []]
        for r in range(a.calls):
            old = "compute(" if r == 0 else f"compute{r - 1}("
            args = {"file_path": "a.rs", "old_string": f"value_20 = {old}", "new_string": f"value_20 = compute{r}("}
            for k in ((0, 1) if r % 2 else (1, 0)):
                t, err, text = sides[k].call("replace", args)
                assert not err, text
                times[k].append(t)
        for side in sides:
            side.close()
    finally:
        shutil.rmtree(tmp)
    off, on = (statistics.median(t) * 1000 for t in times)
    print(f"replace 1 KB: without journal p50 {off:.3f} ms   with journal p50 {on:.3f} ms   ratio {on / off:.3f}")


if __name__ == "__main__":
    main()
