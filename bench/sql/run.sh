#!/usr/bin/env bash
# bench/sql/run.sh: windowagg.aggregate() against the plain-SQL way, on a
# throwaway server, in the same run.  Prints one line per case with both
# times and the ratio (plain time / windowagg time; above 1 means
# windowagg is faster), under the default work_mem (4MB) and under 256MB,
# which lets the plain GROUP BY hash everything in memory.  EVENTS=...
# scales the tumbling table (default 10,000,000); HOP_EVENTS=... the
# hopping subset (default 1,000,000); HOP_SKETCH_EVENTS=... the subset
# the hopping sketch cases read (default 100,000: an hll state unpacked is
# 128 kB, and each of the join's groups and windowagg's windows holds one).
set -euo pipefail

source "$(dirname "$0")/../prepare.sh"

throwaway_start "shared_buffers = '2GB'" "max_wal_size = '4GB'" "synchronous_commit = off"
bench_psql bench/sql/bench.sql -v events="${EVENTS:-10000000}" \
    -v hop_events="${HOP_EVENTS:-1000000}" \
    -v hop_sketch_events="${HOP_SKETCH_EVENTS:-100000}"
