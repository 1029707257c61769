#!/usr/bin/env bash
# bench/checkpoint/run.sh: checkpoints are incremental (each epoch writes
# only the slices it changed), so a pipeline's ingest throughput should not
# depend on how much state it holds.  On a throwaway server, in one run,
# two identical pipelines (integer event time, one tumbling window of 10^9
# ticks that stays open, count and sum per key) hold 10,000 and 1,000,000
# live slices, built by prefilling that many keys with one event each.
# Each then ingests the same stream, 5,000,000 events over 1,000 of those
# keys committed in one transaction while it runs idle, timed from the
# commit until windowagg.wait returns; 4 runs per case, alternating between
# the cases, best run counts.  Prints the live state of each case, every
# run with the checkpoint rows, slices and bytes and the WAL the pipeline
# wrote meanwhile, and events/s per case with their ratio (target: within
# 1.5x).
# SMALL=..., LARGE=... set the live slices (default 10000, 1000000);
# EVENTS=... the events per run (default 5000000); HOT=... the keys they
# update (default 1000); REPS=... the runs per case (default 4).
set -euo pipefail

source "$(dirname "$0")/../prepare.sh"

throwaway_start "shared_buffers = '1GB'" "max_wal_size = '4GB'" "synchronous_commit = off" \
    "windowagg.max_state_memory = '1GB'" "windowagg.shared_memory = '2GB'"
bench_psql bench/checkpoint/bench.sql -v small="${SMALL:-10000}" -v large="${LARGE:-1000000}" \
    -v events="${EVENTS:-5000000}" -v hot="${HOT:-1000}" -v reps="${REPS:-4}"
