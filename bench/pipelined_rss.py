#!/usr/bin/env python3
"""Memory of a rootbound server under a client that pipelines requests and
does not read the replies (issue 10): the server must stop reading stdin
once 64 requests are in flight, so its RSS stays flat, and answer every
request once the client reads.

Usage: python3 bench/pipelined_rss.py target/release/rootbound SCRATCH_DIR [N]
(SCRATCH_DIR gets a small a.txt; N defaults to 100000.)"""
import json, os, subprocess, sys, threading, time

bin_, root = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
open(os.path.join(root, "a.txt"), "w").write("small\n")
p = subprocess.Popen([bin_, "--root", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL, env={**os.environ, "RUST_LOG": "error"})
def send(obj):
    p.stdin.write((json.dumps(obj) + "\n").encode()); p.stdin.flush()
send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
      "capabilities": {}, "clientInfo": {"name": "rss", "version": "0"}}})
p.stdout.readline()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
def rss():
    for line in open(f"/proc/{p.pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
base = rss()
sent = [0]
def writer():
    line = {"jsonrpc": "2.0", "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"path": "a.txt"}}}
    try:
        for i in range(n):
            line["id"] = i + 1
            p.stdin.write((json.dumps(line) + "\n").encode())
            sent[0] = i + 1
        p.stdin.flush()
    except BrokenPipeError:
        pass
t = threading.Thread(target=writer, daemon=True); t.start()
last, still, peak = -1, 0, base
while t.is_alive() and still < 20:
    time.sleep(0.1)
    peak = max(peak, rss())
    still = still + 1 if sent[0] == last else 0
    last = sent[0]
time.sleep(1)
peak = max(peak, rss())
print(f"requests written before the pipe stopped taking them: {sent[0]} of {n} "
      f"(writer {'finished' if not t.is_alive() else 'blocked'})")
print(f"RSS: {base} KiB at start, {rss()} KiB now, peak {peak} KiB")
# Now read every reply: nothing may be lost.
got = 0
t0 = time.time()
while got < n:
    line = p.stdout.readline()
    if not line:
        break
    got += 1
t.join()
print(f"replies read afterwards: {got} of {n} in {time.time()-t0:.1f} s")
p.stdin.close(); p.wait(timeout=30)
print(f"exit code {p.returncode}")
