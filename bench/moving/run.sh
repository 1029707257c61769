#!/usr/bin/env bash
# bench/moving/run.sh: windowagg's moving max/sum against the built-ins in
# window frames, with row_number() as the executor's floor, on a throwaway
# server in one run.  ROWS=... changes the table size (default 1,000,000
# in 10 partitions).
set -euo pipefail

source "$(dirname "$0")/../prepare.sh"

throwaway_start "shared_buffers = '1GB'" "work_mem = '256MB'"
bench_psql bench/moving/bench.sql -v rows="${ROWS:-1000000}"
