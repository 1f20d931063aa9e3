#!/usr/bin/env bash
# Checks the arrangement of the C sources against the table below. Every
# folder with C sources is one CMake target named for the folder (a library:
# its public header include/cv_NAME.h, everything else private; or a
# program). A file may include:
#   - any header of its own target;
#   - another target's header only if the table allows that edge, and then
#     only that library's one public header, cv_NAME.h.
# Programs appear in no one's list: no program uses another. The pure
# libraries (base, contract, placement, hot) never reach the I/O runtime (io).
# usage: tests/static/layers.sh [--root DIR]   (exit 0 clean, 1 violation)
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
[ "${1:-}" = --root ] && ROOT=$2
cd "$ROOT" || exit 2

# target: the targets whose public header it may include.
declare -A ALLOWED=(
    [base]=""
    [contract]="base"
    [placement]="contract base"
    [hot]="placement contract base"
    [io]="contract base"
    [convergence]="io hot placement contract base"
    [live]="io placement contract base"
    [node]="io hot placement contract base"
    [status]="live io hot placement contract base"
    [console]="status live io hot placement contract base"
    [converge-engine]="convergence live io hot placement contract base"
    [converge-observer]="convergence live io hot placement contract base"
    [converge-agent]="node io hot placement contract base"
    [convergectl]="status live io hot placement contract base"
    [converge-web]="console status live io hot placement contract base"
    [converge-kafka-acl]="io contract base"
    [converge-hello]=""
)
LIBRARIES="base contract placement hot io convergence live node status console"

target_of() { # file -> its target (the folder's name; include/ is its library's)
    local d
    d=$(dirname "$1")
    d=${d%/include}
    case $d in
    deploy/tools) echo converge-kafka-acl ;;
    examples/hello) echo converge-hello ;;
    *) basename "$d" ;;
    esac
}

sources=$(find . -path ./tests -prune -o -path './build*' -prune -o -path './.local*' -prune -o \
    -type f \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||' | sort)
[ -n "$sources" ] || { echo "layers: no C sources under $ROOT"; exit 1; }
declare -A home # header name -> its target
for h in $(grep '\.h$' <<<"$sources"); do home[$(basename "$h")]=$(target_of "$h"); done

rc=0
fail() { echo "layers: $*"; rc=1; }
for f in $sources; do
    own=$(target_of "$f")
    [ -n "${ALLOWED[$own]+x}" ] || { fail "$f: folder '$own' is no target of the table"; continue; }
    while IFS= read -r inc; do
        to=${home[$inc]:-}
        [ -n "$to" ] && [ "$to" != "$own" ] || continue
        if [[ " ${ALLOWED[$own]} " != *" $to "* ]]; then
            fail "$f includes $inc of $to: $own may use only: ${ALLOWED[$own]:-nothing}"
        elif [ "$inc" != "cv_$to.h" ]; then
            fail "$f includes $inc, a private header of $to: include cv_$to.h, its public header"
        fi
    done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done

# Every library's public header exists, and CMake's target names match folders.
for lib in $LIBRARIES; do
    grep -q "/$lib/include/cv_$lib.h$" <<<"$sources" ||
        fail "library $lib has no public header $lib/include/cv_$lib.h"
done
for dir in $(dirname $sources | sed 's|/include$||' | sort -u); do
    [ -f "$dir/CMakeLists.txt" ] || continue
    name=$(basename "$dir")
    grep -qE "^cv_(library|program)\($name[ )]" "$dir/CMakeLists.txt" ||
        fail "$dir/CMakeLists.txt defines no target named $name"
done
[ $rc = 0 ] && echo "layers: $(wc -w <<<"$sources") files, every include along the table"
exit $rc
