#!/usr/bin/env bash
# Smoke test of rootbound.exe under Wine (called by .ci/cross.sh with the
# exe's path; WINEPREFIX set). Each step is judged by its effect: what a read
# returns, what is on disk after a write, that nothing appears outside the
# root. Wine shows a Unix symlink as what it leads to; the guard must still
# see where it leads (the final path of what it opens) and refuse it.
set -euo pipefail
exe=$1

work=$(mktemp -d /tmp/rootbound-wine-smoke.XXXXXX)
# One wineserver for every step (by default it exits a few seconds after
# its last program, and a program starting just then can lose it).
wineserver -p 2>/dev/null || true
trap 'rm -rf "$work"; wineserver -k 2>/dev/null || true' EXIT
mkdir -p "$work/root/sub" "$work/outside"
printf 'hello from inside\n' >"$work/root/sub/a.txt"
printf 'outside secret\n' >"$work/outside/secret.txt"
ln -s "$work/outside" "$work/root/escape"

# Wine's Z: drive is /.
win() { printf 'Z:%s' "${1//\//\\}"; }
# The same, with each backslash doubled for a JSON string.
json_path() { local p; p=$(win "$1"); printf '%s' "${p//\\/\\\\}"; }
root=$(win "$work/root")

failures=0
pass() { echo "ok: $1"; }
fail() {
    echo "FAILED: $1" >&2
    failures=$((failures + 1))
}
# Runs rootbound.exe; stdout to $out, exit code to $code. Wine's own
# client now and then loses its wineserver between programs ("wine client
# error: recvmsg: Connection reset by peer", nothing run, exit 1; seen once
# in 40 calls): such a start is tried again, and only such a one.
run() {
    local attempt
    for attempt in 1 2 3; do
        code=0
        out=$(wine "$exe" --root "$root" "$@" 2>"$work/stderr") || code=$?
        grep -q '^wine client error' "$work/stderr" || return 0
        echo "note: Wine lost its server (attempt $attempt): $(head -c 200 "$work/stderr")" >&2
    done
}

run tools
if [ "$code" = 0 ] && grep -q '"name": "read_file"' <<<"$out" &&
    grep -q '"name": "write_file"' <<<"$out" && ! grep -q '"name": "bash"' <<<"$out"; then
    pass "tools lists the file tools and, by default, no bash"
else
    fail "tools (exit $code): $out"
fi
if grep -q "bash is off on Windows" "$work/stderr"; then
    pass "the start-up note says bash is off"
else
    fail "no start-up note about bash: $(cat "$work/stderr")"
fi

run --bash-mode unrestricted tools
if grep -q '"name": "bash"' <<<"$out"; then
    pass "--bash-mode unrestricted offers bash"
else
    fail "--bash-mode unrestricted does not offer bash"
fi

run sandbox
if grep -q "Windows: NO sandbox" <<<"$out"; then
    pass "sandbox says no sandbox stands behind bash"
else
    fail "sandbox: $out"
fi

run call read_file '{"path":"sub/a.txt"}'
if [ "$code" = 0 ] && [ "$out" = "hello from inside" ]; then
    pass "call read_file returns the file's text"
else
    fail "call read_file (exit $code): $out"
fi

new="$work/root/new dir/b.txt"
run call write_file "{\"file_path\":\"$(json_path "$new")\",\"content\":\"written by wine\\r\\nline 2\\r\\n\"}"
if [ "$code" = 0 ] && [ "$(od -An -c "$new" | tr -s ' ')" = "$(printf 'written by wine\r\nline 2\r\n' | od -An -c | tr -s ' ')" ]; then
    pass "call write_file wrote the file, byte for byte"
else
    fail "call write_file (exit $code): $out; on disk: $(od -c "$new" 2>&1 | head -3)"
fi
leftovers=$(find "$work/root/new dir" -name '.rootbound-*' | wc -l)
[ "$leftovers" = 0 ] && pass "no temporary file left" || fail "$leftovers temporary files left"

run call replace '{"file_path":"new dir/b.txt","old_string":"line 2","new_string":"line two"}'
if [ "$code" = 0 ] && [ "$(cat "$new")" = "$(printf 'written by wine\r\nline two\r')" ]; then
    pass "call replace edited the file and kept its CRLF endings"
else
    fail "call replace (exit $code): $out"
fi

refused() { # what, then the call's arguments
    local what=$1
    shift
    run call "$@"
    if [ "$code" = 1 ] && grep -q "within one of the workspace directories\|not allowed\|reserved device\|data stream" <<<"$out" &&
        ! grep -q "outside secret" <<<"$out"; then
        pass "$what is refused"
    else
        fail "$what (exit $code): $out"
    fi
}
refused "an absolute path outside the root" read_file "{\"path\":\"$(json_path "$work/outside/secret.txt")\"}"
refused "a relative path up and out" read_file '{"path":"..\\outside\\secret.txt"}'
refused "a read through a symlink out (Wine shows it as a directory)" read_file '{"path":"escape/secret.txt"}'
refused "a write through a symlink out" write_file '{"file_path":"escape/planted.txt","content":"x"}'
refused "a write up and out" write_file '{"file_path":"../outside/planted2.txt","content":"x"}'
refused "an alternate data stream" write_file '{"file_path":"sub/a.txt:evil","content":"x"}'
refused "a device name" write_file '{"file_path":"sub/nul.txt","content":"x"}'
if [ "$(ls "$work/outside")" = "secret.txt" ] && [ "$(cat "$work/root/sub/a.txt")" = "hello from inside" ] &&
    [ "$(ls "$work/root/sub")" = "a.txt" ]; then
    pass "nothing appeared outside the root, and the refused targets are untouched"
else
    fail "outside: $(ls "$work/outside"); sub: $(ls "$work/root/sub")"
fi

# The protocol itself, over stdin and stdout.
replies=$({
    printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"smoke","version":"1"}}}'
    printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    printf '%s\n' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"sub/a.txt"}}}'
    sleep 3
} | timeout 60 wine "$exe" --root "$root" 2>/dev/null) || true
if grep -q '"id":1,"result"' <<<"$replies" && grep -q 'hello from inside' <<<"$replies"; then
    pass "MCP over stdio: initialize and a tools/call answered"
else
    fail "MCP over stdio: $replies"
fi

if [ "$failures" != 0 ]; then
    echo "$failures smoke step(s) failed under Wine" >&2
    exit 1
fi
echo "smoke test under Wine: every step passed"
