#!/usr/bin/env bash
# Counts the call loops between files: for every folder of object files a
# build directory links (one CMake target's CMakeFiles/NAME.dir, or a
# subfolder of it), `nm` says which global symbols each .o defines and which it leaves
# undefined; a file that uses a symbol another file of the same folder
# defines calls that file. A strongly connected component of that file graph
# with more than one file is a loop: its files cannot be read callers above
# callees, and a change to one of them reaches round to the others. Prints
# each loop (folder: files) and the total; with --max N exits 1 when there
# are more than N loops.
# usage: tests/static/callgraph.sh BUILD_DIR [--max N]
set -uo pipefail
BUILD=${1:?usage: tests/static/callgraph.sh BUILD_DIR [--max N]}
MAX=
[ "${2:-}" = --max ] && MAX=${3:?--max takes a number}
[ -d "$BUILD" ] || { echo "callgraph: no build directory $BUILD" >&2; exit 2; }
command -v nm >/dev/null || { echo "callgraph: nm not found" >&2; exit 2; }

# The object files the build links, one per line: those its link commands
# name (CMake's Makefiles write them in CMakeFiles/NAME.dir/link.txt), so
# that the object of a source file since removed is not counted; every .o
# found when no link command is (another generator).
objects() {
    local links
    links=$(find "$BUILD" -path '*/CMakeFiles/*.dir/link.txt' | sort)
    if [ -z "$links" ]; then
        find "$BUILD" -name '*.o' -path '*/CMakeFiles/*' | sort
        return
    fi
    local l
    for l in $links; do
        tr ' ' '\n' <"$l" | tr -d '"' | grep '\.o$' | sed "s|^|${l%/CMakeFiles/*}/|"
    done | sort -u
}

# One line per (folder, file, kind, symbol): kind D defined, U undefined.
symbols() {
    objects | while IFS= read -r o; do
        local dir=${o%/*} file=${o##*/}
        nm -g "$o" 2>/dev/null | awk -v d="${dir#"$BUILD"/}" -v f="${file%.o}" '
            NF == 2 && $1 == "U" { print d, f, "U", $2; next }
            NF == 3 && $2 != "U" && $2 != "w" && $2 != "v" { print d, f, "D", $3 }'
    done
}

# Tarjan's algorithm per folder over the edges "caller callee"; the loops
# sorted, then the count.
report=$(symbols | awk '
    $3 == "D" { def[$1 SUBSEP $4] = $2; files[$1 SUBSEP $2] = 1; next }
    { use[++nuse] = $1 SUBSEP $2 SUBSEP $4; files[$1 SUBSEP $2] = 1 }
    function folder(d) { # the source folder of an object folder
        sub(/CMakeFiles\/[^\/]*\.dir\/?/, "", d); sub(/\/$/, "", d)
        return d == "" ? "." : d
    }
    function strongconnect(v,    i, w, k, comp, size) {
        index_of[v] = ++counter; low[v] = counter; stack[++sp] = v; on[v] = 1
        for (i = 1; i <= nout[v]; i++) {
            w = out[v, i]
            if (!(w in index_of)) {
                strongconnect(w)
                if (low[w] < low[v]) low[v] = low[w]
            } else if (on[w] && index_of[w] < low[v])
                low[v] = index_of[w]
        }
        if (low[v] != index_of[v]) return
        comp = ""; size = 0
        do {
            w = stack[sp--]; on[w] = 0; size++
            split(w, k, SUBSEP); comp = k[2] (comp == "" ? "" : " ") comp
        } while (w != v)
        if (size > 1) { split(v, k, SUBSEP); print "loop", folder(k[1]) ": " comp; loops++ }
    }
    END {
        for (u = 1; u <= nuse; u++) {
            split(use[u], p, SUBSEP)
            callee = def[p[1] SUBSEP p[3]]
            if (callee == "" || callee == p[2]) continue
            a = p[1] SUBSEP p[2]; b = p[1] SUBSEP callee
            if ((a, b) in edge) continue
            edge[a, b] = 1; out[a, ++nout[a]] = b
        }
        for (v in files) if (!(v in index_of)) strongconnect(v)
        nfiles = 0; for (v in files) nfiles++
        printf "total %d %d\n", loops, nfiles
    }')
loops=$(sed -n 's/^total \([0-9]*\) .*/\1/p' <<<"$report")
files=$(sed -n 's/^total [0-9]* \([0-9]*\)$/\1/p' <<<"$report")
grep '^loop ' <<<"$report" | sed 's/^loop /callgraph: loop in /' | sort
echo "callgraph: $loops call loop(s) between files ($files object files)"
[ -z "$MAX" ] || [ "$loops" -le "$MAX" ]
