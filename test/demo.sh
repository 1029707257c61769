#!/usr/bin/env bash
# test/demo.sh: what `make demo` runs.
#
# Installs what is missing (as root), builds and installs windowagg, starts
# a throwaway PostgreSQL as the unprivileged "postgres" user with windowagg
# preloaded, runs test/demo.sql (a windowed aggregation over generated
# out-of-order sensor readings, some late and some too late), prints the
# results, then stops the server and removes it.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash test/setup-debian.sh
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
[ -x "$PG_CONFIG" ] || PG_CONFIG=pg_config
bindir=$("$PG_CONFIG" --bindir)

echo "== building and installing windowagg"
make -s PG_CONFIG="$PG_CONFIG" >/dev/null
make -s PG_CONFIG="$PG_CONFIG" install >/dev/null

run_as=()
if [ "$(id -u)" -eq 0 ]; then run_as=(runuser -u postgres --); fi
dir=$(mktemp -d /tmp/windowagg-demo.XXXXXX)
cp test/demo.sql "$dir/"
[ "$(id -u)" -eq 0 ] && chown -R postgres: "$dir"
port=54329

cleanup() {
    "${run_as[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT

echo "== starting a throwaway PostgreSQL in $dir"
"${run_as[@]}" "$bindir/initdb" -D "$dir/data" -A trust -U postgres >/dev/null
cat "$top/test/windowagg.conf" >> "$dir/data/postgresql.conf"
"${run_as[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
    -o "-p $port -k $dir -c listen_addresses=''" start >/dev/null

"${run_as[@]}" "$bindir/psql" -X -q -h "$dir" -p $port -U postgres -d postgres \
    -v ON_ERROR_STOP=1 -f "$dir/demo.sql"
echo "== done; the server is stopped and removed"
