#!/usr/bin/env bash
# bench/shellcpu.sh [OLD_COMMIT] [ROUNDS] [N]: CPU time (user+sys, from
# /usr/bin/time) per analysed command of BenchmarkAnalyzeTypical beside the
# same-run reference BenchmarkParseTypical (mvdan.cc/sh parsing the same
# commands, nothing else), alternating in one run, and, given OLD_COMMIT,
# the analysis as of that commit too. CPU time rather than ns/op because on
# a shared, loaded machine wall time mostly measures the wait for a core.
# Prints one line per measurement and the medians in µs per command.
set -euo pipefail
old=${1:-}
rounds=${2:-7}
n=${3:-100000}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; [ -n "$old" ] && git -C "$root" worktree remove --force "$tmp/old" 2>/dev/null || true' EXIT
(cd "$root" && go test -c -o "$tmp/new.test" ./shell)
bins=(new)
if [ -n "$old" ]; then
  git -C "$root" worktree add -q --detach "$tmp/old" "$old"
  (cd "$tmp/old" && go test -c -o "$tmp/old.test" ./shell)
  bins=(old new)
fi
cpu() { # binary benchmark -> µs of CPU per op
  local t
  t=$( { /usr/bin/time -f "%U %S" "$tmp/$1.test" -test.run '^$' -test.bench "^Benchmark$2\$" \
    -test.benchtime="${n}x" >/dev/null; } 2>&1 | tail -1)
  awk -v t="$t" -v n="$n" 'BEGIN { split(t, a, " "); printf "%.2f", (a[1] + a[2]) * 1e6 / n }'
}
cd "$root/shell"
declare -A all
for ((r = 1; r <= rounds; r++)); do
  for b in "${bins[@]}"; do
    v=$(cpu "$b" AnalyzeTypical); all[$b]+="$v "; echo "round $r analyse($b) $v us"
  done
  v=$(cpu new ParseTypical); all[parse]+="$v "; echo "round $r parse-only $v us"
done
med() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
p=$(med "${all[parse]}")
for b in "${bins[@]}"; do
  m=$(med "${all[$b]}")
  echo "median analyse($b) $m us CPU per command, parse-only reference $p us: ratio $(awk -v a="$m" -v b="$p" 'BEGIN { printf "%.2f", a / b }')x"
done
