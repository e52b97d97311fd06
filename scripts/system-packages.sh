#!/usr/bin/env bash
# What the test suite needs from the system besides Python: tmux (the terminal tests drive
# `agentls run` and `agentls chat` in it), installed with apt when missing (sudo when not
# root); then the MCP test servers of scripts/test-servers.sh (server-everything with npm).
set -euo pipefail
if ! command -v tmux >/dev/null; then
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  if ! command -v apt-get >/dev/null; then
    echo "tmux is missing and apt-get is not here: install tmux, then run the tests again" >&2
    exit 1
  fi
  echo "installing tmux with apt" >&2
  timeout 300 "${sudo[@]}" apt-get update -qq
  timeout 600 "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tmux >/dev/null
fi
bash "$(dirname "${BASH_SOURCE[0]}")/test-servers.sh"
