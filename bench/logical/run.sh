#!/usr/bin/env bash
# bench/logical/run.sh: a logical-source pipeline against the raw decoding
# rate of the same stream, on a throwaway server, in the same run.
# 1000 devices; the readings are committed in transactions of 10,000 rows
# while the pipeline is paused.  Prints:
#   (a) pg_logical_slot_get_binary_changes with pgoutput (binary, the
#       pipeline's publication) decoding the stream from a slot of its own
#       (events/s);
#   (b) the pipeline, resumed, consuming the same stream through its slot:
#       decoding, aggregation and results committed (events/s), and (b)/(a).
# Both runs are repeated ROUNDS times (default 2), each on a new stream,
# alternating which goes first.  EVENTS=... sets the stream length
# (default 1,000,000).
set -euo pipefail

source "$(dirname "$0")/../prepare.sh"

throwaway_start "shared_buffers = '1GB'" "max_wal_size = '4GB'" \
    "logical_decoding_work_mem = '256MB'" \
    "windowagg.max_state_memory = '256MB'" "windowagg.shared_memory = '512MB'"
bench_psql bench/logical/bench.sql -v events="${EVENTS:-1000000}" -v rounds="${ROUNDS:-2}"
