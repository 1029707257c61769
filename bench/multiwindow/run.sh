#!/usr/bin/env bash
# bench/multiwindow/run.sh: several windows over one stream.
#
# First the engine alone (bench_multiwindow, see its header): merges and
# events/s for (a) one engine per window, (b) one engine sharing slices,
# (c) the same running the coverage plan, on the paper's query and 10
# random window sets.
#
# Then the paper's query as pipelines on a throwaway server: min, max per
# device over tumbling 10, 20, 30 and 40 minutes, 1000 devices, a backlog
# of EVENTS readings (default 1,000,000) committed by one COPY, and the
# time until every pipeline has caught up, and the CPU time their workers
# used (from /proc): (a) four pipelines, one per
# window; (b) one pipeline with the four windows and
# windowagg.share_windows off; (c) the same with it on.  All three must
# produce the same windows.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
make -s -C "$here"
"$here/bench_multiwindow" ${ENGINE_EVENTS:-}

source "$here/../prepare.sh"
throwaway_start "shared_buffers = '512MB'" "max_wal_size = '4GB'" "synchronous_commit = off" \
    "windowagg.max_state_memory = '256MB'" "windowagg.shared_memory = '1GB'" \
    "max_worker_processes = 16"
chmod 777 "$TS_DIR"
bench_psql bench/multiwindow/pipelines.sql -v events="${EVENTS:-1000000}" -v csv="$TS_DIR/mw.csv" \
    -v clk_tck="$(getconf CLK_TCK)"
