#!/usr/bin/env bash
# What the test suite needs from the system besides Python: tmux (the terminal tests drive
# `agentls run` and `agentls chat` in it). Installed with apt when missing (sudo when not root).
set -euo pipefail
command -v tmux >/dev/null && exit 0
sudo=()
[ "$(id -u)" = 0 ] || sudo=(sudo)
if ! command -v apt-get >/dev/null; then
  echo "tmux is missing and apt-get is not here: install tmux, then run the tests again" >&2
  exit 1
fi
echo "installing tmux with apt" >&2
timeout 300 "${sudo[@]}" apt-get update -qq
timeout 600 "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tmux >/dev/null
