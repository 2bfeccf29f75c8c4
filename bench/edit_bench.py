#!/usr/bin/env python3
"""Edit latency: replace in 1 MB and 20 MB files, write_file of 1 MB, and the
near-miss search on a 20 MB file, through rootbound over MCP stdio.

    bench/edit_bench.py [--bin target/release/rootbound] [--rounds 30]

Each figure is the median of --rounds calls, interleaved with a reference
measured in the same run: the same edit done in-process by Python (read,
str.replace, write a temporary file, fsync, rename), i.e. the cost of the
work itself without a protocol. Files live in a temporary directory.
"""
import argparse
import os
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
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "rootbound"))
    ap.add_argument("--rounds", type=int, default=30)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small, big = os.path.join(tmp, "one_mb.rs"), os.path.join(tmp, "twenty_mb.rs")
        n_small = make_file(small, 1024 * 1024)
        n_big = make_file(big, 20 * 1024 * 1024)
        ref_small, ref_big = os.path.join(tmp, "ref_small.rs"), os.path.join(tmp, "ref_big.rs")
        make_file(ref_small, 1024 * 1024)
        make_file(ref_big, 20 * 1024 * 1024)
        client = McpClient([a.bin, "--root", tmp], "edit_bench")
        rows = {}

        def record(name, ours, ref):
            rows.setdefault(name, ([], []))
            rows[name][0].append(ours)
            rows[name][1].append(ref)

        written, ref_written = os.path.join(tmp, "written.rs"), os.path.join(tmp, "ref_written.rs")
        content_a = open(small).read()
        content_b = content_a.replace("compute", "evaluate")
        for r in range(a.rounds):
            for path, ref, n, name in ((small, ref_small, n_small, "replace 1 MB"),
                                       (big, ref_big, n_big, "replace 20 MB")):
                i = n // 2
                old, new = (f"value_{i} = compute(", f"value_{i} = recompute(")
                if r % 2:
                    old, new = new, old
                t, err, text = client.call("replace", {"file_path": path, "old_string": old, "new_string": new})
                assert not err, text
                record(name, t, python_replace(ref, old, new))
            content = content_b if r % 2 else content_a
            t, err, text = client.call("write_file", {"file_path": written, "content": content})
            assert not err, text
            record("write_file 1 MB", t, python_write(ref_written, content))
            # A near miss: the right two lines with tabs for indentation.
            i = n_big // 3
            miss = (f"\tlet value_{i} = compute(value_{i} + {i * 7 % 1000}, \"item {i}\");\n"
                    f"\tlet value_{i + 1} = compute(")
            t, err, text = client.call("replace", {"file_path": big, "old_string": miss, "new_string": "x"})
            assert err and "closest text" in text, text[:300]
            t0 = time.perf_counter()
            with open(ref_big, encoding="utf-8") as f:
                f.read().find(miss)
            record("near miss 20 MB", t, time.perf_counter() - t0)
        client.close()

    print(f"{'work':18} {'rootbound ms':>13} {'reference ms':>13} {'ratio':>6}   reference")
    refs = {"replace 1 MB": "Python read+replace+write+fsync+rename",
            "replace 20 MB": "Python read+replace+write+fsync+rename",
            "write_file 1 MB": "Python write+fsync+rename",
            "near miss 20 MB": "Python read + str.find"}
    for name, (ours, ref) in rows.items():
        print(f"{name:18} {ms(ours):13.2f} {ms(ref):13.2f} {ms(ours) / ms(ref):6.2f}   {refs[name]}")


if __name__ == "__main__":
    main()
