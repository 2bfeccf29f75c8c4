"""Drive rootbound with the official Python MCP SDK: initialize, list the
tools, call read_file and file_read, and check an outside-root refusal.
Exits non-zero with a message on any mismatch."""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def fail(message):
    print(f"python client: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


async def main(binary, root):
    params = StdioServerParameters(
        command=binary, args=["--root", root], env={"RUST_LOG": "warn", "PATH": os.environ.get("PATH", "")}
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            if init.server_info.name != "rootbound":
                fail(f"serverInfo.name is {init.server_info.name!r}")
            tools = await session.list_tools()
            names = {t.name for t in tools.tools}
            for expected in ("read_file", "file_read"):
                if expected not in names:
                    fail(f"{expected} missing from {sorted(names)}")
            result = await session.call_tool("read_file", {"path": "Cargo.toml", "limit": 2})
            text = result.content[0].text
            if result.is_error or "Showing lines 1-2 of" not in text or '[package]' not in text:
                fail(f"read_file returned {text!r}")
            result = await session.call_tool("file_read", {"path": "Cargo.toml", "end_line": 1})
            text = result.content[0].text
            if result.is_error or not text.startswith("Cargo.toml (lines 1-1 of ") or "1\t[package]" not in text:
                fail(f"file_read returned {text!r}")
            result = await session.call_tool("read_file", {"path": "/etc/passwd"})
            text = result.content[0].text
            if not result.is_error or not text.startswith("File path must be within one of the workspace directories"):
                fail(f"outside-root read returned {text!r}")
            print(f"python client: ok ({len(names)} tools, mcp SDK session)")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
