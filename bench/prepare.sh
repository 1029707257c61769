#!/usr/bin/env bash
# bench/prepare.sh: what every SQL benchmark does first.  Source it from a
# bench/*/run.sh: installs what is missing, builds and installs windowagg,
# and loads test/throwaway-server.sh (throwaway_start, ts_psql).
# Also defines bench_psql FILE [psql args]: runs bench/timed.sql, then FILE.
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
bash test/setup-debian.sh
source test/throwaway-server.sh
make -s PG_CONFIG="$TS_PG_CONFIG" >/dev/null
make -s PG_CONFIG="$TS_PG_CONFIG" install >/dev/null

bench_psql() {
    local file=$1
    shift
    cat bench/timed.sql "$file" | ts_psql "$@" -f -
}
