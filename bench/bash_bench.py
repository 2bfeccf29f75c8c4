#!/usr/bin/env python3
"""Overhead of the bash tool: `echo hi` through MCP against spawning the
same command directly, interleaved in one run.

    bench/bash_bench.py [--bin target/release/rootbound] [--calls 300] [--first 20] [--server-arg ARG ...]

The reference spawns /usr/bin/echo from this Python process with a pipe for
its output (what the server itself must do at the least). rootbound's
figure (request encoded before the clock starts) includes the JSON-RPC
round trip, parsing and checking the command, starting the call's
supervisor (the server's own binary) with its namespaces, Landlock and
seccomp, killing and reaping the call's processes, and the result
formatting.
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

from mcp_client import McpClient


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target",
                                                  "release", "rootbound"))
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--first", type=int, default=20,
                    help="fresh servers whose first call is timed (it starts the sandbox's fork server)")
    ap.add_argument("--server-arg", action="append", default=[],
                    help="an argument for the server (repeatable), e.g. --server-arg=--bash-ask=off")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as root:
        client = McpClient([a.bin, "--root", root, *a.server_arg], "bash_bench", stderr=subprocess.DEVNULL)
        call = {"command": "echo hi"}
        _, is_error, text = client.call("bash", call)
        assert not is_error and text.startswith("[exit code: 0]\n[stdout ") and text.endswith("\nhi"), text
        ours, direct = [], []
        for i in range(a.calls):
            for which in ((0, 1) if i % 2 else (1, 0)):
                if which == 0:
                    ours.append(client.call("bash", call)[0])
                else:
                    t0 = time.perf_counter()
                    subprocess.run(["/usr/bin/echo", "hi"], stdout=subprocess.PIPE, check=True)
                    direct.append(time.perf_counter() - t0)
        client.close()
        firsts = []
        for _ in range(a.first):
            fresh = McpClient([a.bin, "--root", root, *a.server_arg], "bash_bench", stderr=subprocess.DEVNULL)
            elapsed, is_error, text = fresh.call("bash", call)
            assert not is_error, text
            firsts.append(elapsed)
            fresh.close()
    o, d = statistics.median(ours) * 1000, statistics.median(direct) * 1000
    print(f"bash 'echo hi' via MCP: p50 {o:.2f} ms   direct spawn: p50 {d:.2f} ms   overhead {o - d:.2f} ms   ratio {o / d:.2f}"
          f"   (p90 {statistics.quantiles(ours, n=10)[-1] * 1000:.2f} / {statistics.quantiles(direct, n=10)[-1] * 1000:.2f} ms)")
    if firsts:
        f = statistics.median(firsts) * 1000
        print(f"first call of a fresh server: p50 {f:.2f} ms ({f / d:.2f}x the direct spawn), "
              f"max {max(firsts) * 1000:.2f} ms over {len(firsts)} servers")


if __name__ == "__main__":
    main()
