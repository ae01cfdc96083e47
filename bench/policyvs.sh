#!/bin/sh
# policyvs.sh: the policy benchmarks of this tree beside the same
# benchmarks on an older commit, in one run, alternating, so that both
# see the same machine load.
#
#   sh bench/policyvs.sh [REF] [ROUNDS] [BENCH-REGEXP] >> bench/policy.txt
#
# REF (default 3c85364, main before the raw-field deny path) is exported
# with git archive into a temporary directory; this tree's
# policy/bench_test.go is copied over its own, so both run the same
# benchmark code. Each round runs every benchmark once in each binary
# (-benchtime 1s), old first, then new.
set -eu
ref=${1:-3c85364}
rounds=${2:-5}
pat=${3:-'Decide'}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/old"
git -C "$root" archive "$ref" | tar -x -C "$tmp/old"
cp "$root/policy/bench_test.go" "$tmp/old/policy/bench_test.go"
(cd "$tmp/old" && go test -c -o "$tmp/old.test" ./policy)
(cd "$root" && go test -c -o "$tmp/new.test" ./policy)
echo "# policyvs: $(git -C "$root" rev-parse --short HEAD) (new) against $ref (old), $rounds rounds, $(date -u +%FT%TZ)"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
	for v in old new; do
		(cd "$root/policy" && "$tmp/$v.test" -test.run '^$' -test.bench "$pat" -test.benchmem -test.benchtime 1s -test.count 1) |
			grep '^Benchmark' | sed "s/^/$v /"
	done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
