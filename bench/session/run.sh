#!/usr/bin/env bash
# bench/session/run.sh: session windows in windowagg.aggregate() against
# the plain-SQL way (gaps and islands: lag() and a running sum, then GROUP
# BY), on a throwaway server, in the same run.  Prints one line per case
# with both times and the ratio (plain time / windowagg time; above 1
# means windowagg is faster), under the default work_mem (4MB) and under
# 256MB.  EVENTS=... scales the table (default 10,000,000).
set -euo pipefail

source "$(dirname "$0")/../prepare.sh"

throwaway_start "shared_buffers = '2GB'" "max_wal_size = '4GB'" "synchronous_commit = off"
bench_psql bench/session/bench.sql -v events="${EVENTS:-10000000}"
