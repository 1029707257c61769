#!/usr/bin/env bash
# test/valgrind-regress.sh: pg_regress and the isolation specs with every
# server process under Valgrind's memcheck, on PostgreSQL 18 built with
# USE_VALGRIND.  Not part of `make test` nor of CI: on two cores it takes
# about two hours (see README.md, "Tests").  Run as root, like run-all.sh.
#
# Why: AddressSanitizer (test/engine) sees the engine alone; memcheck sees
# windowagg inside the server, and only a server built with USE_VALGRIND
# tells memcheck what palloc and pfree do, so a read of a pfree'd chunk, of
# a palloc'd one past its end, or of bytes never written (in a datum, a
# tuple, a message to the client) is reported, where a plain build reuses
# the memory silently.
#
#  1. test/build-pg18.sh builds PostgreSQL 18.6 with assertions and
#     -DUSE_VALGRIND -O1 into a cache of its own (by default
#     /var/cache/windowagg/pg18-valgrind; the normal /var/cache/windowagg/pg18
#     is never touched), once; later runs reuse it.
#  2. bin/postgres of that cache becomes a wrapper that execs the real
#     binary (bin/postgres.real) under valgrind, so the postmaster and
#     everything it forks (backends, windowagg's launcher and workers,
#     walsenders) run under memcheck, one log per process.
#  3. windowagg is built and installed into it from a scratch copy of the
#     tree (the server runs as "postgres"; the tree stays as it is).
#  4. pg_regress (sql/t_*.sql), then the isolation specs, on throwaway
#     servers as `make installcheck` runs them (no TAP tests).
#  5. A summary: the wall times, the failed tests, how many of windowagg's
#     launcher and worker processes ran under memcheck (all must), the
#     number of valgrind error reports and, for each distinct one, its top
#     frames, marked "windowagg" when a frame of its stack is windowagg's
#     code and "core" otherwise.
#
# Tests that wait with a fixed wall-clock timeout can fail under memcheck's
# slowness alone (windowagg.wait and flush default to a minute, and no GUC
# raises that), as can tests that assume a worker's epoch does not fall
# between two of their statements: see README.md, "Tests".
#
#   WA_VALGRIND_CACHE  the build (default /var/cache/windowagg/pg18-valgrind)
#   WA_VALGRIND_OUT    where the logs are kept (default a new
#                      /var/tmp/windowagg-valgrind.XXXXXX)
#   WA_VALGRIND_TESTS  pg_regress tests to run (default every sql/t_*.sql;
#                      the others need t_00_setup first)
#   WA_VALGRIND_ISOLATION=0  skip the isolation specs
#
# Exits 0 when the suites passed, valgrind reported nothing and every
# windowagg process ran under it; 1 otherwise; 2 when it could not run.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${WA_VALGRIND_CACHE:-/var/cache/windowagg/pg18-valgrind}

[ "$(id -u)" -eq 0 ] || { echo "run as root (like test/run-all.sh)" >&2; exit 2; }
case "$cache" in
    /var/cache/windowagg/pg18|/var/cache/windowagg/pg18/) echo "not the normal PostgreSQL 18 cache" >&2; exit 2 ;;
esac
for p in valgrind rsync; do
    if ! dpkg -s "$p" >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null || exit 2
    fi
done
id postgres >/dev/null 2>&1 || { echo "no postgres user (run test/setup-debian.sh)" >&2; exit 2; }

out=${WA_VALGRIND_OUT:-$(mktemp -d /var/tmp/windowagg-valgrind.XXXXXX)}
mkdir -p "$out/valgrind"
chown -R postgres: "$out"
chmod 755 "$out"
all_start=$(date +%s)

# ---- 1. PostgreSQL 18 with USE_VALGRIND, in its own cache ----
# -O1: line numbers and variables stay close to the source (the valgrind
# manual's advice), at a speed memcheck barely notices; frame pointers for
# whole stacks.  MEMORY_CONTEXT_CHECKING comes with --enable-cassert, and
# pg_config_manual.h wants it with USE_VALGRIND (repalloc's instrumentation).
t0=$(date +%s)
echo "== PostgreSQL 18 with USE_VALGRIND in $cache"
WA_PG18_CACHE=$cache WA_PG18_CPPFLAGS="-DUSE_VALGRIND" \
WA_PG18_CFLAGS="-O1 -g -fno-omit-frame-pointer" \
    bash "$top/test/build-pg18.sh" > "$out/build-pg18.out" || { echo "the build failed" >&2; exit 2; }
