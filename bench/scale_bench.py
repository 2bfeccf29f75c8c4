#!/usr/bin/env python3
"""glob, search and list on a 1,000,000-file tree, against ripgrep and ls.

    bench/scale_bench.py [--dir /tmp/rootbound-scale] [--files 1000000]
        [--shapes flat,deep] [--bin target/release/rootbound] [--rg rg]
        [--rounds 3] [--keep]

Builds the trees under --dir (they take ~4 GB of disk each, as every file
needs a block; removed at the end unless --keep):

  flat  one directory holding every file (f0000000.txt ...)
  deep  five levels of ten directories (111,110 directories), ten files in
        each of the 100,000 at the bottom

Every file is one short line; every 1000th also holds `needle`. Workloads:
glob `**/*.txt` (every file matches; the answer lists 2000 and counts the
rest) against `rg --files -g '*.txt'`, which reads no file's time, and
against `find -printf '%T@ %p'`, which reads each one's as glob must for its
recent-first order; search for `needle` with the default
cap of 100 and with no cap (1000 matches) against `rg -i needle`; list the
flat directory (a million entries) against `ls -f`.

Each workload gets a fresh server (so its peak RSS, VmHWM, is the
workload's own) and a warm-up call; then rootbound and the reference run
alternately, in an order rotated every round. Prints median times, the
ratio, and the peak RSS of both (the reference's from wait4).
"""
import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import McpClient  # noqa: E402

NEEDLE_EVERY = 1000


def write_file(path, i):
    body = b"needle in line one\n" if i % NEEDLE_EVERY == 0 else b"hay in line one\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, body)
    os.close(fd)


def make_flat(root, n):
    os.makedirs(root)
    for i in range(n):
        write_file(os.path.join(root, f"f{i:07d}.txt"), i)


def make_deep(root, n):
    levels, fan, per_dir = 5, 10, 10
    leaves = fan ** levels
    i = 0
    for leaf in range(leaves):
        if i >= n:
            break
        digits = f"{leaf:0{levels}d}"
        d = os.path.join(root, *[f"d{c}" for c in digits])
        os.makedirs(d, exist_ok=True)
        for k in range(per_dir):
            if i >= n:
                break
            write_file(os.path.join(d, f"f{k}.txt"), i)
            i += 1


def run_ref(cmd, cwd):
    """(seconds, peak RSS MB) of a command, its output discarded."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, shell=True, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(p.pid, 0)
    elapsed = time.perf_counter() - t0
    p.returncode = 0
    return elapsed, usage.ru_maxrss / 1024


def workloads(root, shape, rg):
    big = 10 ** 7
    w = [
        ("glob", "glob", {"pattern": "**/*.txt"}, f"{rg} --files -g '*.txt'"),
        # The same work as glob's: each file's modification time, for the
        # recent-first order (rg --files looks at none).
        ("glob, timed walk", "glob", {"pattern": "**/*.txt"}, "find . -name '*.txt' -printf '%T@ %p\\n'"),
        ("search, cap 100", "search_file_content", {"pattern": "needle"}, f"{rg} -n -i needle"),
        ("search, no cap", "search_file_content", {"pattern": "needle", "total_max_matches": big},
         f"{rg} -n -i needle"),
    ]
    if shape == "flat":
        w.append(("list", "list_directory", {"path": root}, f"ls -f {shlex.quote(root)}"))
    return w


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--dir", default="/tmp/rootbound-scale")
    ap.add_argument("--files", type=int, default=1_000_000)
    ap.add_argument("--shapes", default="flat,deep")
    ap.add_argument("--bin", default=os.path.join(here, "..", "target", "release", "rootbound"))
    ap.add_argument("--rg", default="rg")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="keep the trees (and reuse them next time)")
    a = ap.parse_args()
    rows = []
    for shape in a.shapes.split(","):
        root = os.path.join(a.dir, shape)
        if not os.path.isdir(root):
            t0 = time.time()
            {"flat": make_flat, "deep": make_deep}[shape](root, a.files)
            print(f"made {shape} ({a.files} files) in {time.time() - t0:.0f} s", flush=True)
        for name, tool, args, ref in workloads(root, shape, a.rg):
            server = McpClient([a.bin, "--root", root], "scale_bench")
            elapsed, is_error, text = server.call(tool, args)  # warm-up
            if is_error:
                raise SystemExit(f"{shape} {name}: {text[:300]}")
            run_ref(ref, root)
            ours, refs, ref_rss = [], [], 0.0
            for r in range(a.rounds):
                runs = [lambda: ours.append(server.call(tool, args)[0]),
                        lambda: refs.append(run_ref(ref, root))]
                for fn in (runs if r % 2 == 0 else runs[::-1]):
                    fn()
            rss = server.peak_rss_mb()
            server.close()
            ours_s = statistics.median(ours)
            ref_s = statistics.median(t for t, _ in refs)
            ref_rss = max(m for _, m in refs)
            words = shlex.split(ref)
            label = " ".join([os.path.basename(words[0])] + [w for w in words[1:] if w.startswith("-")])
            rows.append((shape, name, ours_s, rss, label, ref_s, ref_rss, text.splitlines()[0][:70]))
            print(f"{shape:5} {name:16} rootbound {ours_s * 1000:9.0f} ms {rss:7.1f} MB | "
                  f"{rows[-1][4]:22} {ref_s * 1000:9.0f} ms {ref_rss:7.1f} MB | ratio {ours_s / ref_s:5.2f}",
                  flush=True)
        if not a.keep:
            shutil.rmtree(root)
    print("\n| tree | work | rootbound | peak RSS | reference | ref | ref peak RSS | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for shape, name, ours_s, rss, label, ref_s, ref_rss, _ in rows:
        print(f"| {shape} | {name} | {ours_s * 1000:.0f} ms | {rss:.1f} MB | `{label}` | {ref_s * 1000:.0f} ms | "
              f"{ref_rss:.1f} MB | {ours_s / ref_s:.2f} |")
    print(f"\n{a.files} files per tree, {a.rounds} rounds, medians; first lines of the answers:")
    for shape, name, *_, head in rows:
        print(f"  {shape} {name}: {head}")


if __name__ == "__main__":
    main()
