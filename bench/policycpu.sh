#!/usr/bin/env bash
# bench/policycpu.sh [OLD_COMMIT] [ROUNDS] [N] [BENCHMARKS]: the policy
# package's Decide benchmarks by CPU time (user+sys, from /usr/bin/time)
# per decision as well as wall ns/op, alternating in one run between the
# working tree and, given OLD_COMMIT, that commit. CPU time because on a
# shared, loaded machine wall time mostly measures the wait for a core.
# This tree's policy/bench_test.go is copied over OLD_COMMIT's, so both
# run the same benchmark code. Each run does N decisions (-test.benchtime
# Nx); a 1-decision run of the same benchmark (compiling the law,
# building the input) is subtracted.
# BENCHMARKS is a comma-separated list of benchmark names (default: the
# denied ones and an allowed Read). Writes benchstat input (units sec/op
# and cpu-sec/op) to OUT (default a temporary directory: old.txt,
# new.txt) and runs benchstat when it is on PATH.
set -euo pipefail
old=${1:-}
rounds=${2:-5}
n=${3:-300000}
benches=${4:-DecideAllowedRead,DecideDeniedTool,DecideDeniedToolClaude,DecideDeniedWrite,DecideDeniedWriteSize/64KiB/path-first,DecideDeniedWriteSize/64KiB/path-last,DecideDeniedWriteSize/1024KiB/path-first,DecideDeniedWriteSize/1024KiB/path-last,DecideDeniedProtected}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
out=${OUT:-$tmp}
trap 'rm -rf "$tmp/old" "$tmp"/*.test; [ -n "$old" ] && git -C "$root" worktree remove --force "$tmp/old" 2>/dev/null || true' EXIT
(cd "$root" && go test -c -o "$tmp/new.test" ./policy)
bins=(new)
if [ -n "$old" ]; then
  git -C "$root" worktree add -q --detach "$tmp/old" "$old"
  # Both run this tree's benchmark code (as policyvs.sh does): an older
  # commit may lack a benchmark in the list.
  cp "$root/policy/bench_test.go" "$tmp/old/policy/bench_test.go"
  (cd "$tmp/old" && go test -c -o "$tmp/old.test" ./policy)
  bins=(old new)
fi
run() { # binary benchmark iterations -> "cpu-seconds<TAB>go test's benchmark line"
  local t line
  t=$( { /usr/bin/time -f "%U %S" "$tmp/$1.test" -test.run '^$' -test.bench "^Benchmark$2\$" -test.benchmem \
    -test.benchtime="${3}x" >"$tmp/out"; } 2>&1 | tail -1)
  line=$(grep '^Benchmark' "$tmp/out" | tail -1)
  awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%.4f", a[1] + a[2] }'
  printf '\t%s\n' "$line"
}
cd "$root/policy"
declare -A setup
IFS=, read -ra list <<<"$benches"
for b in "${bins[@]}"; do
  for x in "${list[@]}"; do setup[$b/$x]=$(run "$b" "$x" 1 | cut -f1); done
  : >"$out/$b.txt"
done
echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg), $n decisions per run, $rounds rounds" | tee -a "$out/new.txt"
for ((r = 1; r <= rounds; r++)); do
  for b in "${bins[@]}"; do
    for x in "${list[@]}"; do
      IFS=$'\t' read -r cpu line < <(run "$b" "$x" "$n")
      # BenchmarkX-2 N wall ns/op [MB/s] B/op allocs/op -> benchstat's form with the CPU beside
      awk -v cpu="$cpu" -v s="${setup[$b/$x]}" -v n="$n" -v line="$line" 'BEGIN {
        k = split(line, f, /[ \t]+/); o = f[1] "\t" f[2] "\t" f[3] " ns/op\t" sprintf("%.1f", (cpu - s) * 1e9 / n) " cpu-ns/op"
        for (i = 5; i < k; i += 2) if (f[i+1] == "B/op" || f[i+1] == "allocs/op") o = o "\t" f[i] " " f[i+1]
        print o }' | tee -a "$out/$b.txt"
    done
  done
done
echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/new.txt"
if command -v benchstat >/dev/null && [ -n "$old" ]; then
  benchstat "$out/old.txt" "$out/new.txt"
fi
