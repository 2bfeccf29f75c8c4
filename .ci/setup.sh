#!/usr/bin/env bash
# Installs what the checks need and a fresh machine may lack: Debian packages
# (ripgrep for the parity test, tmux to read Gemini CLI's screen, perl and
# git for the bash tests, attr and acl to set and read back the extended
# attributes and ACLs that tests/write_metadata.rs checks writes keep,
# setpriv to run a server as another user there), with apt-get, only when
# missing; pytest with pip. Node, npm and
# Python come with the machine; the clients and packages the scripts use are
# installed by the scripts themselves, pinned, into scratch folders.
set -euo pipefail

missing=()
for pair in rg:ripgrep tmux:tmux perl:perl git:git python3:python3 setfattr:attr getfattr:attr \
    setfacl:acl getfacl:acl setpriv:util-linux; do
  command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "== installing ${missing[*]} (apt-get)" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  # attr and acl may both be missing for two tools each: ask once.
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi
for tool in rg tmux perl git python3 node npm setfattr getfattr setfacl getfacl setpriv; do
  command -v "$tool" >/dev/null || { echo "FAILED: $tool is needed and could not be installed" >&2; exit 1; }
done
# tests/toolchains.rs runs a Python project's tests through the bash tool,
# with pytest as the user would have it: installed into the machine's Python
# (pyenv's here), found by rootbound without options.
if ! python3 -m pytest --version >/dev/null 2>&1; then
  echo "== installing pytest (pip)" >&2
  python3 -m pip install -q 'pytest==9.2.0'
  command -v pyenv >/dev/null && pyenv rehash
fi
command -v pytest >/dev/null || { echo "FAILED: pytest is needed and could not be installed" >&2; exit 1; }
