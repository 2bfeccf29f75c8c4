#!/usr/bin/env python3
"""Edit latency: replace in 1 KB, 1 MB and 20 MB files, write_file of 1 MB,
and the near-miss search on a 20 MB file, through rootbound over MCP stdio.

    bench/edit_bench.py [--bin target/release/rootbound] [--rounds 30]
    bench/edit_bench.py --bin old/rootbound --bin target/release/rootbound
    bench/edit_bench.py --bin "target/release/rootbound --no-journal" --bin target/release/rootbound

Each figure is the median of --rounds calls, interleaved with a reference
measured in the same run: the same edit done in-process by Python (read,
str.replace, write a temporary file, fsync, rename), i.e. the cost of the
work itself without a protocol. Several --bin are measured in the same
rounds, each on its own copies of the files, in alternating order, and
compared with the first. A --bin may carry options after the path (split
as a shell would). Files, and each server's journal of edits
(--state-dir), live in a temporary directory. Every edit writes content
not seen before (a counter in the replaced word), so the journal stores
each one rather than finding it stored already.
"""
import argparse
import os
import shlex
import statistics
import subprocess
import tempfile
import time

from mcp_client import McpClient


def make_file(path, size):
    """Source-like lines, each unique, about `size` bytes."""
    lines, total, i = [], 0, 0
    while total < size:
        line = f"    let value_{i} = compute(value_{i} + {i * 7 % 1000}, \"item {i}\");\n"
        lines.append(line)
        total += len(line)
        i += 1
    with open(path, "w") as f:
        f.writelines(lines)
    return len(lines)


def write_atomically(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)


def python_replace(path, old, new):
    t0 = time.perf_counter()
    with open(path, encoding="utf-8") as f:
        text = f.read()
    write_atomically(path, text.replace(old, new, 1))
    return time.perf_counter() - t0


def python_write(path, content):
    t0 = time.perf_counter()
    write_atomically(path, content)
    return time.perf_counter() - t0


def ms(xs):
    return statistics.median(xs) * 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", action="append",
                    help="a rootbound binary; give it twice or more to compare builds in one run, "
                         "interleaved (default target/release/rootbound)")
    ap.add_argument("--rounds", type=int, default=30)
    a = ap.parse_args()
    bins = a.bin or [os.path.join(os.path.dirname(__file__), "..", "target", "release", "rootbound")]
    with tempfile.TemporaryDirectory() as tmp:
        # Each binary edits its own copies, in a root of its own.
        sides = []
        for k, bin_path in enumerate(bins):
            root = os.path.join(tmp, f"bin{k}")
            os.mkdir(root)
            side = {"bin": bin_path, "root": root, "files": []}
            for name, size in (("replace 1 KB", 1024), ("replace 1 MB", 1024 * 1024),
                               ("replace 20 MB", 20 * 1024 * 1024)):
                path = os.path.join(root, name.split()[1] + ".rs")
                side["files"].append((name, path, make_file(path, size)))
            side["written"] = os.path.join(root, "written.rs")
            state = os.path.join(tmp, f"state{k}")
            side["client"] = McpClient([*shlex.split(bin_path), "--root", root, "--state-dir", state],
                                       "edit_bench")
            sides.append(side)
        refs = {}
        for name, size in (("replace 1 KB", 1024), ("replace 1 MB", 1024 * 1024),
                           ("replace 20 MB", 20 * 1024 * 1024)):
            path = os.path.join(tmp, "ref_" + name.split()[1] + ".rs")
            make_file(path, size)
            refs[name] = path
        ref_big = refs["replace 20 MB"]
        n_big = sides[0]["files"][2][2]
        rows = {}

        def record(name, k, t):
            rows.setdefault(name, [[] for _ in range(len(sides) + 1)])
            rows[name][k].append(t)

        ref_written = os.path.join(tmp, "ref_written.rs")
        content_a = open(sides[0]["files"][1][1]).read()
        content_b = content_a.replace("compute", "evaluate")
        ref_k = len(sides)
        for r in range(a.rounds):
            # The order of the binaries alternates, so neither always goes first.
            order = list(range(len(sides))) if r % 2 == 0 else list(reversed(range(len(sides))))
            for fi, (name, _, n) in enumerate(sides[0]["files"]):
                i = n // 2
                old = f"value_{i} = compute(" if r == 0 else f"value_{i} = compute{r - 1}("
                new = f"value_{i} = compute{r}("
                for k in order:
                    path = sides[k]["files"][fi][1]
                    t, err, text = sides[k]["client"].call(
                        "replace", {"file_path": path, "old_string": old, "new_string": new})
                    assert not err, text
                    record(name, k, t)
                record(name, ref_k, python_replace(refs[name], old, new))
            content = (content_b if r % 2 else content_a).replace("item 1", f"item {r}-1", 1)
            for k in order:
                t, err, text = sides[k]["client"].call(
                    "write_file", {"file_path": sides[k]["written"], "content": content})
                assert not err, text
                record("write_file 1 MB", k, t)
            record("write_file 1 MB", ref_k, python_write(ref_written, content))
            # A near miss: the right two lines with tabs for indentation.
            i = n_big // 3
            miss = (f"\tlet value_{i} = compute(value_{i} + {i * 7 % 1000}, \"item {i}\");\n"
                    f"\tlet value_{i + 1} = compute(")
            for k in order:
                big = sides[k]["files"][2][1]
                t, err, text = sides[k]["client"].call(
                    "replace", {"file_path": big, "old_string": miss, "new_string": "x"})
                assert err and "closest text" in text, text[:300]
                record("near miss 20 MB", k, t)
            t0 = time.perf_counter()
            with open(ref_big, encoding="utf-8") as f:
                f.read().find(miss)
            record("near miss 20 MB", ref_k, time.perf_counter() - t0)
        for side in sides:
            side["client"].close()

    for k, side in enumerate(sides):
        print(f"bin{k}: {side['bin']}")
    heads = " ".join(f"{f'bin{k} ms':>10}" for k in range(len(sides)))
    vs = " ".join(f"{f'bin{k}/bin0':>10}" for k in range(1, len(sides)))
    print(f"{'work':18} {heads} {'ref ms':>9} {'bin0/ref':>8} {vs}   reference")
    ref_names = {"replace 1 KB": "Python read+replace+write+fsync+rename",
                 "replace 1 MB": "Python read+replace+write+fsync+rename",
                 "replace 20 MB": "Python read+replace+write+fsync+rename",
                 "write_file 1 MB": "Python write+fsync+rename",
                 "near miss 20 MB": "Python read + str.find"}
    for name, columns in rows.items():
        med = [ms(c) for c in columns]
        ours = " ".join(f"{m:10.2f}" for m in med[:-1])
        ratios = " ".join(f"{m / med[0]:10.3f}" for m in med[1:-1])
        print(f"{name:18} {ours} {med[-1]:9.2f} {med[0] / med[-1]:8.2f} {ratios}   {ref_names[name]}")


if __name__ == "__main__":
    main()
