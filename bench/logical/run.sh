#!/usr/bin/env bash
# bench/logical/run.sh: a logical-source pipeline against the raw decoding
# rate of the same stream, on a throwaway server, in the same run.
# 1000 devices; the readings are committed in transactions of 10,000 rows
# while the pipeline is paused.  Prints:
#   (a) pg_logical_slot_peek_binary_changes with pgoutput (binary, a
#       publication of the table) decoding the stream from a slot of its
#       own, best of two (events/s);
#   (b) the pipeline, resumed, consuming the same stream through its slot:
#       decoding, aggregation and results committed (events/s), from the
#       resume (worker start and restore included) and from its first
#       committed epoch (the rate it sustains), best of two identical
#       pipelines run one after the other, and both over (a).
# Both runs are repeated ROUNDS times (default 4), each on a new stream,
# alternating which goes first; the median ratio is printed last.
# EVENTS=... sets the stream length (default 2,000,000).
set -euo pipefail

source "$(dirname "$0")/../prepare.sh"

throwaway_start "shared_buffers = '1GB'" "max_wal_size = '4GB'" \
    "logical_decoding_work_mem = '256MB'" \
    "windowagg.max_state_memory = '256MB'" "windowagg.shared_memory = '512MB'"
bench_psql bench/logical/bench.sql -v events="${EVENTS:-2000000}" -v rounds="${ROUNDS:-4}"
