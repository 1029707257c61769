#!/usr/bin/env bash
# test/demo.sh: what `make demo` runs.
#
# Installs what is missing (as root), builds and installs windowagg, starts
# a throwaway PostgreSQL with windowagg preloaded, runs test/demo.sql (a
# windowed aggregation over generated out-of-order sensor readings, some
# late and some too late), prints the results, then removes the server.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash test/setup-debian.sh
source test/throwaway-server.sh

echo "== building and installing windowagg"
make -s PG_CONFIG="$TS_PG_CONFIG" >/dev/null
make -s PG_CONFIG="$TS_PG_CONFIG" install >/dev/null

echo "== starting a throwaway PostgreSQL"
throwaway_start
ts_psql -f - < test/demo.sql
echo "== done; the server is stopped and removed"
