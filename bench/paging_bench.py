#!/usr/bin/env python3
"""Paged reading: a big generated log read with read_file window by window,
following each answer's note to the next offset as a model does (the answer
budget, 39,000 characters by default, cuts each window), against `cat` of
the same file; then the 10 windows farthest from the start, each against
`tail -n +N | head -n COUNT`. Run at two sizes, the second twice the first,
to show the cost grows with the file, not with its square.

    bench/paging_bench.py [--bin target/release/rootbound] [--mb 1024] [--dir /tmp]

rootbound indexes a big UTF-8 file the first time it reads it
(`fs::reading::LineIndexes`); each later window starts at the nearest mark
before it and stops at its own last line.
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

from mcp_client import McpClient

NEXT = re.compile(r"use (offset|start_line): (\d+)")


def generate(path, mb):
    """A log of about `mb` MiB: lines of 60 to 180 bytes."""
    target = mb * 1024 * 1024
    block = []
    for i in range(10_000):
        block.append(f"2026-11-27T00:{i % 60:02}:{i % 59:02}.{i:06}Z INFO worker-{i % 17} "
                     f"request {i} took {i % 997} ms {'x' * (i * 37 % 120)}\n")
    block = "".join(block).encode()
    with open(path, "wb") as f:
        written = 0
        while written < target:
            f.write(block)
            written += len(block)


def timed(argv, **kw):
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, **kw)
    return time.perf_counter() - t0


def page_through(client, name):
    """Follows the notes from the start to the end; returns (seconds, windows, total lines)."""
    offset, windows, total, t0 = 0, 0, 0, time.perf_counter()
    while True:
        _, is_error, text = client.call("read_file", {"path": name, "offset": offset})
        assert not is_error, text[:300]
        windows += 1
        found = NEXT.search(text)
        if not found:
            break
        offset = int(found.group(2)) - (1 if found.group(1) == "start_line" else 0)
        m = re.search(r"of (\d+) total lines", text)
        total = int(m.group(1))
        if offset >= total:
            break
    return time.perf_counter() - t0, windows, total


def one_size(a, directory, mb):
    path = os.path.join(directory, f"log-{mb}.txt")
    generate(path, mb)
    size = os.path.getsize(path)
    # Warm the page cache; both sides then read from memory.
    timed(["cat", path])
    cat = statistics.median(timed(["cat", path]) for _ in range(3))
    client = McpClient([a.bin, "--root", directory], "paging_bench", stderr=subprocess.DEVNULL)
    seconds, windows, total = page_through(client, os.path.basename(path))
    # The 10 windows farthest from the start, of the size the budget gives.
    count = max(1, total // windows)
    ours, tails = [], []
    for k in range(10):
        start = max(0, total - (k + 1) * count)
        ours.append(client.call("read_file", {"path": os.path.basename(path), "offset": start,
                                              "limit": count})[0])
        tails.append(timed(["sh", "-c", f"tail -n +{start + 1} '{path}' | head -n {count}"]))
    client.close()
    os.unlink(path)
    o, t = statistics.median(ours), statistics.median(tails)
    print(f"{size / 2**20:7.0f} MiB, {total} lines: end to end in {windows} windows {seconds:7.2f} s, "
          f"cat {cat:.3f} s, ratio {seconds / cat:6.1f}   |   10 last windows of {count} lines: "
          f"p50 {o * 1000:.2f} ms, tail|head {t * 1000:.2f} ms, ratio {o / t:.2f}")
    return seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target",
                                                  "release", "rootbound"))
    ap.add_argument("--mb", type=int, default=1024, help="the first size; the second is twice it")
    ap.add_argument("--dir", default=None, help="where the logs are generated (default: a temporary directory)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=a.dir) as directory:
        first = one_size(a, directory, a.mb)
        second = one_size(a, directory, 2 * a.mb)
    print(f"twice the file: {second / first:.2f}x the time")


if __name__ == "__main__":
    main()
