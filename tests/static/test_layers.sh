#!/usr/bin/env bash
# Shows that tests/static/layers.sh can fail: on a copy of the tree's C
# sources it must pass as they are and fail, naming the file, on each of a
# program including another program's header, a pure library including the
# I/O runtime, a library's private header used from outside it, and a folder
# whose CMake target has another name.
# usage: tests/static/test_layers.sh   (exit 0: every case behaved)
set -uo pipefail
cd "$(dirname "$0")/../.."
LAYERS=$PWD/tests/static/layers.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rc=0

copy() { # a fresh copy of the sources in $work/tree
    rm -rf "$work/tree" && mkdir "$work/tree"
    git ls-files -co --exclude-standard '*.c' '*.h' '*CMakeLists.txt' |
        grep -v '^tests/' | tar -cf - -T - | tar -xf - -C "$work/tree"
}
expect() { # name, exit status wanted, text the output must hold
    local out status
    out=$("$LAYERS" --root "$work/tree" 2>&1)
    status=$?
    if [ "$status" = "$2" ] && grep -qF -- "$3" <<<"$out"; then
        echo "  ok    $1"
    else
        echo "  FAIL  $1: exit $status, wanted $2 and \"$3\" in:"
        sed 's/^/        /' <<<"$out" | tail -n 5
        rc=1
    fi
}
inject() { # file, line to put after its first include
    sed -i "0,/^#include/s//$(printf '%s' "$2" | sed 's/[&/\]/\\&/g')\n&/" "$work/tree/$1"
}

copy
expect "the tree as it is" 0 "every include along the table"
copy; inject observer/converge-observer/observer_main.c '#include "engine.h"'
expect "a program including another program's header" 1 \
    "observer_main.c includes engine.h of converge-engine"
copy; inject engine/hot/template_parse.c '#include "cv_io.h"'
expect "a pure library including the runtime" 1 "template_parse.c includes cv_io.h of io"
copy; inject scheduler/live/live_read.c '#include "cv_cluster.h"'
expect "a library's private part used from outside" 1 \
    "live_read.c includes cv_cluster.h, a private header of placement"
copy; sed -i 's/^cv_library(hot)/cv_library(cvhot)/' "$work/tree/engine/hot/CMakeLists.txt"
expect "a target named otherwise than its folder" 1 "engine/hot/CMakeLists.txt defines no target named hot"
exit $rc
