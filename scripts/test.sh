#!/usr/bin/env bash
# The whole test suite — the README's test command, and what CI runs:
#   1. every package's unit, corpus, testscript and fuzz-seed tests;
#   2. the end-to-end tests against the real harnesses, installed from npm at
#      pinned versions and driven offline by scripted fake model servers.
# Extra arguments go to both go test invocations (e.g. -run Smoke -v).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== unit, corpus and CLI tests"
go test -count=1 ./... "$@"

echo "== end-to-end tests with the real harnesses"
bash scripts/test-e2e.sh "$@"
