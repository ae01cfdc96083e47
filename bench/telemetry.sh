#!/bin/sh
# telemetry.sh: what telemetry costs, in one run (bench/telemetry.txt).
#
#   sh bench/telemetry.sh [REF] [ROUNDS] >> bench/telemetry.txt
#
# 1. The decision path: BenchmarkDecideTelemetry (internal/telemetry:
#    runtime.Service.Decide on SQLite, one allowed Read per op) with
#    telemetry off, with Prometheus metrics, and with metrics and OTLP
#    traces sent to a collector stand-in on loopback; ROUNDS (default 7)
#    rounds, each running the three modes in turn, so all see the same
#    load. Medians per mode and each beside "off".
# 2. Start-up: the full binary of this tree beside REF's (default: main
#    before telemetry, 97b326a), both `statewright --version`, 31 times
#    each, alternating, with GODEBUG=inittrace=1: the package-init time
#    and heap of the packages telemetry adds (the Prometheus client, the
#    OpenTelemetry SDK and OTLP exporters and what they link), beside the
#    init time of all packages. The hook's thin client links none of them
#    (checked below with go list).
set -eu
ref=${1:-97b326a}
rounds=${2:-7}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# telemetry.sh: $(git -C "$root" rev-parse --short HEAD) against $ref, $rounds rounds, $(date -u +%FT%TZ), $(nproc) cores"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
(cd "$root" && go test -c -o "$tmp/t.test" ./internal/telemetry)
for r in $(seq "$rounds"); do
	(cd "$root/internal/telemetry" && "$tmp/t.test" -test.run '^$' -test.bench DecideTelemetry -test.benchmem -test.benchtime 2000x -test.count 1) | grep '^Benchmark'
done > "$tmp/bench"
echo "## decision path (median of $rounds rounds)"
awk '{ sub(/-[0-9]+$/, "", $1); m=$1; sub(/.*\//, "", m); ns[m]=ns[m] " " $3; b[m]=$5; a[m]=$7; if (!(m in seen)) { seen[m]=1; order[++n]=m } }
function median(s,   v, k, i, j, t) { k=split(s, v, " "); for (i=1;i<=k;i++) for (j=i+1;j<=k;j++) if (v[j]+0 < v[i]+0) { t=v[i]; v[i]=v[j]; v[j]=t }; return v[int((k+1)/2)] }
END { off=median(ns["off"]); for (i=1;i<=n;i++) { m=order[i]; x=median(ns[m]); printf "%-16s %9.0f ns/op  %6d B/op  %4d allocs/op  %.2fx off (ns), %+d allocs\n", m, x, b[m], a[m], x/off, a[m]-a["off"] } }' "$tmp/bench"
echo "## start-up (package init, GODEBUG=inittrace=1, statewright --version, median of 31)"
mkdir "$tmp/old"
git -C "$root" archive "$ref" | tar -x -C "$tmp/old"
(cd "$tmp/old" && go build -trimpath -o "$tmp/sw-off" ./cmd/statewright)
(cd "$root" && go build -trimpath -o "$tmp/sw-on" ./cmd/statewright)
for i in $(seq 31); do
	for v in off on; do
		GODEBUG=inittrace=1 "$tmp/sw-$v" --version 2>&1 >/dev/null | awk -v v="$v" -v i="$i" '$1=="init" { print v, i, $2, $5, $8, $10 }'
	done
done > "$tmp/init"
awk '
{ key=$1 " " $3; if ($1=="off") inoff[$3]=1; clock[$1 " " $2]+=$4; if ($1=="on") { pk[$3]=1; heap[$3]=$5; allocs[$3]=$6 } }
END {
	for (p in pk) if (!(p in inoff)) { added++; h+=heap[p]; al+=allocs[p]; addp[p]=1 }
	print "packages with an init: added by telemetry " added ", their init heap " h " bytes in " al " allocations"
}' "$tmp/init"
awk 'NR==FNR { if ($1=="off") inoff[$3]=1; next }
{ tot[$1 " " $2]+=$4; if ($1=="on" && !($3 in inoff)) add[$2]+=$4 }
function median(s,   v, k, i, j, t) { k=split(s, v, " "); for (i=1;i<=k;i++) for (j=i+1;j<=k;j++) if (v[j]+0 < v[i]+0) { t=v[i]; v[i]=v[j]; v[j]=t }; return v[int((k+1)/2)] }
END { for (k in tot) { split(k, f, " "); all[f[1]]=all[f[1]] " " tot[k] }; for (i in add) a=a " " add[i]
	printf "init time, all packages: off %.2f ms, on %.2f ms; of the added packages: %.2f ms\n", median(all["off"]), median(all["on"]), median(a) }' "$tmp/init" "$tmp/init"
printf 'binary size: off %d bytes, on %d bytes\n' "$(stat -c %s "$tmp/sw-off")" "$(stat -c %s "$tmp/sw-on")"
printf 'telemetry packages linked into cmd/statewright-hook: %d\n' "$(cd "$root" && go list -deps ./cmd/statewright-hook | grep -cE 'prometheus|opentelemetry|grpc' || true)"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
