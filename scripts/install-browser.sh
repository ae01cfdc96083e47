#!/usr/bin/env bash
# Installs what the dashboard's browser tests drive: playwright-core from npm
# at a pinned version, into $REPO/.harnesses/browser (gitignored). The
# browser itself is Debian's chromium (/usr/bin/chromium; .ci/run installs
# it with apt-get): playwright-core never downloads a browser.
#
# Idempotent. Prints NAME=PATH lines:
#   playwright-core=/repo/.harnesses/browser/node_modules/playwright-core
#   chromium=/usr/bin/chromium
#
# Environment:
#   STATEWRIGHT_HARNESS_PREFIX  install prefix (default: $REPO/.harnesses)
#   STATEWRIGHT_CHROMIUM        the browser binary (default: /usr/bin/chromium)
set -euo pipefail

PLAYWRIGHT_CORE_VERSION=1.64.1

repo=$(cd "$(dirname "$0")/.." && pwd)
prefix=${STATEWRIGHT_HARNESS_PREFIX:-$repo/.harnesses}/browser
chromium=${STATEWRIGHT_CHROMIUM:-/usr/bin/chromium}

log() { echo "install-browser: $*" >&2; }

command -v npm >/dev/null || { log "npm not found: install Node.js (apt-get install nodejs npm)"; exit 1; }

mkdir -p "$prefix"
[ -f "$prefix/package.json" ] || echo '{"name":"statewright-browser-tests","private":true}' >"$prefix/package.json"

pj=$prefix/node_modules/playwright-core/package.json
have=""
[ -f "$pj" ] && have=$(node -e 'process.stdout.write(require(process.argv[1]).version || "")' "$pj" 2>/dev/null || true)
if [ "$have" = "$PLAYWRIGHT_CORE_VERSION" ]; then
  log "playwright-core $PLAYWRIGHT_CORE_VERSION already installed"
else
  log "installing playwright-core@$PLAYWRIGHT_CORE_VERSION into $prefix"
  # PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: the network is closed; we use Debian's chromium.
  (cd "$prefix" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --save-exact --loglevel=error \
    "playwright-core@$PLAYWRIGHT_CORE_VERSION" >&2)
fi

if [ ! -x "$chromium" ]; then
  log "no browser at $chromium: apt-get install chromium (or set STATEWRIGHT_CHROMIUM)"
  exit 1
fi

echo "playwright-core=$prefix/node_modules/playwright-core"
echo "chromium=$chromium"