pgc=$(tail -1 "$out/build-pg18.out")
build_time=$(( $(date +%s) - t0 ))
bindir=$("$pgc" --bindir)

# PostgreSQL's own suppressions (padding written to disk and the network,
# and the like): from the same tarball, kept beside the build, since the
# build's source tree is gone
supp_core=$cache/share/valgrind.supp
if [ ! -s "$supp_core" ]; then
    tarball=$(sed -n 's/^\([^ ]*\) .*/\1/p' "$cache/.windowagg-stamp")
    tarball=$(ls "${WA_PG18_SOURCE:-$top/../shared/pg-src/$tarball}" /work/shared/pg-src/"$tarball" 2>/dev/null | head -1)
    [ -n "$tarball" ] || { echo "no tarball to take src/tools/valgrind.supp from" >&2; exit 2; }
    tar -xjOf "$tarball" --wildcards '*/src/tools/valgrind.supp' > "$supp_core" || exit 2
fi
# windowagg's own, when there is one (test/valgrind.supp: core false
# positives that only windowagg's tests reach), copied beside it so that
# the postgres user can read it wherever the tree is
supp_opts="--suppressions=$supp_core"
if [ -f "$top/test/valgrind.supp" ]; then
    cp "$top/test/valgrind.supp" "$cache/share/windowagg-valgrind.supp"
    supp_opts="$supp_opts --suppressions=$cache/share/windowagg-valgrind.supp"
fi

# ---- 2. bin/postgres under valgrind ----
# A fresh build installs the real binary as bin/postgres: move it aside
# once; the wrapper is rewritten on every run (its log directory changes).
if [ ! -f "$bindir/postgres.real" ] || ! grep -q 'test/valgrind-regress.sh' "$bindir/postgres" 2>/dev/null; then
    mv "$bindir/postgres" "$bindir/postgres.real" || exit 2
fi
# initdb's bootstrap and single-user runs, and the version and
# configuration probes of initdb and pg_ctl, run the real binary: no
# windowagg code runs in them (shared_preload_libraries comes with the
# temp config, after initdb), and under memcheck initdb alone takes minutes
# for each of the two throwaway servers.
# --leak-check=no: PostgreSQL frees by memory context, not chunk by chunk,
# so leak reports at exit are noise (the buildfarm's valgrind animal,
# skink, runs the same way).  --fullpath-after= prints whole source paths,
# which tells windowagg's worker.c or launcher.c from PostgreSQL's.
# --gen-suppressions=all writes each error's suppression, ready to paste.
# --error-exitcode is not used: a backend exiting with it would make the
# postmaster restart the server and fail every test after.
cat > "$bindir/postgres.new" <<EOF
#!/bin/sh
# Written by windowagg's test/valgrind-regress.sh: the real server is
# postgres.real; this runs it under valgrind memcheck.
case "\$1" in
    --boot|--single|--check|-V|--version|-C|--describe-config)
        exec "$bindir/postgres.real" "\$@" ;;
esac
exec valgrind --quiet --trace-children=yes --track-origins=yes --read-var-info=yes \\
    --num-callers=30 --leak-check=no --gen-suppressions=all --fullpath-after= \\
    --error-markers=VALGRINDERROR-BEGIN,VALGRINDERROR-END \\
    $supp_opts \\
    --log-file="$out/valgrind/%p.log" \\
    "$bindir/postgres.real" "\$@"
EOF
chmod 755 "$bindir/postgres.new"
mv "$bindir/postgres.new" "$bindir/postgres"

