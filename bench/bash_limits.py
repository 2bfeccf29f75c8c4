"""Issue 9, class 6: expansion is bounded. Two hostile lines from the issue,
with a ping sent while each is planned:

- `echo` followed by 1,500 `*` words, in a root of 2,000 files (3 M names
  before the cap);
- a 20 MB line of 10 M words.

Prints, for each, how long the call took to answer, what it answered, how
long the ping took meanwhile, and the server's peak RSS (VmHWM).

    python3 bench/bash_limits.py target/release/rootbound
"""
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from mcp_client import McpClient  # noqa: E402


def measure(binary, root, command, label):
    client = McpClient([binary, "--root", str(root)], "bash-limits")
    rss_start = client.peak_rss_mb()
    client.next_id += 1
    call_id = client.next_id
    line = json.dumps({"jsonrpc": "2.0", "id": call_id, "method": "tools/call",
                       "params": {"name": "bash", "arguments": {"command": command}}}).encode() + b"\n"
    t0 = time.perf_counter()
    client.proc.stdin.write(line)
    client.proc.stdin.write(b'{"jsonrpc":"2.0","id":999999,"method":"ping"}\n')
    client.proc.stdin.flush()
    answers = {}
    while len(answers) < 2:
        msg = json.loads(client.proc.stdout.readline())
        if msg.get("id") in (call_id, 999999):
            answers[msg["id"]] = (time.perf_counter() - t0, msg)
    call_s, call_msg = answers[call_id]
    ping_s, _ = answers[999999]
    text = call_msg["result"]["content"][0]["text"]
    peak = client.peak_rss_mb()
    client.close()
    print(f"{label}: answered in {call_s * 1000:.0f} ms; ping in {ping_s * 1000:.1f} ms; "
          f"peak RSS {peak:.1f} MB (at start {rss_start:.1f} MB)")
    print(f"    answer: {text.splitlines()[0][:160]}")


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/rootbound"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i in range(2000):
            (root / f"file{i:04}.txt").write_text("x")
        measure(binary, root, "echo" + " *" * 1500, "1,500 globs over 2,000 files")
        measure(binary, root, "echo" + " a" * 10_000_000, "20 MB line of 10 M words")


if __name__ == "__main__":
    main()
