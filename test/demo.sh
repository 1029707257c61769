#!/usr/bin/env bash
# test/demo.sh: what `make demo` runs.
#
# Installs what is missing (as root), builds and installs windowagg, starts
# a throwaway PostgreSQL with windowagg preloaded, and runs a live pipeline
# (test/demo_setup.sql): a generator streams out-of-order sensor readings,
# some late and some too late, for 45 seconds while this script prints,
# every two seconds, the watermark and counters, the newest windows, the
# late revisions as they arrive, the dead letters and the open windows
# (test/demo_watch.sql).  It ends with a flush, a summary and a check
# against the batch function (test/demo_summary.sql), then removes the
# server.
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
ts_psql -f - < test/demo_setup.sql

echo "== streaming 90 minutes of readings from 20 devices (45 seconds of your time)"
ts_psql -c "CALL stream_readings()" &
generator=$!
while kill -0 "$generator" 2>/dev/null; do
    sleep 2
    echo
    echo "---- $(date +%H:%M:%S)"
    ts_psql -f - < test/demo_watch.sql
done
wait "$generator"

echo
ts_psql -f - < test/demo_summary.sql
echo "== done; the server is stopped and removed"
