#!/usr/bin/env bash
# test/engine/run-tests.sh: run the engine's TAP test programs in turn and
# add their checks up.
#
# Usage: run-tests.sh PROGRAM...
#
# Prints each program's output as it comes, then one line "N passed,
# N failed" over all of them (test/run-all.sh reads that line).  A program
# that exits nonzero without a failed check (a crash, an abort) or whose
# plan does not match its checks counts as one more failure.  The exit
# status is nonzero if anything failed.  TEST_WRAPPER, if set, runs before
# each program (valgrind, say).
set -uo pipefail

passed=0
failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

for prog in "$@"; do
    echo "# ${prog##*/}"
    # shellcheck disable=SC2086
    ${TEST_WRAPPER:-} "$prog" | tee "$out"
    rc=${PIPESTATUS[0]}
    ok=$(grep -c '^ok ' "$out")
    bad=$(grep -c '^not ok ' "$out")
    plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$out" | tail -1)
    passed=$((passed + ok))
    failed=$((failed + bad))
    if [ "${plan:-}" != "$((ok + bad))" ]; then
        echo "# ${prog##*/}: plan ${plan:-missing}, but $((ok + bad)) checks"
        failed=$((failed + 1))
    elif [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
        echo "# ${prog##*/}: exit status $rc"
        failed=$((failed + 1))
    fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
