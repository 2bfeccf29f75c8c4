"""The benchmarks' MCP client: newline-delimited JSON-RPC over the stdio of
a spawned server, one request in flight.

A request is encoded before the clock starts, so a timing covers the write,
the server's work and the parsing of its reply, not the client's encoding.
"""
import json
import subprocess
import time


class McpClient:
    def __init__(self, argv, name, stderr=None):
        """Starts `argv` and completes the MCP handshake as client `name`."""
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                     bufsize=-1)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": name, "version": "1"}})
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()

    def request(self, method, params):
        """Returns (seconds, reply message)."""
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                           "params": params}).encode() + b"\n"
        t0 = time.perf_counter()
        self.proc.stdin.write(line)
        self.proc.stdin.flush()
        while True:
            msg = json.loads(self.proc.stdout.readline())
            if msg.get("id") == self.next_id:
                return time.perf_counter() - t0, msg

    def call(self, tool, args):
        """Returns (seconds, isError, text of the first content block);
        a JSON-RPC error raises."""
        elapsed, msg = self.request("tools/call", {"name": tool, "arguments": args})
        if "error" in msg:
            raise RuntimeError(f"{tool}: {json.dumps(msg['error'])[:300]}")
        result = msg.get("result") or {}
        content = result.get("content") or [{}]
        return elapsed, result.get("isError", False), content[0].get("text", "")

    def peak_rss_mb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
