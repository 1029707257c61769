#!/usr/bin/env bash
# test/setup-debian.sh: install what building and testing windowagg needs on
# Debian (PostgreSQL 15 server and headers, a C toolchain, the TAP test
# modules, valgrind, clang with libFuzzer, libpq for the query fuzzer).  Run as root; does nothing for packages already installed.
set -euo pipefail

packages=(postgresql-15 postgresql-server-dev-15 libipc-run-perl gcc make
          libc6-dev rsync procps valgrind clang-14 libclang-rt-14-dev libfuzzer-14-dev libpq-dev
          postgresql-15-hll postgresql-15-tdigest)
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "missing packages: ${missing[*]} (run as root to install them)" >&2
        exit 1
    fi
    echo "== installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Debian's postgresql-common creates and starts a "main" cluster on install;
# the tests and the demo use throwaway servers of their own instead.
