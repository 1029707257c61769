#!/usr/bin/env bash
# test/run-all.sh: everything `make test` runs.
#
# Installs what is missing (as root), builds and installs windowagg, then
# runs the engine's unit and differential tests (plain, under
# AddressSanitizer and under valgrind), every fuzz target for a minute
# (test/fuzz; WA_FUZZ_SECONDS), and pg_regress, the isolation specs and the TAP tests
# on throwaway servers: on Debian's PostgreSQL 15, then on PostgreSQL 18
# built with assertions (test/build-pg18.sh builds it once into a cache;
# WA_SKIP_PG18=1 skips it).  PostgreSQL refuses to run as root, so as root
# the server-side tests run as the unprivileged "postgres" user in a
# scratch copy of the tree.  Prints the time of each part, and ends with
# one line "N passed, N failed" over every check: each engine check (plain
# and sanitized), each pg_regress, isolation and TAP file, and each suite.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash test/setup-debian.sh || exit 1

export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
[ -x "$PG_CONFIG" ] || PG_CONFIG=pg_config

passed=0
failed=0
count() {   # count NAME STATUS: tally one check
    if [ "$2" -eq 0 ]; then passed=$((passed + 1)); echo "== $1: ok";
    else failed=$((failed + 1)); echo "== $1: FAILED"; fi
}
# add_counts LOG: add a runner's own "N passed, N failed" line to the tally
add_counts() {
    local line
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
    [ -n "$line" ] || return 0
    passed=$((passed + $(echo "$line" | cut -d' ' -f1)))
    failed=$((failed + $(echo "$line" | cut -d' ' -f3)))
}
log=$(mktemp)
timings=()
suite_start=$(date +%s)

echo "== packaging"
bash test/check-packaging.sh
count "packaging" $?

echo "== build"
make -s PG_CONFIG="$PG_CONFIG" 2>&1 | tee "$log"
build_status=${PIPESTATUS[0]}
if grep -q "warning:" "$log"; then build_status=1; echo "build has warnings"; fi
count "build without warnings" "$build_status"
make -s PG_CONFIG="$PG_CONFIG" install >/dev/null
count "install" $?

echo "== engine tests"
t0=$(date +%s)
make -s -C test/engine check 2>&1 | tee "$log"
count "engine tests" "${PIPESTATUS[0]}"
add_counts "$log"
make -s -C test/engine check-asan 2>&1 | tee "$log"
count "engine tests under AddressSanitizer" "${PIPESTATUS[0]}"
add_counts "$log"
timings+=("engine tests, plain and sanitized: $(( $(date +%s) - t0 )) s")

t0=$(date +%s)
make -s -C test/engine check-valgrind 2>&1 | tee "$log"
count "engine tests under valgrind memcheck" "${PIPESTATUS[0]}"
add_counts "$log"
timings+=("engine tests under valgrind: $(( $(date +%s) - t0 )) s")

# libFuzzer targets, WA_FUZZ_SECONDS each (60 by default; 0 replays the
# seed corpora and the regression inputs only): each target counts once
echo "== fuzzing"
t0=$(date +%s)
make -s -C test/fuzz PG_CONFIG="$PG_CONFIG" >"$log" 2>&1
fuzz_build=$?
[ "$fuzz_build" -ne 0 ] && cat "$log"
count "fuzz targets built" "$fuzz_build"
bash test/fuzz/run-fuzz.sh test/fuzz/build "${WA_FUZZ_SECONDS:-60}" 2>&1 | tee "$log"
fuzz_status=${PIPESTATUS[0]}
fuzz_ok=$(grep -c '^ok - fuzz_' "$log" || true)
passed=$((passed + fuzz_ok))
failed=$((failed + $(grep -c '^not ok - fuzz_' "$log" || true)))
# every target ran and said so, and the runner agrees
[ "$fuzz_ok" -eq 5 ] && [ "$fuzz_status" -eq 0 ]
count "all five fuzz targets ran without a finding" $?
timings+=("fuzzing: $(( $(date +%s) - t0 )) s")

