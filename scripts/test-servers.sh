#!/usr/bin/env bash
# MCP servers the tests start besides the Python ones (mcp-server-time and mcp-server-git
# come with the dev extra): @modelcontextprotocol/server-everything, installed with the
# system npm (node >= 18; apt's nodejs and npm when npm is missing) into a cache outside
# the repository, ${AGENTLS_TOOLS:-${AGENTLS_TOOL_CACHE:-~/.cache/agentls-tools}}/mcp-everything-VERSION,
# only when it is not there yet; prints nothing then. tests/mcp/conftest.py finds it there.
set -euo pipefail
version=2026.8.31
dir="${AGENTLS_TOOLS:-${AGENTLS_TOOL_CACHE:-$HOME/.cache/agentls-tools}}/mcp-everything-$version"
[ -f "$dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ] && exit 0
if ! command -v npm >/dev/null; then
  if ! command -v apt-get >/dev/null; then
    echo "npm is missing and apt-get is not here: install node (>= 18) and npm, then run $0 again" >&2
    exit 1
  fi
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  echo "installing nodejs and npm with apt" >&2
  timeout 300 "${sudo[@]}" apt-get update -qq
  timeout 600 "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
echo "installing @modelcontextprotocol/server-everything@$version with npm into $dir" >&2
mkdir -p "$(dirname "$dir")"
tmp=$(mktemp -d "$dir.partial.XXXXXX")
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
echo '{"private": true}' >"$tmp/package.json"
timeout 600 npm install --prefix "$tmp" --no-audit --no-fund --loglevel=error \
  "@modelcontextprotocol/server-everything@$version" >&2
# Whole or not at all: a broken install never looks like a finished one.
rm -rf "$dir"
mv "$tmp" "$dir"
