#!/usr/bin/env bash
# npm packages the tests use besides the Python ones (mcp-server-time and mcp-server-git
# come with the dev extra), installed with the system npm (node >= 18; apt's nodejs and
# npm when npm is missing) into a cache outside the repository,
# ${AGENTLS_TOOLS:-${AGENTLS_TOOL_CACHE:-~/.cache/agentls-tools}}/NAME-VERSION, each only when
# it is not there yet (nothing is printed then):
# - mcp-everything: @modelcontextprotocol/server-everything, an MCP server (tests/mcp/conftest.py);
# - acp-sdk: @agentclientprotocol/sdk, whose schema/v1/schema.json the ACP tests validate against.
set -euo pipefail
tools="${AGENTLS_TOOLS:-${AGENTLS_TOOL_CACHE:-$HOME/.cache/agentls-tools}}"

ensure_npm() {
  command -v npm >/dev/null && return 0
  if ! command -v apt-get >/dev/null; then
    echo "npm is missing and apt-get is not here: install node (>= 18) and npm, then run $0 again" >&2
    exit 1
  fi
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  echo "installing nodejs and npm with apt" >&2
  timeout 300 "${sudo[@]}" apt-get update -qq
  timeout 600 "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
}

# install DIR PACKAGE@VERSION FILE: npm-install the package into DIR unless DIR/FILE exists.
install() {
  local dir=$1 package=$2 file=$3
  [ -f "$dir/$file" ] && return 0
  ensure_npm
  echo "installing $package with npm into $dir" >&2
  mkdir -p "$(dirname "$dir")"
  local tmp
  tmp=$(mktemp -d "$dir.partial.XXXXXX")
  chmod 755 "$tmp"
  echo '{"private": true}' >"$tmp/package.json"
  if ! timeout 600 npm install --prefix "$tmp" --no-audit --no-fund --loglevel=error "$package" >&2; then
    rm -rf "$tmp"
    return 1
  fi
  # Whole or not at all: a broken install never looks like a finished one.
  rm -rf "$dir"
  mv "$tmp" "$dir"
}

everything=2026.8.31  # keep in step with tests/mcp/conftest.py
install "$tools/mcp-everything-$everything" "@modelcontextprotocol/server-everything@$everything" \
  node_modules/@modelcontextprotocol/server-everything/dist/index.js
acp_sdk=2.4.0  # keep in step with tests/acp/conftest.py
install "$tools/acp-sdk-$acp_sdk" "@agentclientprotocol/sdk@$acp_sdk" \
  node_modules/@agentclientprotocol/sdk/schema/v1/schema.json