# server_suites LABEL PG_CONFIG: pg_regress, the isolation specs and the TAP
# tests against the PostgreSQL that PG_CONFIG names, with windowagg built
# and installed for it in a scratch copy of the tree
server_suites() {
    local label=$1 pgc=$2 scratch status server_logs tap_logs regress_ok regress_bad t0
    t0=$(date +%s)
    echo "== pg_regress, isolation specs and TAP tests on $label"
    if [ "$(id -u)" -eq 0 ]; then
        scratch=$(mktemp -d /tmp/windowagg-test.XXXXXX)
        rsync -a --exclude .git --exclude results --exclude tmp_check \
            --exclude '*.o' --exclude '*.bc' --exclude '*.so' "$top/" "$scratch/"
        make -C "$scratch" -s PG_CONFIG="$pgc" install >"$log" 2>&1
        count "install for $label" $?
        grep -E "warning|error" "$log"
        chown -R postgres: "$scratch"
        runuser -u postgres -- make -C "$scratch" -s PG_CONFIG="$pgc" installcheck 2>&1 | tee "$log"
        status=${PIPESTATUS[0]}
        [ $status -ne 0 ] && cat "$scratch/regression.diffs" "$scratch/output_iso/regression.diffs" 2>/dev/null | head -200
        server_logs="$scratch/log/postmaster.log $scratch/output_iso/log/postmaster.log"
        tap_logs=$(ls "$scratch"/tmp_check/log/*.log 2>/dev/null | grep -v regress_log)
    else
        scratch=
        make -s PG_CONFIG="$pgc" install >/dev/null
        make -s PG_CONFIG="$pgc" installcheck 2>&1 | tee "$log"
        status=${PIPESTATUS[0]}
        [ $status -ne 0 ] && head -200 regression.diffs 2>/dev/null
        server_logs="$top/log/postmaster.log $top/output_iso/log/postmaster.log"
        tap_logs=$(ls "$top"/tmp_check/log/*.log 2>/dev/null | grep -v regress_log)
    fi
    count "server suites on $label" $status

    # the servers must not have warned, crashed or lost a backend on the
    # way; the TAP tests warn and kill processes on purpose, so their logs
    # are searched for assertion failures and panics only
    local log_status=0 f
    for f in $server_logs; do
        [ -f "$f" ] || { echo "no server log $f"; log_status=1; }
    done
    # shellcheck disable=SC2086
    grep -E "WARNING|PANIC|TRAP|terminated by signal|server process .* exited" $server_logs && log_status=1
    # shellcheck disable=SC2086
    [ -n "$tap_logs" ] && grep -E "TRAP:|PANIC:" $tap_logs && log_status=1
    count "server logs free of warnings and crashes on $label" $log_status
    [ -n "$scratch" ] && rm -rf "$scratch"
    # pg_regress and isolation: each test file counts once
    # (15 prints "test name ... ok", 18 "ok 1 - name")
    regress_ok=$(grep -cE '^(ok [0-9]+ |(ok|test) .* ok )' "$log" || true)
    regress_bad=$(grep -cE '^(not ok [0-9]+ |(not ok|test) .* FAILED)' "$log" || true)
    # TAP: each test file counts once
    regress_ok=$((regress_ok + $(grep -cE '^test/t/.*\.pl \.+ ok$' "$log" || true)))
    regress_bad=$((regress_bad + $(grep -cE '^test/t/.*\.pl \.+ *(Dubious|Failed|not ok)' "$log" || true)))
    passed=$((passed + regress_ok))
    failed=$((failed + regress_bad))
    timings+=("server suites on $label: $(( $(date +%s) - t0 )) s")
}

server_suites "PostgreSQL 15" "$PG_CONFIG"

# PostgreSQL 18 with assertions, built once into a cache (test/build-pg18.sh)
if [ "${WA_SKIP_PG18:-}" = 1 ]; then
    echo "== PostgreSQL 18: skipped (WA_SKIP_PG18=1)"
else
    t0=$(date +%s)
    bash test/build-pg18.sh > "$log"
    pg18_status=$?
    pg18_config=$(tail -1 "$log")
    if [ "$pg18_status" -eq 3 ]; then
        # not a failure of windowagg's: said loudly, and not counted
        echo "== PostgreSQL 18: SKIPPED, its source tarball is not on this machine (WA_PG18_SOURCE)"
        skipped=" (PostgreSQL 18 SKIPPED: no source tarball)"
    elif [ "$pg18_status" -eq 0 ] && [ -x "$pg18_config" ]; then
        count "PostgreSQL 18 built (or found in the cache)" 0
        timings+=("PostgreSQL 18 build (0 if cached): $(( $(date +%s) - t0 )) s")
        make -s clean >/dev/null
        make -s PG_CONFIG="$pg18_config" 2>&1 | tee "$log"
        build_status=${PIPESTATUS[0]}
        if grep -q "warning:" "$log"; then build_status=1; echo "build has warnings"; fi
        count "build without warnings on PostgreSQL 18" "$build_status"
        make -s clean >/dev/null
        server_suites "PostgreSQL 18 (assertions)" "$pg18_config"
    else
        count "PostgreSQL 18 built (or found in the cache)" 1
    fi
fi
rm -f "$log"

for t in "${timings[@]}"; do echo "== time: $t"; done
echo "== time: all: $(( $(date +%s) - suite_start )) s"
echo "$passed passed, $failed failed${skipped:-}"
[ "$failed" -eq 0 ]
