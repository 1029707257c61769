#!/usr/bin/env bash
# test/check-packaging.sh: META.json is valid PGXN metadata whose versions
# agree with the control file, and the layout the project promises exists.
set -euo pipefail
cd "$(dirname "$0")/.."

control_version=$(sed -n "s/^default_version = '\(.*\)'/\1/p" windowagg.control)
perl -MJSON::PP -e '
    my ($want) = @ARGV;
    local $/; open(my $fh, "<", "META.json") or die "META.json: $!";
    my $m = decode_json(<$fh>);
    for my $k (qw(name abstract version maintainer license provides prereqs meta-spec)) {
        die "META.json lacks $k\n" unless exists $m->{$k};
    }
    die "META.json version $m->{version} is not the control file version $want\n"
        unless $m->{version} eq $want;
    my $p = $m->{provides}{windowagg} or die "META.json provides no windowagg\n";
    die "provides.windowagg.version $p->{version} is not $want\n" unless $p->{version} eq $want;
    die "provides.windowagg.file $p->{file} does not exist\n" unless -f $p->{file};
    my $pg = $m->{prereqs}{runtime}{requires}{PostgreSQL} or die "no PostgreSQL prereq\n";
    die "PostgreSQL prereq $pg is below 15\n" unless $pg =~ /^(\d+)/ && $1 >= 15;
' "$control_version"

# an install script for the current version, and a chain of upgrade
# scripts to it from 0.1.0, the first released version
[ -f "sql/windowagg--$control_version.sql" ] || {
    echo "missing sql/windowagg--$control_version.sql" >&2; exit 1; }
version=0.1.0
while [ "$version" != "$control_version" ]; do
    next=$(ls sql/windowagg--"$version"--*.sql 2>/dev/null | sed -n 's/.*--.*--\(.*\)\.sql$/\1/p' | head -1)
    [ -n "$next" ] || { echo "no upgrade script from $version towards $control_version" >&2; exit 1; }
    version=$next
done

for path in src/README src/init.c src/engine src/query src/source src/pipeline src/commands sql expected test bench windowagg.control Makefile \
            META.json README.md .ci/run; do
    [ -e "$path" ] || { echo "missing $path" >&2; exit 1; }
done

# the engine must build without any PostgreSQL header on the include path
for f in src/engine/*.c; do
    gcc -std=c11 -Wall -Wextra -Werror -fsyntax-only -Isrc/engine "$f"
done
grep -l 'postgres\.h\|#include "fmgr\|utils/' src/engine/*.[ch] && {
    echo "src/engine includes PostgreSQL headers" >&2; exit 1; }

# layers include only the layers below them (src/README):
# commands -> pipeline -> source -> query -> engine
layer_includes() {   # layer_includes DIR LAYER...: fail if DIR includes one
    local dir=$1 layer
    shift
    for layer in "$@"; do
        if grep -rn "#include \"$layer/[a-z_]*\.h\"" "src/$dir" | grep -v "#include \"commands/\(defrem\|extension\|dbcommands\)\.h\""; then
            echo "src/$dir includes a header of src/$layer, a layer above it" >&2; exit 1
        fi
    done
}
layer_includes query pipeline source commands
layer_includes source pipeline commands
layer_includes pipeline commands
# src/commands shares its name with PostgreSQL's include/commands: a header
# of ours there must not shadow one of PostgreSQL's
pg_includes=$(${PG_CONFIG:-pg_config} --includedir-server 2>/dev/null || true)
for h in src/commands/*.h; do
    [ -n "$pg_includes" ] && [ -e "$pg_includes/commands/$(basename "$h")" ] && {
        echo "$h shadows PostgreSQL's commands/$(basename "$h")" >&2; exit 1; }
done
echo "packaging ok: version $control_version"
