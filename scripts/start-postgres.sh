#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for statewright's tests on loopback:
# a new cluster in a temporary directory, on a free port, trust auth for
# 127.0.0.1 only, and a database named statewright_test. It prints shell
# assignments, so
#
#   eval "$(bash scripts/start-postgres.sh)"
#
# exports STATEWRIGHT_TEST_POSTGRES (what the tests read) and
# STATEWRIGHT_TEST_PGDATA; stop the server with
#
#   bash scripts/start-postgres.sh --stop "$STATEWRIGHT_TEST_PGDATA"
#
# PostgreSQL refuses to run as root: as root the cluster belongs to the
# postgres user (created by Debian's postgresql package) and initdb/pg_ctl
# run as that user. Needs Debian's postgresql (apt-get install postgresql);
# .ci/run installs it. Progress goes to stderr, assignments to stdout.
set -euo pipefail

die() { echo "start-postgres: $*" >&2; exit 1; }

bindir() {
  local d
  if command -v pg_config >/dev/null && d=$(pg_config --bindir 2>/dev/null) && [ -x "$d/pg_ctl" ]; then
    echo "$d"; return
  fi
  # Debian keeps the server binaries out of PATH; take the newest version.
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  [ -n "$d" ] && [ -x "$d/pg_ctl" ] || die "no PostgreSQL server binaries (install Debian's postgresql: apt-get install postgresql)"
  echo "$d"
}

# as_owner runs a command as the cluster's owner: postgres when we are root.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

BIN=$(bindir)

if [ "${1:-}" = "--stop" ]; then
  dir=${2:?usage: start-postgres.sh --stop PGDATA}
  as_owner "$BIN/pg_ctl" -D "$dir" -m fast -w stop >&2 || true
  rm -rf "$(dirname "$dir")"
  exit 0
fi

if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
  die "running as root but there is no postgres user to own the cluster (install Debian's postgresql)"
fi

free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"; return
    fi
  done
  die "no free port found"
}

top=$(mktemp -d "${TMPDIR:-/tmp}/statewright-pg.XXXXXX")
chmod 0755 "$top"
data="$top/data"
mkdir -m 0700 "$data"
[ "$(id -u)" = 0 ] && chown postgres: "$top" "$data"
owner=$(as_owner id -un)

as_owner "$BIN/initdb" -D "$data" -U "$owner" --auth=trust --encoding=UTF8 --no-instructions >"$top/initdb.log" 2>&1 \
  || { cat "$top/initdb.log" >&2; die "initdb failed"; }

port=$(free_port)
# Loopback only, the socket in the data directory (not /var/run/postgresql),
# enough connections for two replicas' pools and the tests' own.
as_owner "$BIN/pg_ctl" -D "$data" -l "$top/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$data -c max_connections=200 -c fsync=${STATEWRIGHT_PG_FSYNC:-on}" \
  start >&2 || { cat "$top/server.log" >&2; die "pg_ctl start failed"; }

as_owner "$BIN/createdb" -h 127.0.0.1 -p "$port" -U "$owner" statewright_test \
  || die "createdb failed (server log: $top/server.log)"

echo "started PostgreSQL $("$BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (data $data, log $top/server.log)" >&2
echo "export STATEWRIGHT_TEST_POSTGRES='postgres://$owner@127.0.0.1:$port/statewright_test?sslmode=disable'"
echo "export STATEWRIGHT_TEST_PGDATA='$data'"
