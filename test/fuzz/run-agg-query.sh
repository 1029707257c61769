#!/usr/bin/env bash
# test/fuzz/run-agg-query.sh: run the fuzz_agg_query target against a
# throwaway server.
#
#   test/fuzz/run-agg-query.sh FUZZER [SECONDS]
#
# Starts a scratch PostgreSQL with windowagg preloaded
# (test/throwaway-server.sh: windowagg must already be installed into that
# PostgreSQL, by make install), applies agg_query_setup.sql, replays
# every input of regressions/fuzz_agg_query/ once, then fuzzes for SECONDS
# (default 60; 0 replays the seed corpus and the regression inputs only)
# on a copy of corpus/fuzz_agg_query/, so that the inputs libFuzzer adds
# never land in the repository.  Exits non-zero on a finding; the input that found it is kept
# in WA_FUZZ_ARTIFACTS (default: a new directory under /tmp, printed).
#
# Works as root: the server runs as the unprivileged postgres user, and the
# fuzzer connects to it as the postgres role over its Unix socket.
#
# Environment: PG_CONFIG (the server to start, default PostgreSQL 15),
# TS_PORT (its port number, only naming the socket), WA_FUZZ_ARTIFACTS,
# WA_FUZZ_FLAGS (more libFuzzer flags).
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 FUZZER [SECONDS]" >&2
    exit 2
fi
fuzzer=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
seconds=${2:-60}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -x "$fuzzer" ] || { echo "$0: $fuzzer is not an executable" >&2; exit 2; }
case $seconds in
    ''|*[!0-9]*) echo "$0: SECONDS must be a whole number" >&2; exit 2 ;;
esac

# shellcheck source=../throwaway-server.sh
source "$here/../throwaway-server.sh"

# every refused query is an ERROR: keep them out of the server log, which
# keeps what a crash leaves (LOG, FATAL, PANIC)
throwaway_start "log_min_messages = log" "log_min_error_statement = panic"

work=$(mktemp -d /tmp/windowagg-aggfuzz.XXXXXX)
artifacts=${WA_FUZZ_ARTIFACTS:-$work/artifacts}
mkdir -p "$artifacts" "$work/corpus"
cleanup() {
    local status=$?
    if [ $status -ne 0 ] && [ -f "$TS_DIR/server.log" ]; then
        echo "---- last lines of the server log" >&2
        tail -n 30 "$TS_DIR/server.log" >&2 || true
    fi
    throwaway_stop
    # keep the findings, drop the rest
    rm -rf "$work/corpus"
    rmdir "$work/artifacts" "$work" 2>/dev/null || true
    if [ $status -ne 0 ] && [ -n "$(ls -A "$artifacts" 2>/dev/null)" ]; then
        echo "findings are in $artifacts" >&2
    fi
    exit $status
}
trap cleanup EXIT
ts_psql -f "$here/agg_query_setup.sql" >/dev/null
export WA_FUZZ_CONNINFO="host=$TS_DIR port=$TS_PORT user=postgres dbname=postgres"
# AddressSanitizer's quarantine of freed memory would grow to 256 MB
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=32}

# an input is a list of choices, not data whose length matters
flags=(-max_len=256 -len_control=0 -timeout=60 -artifact_prefix="$artifacts/"
       -print_final_stats=1)
# shellcheck disable=SC2206
[ -n "${WA_FUZZ_FLAGS:-}" ] && flags+=($WA_FUZZ_FLAGS)

# Inputs that once found a bug, each run once: they must pass now.
shopt -s nullglob
regressions=("$here"/regressions/fuzz_agg_query/*)
if [ ${#regressions[@]} -gt 0 ]; then
    echo "replaying ${#regressions[@]} regression inputs"
    "$fuzzer" "${flags[@]}" "${regressions[@]}"
fi

cp "$here"/corpus/fuzz_agg_query/* "$work/corpus/"
if [ "$seconds" -eq 0 ]; then
    "$fuzzer" "${flags[@]}" "$work"/corpus/*
else
    echo "fuzzing fuzz_agg_query for $seconds s"
    "$fuzzer" "${flags[@]}" -max_total_time="$seconds" "$work/corpus"
fi
