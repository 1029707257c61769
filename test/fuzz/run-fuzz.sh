#!/usr/bin/env bash
# test/fuzz/run-fuzz.sh BUILD_DIR SECONDS: run every fuzz target.
#
# Each target runs for SECONDS on a scratch copy of its seed corpus
# (corpus/<target>/) together with the inputs that once found a bug
# (regressions/<target>/, read only): new inputs it finds stay in the
# scratch copy, never in the repository.  SECONDS 0 runs each over those
# inputs once and stops (make -C test/fuzz regress).
#
# Prints one line per target (runs, executions per second, coverage: the
# instrumented edges "cov" libFuzzer reached of all those in the target,
# the code under test, its harness and the engine, and the features "ft",
# corpus size), and for a finding the input that caused it, base64, and the
# sanitizer's or the check's report.  Exits non-zero on any finding.
# fuzz_agg_query needs a server: run-agg-query.sh starts one.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1
seconds=$2
status=0

for bin in "$build"/fuzz_*; do
    [ -x "$bin" ] || continue
    name=$(basename "$bin")
    work=$(mktemp -d /tmp/windowagg-fuzz.XXXXXX)
    mkdir -p "$work/corpus"
    [ -d "$here/corpus/$name" ] && cp -r "$here/corpus/$name/." "$work/corpus/"
    dirs=("$work/corpus")
    [ -d "$here/regressions/$name" ] && dirs+=("$here/regressions/$name")
    if [ "$seconds" -eq 0 ]; then
        budget=(-runs=0)
    else
        budget=(-max_total_time="$seconds")
    fi
    opts=(-timeout=25 -rss_limit_mb=2048 -print_final_stats=1
          -artifact_prefix="$work/" "${budget[@]}")
    if [ "$name" = fuzz_agg_query ]; then
        WA_FUZZ_ARTIFACTS="$work" bash "$here/run-agg-query.sh" "$bin" "$seconds" >"$work/log" 2>&1
    else
        "$bin" "${opts[@]}" "${dirs[@]}" >"$work/log" 2>&1
    fi
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -1)
    last=$(grep -E '^#[0-9]+' "$work/log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
    edges=$(sed -n 's/.*Loaded 1 modules *(\([0-9]*\) inline 8-bit counters).*/\1/p' "$work/log" | head -1)
    if [ "$rc" -eq 0 ]; then
        echo "ok - $name: ${runs:-?} runs in ${seconds} s, ${rate:-?} exec/s, cov ${cov:-?} of ${edges:-?} edges, ft ${ft:-?}, corpus ${corp:-?}"
    else
        echo "not ok - $name: a finding (exit $rc) after ${runs:-?} runs"
        grep -vE '^(#[0-9]+|INFO:|MERGE)' "$work/log" | head -60
        for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
            [ -f "$f" ] || continue
            echo "# input $(basename "$f") (base64): $(base64 -w0 "$f")"
            echo "# save it as test/fuzz/regressions/$name/<what it found>"
        done
        status=1
    fi
    rm -rf "$work"
done
exit $status