# ---- 3. windowagg, from a scratch copy ----
scratch=$(mktemp -d /tmp/windowagg-valgrind.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
rsync -a --exclude .git --exclude results --exclude tmp_check --exclude tmp_check_iso \
    --exclude /output_iso --exclude /log --exclude '*.o' --exclude '*.bc' --exclude '*.so' \
    "$top/" "$scratch/"
if ! make -C "$scratch" -s PG_CONFIG="$pgc" install > "$out/install.log" 2>&1; then
    cat "$out/install.log" >&2
    echo "installing windowagg failed" >&2
    exit 2
fi
chown -R postgres: "$scratch"
# the tree as tested, for the line numbers of the reports (the work tree
# may change during a run of an hour or two)
rsync -a --exclude '*.o' --exclude '*.bc' --exclude '*.so' "$scratch/src" "$scratch/sql" "$out/tree/"

# ---- 4. the suites ----
# pg_regress waits PGCTLTIMEOUT seconds for its server to start and stop
# (60 by default; the postmaster under memcheck takes several), and the
# isolation tester cancels a step after PG_TEST_TIMEOUT_DEFAULT * 2 seconds
# (360 by default).  The tests' own waits cannot be raised from outside:
# windowagg.wait() and flush() default to 1 minute of wall clock, and the
# polling loops of sql/t_*.sql (wait_for_status and the DO loops) count
# iterations of pg_sleep(0.05), which under memcheck simply take longer.
export PGCTLTIMEOUT=3600 PG_TEST_TIMEOUT_DEFAULT=1800
tests=${WA_VALGRIND_TESTS:-}
t0=$(date +%s)
echo "== pg_regress under valgrind (logs in $out)"
# shellcheck disable=SC2086
runuser -u postgres -- env PGCTLTIMEOUT=$PGCTLTIMEOUT PG_TEST_TIMEOUT_DEFAULT=$PG_TEST_TIMEOUT_DEFAULT \
    make -C "$scratch" -s PG_CONFIG="$pgc" installcheck TAP_TESTS= ISOLATION= ${tests:+REGRESS="$tests"} \
    2>&1 | tee "$out/regress.out"
regress_status=${PIPESTATUS[0]}
regress_time=$(( $(date +%s) - t0 ))
cp "$scratch/regression.diffs" "$out/" 2>/dev/null
cp -r "$scratch/results" "$out/" 2>/dev/null
cp "$scratch/log/postmaster.log" "$out/postmaster-regress.log" 2>/dev/null

iso_status=0
iso_time=0
if [ "${WA_VALGRIND_ISOLATION:-1}" != 0 ]; then
    t0=$(date +%s)
    echo "== isolation specs under valgrind"
    runuser -u postgres -- env PGCTLTIMEOUT=$PGCTLTIMEOUT PG_TEST_TIMEOUT_DEFAULT=$PG_TEST_TIMEOUT_DEFAULT \
        make -C "$scratch" -s PG_CONFIG="$pgc" installcheck TAP_TESTS= REGRESS= \
        2>&1 | tee "$out/isolation.out"
    iso_status=${PIPESTATUS[0]}
    iso_time=$(( $(date +%s) - t0 ))
    cp "$scratch/output_iso/regression.diffs" "$out/isolation.diffs" 2>/dev/null
    cp "$scratch/output_iso/log/postmaster.log" "$out/postmaster-isolation.log" 2>/dev/null
fi
[ "$regress_status" -ne 0 ] && [ -f "$out/regression.diffs" ] && head -100 "$out/regression.diffs"
[ "$iso_status" -ne 0 ] && [ -f "$out/isolation.diffs" ] && head -100 "$out/isolation.diffs"

# ---- 5. the summary ----
# Each report sits between the error markers in the log of the process
# that made it.  Reports are grouped by their kind and their top four
# functions; a report is windowagg's when any frame of its own stack (not
# that of the allocation it mentions) is in the scratch tree, in
# windowagg.so or in a file of src/ named relative to the tree.
summary=$out/summary.txt
perl -e '
    my ($scratch, @logs) = @ARGV;
    my (%n, %example, %pids, %ours, $total);
    for my $log (@logs) {
        open(my $fh, "<", $log) or next;
        my ($pid) = $log =~ m{(\d+)\.log$};
        my ($in, @lines) = (0);
        while (<$fh>) {
            s/^==\d+== ?//;
            if (/VALGRINDERROR-BEGIN/) { $in = 1; @lines = (); next; }
            if (/VALGRINDERROR-END/) {
                $in = 0;
                $total++;
                my $kind = $lines[0] // "?";
                chomp $kind;
                $kind =~ s/0x[0-9A-F]+/0x.../gi;
                $kind =~ s/\b\d+ bytes\b/N bytes/g;
                # the stack of the error itself, then (for an uninitialised
                # value or a bad address) that of the allocation
                my @frames;
                my ($wa, $wa_aux, $main) = (0, 0, 1);
                for my $l (@lines[1 .. $#lines]) {
                    if ($l =~ /^\s+(at|by) 0x[0-9A-F]+: (.*)$/i) {
                        my $f = $2;
                        my $is_wa = index($f, $scratch) >= 0 || $f =~ /windowagg\.so/
                            || $f =~ m{[( ]src/(init\.c|engine/|query/|source/|pipeline/|commands/)};
                        if ($main) { push @frames, $f; $wa ||= $is_wa; }
                        else { $wa_aux ||= $is_wa; }
                    } elsif (@frames) {
                        $main = 0;
                    }
                }
                my @names = map { (/^(\S+)/)[0] } @frames[0 .. ($#frames < 3 ? $#frames : 3)];
                my $key = join(" | ", $kind, @names);
                $n{$key}++;
                $pids{$key}{$pid} = 1;
                $ours{$key} = $wa ? "windowagg"
                            : $wa_aux ? "core, on memory windowagg allocated" : "core";
                $example{$key} //= join("", map { "    $_" } @lines);
                next;
            }
            push @lines, $_ if $in;
        }
    }
    printf "valgrind: %d error report(s), %d distinct, in %d log(s) of %d\n",
        $total // 0, scalar(keys %n), scalar(keys %{{ map { %$_ } values %pids }}), scalar(@logs);
    my $i = 0;
    for my $key (sort { ($ours{$b} cmp $ours{$a}) || ($n{$b} <=> $n{$a}) } keys %n) {
        $i++;
        printf "\n#%d [%s] %d report(s), process(es) %s\n%s",
            $i, $ours{$key}, $n{$key}, join(",", sort keys %{$pids{$key}}), $example{$key};
    }
' "$scratch" "$out"/valgrind/*.log > "$summary"

# Every process of windowagg's that the server logs name (its launcher and
# pipeline workers) must have a valgrind log: else it escaped memcheck, and
# "no error" would mean nothing for it
wa_pids=$(cat "$out"/postmaster-*.log 2>/dev/null |
    grep -oE 'windowagg (launcher|pipeline)\[[0-9]+\]|"windowagg (launcher|pipeline)" \(PID [0-9]+\)' |
    grep -oE '[0-9]+' | sort -u)
wa_seen=0
wa_traced=0
for p in $wa_pids; do
    wa_seen=$((wa_seen + 1))
    [ -f "$out/valgrind/$p.log" ] && wa_traced=$((wa_traced + 1))
done

regress_line=$(grep -E '^# All [0-9]+ tests passed|^# [0-9]+ of [0-9]+ tests failed' "$out/regress.out" | tail -1)
iso_line=$(grep -E '^# All [0-9]+ tests passed|^# [0-9]+ of [0-9]+ tests failed' "$out/isolation.out" 2>/dev/null | tail -1)
echo
echo "== summary (kept in $out)"
echo "pg_regress: ${regress_line:-status $regress_status}"
grep -E '^not ok ' "$out/regress.out" | sed 's/^/    /'
[ "${WA_VALGRIND_ISOLATION:-1}" != 0 ] && echo "isolation:  ${iso_line:-status $iso_status}"
grep -E '^not ok ' "$out/isolation.out" 2>/dev/null | sed 's/^/    /'
echo "windowagg launcher and worker processes in the server logs: $wa_seen, under memcheck: $wa_traced"
cat "$summary"
echo
echo "== time: PostgreSQL 18 with USE_VALGRIND build (0 if cached): $build_time s"
echo "== time: pg_regress under valgrind: $regress_time s"
echo "== time: isolation specs under valgrind: $iso_time s"
echo "== time: all: $(( $(date +%s) - all_start )) s"
errors=$(sed -n 's/^valgrind: \([0-9]*\) error.*/\1/p' "$summary")
[ "$regress_status" -eq 0 ] && [ "$iso_status" -eq 0 ] && [ "${errors:-1}" -eq 0 ] &&
    [ "$wa_seen" -eq "$wa_traced" ]
