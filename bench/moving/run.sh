#!/usr/bin/env bash
# bench/moving/run.sh: windowagg's moving max/sum against the built-ins in
# window frames, with row_number() as the executor's floor, on a throwaway
# server in one run.  ROWS=... changes the table size (default 1,000,000
# in 10 partitions).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
bash test/setup-debian.sh
source test/throwaway-server.sh
make -s PG_CONFIG="$TS_PG_CONFIG" >/dev/null
make -s PG_CONFIG="$TS_PG_CONFIG" install >/dev/null

throwaway_start "shared_buffers = '1GB'" "work_mem = '256MB'"
ts_psql -v rows="${ROWS:-1000000}" -f - < bench/moving/bench.sql
