#!/usr/bin/env bash
# Installs the coding-agent harnesses the end-to-end tests drive, at pinned
# versions, into a project-local prefix ($REPO/.harnesses, gitignored).
#
# Idempotent: a harness already present at its pinned version is left alone.
# Prints, one per line, NAME=ABSOLUTE_BINARY_PATH for each harness, e.g.
#   claude=/repo/.harnesses/node_modules/.bin/claude
#
# Environment:
#   STATEWRIGHT_HARNESS_PREFIX  install prefix (default: $REPO/.harnesses)
#
# The Claude Code CLI is a native binary shipped in a per-platform optional
# dependency of @anthropic-ai/claude-code: never install with --omit=optional.
# So is the Codex CLI (@openai/codex's per-platform optional dependency).
set -euo pipefail

CLAUDE_CODE_VERSION=2.1.332
# MCP servers and client the gateway's end-to-end tests drive (e2e/gateway*_test.go).
MCP_FILESYSTEM_VERSION=2026.8.31
MCP_EVERYTHING_VERSION=2026.8.31
MCP_INSPECTOR_CLI_VERSION=1.0.3
# opencode: the npm package ships the native binary in a per-platform
# optional dependency (never --omit=optional). Pi: the last release under the
# @mariozechner scope; its successor @earendil-works/pi-coding-agent needs
# Node >= 22.19, newer than Debian's nodejs.
OPENCODE_VERSION=1.18.33
PI_VERSION=0.73.1

# Codex 0.169.0: hooks on by default and run for the shell (exec_command →
# "Bash"), apply_patch and MCP tools; PreToolUse honours deny and, with an
# allow, updatedInput (statewright's session stamp on MCP control calls).
CODEX_VERSION=0.169.0

repo=$(cd "$(dirname "$0")/.." && pwd)
prefix=${STATEWRIGHT_HARNESS_PREFIX:-$repo/.harnesses}

log() { echo "install-harnesses: $*" >&2; }

command -v npm >/dev/null || { log "npm not found: install Node.js (apt-get install nodejs npm)"; exit 1; }

installed_version() { # package name
  local pj="$prefix/node_modules/$1/package.json"
  [ -f "$pj" ] || return 0
  node -e 'process.stdout.write(require(process.argv[1]).version || "")' "$pj" 2>/dev/null || true
}

mkdir -p "$prefix"
# A package.json of our own keeps npm from walking up into the repository.
[ -f "$prefix/package.json" ] || echo '{"name":"statewright-harnesses","private":true}' >"$prefix/package.json"

claude_bin=$prefix/node_modules/.bin/claude
if [ "$(installed_version @anthropic-ai/claude-code)" = "$CLAUDE_CODE_VERSION" ] && [ -x "$claude_bin" ]; then
  log "claude-code $CLAUDE_CODE_VERSION already installed"
else
  log "installing @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION into $prefix"
  (cd "$prefix" && npm install --no-audit --no-fund --save-exact --loglevel=error \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >&2)
fi

# Check the binary really runs (the optional native package must be there).
got=$(DISABLE_AUTOUPDATER=1 timeout 300 "$claude_bin" --version 2>/dev/null || true)
case "$got" in
  "$CLAUDE_CODE_VERSION"*) ;;
  *) log "claude --version printed '$got', want $CLAUDE_CODE_VERSION (was the optional native package skipped?)"; exit 1 ;;
esac

echo "claude=$claude_bin"

# MCP upstreams and client for the gateway tests: plain npm packages.
mcp_pkgs=()
for pv in "@modelcontextprotocol/server-filesystem@$MCP_FILESYSTEM_VERSION" \
          "@modelcontextprotocol/server-everything@$MCP_EVERYTHING_VERSION" \
          "@modelcontextprotocol/inspector-cli@$MCP_INSPECTOR_CLI_VERSION"; do
  if [ "$(installed_version "${pv%@*}")" != "${pv##*@}" ]; then mcp_pkgs+=("$pv"); fi
done
if [ ${#mcp_pkgs[@]} -gt 0 ]; then
  log "installing ${mcp_pkgs[*]} into $prefix"
  (cd "$prefix" && npm install --no-audit --no-fund --save-exact --loglevel=error "${mcp_pkgs[@]}" >&2)
else
  log "MCP test servers already installed"
fi
for b in mcp-server-filesystem mcp-server-everything mcp-inspector-cli; do
  [ -x "$prefix/node_modules/.bin/$b" ] || { log "$b missing from $prefix/node_modules/.bin"; exit 1; }
done
echo "mcp-server-filesystem=$prefix/node_modules/.bin/mcp-server-filesystem"
echo "mcp-server-everything=$prefix/node_modules/.bin/mcp-server-everything"
echo "mcp-inspector-cli=$prefix/node_modules/.bin/mcp-inspector-cli"

codex_bin=$prefix/node_modules/.bin/codex
if [ "$(installed_version @openai/codex)" = "$CODEX_VERSION" ] && [ -x "$codex_bin" ]; then
  log "codex $CODEX_VERSION already installed"
else
  log "installing @openai/codex@$CODEX_VERSION into $prefix"
  (cd "$prefix" && npm install --no-audit --no-fund --save-exact --loglevel=error \
    "@openai/codex@$CODEX_VERSION" >&2)
fi
got=$(timeout 300 "$codex_bin" --version 2>/dev/null || true)
case "$got" in
  "codex-cli $CODEX_VERSION"*) ;;
  *) log "codex --version printed '$got', want codex-cli $CODEX_VERSION (was the optional native package skipped?)"; exit 1 ;;
esac

echo "codex=$codex_bin"

# opencode and Pi for the plugin e2e tests.
oc_pkgs=()
[ "$(installed_version opencode-ai)" = "$OPENCODE_VERSION" ] || oc_pkgs+=("opencode-ai@$OPENCODE_VERSION")
[ "$(installed_version @mariozechner/pi-coding-agent)" = "$PI_VERSION" ] || oc_pkgs+=("@mariozechner/pi-coding-agent@$PI_VERSION")
if [ ${#oc_pkgs[@]} -gt 0 ]; then
  log "installing ${oc_pkgs[*]} into $prefix"
  (cd "$prefix" && npm install --no-audit --no-fund --save-exact --loglevel=error "${oc_pkgs[@]}" >&2)
else
  log "opencode $OPENCODE_VERSION and pi $PI_VERSION already installed"
fi
got=$(OPENCODE_DISABLE_AUTOUPDATE=1 timeout 300 "$prefix/node_modules/.bin/opencode" --version 2>/dev/null || true)
[ "$got" = "$OPENCODE_VERSION" ] || { log "opencode --version printed '$got', want $OPENCODE_VERSION (was the optional native package skipped?)"; exit 1; }
# pi prints its version on stderr, without a newline. The version checks allow
# minutes, not seconds: on a loaded 2-core machine node takes 40 s or more to start pi.
got=$(PI_OFFLINE=1 timeout 300 "$prefix/node_modules/.bin/pi" --version 2>&1 | tail -n 1 || true)
[ "$got" = "$PI_VERSION" ] || { log "pi --version printed '$got', want $PI_VERSION"; exit 1; }
echo "opencode=$prefix/node_modules/.bin/opencode"
echo "pi=$prefix/node_modules/.bin/pi"
