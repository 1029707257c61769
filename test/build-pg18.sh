#!/usr/bin/env bash
# test/build-pg18.sh: build PostgreSQL 18 with assertions, once, into a
# cache directory outside the work tree, and print its pg_config.
#
# The source is the upstream 18.6 release in ../shared/pg-src (Debian 12
# packages only 15, and nothing else can fetch 18 on these machines).  The
# build is configured as model extensions test against: --enable-cassert
# --enable-debug --enable-tap-tests --with-openssl, and --with-lz4 as
# Debian's 15 is (the suite compresses keys with lz4).  A finished build is
# reused: its prefix holds a stamp naming the tarball and the options.
#
#   WA_PG18_CACHE   where the build goes (default /var/cache/windowagg/pg18)
#   WA_PG18_SOURCE  the tarball (default ../shared/pg-src/postgresql-18_*.orig.tar.bz2)
#   WA_PG18_CPPFLAGS, WA_PG18_CFLAGS
#                   CPPFLAGS and CFLAGS for configure (default: none, i.e.
#                   configure's own -O2); test/valgrind-regress.sh builds
#                   its own cache with -DUSE_VALGRIND and -O1.  When set they
#                   are part of the stamp, so a cache is never reused for a
#                   build with other flags; unset, the stamp is what it
#                   always was, and the default cache stays valid.
#
# Prints the path of its pg_config on the last line of stdout; progress
# goes to stderr.  Exits 3 when there is no source tarball, 1 when the
# build fails.  Run as root (it installs the build dependencies).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${WA_PG18_CACHE:-/var/cache/windowagg/pg18}
# the shared folder beside the clone, or where these machines mount it
source_tarball=${WA_PG18_SOURCE:-$(ls "$top"/../shared/pg-src/postgresql-18_*.orig.tar.bz2 \
    /work/shared/pg-src/postgresql-18_*.orig.tar.bz2 2>/dev/null | head -1 || true)}
options="--enable-cassert --enable-debug --enable-tap-tests --with-openssl --with-lz4"
cppflags=${WA_PG18_CPPFLAGS:-}
cflags=${WA_PG18_CFLAGS:-}
# what the stamp records: the options, and the flags only when given
flavour=$options
[ -n "$cppflags" ] && flavour="$flavour CPPFLAGS=$cppflags"
[ -n "$cflags" ] && flavour="$flavour CFLAGS=$cflags"

if [ -z "$source_tarball" ] || [ ! -f "$source_tarball" ]; then
    # a build made with the same options serves without its source
    if [ -x "$cache/bin/pg_config" ] && [ "$(cut -d' ' -f2- "$cache/.windowagg-stamp" 2>/dev/null)" = "$flavour" ]; then
        echo "$cache/bin/pg_config"
        exit 0
    fi
    echo "no PostgreSQL 18 source tarball (set WA_PG18_SOURCE)" >&2
    exit 3
fi
stamp="$(basename "$source_tarball") $flavour"

# pg_prewarm, the one contrib module the suite loads (a TAP test fills the
# worker slots with it), is built with PGXS against the installed server
add_pg_prewarm() {
    local work
    [ -f "$("$cache/bin/pg_config" --pkglibdir)/pg_prewarm.so" ] && return 0
    work=$(mktemp -d /tmp/windowagg-pg18-contrib.XXXXXX)
    tar -xjf "$source_tarball" -C "$work" --wildcards '*/contrib/pg_prewarm/*'
    make -s -C "$work"/*/contrib/pg_prewarm USE_PGXS=1 PG_CONFIG="$cache/bin/pg_config" install >/dev/null
    local status=$?
    rm -rf "$work"
    return $status
}

if [ -x "$cache/bin/pg_config" ] && [ "$(cat "$cache/.windowagg-stamp" 2>/dev/null)" = "$stamp" ]; then
    add_pg_prewarm
    echo "$cache/bin/pg_config"
    exit 0
fi

packages=(libicu-dev bison flex libreadline-dev zlib1g-dev libssl-dev liblz4-dev pkg-config
          libipc-run-perl gcc make bzip2)
# USE_VALGRIND compiles in Valgrind's client requests: its headers
case "$cppflags" in *USE_VALGRIND*) packages+=(valgrind) ;; esac
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi

start=$(date +%s)
work=$(mktemp -d /tmp/windowagg-pg18-build.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "== building PostgreSQL 18 from $(basename "$source_tarball") into $cache" >&2
tar -xjf "$source_tarball" -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -1)
# replace a build of ours (or nothing): never a directory it did not make
if [ -e "$cache" ] && [ ! -f "$cache/.windowagg-stamp" ] && [ -n "$(ls -A "$cache" 2>/dev/null)" ]; then
    echo "$cache is not empty and holds no build of test/build-pg18.sh: not replaced" >&2
    exit 1
fi
rm -rf "$cache"
mkdir -p "$cache"
log="$work/build.log"
if ! (
    cd "$src"
    # shellcheck disable=SC2086
    ./configure --prefix="$cache" $options \
        ${cppflags:+CPPFLAGS="$cppflags"} ${cflags:+CFLAGS="$cflags"}
    # The core, pg_regress, the isolation tester and the TAP modules: the
    # suite needs no contrib module but pg_prewarm (below).
    make -j"$(nproc)"
    make install
) >"$log" 2>&1; then
    tail -40 "$log" >&2
    echo "building PostgreSQL 18 failed" >&2
    exit 1
fi
add_pg_prewarm || { echo "building pg_prewarm for PostgreSQL 18 failed" >&2; exit 1; }
echo "$stamp" > "$cache/.windowagg-stamp"
echo "== PostgreSQL 18 built in $(( $(date +%s) - start )) s" >&2
echo "$cache/bin/pg_config"
