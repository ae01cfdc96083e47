#!/usr/bin/env bash
# Runs the end-to-end tests against the real harnesses: installs them at
# their pinned versions (scripts/install-harnesses.sh), then runs the e2e
# build tag's tests. Extra arguments go to go test (e.g. -run Smoke -v).
#
# Plain `go test ./...` does not run these tests (they need the e2e tag);
# scripts/test.sh (the README's test command, which CI runs) calls it after go test ./...
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-harnesses.sh >/dev/null
bash scripts/install-browser.sh >/dev/null
go vet -tags e2e ./e2e/...
# -p 1: each test drives a harness process; the machine has two cores.
# The timeout covers the whole e2e package, which includes the PostgreSQL
# load and fault test (about two minutes on a loaded two-core machine).
go test -tags e2e -count=1 -p 1 -timeout 30m ./e2e/... "$@"
