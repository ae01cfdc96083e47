#!/usr/bin/env bash
# Writes the reports in this directory again with the real runners, over
# the projects in src/. Needs go, node >= 20.13, python3 with pytest
# (Debian's python3-pytest), and cargo (libtest's JSON through
# RUSTC_BOOTSTRAP=1). Run from anywhere: bash testreport/testdata/gen.sh
set -u
cd "$(dirname "$0")"
out=$PWD
(
	cd src/gomod
	go test -count=1 -json ./a/ >"$out/go-pass.json"
	go test -count=1 ./a/ >"$out/go-pass.txt"
	go test -count=1 -v ./a/ >"$out/go-pass-v.txt"
	go test -count=1 -json ./... >"$out/go-fail.json"
	go test -count=1 ./... >"$out/go-fail.txt"
	go test -count=1 -json -run NoSuchTest ./... >"$out/go-zero.json"
)
(cd src/gobuild && go test -count=1 -json ./... >"$out/go-buildfail.json")
(cd src/node && node --test --test-reporter=spec --test-reporter-destination=stdout \
	--test-reporter=junit --test-reporter-destination="$out/node-junit.xml" a.test.mjs >/dev/null)
(
	cd src/pytest
	py="python3 -m pytest -q -p no:cacheprovider -o junit_family=xunit2"
	$py test_a.py --junitxml="$out/pytest-mixed.xml" >/dev/null
	$py -k nosuch test_a.py --junitxml="$out/pytest-zero.xml" >/dev/null
	$py --junitxml="$out/pytest-collect-error.xml" >/dev/null
)
(
	cd src/cargo
	RUSTC_BOOTSTRAP=1 cargo test -q -- -Z unstable-options --format json >"$out/cargo-fail.json" 2>/dev/null
	RUSTC_BOOTSTRAP=1 cargo test -q passes -- -Z unstable-options --format json >"$out/cargo-filtered.json" 2>/dev/null
	rm -rf target Cargo.lock
)
exit 0
