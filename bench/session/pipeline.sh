#!/usr/bin/env bash
# bench/session/pipeline.sh: how fast a session window's pipeline catches
# up on a backlog, against the COPY rate of its source, in the same run.
# 1000 users, each active in bursts of 50 events (about 60 ms apart from
# the next user's), a burst every minute, event times up to 2 s out of
# order; sessions with a 10 s gap, so that every burst is one session.  The
# pipeline's sessions are checked against a gaps-and-islands query over
# its source.  Prints the COPY rate, the pipeline's events/s and their
# ratio (above 1: the pipeline keeps up with a writer that loads as fast
# as COPY).  EVENTS=... sets the backlog (default 1,000,000).
set -euo pipefail

source "$(dirname "$0")/../prepare.sh"

throwaway_start "shared_buffers = '1GB'" "max_wal_size = '4GB'" "synchronous_commit = off" \
    "windowagg.max_state_memory = '1GB'" "windowagg.shared_memory = '1200MB'"
chmod 777 "$TS_DIR"
bench_psql bench/session/pipeline.sql -v events="${EVENTS:-1000000}" -v csv="$TS_DIR/events.csv"
