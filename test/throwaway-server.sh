#!/usr/bin/env bash
# test/throwaway-server.sh: start a scratch PostgreSQL with windowagg
# preloaded, for the demo and the benchmarks.  Source it, then call
#   throwaway_start [extra postgresql.conf lines]   sets $TS_DIR, $TS_PORT
#   ts_psql [psql args]                              psql against it
# The server is stopped and removed when the calling shell exits.  As root,
# it runs as the unprivileged "postgres" user, since PostgreSQL refuses root.

TS_PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
[ -x "$TS_PG_CONFIG" ] || TS_PG_CONFIG=pg_config
TS_BINDIR=$("$TS_PG_CONFIG" --bindir)
TS_RUN_AS=()
[ "$(id -u)" -eq 0 ] && TS_RUN_AS=(runuser -u postgres --)

throwaway_stop() {
    [ -n "${TS_DIR:-}" ] || return 0
    "${TS_RUN_AS[@]}" "$TS_BINDIR/pg_ctl" -D "$TS_DIR/data" -m fast stop >/dev/null 2>&1 || true
    rm -rf "$TS_DIR"
    TS_DIR=
}

throwaway_start() {
    local top
    top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    TS_DIR=$(mktemp -d /tmp/windowagg-server.XXXXXX)
    TS_PORT=${TS_PORT:-54329}
    chmod 755 "$TS_DIR"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$TS_DIR"
    trap throwaway_stop EXIT
    "${TS_RUN_AS[@]}" "$TS_BINDIR/initdb" -D "$TS_DIR/data" -A trust -U postgres >/dev/null
    {
        cat "$top/test/windowagg.conf"
        for line in "$@"; do echo "$line"; done
    } | "${TS_RUN_AS[@]}" tee -a "$TS_DIR/data/postgresql.conf" >/dev/null
    "${TS_RUN_AS[@]}" "$TS_BINDIR/pg_ctl" -D "$TS_DIR/data" -l "$TS_DIR/server.log" -w \
        -o "-p $TS_PORT -k $TS_DIR -c listen_addresses=''" start >/dev/null
}

ts_psql() {
    "${TS_RUN_AS[@]}" "$TS_BINDIR/psql" -X -q -h "$TS_DIR" -p "$TS_PORT" -U postgres \
        -d postgres -v ON_ERROR_STOP=1 "$@"
}
