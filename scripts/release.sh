#!/usr/bin/env bash
# Builds a release of statewright into dist/ and checks it, with nothing but
# Go and git (no network, no container engine):
#   - the binaries of every program (internal/release.Binaries) for linux,
#     darwin and windows on amd64 and arm64: CGO_ENABLED=0, -trimpath, no
#     build id, stamped with the version, commit and commit date;
#   - a container image for `serve` per linux architecture, FROM scratch,
#     as an OCI image layout in a tar archive (docker/podman load -i);
#   - statewright.cdx.json, a CycloneDX SBOM read from the binaries' own
#     build information, and SHA256SUMS over everything;
#   - the check: checksums and SBOM agree, the native binary prints its
#     version, and the image's layer unpacks and runs as a container
#     (bubblewrap) whose health check passes.
# Options (go run ./internal/release/cmd/release -h): -out DIR,
# -version v1.2.3, -targets linux/amd64,..., -repro linux/amd64 (rebuild one
# target elsewhere with an empty build cache and compare), -require-container,
# -no-check, -check-only. docs/release.md describes the result.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./internal/release/cmd/release "$@"
