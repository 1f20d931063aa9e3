#!/usr/bin/env bash
# Checks the module layering of the C sources: a module is a folder; an
# include of a header that lives in another folder is an edge between two
# modules. Fails when the modules' include graph has a cycle (tsort names it)
# or when proto/ (the contract and its I/O glue) includes a header from
# outside proto/.
# usage: tests/static/layers.sh   (from anywhere; exit 0 clean, 1 violation)
set -uo pipefail
cd "$(dirname "$0")/../.."

declare -A home # header file name -> folder
while IFS= read -r h; do home[$(basename "$h")]=$(dirname "$h"); done < <(git ls-files '*.h')

edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
rc=0
while IFS= read -r f; do
    from=$(dirname "$f")
    while IFS= read -r inc; do
        to=${home[$inc]:-}
        [ -n "$to" ] && [ "$to" != "$from" ] || continue
        echo "$from $to" >>"$edges"
        if [[ $from == proto* && $to != proto* ]]; then
            echo "layers: $f includes $inc from $to: proto/ may include only proto/"
            rc=1
        fi
    done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done < <(git ls-files '*.c' '*.h' | grep -v '^tests/')

# tsort reads "A B" as A before B; a loop is a cycle of includes.
if ! sort -u "$edges" | tsort >/dev/null 2>"$edges.err"; then
    echo "layers: the modules include each other in a cycle:"
    sed 's/^/  /' "$edges.err"
    rc=1
fi
rm -f "$edges.err"
[ $rc = 0 ] && echo "layers: $(sort -u "$edges" | wc -l) module edges, no cycle"
exit $rc
