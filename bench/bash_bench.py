#!/usr/bin/env python3
"""Overhead of the bash tool: `echo hi` through MCP against spawning the
same command directly, interleaved in one run.

    bench/bash_bench.py [--bin target/release/rootbound] [--calls 300]

The reference spawns /usr/bin/echo from this Python process with a pipe for
its output (what the server itself must do at the least). rootbound's
figure includes the JSON-RPC round trip, parsing and checking the command,
the Landlock sandbox (where the kernel has it) and the result formatting.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target",
                                                  "release", "rootbound"))
    ap.add_argument("--calls", type=int, default=300)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as root:
        proc = subprocess.Popen([a.bin, "--root", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, bufsize=-1)
        next_id = 0

        def request(method, params):
            nonlocal next_id
            next_id += 1
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method,
                                         "params": params}).encode() + b"\n")
            proc.stdin.flush()
            while True:
                msg = json.loads(proc.stdout.readline())
                if msg.get("id") == next_id:
                    return msg

        request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "bash_bench", "version": "1"}})
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        proc.stdin.flush()
        call = {"name": "bash", "arguments": {"command": "echo hi"}}
        reply = request("tools/call", call)
        assert reply["result"]["content"][0]["text"] == "hi\n[exit code: 0]", reply
        ours, direct = [], []
        for i in range(a.calls):
            for which in ((0, 1) if i % 2 else (1, 0)):
                t0 = time.perf_counter()
                if which == 0:
                    request("tools/call", call)
                    ours.append(time.perf_counter() - t0)
                else:
                    subprocess.run(["/usr/bin/echo", "hi"], stdout=subprocess.PIPE, check=True)
                    direct.append(time.perf_counter() - t0)
        proc.stdin.close()
        proc.wait(timeout=10)
    o, d = statistics.median(ours) * 1000, statistics.median(direct) * 1000
    print(f"bash 'echo hi' via MCP: p50 {o:.2f} ms   direct spawn: p50 {d:.2f} ms   ratio {o / d:.2f}"
          f"   (p90 {statistics.quantiles(ours, n=10)[-1] * 1000:.2f} / {statistics.quantiles(direct, n=10)[-1] * 1000:.2f} ms)")


if __name__ == "__main__":
    main()
