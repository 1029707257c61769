#!/usr/bin/env bash
# bench/compare.sh OLD NEW engine|pipeline [RUNS]: one benchmark of two
# commits, in the same session, runs alternating (old, new, old, ...), so
# that both see the same machine.  Each commit is checked out into a
# worktree of its own under /tmp and built there; pipeline runs install
# their commit's library before each run (bench/prepare.sh does).
#
# Prints every run's result lines, tagged old or new, then the median of
# RUNS (default 5) per commit and metric, and new/old:
#   engine    per shape: windowagg Mev/s and windowagg/naive; BENCH_ARGS
#             (default -n 1000000) is passed to bench_engine
#   pipeline  (b) pipeline events/s; MINUTES (default 60: 3,000,000
#             events, so that a run is not the second polling noise
#             dominates) and FRESH_SECONDS (default 1) as bench/pipeline
set -euo pipefail

if [ $# -lt 3 ]; then
    echo "usage: $0 OLD NEW engine|pipeline [RUNS]" >&2
    exit 2
fi
old=$1 new=$2 bench=$3 runs=${4:-5}
top=$(cd "$(dirname "$0")/.." && pwd)
results=$(mktemp)
trees=()
cleanup() {
    for t in "${trees[@]}"; do git -C "$top" worktree remove --force "$t" >/dev/null 2>&1 || true; done
    rm -f "$results"
}
trap cleanup EXIT

tree_of() {     # tree_of COMMIT: a worktree of it, in $tree (not in a
                # subshell: cleanup must see every tree made)
    tree=$(mktemp -d /tmp/windowagg-compare.XXXXXX)
    rmdir "$tree"
    git -C "$top" worktree add --detach "$tree" "$1" >/dev/null 2>&1
    trees+=("$tree")
}
tree_of "$old"
old_tree=$tree
tree_of "$new"
new_tree=$tree

# run_once TAG TREE: one run, its metrics appended to $results as
# "TAG METRIC VALUE"
run_once() {
    local tag=$1 tree=$2 out
    case $bench in
        engine)
            make -s -C "$tree/bench/engine" >/dev/null
            # shape c's naive baseline updates 600 windows per event: a
            # million events keep a run near a minute (BENCH_ARGS)
            out=$("$tree/bench/engine/bench_engine" ${BENCH_ARGS:--n 1000000})
            echo "$out" | sed "s/^/$tag: /"
            echo "$out" | awk -v tag="$tag" '/^shape=/ {
                split($1, s, "="); split($2, w, "="); split($4, r, "=");
                print tag, "shape_" s[2] "_windowagg_mev_s", w[2];
                print tag, "shape_" s[2] "_ratio_to_naive", r[2] }' >> "$results"
            ;;
        pipeline)
            [ -d "$tree/bench/pipeline" ] || { echo "no bench/pipeline in $tree" >&2; exit 1; }
            chown -R postgres: "$tree" 2>/dev/null || true
            out=$(MINUTES=${MINUTES:-60} FRESH_SECONDS=${FRESH_SECONDS:-1} bash "$tree/bench/pipeline/run.sh" 2>&1)
            # the row under the header that names "(b) pipeline events/s"
            echo "$out" | awk -v tag="$tag" '
                /\(b\) pipeline events\/s/ { want = 2; next }
                want == 2 { want = 1; next }          # the separator line
                want == 1 { split($0, f, "|"); gsub(/ /, "", f[3]);
                            print tag ": (b) pipeline events/s " f[3];
                            print tag, "pipeline_events_s", f[3] >> "'"$results"'"; want = 0 }'
            ;;
        *)
            echo "unknown benchmark $bench" >&2
            exit 2
            ;;
    esac
}

for i in $(seq 1 "$runs"); do
    run_once old "$old_tree"
    run_once new "$new_tree"
done

echo "== medians of $runs runs: old $(git -C "$top" rev-parse --short "$old"), new $(git -C "$top" rev-parse --short "$new")"
for metric in $(awk '{print $2}' "$results" | sort -u); do
    o=$(awk -v m="$metric" '$1 == "old" && $2 == m {print $3}' "$results" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
    n=$(awk -v m="$metric" '$1 == "new" && $2 == m {print $3}' "$results" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
    echo "$metric old=$o new=$n new/old=$(awk -v o="$o" -v n="$n" 'BEGIN {printf "%.2f", n / o}')"
done
