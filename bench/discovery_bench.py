#!/usr/bin/env python3
"""Discovery tools against ripgrep and fd, on any directory.

    bench/discovery_bench.py --root DIR [--bin target/release/rootbound]
        [--rounds 7] [--rg rg] [--fd fdfind] [--only REGEX]

Each workload runs once per round for rootbound (over MCP stdio, a warm
server, a plain JSON-RPC client, request encoded before the clock starts)
and for its command-line reference (spawned as ripgrep users run it), in an
order rotated every round, so machine noise hits both alike. Prints medians
and the ratio rootbound / reference, and the server's peak RSS.

rootbound searches case-insensitively by default (Gemini CLI's contract), so
its searches are compared with `rg -i`; `rg` without -i is listed too.
Workloads whose paths do not exist under --root are skipped. The peers'
rows come from the team's MCP driver (mcp_bench.py, not in this repository), the million-file rows from
bench/scale_bench.py; bench/RESULTS.md has the latest run of all three.
"""
import argparse
import os
import re
import shlex
import statistics
import subprocess
import time

from mcp_client import McpClient


def call_ok(client, tool, args):
    elapsed, is_error, text = client.call(tool, args)
    if is_error:
        raise RuntimeError(f"{tool} failed: {text[:300]}")
    return elapsed


def run_cli(cmd, cwd):
    t0 = time.perf_counter()
    subprocess.run(cmd, shell=True, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def first_files(root, sub, suffix, n):
    out = []
    for dp, dns, fns in os.walk(os.path.join(root, sub)):
        dns.sort()
        for f in sorted(fns):
            if f.endswith(suffix):
                out.append(os.path.join(dp, f))
                if len(out) == n:
                    return out
    return out


def biggest_dir(root):
    best, size = None, -1
    for dp, dns, fns in os.walk(root):
        dns[:] = [d for d in dns if d not in ("node_modules", ".git")]
        if len(fns) + len(dns) > size:
            best, size = dp, len(fns) + len(dns)
    return best, size


def workloads(root, rg, fd):
    """(name, tool, args, [(label, command)], description)"""
    big = 10 ** 7
    w = [
        ("literal", "search_file_content", {"pattern": "deserialize_any", "total_max_matches": big},
         [("rg -i", f"{rg} -n -i -F deserialize_any"), ("rg", f"{rg} -n -F deserialize_any")],
         "literal over the whole tree, every match"),
        ("regex", "search_file_content", {"pattern": r"fn\s+[a-z_]+_unchecked\s*\(", "total_max_matches": big},
         [("rg -i", f"{rg} -n -i " + shlex.quote(r"fn\s+[a-z_]+_unchecked\s*\(")),
          ("rg", f"{rg} -n " + shlex.quote(r"fn\s+[a-z_]+_unchecked\s*\("))],
         "regex over the whole tree, every match"),
        ("include", "search_file_content", {"pattern": "unsafe impl", "include": "*.rs", "total_max_matches": big},
         [("rg -i -g", f"{rg} -n -i -F -g '*.rs' 'unsafe impl'"), ("rg -g", f"{rg} -n -F -g '*.rs' 'unsafe impl'")],
         "literal in *.rs files"),
        ("capped", "search_file_content", {"pattern": "deserialize_any"},
         [("rg -i -m", f"{rg} -n -i -F deserialize_any")],
         "same literal, default cap of 100 (rg still finds all)"),
        ("glob", "glob", {"pattern": "**/*.rs"},
         [("rg --files -g", f"{rg} --files -g '*.rs'"), ("fd -g", f"{fd} -g '*.rs'")],
         "glob **/*.rs over the whole tree"),
    ]
    big_dir, entries = biggest_dir(root)
    if big_dir and entries >= 1000:
        w.append(("list_dir", "list_directory", {"path": big_dir},
                  [("ls -f", f"ls -f {shlex.quote(big_dir)}")], f"list {entries} entries"))
    files = first_files(root, "vendor", ".rs", 100) or first_files(root, ".", ".rs", 100)
    if len(files) == 100:
        w.append(("read_many", "read_many_files", {"paths": files},
                  [("cat", "cat " + " ".join(shlex.quote(f) for f in files))], "read 100 .rs files"))
    return w


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", required=True)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target",
                                                  "release", "rootbound"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--rg", default="rg")
    ap.add_argument("--fd", default="fdfind")
    ap.add_argument("--only", help="regex on workload names")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    chosen = [w for w in workloads(root, a.rg, a.fd) if not a.only or re.search(a.only, w[0])]
    server = McpClient([a.bin, "--root", root], "discovery_bench")
    times = {}
    for w in chosen:  # warm-up: page cache, lazy initialisation
        call_ok(server, w[1], w[2])
        for _, cmd in w[3]:
            run_cli(cmd, root)
    for r in range(a.rounds):
        for name, tool, args, refs, _ in chosen:
            runs = [("rootbound", lambda: call_ok(server, tool, args))]
            runs += [(label, lambda c=cmd: run_cli(c, root)) for label, cmd in refs]
            k = r % len(runs)
            for label, fn in runs[k:] + runs[:k]:
                times.setdefault((name, label), []).append(fn())
    rss = server.peak_rss_mb()
    server.close()
    print(f"{'workload':10} {'what':44} {'rootbound ms':>13} {'reference':>16} {'ref ms':>9} {'ratio':>6}")
    for name, _, _, refs, desc in chosen:
        ours = statistics.median(times[(name, "rootbound")]) * 1000
        for i, (label, _) in enumerate(refs):
            ref = statistics.median(times[(name, label)]) * 1000
            print(f"{name if i == 0 else '':10} {desc if i == 0 else '':44} {ours if i == 0 else float('nan'):13.1f} "
                  f"{label:>16} {ref:9.1f} {ours / ref:6.2f}")
    print(f"\nrootbound peak RSS (VmHWM): {rss:.1f} MB; {a.rounds} rounds, medians; root {root}")


if __name__ == "__main__":
    main()
