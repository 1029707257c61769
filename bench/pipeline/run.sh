#!/usr/bin/env bash
# bench/pipeline/run.sh: a continuous pipeline against the plain-PostgreSQL
# way of keeping a rollup fresh, on a throwaway server, in the same run.
# 1000 devices, 50 readings per device per minute of event time, event
# times jittered by up to 2 s; one tumbling 1-minute and one hopping
# 60/1-minute window.  Prints:
#   (a) COPY into the source table (rows/s);
#   (b) the pipeline consuming that backlog (events/s) and (b)/(a);
#   (c) INSERT ... SELECT ... GROUP BY ... ON CONFLICT DO UPDATE into a
#       1-minute rollup per batch of 50,000 new rows (events/s) and (b)/(c);
#   (d) freshness while a writer commits 1,000 rows every 10 ms (100,000
#       events/s): p50/p99 from the commit that moves the watermark past a
#       window's end to that window's upsert.
# MINUTES=... sets the backlog length (default 20: 1,000,000 events);
# FRESH_SECONDS=... the streaming time (default 20).
set -euo pipefail

source "$(dirname "$0")/../prepare.sh"

throwaway_start "shared_buffers = '1GB'" "max_wal_size = '4GB'" "synchronous_commit = off" \
    "windowagg.max_state_memory = '256MB'" "windowagg.shared_memory = '512MB'"
chmod 777 "$TS_DIR"
bench_psql bench/pipeline/bench.sql -v minutes="${MINUTES:-20}" \
    -v fresh_seconds="${FRESH_SECONDS:-20}" -v csv="$TS_DIR/events.csv"
