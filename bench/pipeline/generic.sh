#!/usr/bin/env bash
# bench/pipeline/generic.sh: how fast a pipeline catches up on a backlog
# with aggregates of the generic path (sum over numeric, hll distinct
# counts, tdigest percentiles), against the COPY rate of its source, in
# the same run; and the kernel's sum(float8) over the same rows, for what
# the generic path costs.  1000 devices, 50,000 events per minute of event
# time, one tumbling 1-minute window.  Each case's windows are checked
# against GROUP BY over its source (for tdigest: its count only, the
# percentile being approximate).  Prints per case the COPY rate, the
# pipeline's events/s, and their ratio (above 1: the pipeline keeps up
# with a writer that loads as fast as COPY).  MINUTES=... sets the backlog
# length (default 20: 1,000,000 events).  The hll and tdigest cases run
# where those extensions are installed (Debian: postgresql-15-hll,
# postgresql-15-tdigest).
set -euo pipefail

source "$(dirname "$0")/../prepare.sh"

throwaway_start "shared_buffers = '1GB'" "max_wal_size = '4GB'" "synchronous_commit = off" \
    "windowagg.max_state_memory = '1GB'" "windowagg.shared_memory = '1200MB'"
chmod 777 "$TS_DIR"
bench_psql bench/pipeline/generic.sql -v minutes="${MINUTES:-20}" -v csv="$TS_DIR/events.csv"
