#!/usr/bin/env bash
# test/run-all.sh: everything `make test` runs.
#
# Installs what is missing (as root), builds and installs windowagg, then
# runs the engine's unit and differential tests (plain and under
# AddressSanitizer) and the pg_regress suite on a throwaway server.
# PostgreSQL refuses to run as root, so as root the server-side tests run
# as the unprivileged "postgres" user in a scratch copy of the tree.
# Ends with one line "N passed, N failed" over every check: each engine
# check (plain and sanitized), each pg_regress file, and each suite.
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

echo "== packaging"
bash test/check-packaging.sh
count "packaging" $?

echo "== build"
make -s PG_CONFIG="$PG_CONFIG" 2>&1 | tee /tmp/windowagg-build.log
build_status=${PIPESTATUS[0]}
if grep -q "warning:" /tmp/windowagg-build.log; then build_status=1; echo "build has warnings"; fi
count "build without warnings" "$build_status"
make -s PG_CONFIG="$PG_CONFIG" install >/dev/null
count "install" $?

echo "== engine tests"
make -s -C test/engine check 2>&1 | tee "$log"
count "engine tests" "${PIPESTATUS[0]}"
add_counts "$log"
make -s -C test/engine check-asan 2>&1 | tee "$log"
count "engine tests under AddressSanitizer" "${PIPESTATUS[0]}"
add_counts "$log"

echo "== pg_regress and isolation specs"
if [ "$(id -u)" -eq 0 ]; then
    scratch=$(mktemp -d /tmp/windowagg-test.XXXXXX)
    rsync -a --exclude .git --exclude results --exclude tmp_check "$top/" "$scratch/"
    chown -R postgres: "$scratch"
    runuser -u postgres -- make -C "$scratch" -s PG_CONFIG="$PG_CONFIG" installcheck 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    [ $status -ne 0 ] && cat "$scratch/regression.diffs" 2>/dev/null | head -200
    server_logs="$scratch/log/postmaster.log $scratch/output_iso/log/postmaster.log"
else
    scratch=
    make -s PG_CONFIG="$PG_CONFIG" installcheck 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    [ $status -ne 0 ] && head -200 regression.diffs 2>/dev/null
    server_logs="$top/log/postmaster.log $top/output_iso/log/postmaster.log"
fi
count "pg_regress" $status

# the server must not have warned, crashed or lost a backend on the way
# shellcheck disable=SC2086
if grep -E "WARNING|PANIC|terminated by signal|server process .* exited" $server_logs; then
    count "server log free of warnings and crashes" 1
else
    count "server log free of warnings and crashes" 0
fi
[ -n "$scratch" ] && rm -rf "$scratch"
# pg_regress and isolation: each test file counts once
regress_ok=$(grep -cE '^(ok|test) .* ok ' "$log" || true)
regress_bad=$(grep -cE '^(not ok|test) .* FAILED' "$log" || true)
# TAP: each test file counts once
regress_ok=$((regress_ok + $(grep -cE '^test/t/.*\.pl \.+ ok$' "$log" || true)))
regress_bad=$((regress_bad + $(grep -cE '^test/t/.*\.pl \.+ *(Dubious|Failed|not ok)' "$log" || true)))
passed=$((passed + regress_ok))
failed=$((failed + regress_bad))
rm -f "$log"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
