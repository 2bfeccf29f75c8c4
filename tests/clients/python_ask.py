"""Asking the user (docs/security.md, "Asking the user"), through the official
Python MCP SDK's client and its elicitation callback, against the real binary,
in both protocol eras: the initialize handshake (the server sends
`elicitation/create` while the call is open) and 2026-07-28 (the call answers
`input_required` and the client sends it again with the answer).

Every case is judged by effect: a marker file present or absent, the
question the callback was shown. Usage: python_ask.py BINARY ERA
(ERA: legacy or 2026-07-28). Exits non-zero with a message on any mismatch."""

import asyncio
import os
import shutil
import sys
import tempfile

import mcp_types as types
from mcp import Client, StdioServerParameters


def fail(message):
    print(f"python ask: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def text_of(result):
    return "".join(block.text for block in result.content if getattr(block, "text", None) is not None)


class User:
    """The person behind the client: answers each question from a script,
    and keeps what was asked."""

    def __init__(self):
        self.questions = []
        self.script = []

    def will(self, *answers):
        self.script.extend(answers)

    async def __call__(self, context, params):
        self.questions.append(params)
        if not self.script:
            fail(f"asked a question nobody expected: {params.message!r}")
        answer = self.script.pop(0)
        if isinstance(answer, tuple) and answer[0] == "sleep":
            await asyncio.sleep(answer[1])
            answer = answer[2]
        if answer in ("decline", "cancel"):
            return types.ElicitResult(action=answer)
        return types.ElicitResult(action="accept", content={"decision": answer})


def server(binary, root, *args, log=None):
    """The server's parameters; with `log`, its stderr goes to that file."""
    env = {"PATH": os.environ.get("PATH", "")}
    for name in ("XDG_STATE_HOME", "TMPDIR", "HOME"):
        if name in os.environ:
            env[name] = os.environ[name]
    argv = ["--root", root, "--log-level", "warn" if log is None else "info", *args]
    if log is None:
        return StdioServerParameters(command=binary, args=argv, env=env)
    return StdioServerParameters(
        command="sh", args=["-c", 'exec "$0" "$@" 2>>"$ROOTBOUND_TEST_LOG"', binary, *argv],
        env={**env, "ROOTBOUND_TEST_LOG": log})


async def call(client, command, **extra):
    return await client.call_tool("bash", {"command": command, **extra})


async def read_only_server(binary, era, workspace, outside):
    user = User()
    log = os.path.join(os.path.dirname(workspace), "server.log")
    params = server(binary, workspace, log=log)
    async with Client(params, mode=era, elicitation_callback=user, read_timeout_seconds=60) as client:
        # Accept once, writable: it runs; the same command next time asks again.
        user.will("once_writable")
        result = await call(client, "touch once.txt")
        check(not result.is_error, f"approved touch failed: {text_of(result)}")
        check(os.path.exists(os.path.join(workspace, "once.txt")), f"approved touch made nothing: {text_of(result)}")
        check("approved running" in text_of(result), f"no approval note: {text_of(result)}")
        question = user.questions[-1]
        check('\n    "touch"\n    "once.txt"\n' in question.message, f"words not shown: {question.message!r}")
        check("read-only mode" in question.message, f"mode not shown: {question.message!r}")
        check("not on the allowlist" in question.message, f"reason not shown: {question.message!r}")
        schema = question.requested_schema
        choices = [c["const"] for c in schema["properties"]["decision"]["oneOf"]]
        check(choices == ["once", "once_writable", "session", "no"], f"choices: {choices}")
        user.will("no")
        os.remove(os.path.join(workspace, "once.txt"))
        result = await call(client, "touch once.txt")
        check(len(user.questions) == 2, "a command approved once was not asked about again")
        check(result.is_error and "declined" in text_of(result), f"decline: {text_of(result)}")
        check(not os.path.exists(os.path.join(workspace, "once.txt")), "a declined command ran")

        # Once, read-only: it runs, but cannot write.
        user.will("once")
        result = await call(client, "touch readonly.txt")
        check(not os.path.exists(os.path.join(workspace, "readonly.txt")),
              "a command approved to run read-only wrote in the root")

        # Accept for the session: the prefix runs again unasked; another asks.
        user.will("session")
        result = await call(client, "sha1sum a.txt")
        check(not result.is_error and "a.txt" in text_of(result), f"session run: {text_of(result)}")
        asked = len(user.questions)
        result = await call(client, "sha1sum b.txt")
        check(not result.is_error and "b.txt" in text_of(result), f"session again: {text_of(result)}")
        check(len(user.questions) == asked, "a command allowed for the session was asked about again")
        user.will("decline")
        result = await call(client, "base64 a.txt")
        check(len(user.questions) == asked + 1, "a different command was not asked about")
        check(result.is_error and "declined" in text_of(result), f"other command: {text_of(result)}")

        # Dismissed: nothing runs.
        user.will("cancel")
        result = await call(client, "touch dismissed.txt")
        check(result.is_error and "closed the question" in text_of(result), f"dismiss: {text_of(result)}")
        check(not os.path.exists(os.path.join(workspace, "dismissed.txt")), "a dismissed command ran")

        # ANSI, bidi and TAG characters are shown escaped, never raw.
        user.will("no")
        hidden = "x\x1b[31my\u202ez\U000E0041w"
        result = await call(client, f"touch '{hidden}'")
        message = user.questions[-1].message
        check("\\x1b" in message and "\\u{202e}" in message and "\\u{e0041}" in message,
              f"not escaped: {message!r}")
        check(not any(c in message for c in ("\x1b", "\u202e", "\U000E0041")), f"raw: {message!r}")
        check(not os.path.exists(os.path.join(workspace, hidden)), "a declined command ran")

        # Approved is still confined: the sandbox keeps writes in the roots.
        user.will("once_writable")
        result = await call(client, "sh -c 'touch ../outside/x; mkdir -p .vscode; echo {} >.vscode/settings.json; touch in.txt; echo done'")
        check("done" in text_of(result), f"approved sh did not run: {text_of(result)}")
        check(os.path.exists(os.path.join(workspace, "in.txt")), f"once_writable wrote nothing: {text_of(result)}")
        check(not os.path.exists(os.path.join(outside, "x")), "an approved command wrote outside the roots")
        check(not os.path.exists(os.path.join(workspace, ".vscode", "settings.json")),
              "an approved command left editor settings behind")
        # A path outside the roots is refused without a question.
        asked = len(user.questions)
        result = await call(client, "touch ../outside/y")
        check(len(user.questions) == asked, "a path outside the roots was asked about")
        check(result.is_error and not os.path.exists(os.path.join(outside, "y")), "outside path")
    check(not user.script, f"questions expected and not asked: {user.script}")
    # Each approval is one info line in the server's log.
    with open(log) as f:
        lines = f.read().splitlines()
    approvals = [line for line in lines if "the user approved" in line]
    check(len(approvals) == 4, f"approvals logged: {approvals}")
    check(any('for this session, commands starting with "sha1sum"' in line for line in approvals),
          f"session approval not logged: {approvals}")


async def timeout_server(binary, era, workspace):
    user = User()
    params = server(binary, workspace, "--bash-timeout", "2")
    async with Client(params, mode=era, elicitation_callback=user, read_timeout_seconds=60) as client:
        user.will(("sleep", 4, "once_writable"))
        result = await call(client, "touch late.txt")
        check(result.is_error and "did not answer within 2s" in text_of(result), f"timeout: {text_of(result)}")
        await asyncio.sleep(1)
        check(not os.path.exists(os.path.join(workspace, "late.txt")), "a command answered too late ran")


async def allowlist_server(binary, era, workspace):
    user = User()
    params = server(binary, workspace, "--bash-allow", "true")
    async with Client(params, mode=era, elicitation_callback=user, read_timeout_seconds=60) as client:
        user.will("session")
        result = await call(client, "touch s1.txt")
        check(not result.is_error and os.path.exists(os.path.join(workspace, "s1.txt")), f"s1: {text_of(result)}")
        check("session" in text_of(result), f"no session note: {text_of(result)}")
        choices = [c["const"] for c in user.questions[-1].requested_schema["properties"]["decision"]["oneOf"]]
        check(choices == ["once", "session", "no"], f"allowlist choices: {choices}")
        result = await call(client, "touch s2.txt")
        check(len(user.questions) == 1, "a session-approved prefix was asked about again")
        check(os.path.exists(os.path.join(workspace, "s2.txt")), "a session-approved prefix did not run")
        user.will("no")
        result = await call(client, "mkdir d")
        check(len(user.questions) == 2 and not os.path.exists(os.path.join(workspace, "d")), "mkdir")


async def no_capability(binary, era, workspace):
    async with Client(server(binary, workspace), mode=era) as client:
        result = await call(client, "touch never.txt")
        text = text_of(result)
        check(result.is_error, f"ran without asking: {text}")
        check('--bash-allow "touch"' in text, f"option not named: {text}")
        check("cannot ask the user" in text, f"not said that the client cannot ask: {text}")
        check(not os.path.exists(os.path.join(workspace, "never.txt")), "ran without a question")
    async with Client(server(binary, workspace, "--bash-ask", "off"), mode=era, elicitation_callback=User()) as client:
        result = await call(client, "touch never.txt")
        check(result.is_error and "turned off" in text_of(result), f"--bash-ask off: {text_of(result)}")


async def protected_writes(binary, era, workspace):
    """A write to a protected file is a question too: approved, that one
    write lands; declined, nothing does."""
    import subprocess
    subprocess.run(["git", "init", "-q", workspace], check=True)
    user = User()
    async with Client(server(binary, workspace), mode=era, elicitation_callback=user) as client:
        settings = os.path.join(workspace, ".vscode", "settings.json")
        user.will("once")
        content = '{"terminal.integrated.env.linux": {"X": "1"}}\n\x1b[8mhidden\n'
        result = await client.call_tool("write_file", {"file_path": ".vscode/settings.json", "content": content})
        check(not result.is_error, f"approved write failed: {text_of(result)}")
        with open(settings, newline="") as f:
            check(f.read() == content, "the approved write did not land exactly")
        message = user.questions[-1].message
        check(".vscode/settings.json" in message and "terminal.integrated.env.linux" in message,
              f"path or content not shown: {message!r}")
        check("\\x1b[8mhidden" in message and "\x1b" not in message, f"content not escaped: {message!r}")
        choices = [c["const"] for c in user.questions[-1].requested_schema["properties"]["decision"]["oneOf"]]
        check(choices == ["once", "no"], f"write choices: {choices}")

        # Approved once only: the next write asks again.
        user.will("once")
        result = await client.call_tool("replace", {"file_path": ".vscode/settings.json",
                                                    "old_string": '"1"', "new_string": '"2"'})
        check(not result.is_error, f"approved replace failed: {text_of(result)}")
        check("Replaces: exactly one occurrence of" in user.questions[-1].message, f"replace not shown: {user.questions[-1].message!r}")
        with open(settings) as f:
            check('"2"' in f.read(), "the approved replace did not land")
        check(len(user.questions) == 2, "the second write was not asked about")

        hook = os.path.join(workspace, ".git", "hooks", "pre-commit")
        user.will("no")
        result = await client.call_tool("write_file", {"file_path": ".git/hooks/pre-commit",
                                                       "content": "#!/bin/sh\ntouch /tmp/pwned\n"})
        check(result.is_error and "declined" in text_of(result), f"hook: {text_of(result)}")
        check(not os.path.exists(hook), "a declined hook was written")
    async with Client(server(binary, workspace), mode=era) as client:
        result = await client.call_tool("write_file", {"file_path": ".git/hooks/pre-commit", "content": "x"})
        check(result.is_error and "cannot ask the user" in text_of(result), f"no capability: {text_of(result)}")
        check(not os.path.exists(hook), "a hook was written without a question")


async def main(binary, era):
    scratch = tempfile.mkdtemp(prefix="rootbound-ask-")
    try:
        for name, case in [("read-only", read_only_server), ("timeout", timeout_server),
                           ("allowlist", allowlist_server), ("no capability", no_capability),
                           ("protected writes", protected_writes)]:
            workspace = os.path.join(scratch, name.replace(" ", "-"), "ws")
            outside = os.path.join(scratch, name.replace(" ", "-"), "outside")
            os.makedirs(workspace)
            os.makedirs(outside)
            for f in ("a.txt", "b.txt"):
                with open(os.path.join(workspace, f), "w") as out:
                    out.write(f"{f}\n")
            if case is read_only_server:
                await case(binary, era, workspace, outside)
            else:
                await case(binary, era, workspace)
            print(f"python ask ({era}): {name}: ok")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
