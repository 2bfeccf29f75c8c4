#!/usr/bin/env bash
# The other platforms, checked here on Linux (called by .ci/run):
#  1. clippy with warnings as errors for aarch64-unknown-linux-gnu (a release
#     target: its seccomp numbers differ from x86-64's), aarch64-apple-darwin,
#     x86_64-apple-darwin and x86_64-pc-windows-msvc (type-checked only: no
#     ARM, Mac or Windows here);
#  2. the Windows build (x86_64-pc-windows-gnu, linked by Debian's mingw-w64):
#     its unit tests under Wine, then a smoke test of rootbound.exe under Wine,
#     judged by effect (what a read returns, what is on disk after a write).
# A step whose tools cannot be installed is skipped with a loud message, never
# silently. Build output goes to target-cross/ (git-ignored), apart from the
# Linux build's target/.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CROSS_TARGET_DIR:-$PWD/target-cross}"
CLIPPY_TARGETS=(aarch64-unknown-linux-gnu aarch64-apple-darwin x86_64-apple-darwin x86_64-pc-windows-msvc)
WINE_TARGET=x86_64-pc-windows-gnu

skipped=()
loud_skip() {
    skipped+=("$1")
    {
        echo
        echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
        echo "!!! SKIPPED: $1"
        echo "!!! because: $2"
        echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
        echo
    } >&2
}

timed() {
    local name=$1 start=$SECONDS
    shift
    echo "== $name" >&2
    "$@"
    echo "== $name: $((SECONDS - start)) s" >&2
}

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# --- 1. Targets and clippy ------------------------------------------------------
installed_targets() { rustup target list --installed 2>/dev/null; }
if ! rustup target add "${CLIPPY_TARGETS[@]}" "$WINE_TARGET" >&2; then
    echo "rustup target add failed; checking what is installed" >&2
fi
for target in "${CLIPPY_TARGETS[@]}"; do
    if installed_targets | grep -qx "$target"; then
        timed "clippy $target" cargo clippy --all-targets --target "$target" -- -D warnings
    else
        loud_skip "clippy for $target" "rustup could not install the target"
    fi
done

# --- 2. Windows under Wine ------------------------------------------------------
wine_tools_present() {
    command -v x86_64-w64-mingw32-gcc >/dev/null && command -v wine >/dev/null &&
        { command -v wine64 >/dev/null || [ -x /usr/lib/wine/wine64 ]; }
}
if ! wine_tools_present; then
    export DEBIAN_FRONTEND=noninteractive
    packages=(mingw-w64 wine wine64)
    as_root apt-get install -y --no-install-recommends "${packages[@]}" >&2 ||
        { as_root apt-get update >&2 &&
            as_root apt-get install -y --no-install-recommends "${packages[@]}" >&2; } ||
        true
fi
if ! installed_targets | grep -qx "$WINE_TARGET"; then
    loud_skip "the Windows build under Wine" "rustup could not install $WINE_TARGET"
elif ! wine_tools_present; then
    loud_skip "the Windows build under Wine" "apt-get could not install mingw-w64 and wine"
else
    export WINEPREFIX="$CARGO_TARGET_DIR/wine-prefix" WINEDEBUG=-all
    export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine
    system32="$WINEPREFIX/drive_c/windows/system32"
    if [ ! -d "$system32" ]; then
        timed "Wine prefix" bash -c 'wineboot -i >/dev/null 2>&1; wineserver -w'
    fi
    # Wine 8 (Debian 12) lacks the DLL Rust's std takes its random numbers
    # from; the stand-in goes into this prefix only.
    shim="$system32/bcryptprimitives.dll"
    if [ .ci/wine/bcryptprimitives.c -nt "$shim" ] || [ ! -f "$shim" ]; then
        x86_64-w64-mingw32-gcc -shared -O2 -o "$shim" \
            .ci/wine/bcryptprimitives.c .ci/wine/bcryptprimitives.def -ladvapi32
    fi
    timed "unit tests under Wine" cargo test --lib --target "$WINE_TARGET"
    timed "build rootbound.exe" cargo build --target "$WINE_TARGET"
    timed "smoke test under Wine" bash .ci/wine/smoke.sh \
        "$CARGO_TARGET_DIR/$WINE_TARGET/debug/rootbound.exe"
fi

if ((${#skipped[@]})); then
    echo "!!! cross checks SKIPPED: ${skipped[*]}" >&2
else
    echo "cross checks: all ran" >&2
fi
