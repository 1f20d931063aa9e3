#!/usr/bin/env bash
# Checks that the docs describe the C tree as it is. Reads
#   docs/architecture.md, section "Layout": the tables "Libraries" (folder,
#     target, pure or I/O, what it holds, public header), "Programs" (folder,
#     binary, what it does, the libraries it links) and "Allowed edges" (the
#     drawing of direct uses, and the table of what each target may use);
#   README.md, section "Layout": the rows whose target is a library or a
#     program;
# and compares them with the code:
#   - the folders with C sources (outside tests/), each one target;
#   - the targets their CMakeLists.txt define (cv_library / cv_program; the
#     single-file programs: add_executable in the top CMakeLists.txt) and the
#     project libraries each program's target_link_libraries names;
#   - each library's public header, FOLDER/include/cv_TARGET.h;
#   - tests/static/layers.sh's ALLOWED table (every target listed, none else,
#     the same edges) and its LIBRARIES list. A library is pure when it is not
#     io and its row of the table does not name io.
# Every difference is one line naming it; exit 1 if any.
#
# usage: tests/static/test_docs_layout.sh [--root DIR]   (exit 0: the docs agree)
#        tests/static/test_docs_layout.sh --self-test     (shows the check failing
#          on copies of the tree with a difference made, each named; exit 0 if
#          every case behaved)
set -uo pipefail
SELF="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
SELF_TEST=0
while [ $# -gt 0 ]; do
    case $1 in
    --root) ROOT=$(cd "$2" && pwd) || exit 2; shift 2 ;;
    --self-test) SELF_TEST=1; shift ;;
    *) echo "usage: $0 [--root DIR] | --self-test" >&2; exit 2 ;;
    esac
done

ARCH=docs/architecture.md
README=README.md
ARROW='──▶'

self_test() {
    local work rc=0
    work=$(mktemp -d)
    # shellcheck disable=SC2064
    trap "rm -rf '$work'" EXIT
    copy() { # a fresh copy of what the check reads, in $work/tree
        rm -rf "$work/tree" && mkdir "$work/tree"
        (cd "$ROOT" && git ls-files -co --exclude-standard '*.c' '*.h' '*CMakeLists.txt' |
            grep -v '^tests/' | cat - <(printf '%s\n' "$ARCH" "$README" tests/static/layers.sh) |
            tar -cf - -T -) | tar -xf - -C "$work/tree"
    }
    expect() { # name, exit status wanted, text the output must hold
        local out status
        out=$("$SELF" --root "$work/tree" 2>&1)
        status=$?
        if [ "$status" = "$2" ] && grep -qF -- "$3" <<<"$out"; then
            echo "  ok    $1"
            sed -n '1,3s/^/          /p' <<<"$out"
        else
            echo "  FAIL  $1: exit $status, wanted $2 and \"$3\" in:"
            sed 's/^/        /' <<<"$out" | tail -n 8
            rc=1
        fi
    }
    edit() { # file of the copy, sed script
        sed -i "$2" "$work/tree/$1"
    }

    copy
    expect "the tree as it is" 0 "say what the code says"
    copy; edit "$ARCH" '/^| `engine\/hot\/` | `hot` |/d'
    expect "a library's row removed from the architecture" 1 \
        "$ARCH, Libraries: no row for engine/hot (library hot)"
    copy; edit "$README" '/^| `cli\/convergectl\/` | program/d'
    expect "a program's row removed from the README" 1 \
        "$README, Layout: no row for cli/convergectl (program convergectl)"
    copy; edit "$ARCH" 's/^| `engine\/hot\/` | `hot` | pure |/| `engine\/hot\/` | `hot` | I\/O |/'
    expect "a pure library called I/O" 1 "$ARCH, Libraries: hot is pure"
    copy; edit "$README" 's/^| `engine\/hot\/` | library `hot`, pure |/| `engine\/hot\/` | library `templates`, pure |/'
    expect "a folder given another target's name" 1 \
        "$README, Layout: engine/hot is target hot, the doc says templates"
    copy; edit "$ARCH" 's/^| `converge-engine` | `convergence`, `live`, /| `converge-engine` | `convergence`, /'
    expect "an edge left out of the table" 1 \
        "$ARCH, Allowed edges: converge-engine may use live (layers.sh), the doc's table omits it"
    copy; edit "$ARCH" "s/converge-agent $ARROW node;/converge-agent;/"
    expect "an arrow left out of the drawing" 1 \
        "$ARCH, Allowed edges: converge-agent may use node (layers.sh), the drawing omits it"
    copy; edit tests/static/layers.sh 's/^    \[live\]="io placement contract base"/    [live]="io hot placement contract base"/'
    expect "an edge added to layers.sh only" 1 \
        "$ARCH, Allowed edges: live may use hot (layers.sh), the doc's table omits it"
    copy; edit agent/converge-agent/CMakeLists.txt 's/(converge-agent node)/(converge-agent node io)/'
    expect "a program linking a library more" 1 \
        "$ARCH, Programs: converge-agent links io (CMakeLists.txt), the doc's row omits it"
    copy; mkdir -p "$work/tree/scheduler/extra/include"
    echo 'cv_library(extra)' >"$work/tree/scheduler/extra/CMakeLists.txt"
    echo 'int cv_extra(void);' >"$work/tree/scheduler/extra/include/cv_extra.h"
    echo 'int cv_extra(void) { return 0; }' >"$work/tree/scheduler/extra/extra.c"
    expect "a library folder the docs do not know" 1 \
        "$ARCH, Libraries: no row for scheduler/extra (library extra)"
    return $rc
}
[ $SELF_TEST = 1 ] && { self_test; exit $?; }

cd "$ROOT" || exit 2
for f in "$ARCH" "$README" tests/static/layers.sh CMakeLists.txt; do
    [ -f "$f" ] || { echo "docs layout: $ROOT/$f is missing"; exit 2; }
done
rc=0
fail() { echo "docs layout: $*"; rc=1; }

words() { # the sorted set of its arguments' words, one line
    local w
    for w in "$@"; do echo "$w"; done | sed '/^$/d' | sort -u | tr '\n' ' ' | sed 's/ $//'
}
differ() { # what, have (source A), want (source B), A's name, B's name: one line per difference
    local x
    for x in $(comm -23 <(tr ' ' '\n' <<<"$2" | sed '/^$/d') <(tr ' ' '\n' <<<"$3" | sed '/^$/d')); do
        fail "$1 $x ($4), $5 omits it"
    done
    for x in $(comm -13 <(tr ' ' '\n' <<<"$2" | sed '/^$/d') <(tr ' ' '\n' <<<"$3" | sed '/^$/d')); do
        fail "$1 $x by $5, not by $4"
    done
}
ticked() { # the `names` of a cell, as a sorted set
    # shellcheck disable=SC2046
    words $(grep -o '`[^`]*`' <<<"$1" | tr -d '`')
}
table() { # file, heading: the data rows of the first table under the heading
    awk -v h="$2" '
        $0 == h { on = 1; next }
        on && /^#/ { exit }
        on && /^\|/ { seen++; if (seen > 2) print; next }
        on && seen { exit }' "$1"
}
cells() { # row -> the array CELL, trimmed
    local row=${1#|}
    row=${row%|}
    IFS='|' read -ra CELL <<<"$row"
    local i c
    for i in "${!CELL[@]}"; do
        c=${CELL[$i]}
        c=${c#"${c%%[! ]*}"}
        CELL[$i]=${c%"${c##*[! ]}"}
    done
}
plain() { # a cell naming one thing: its text without backticks, trailing slash
    local s=${1//\`/}
    echo "${s%/}"
}

# layers.sh: the ALLOWED table and the LIBRARIES list.
declare -A ALLOWED=()
while read -r t uses; do
    # shellcheck disable=SC2086
    ALLOWED[$t]=$(words $uses)
done < <(sed -n '/^declare -A ALLOWED=(/,/^)/s/^ *\[\([^]]*\)\]="\([^"]*\)".*/\1 \2/p' tests/static/layers.sh)
[ ${#ALLOWED[@]} -gt 0 ] || { echo "docs layout: no ALLOWED table in tests/static/layers.sh"; exit 2; }
LIBRARIES=$(sed -n 's/^LIBRARIES="\([^"]*\)".*/\1/p' tests/static/layers.sh)
# shellcheck disable=SC2086
LIBRARIES=$(words $LIBRARIES)
is_in() { [[ " $2 " == *" $1 "* ]]; }
keys() { # the name of an associative array -> its keys, sorted
    local -n arr=$1
    printf '%s\n' "${!arr[@]}" | sort
}
kind_of() { # library -> pure or I/O, by the table
    if [ "$1" = io ] || is_in io "${ALLOWED[$1]:-}"; then echo "I/O"; else echo pure; fi
}

# The code: folders with C sources, the target each defines, programs' links.
top=$(sed 's/#.*//' CMakeLists.txt | tr '\n' ' ')
declare -A TARGET=() KIND=() LINKS=() FOLDER=()
while IFS= read -r dir; do
    kind= name= flat=$top
    if [ -f "$dir/CMakeLists.txt" ]; then
        flat=$(sed 's/#.*//' "$dir/CMakeLists.txt" | tr '\n' ' ')
        read -r kind name < <(grep -oE "(^| )cv_(library|program)\([A-Za-z0-9_-]+" <<<"$flat" |
            head -1 | sed -E 's/^ ?cv_([a-z]+)\(/\1 /')
    fi
    if [ -z "$name" ]; then # a single-file target of the top CMakeLists.txt
        flat=$top
        read -r kind name < <(grep -oE "add_(executable|library)\([A-Za-z0-9_-]+ +${dir//./\\.}/[^ /)]+" <<<"$flat" |
            head -1 | sed -E 's/^add_(executable|library)\(([^ ]+).*/\1 \2/; s/^executable /program /')
    fi
    if [ -z "$name" ]; then
        fail "$dir has C sources but no CMake target (cv_library or cv_program in $dir/CMakeLists.txt)"
        continue
    fi
    TARGET[$dir]=$name KIND[$dir]=$kind FOLDER[$name]=$dir
    links=
    for l in $(grep -oE "target_link_libraries\($name[ )][^)]*" <<<"$flat" | cut -d' ' -f2-); do
        [ -n "${ALLOWED[$l]+x}" ] && links="$links $l"
    done
    # shellcheck disable=SC2086
    LINKS[$name]=$(words $links)
done < <(find . -path ./tests -prune -o -path './build*' -prune -o -path './.*' -prune -o \
    -type f \( -name '*.c' -o -name '*.h' \) -print |
    sed 's|^\./||; s|^[^/]*$|.|; s|/[^/]*$||; s|/include$||' | sort -u)

# The targets of the code are those of layers.sh's table, and it keeps the rule.
for dir in $(keys TARGET); do
    t=${TARGET[$dir]}
    [ -n "${ALLOWED[$t]+x}" ] || fail "target $t of $dir is not in layers.sh's ALLOWED table"
    if [ "${KIND[$dir]}" = library ]; then
        is_in "$t" "$LIBRARIES" || fail "library $t of $dir is not in layers.sh's LIBRARIES"
    fi
done
for t in $(keys ALLOWED); do
    [ -n "${FOLDER[$t]+x}" ] || fail "layers.sh's ALLOWED names $t, which no folder's CMake defines"
    for u in ${ALLOWED[$t]}; do
        [ -n "${ALLOWED[$u]+x}" ] || fail "layers.sh lets $t use $u, which is no target of its table"
        d=${FOLDER[$u]:-}
        [ -n "$d" ] && [ "${KIND[$d]}" = program ] && fail "layers.sh lets $t use $u, a program"
    done
done

check_rows() { # file, section, kind (library|program), folder, target, [pure|I/O]
    local file=$1 sec=$2 kind=$3 dir=$4 t=$5 k=${6:-}
    if [ -z "${TARGET[$dir]+x}" ]; then
        fail "$file, $sec: a row for $dir/, which has no C sources"
        return 1
    fi
    [ "${TARGET[$dir]}" = "$t" ] || fail "$file, $sec: $dir is target ${TARGET[$dir]}, the doc says $t"
    [ "${KIND[$dir]}" = "$kind" ] ||
        fail "$file, $sec: ${TARGET[$dir]} of $dir is a ${KIND[$dir]}, the doc lists it as a $kind"
    if [ -n "$k" ] && [ "${KIND[$dir]}" = library ]; then
        [ "$k" = "$(kind_of "${TARGET[$dir]}")" ] ||
            fail "$file, $sec: ${TARGET[$dir]} is $(kind_of "${TARGET[$dir]}") (it $([ "$(kind_of "${TARGET[$dir]}")" = pure ] && echo "never reaches io" || echo "reaches io") in layers.sh), the doc says $k"
    fi
}
missing_rows() { # file, section, kind, the folders the doc listed
    local dir
    for dir in $(keys TARGET); do
        [ "${KIND[$dir]}" = "$3" ] || continue
        is_in "$dir" "$4" || fail "$1, $2: no row for $dir (${KIND[$dir]} ${TARGET[$dir]})"
    done
}

# docs/architecture.md: Libraries.
listed=
nlib=0
while IFS= read -r row; do
    cells "$row"
    [ ${#CELL[@]} = 5 ] || { fail "$ARCH, Libraries: a row of ${#CELL[@]} cells, not 5: $row"; continue; }
    dir=$(plain "${CELL[0]}") t=$(plain "${CELL[1]}") k=${CELL[2]} hdr=$(plain "${CELL[4]}")
    is_in "$dir" "$listed" && fail "$ARCH, Libraries: two rows for $dir"
    listed="$listed $dir" nlib=$((nlib + 1))
    [ "$k" = pure ] || [ "$k" = "I/O" ] || fail "$ARCH, Libraries: $t's kind is '$k', not pure or I/O"
    check_rows "$ARCH" Libraries library "$dir" "$t" "$k" || continue
    [ "$hdr" = "include/cv_$t.h" ] || fail "$ARCH, Libraries: $t's public header is include/cv_$t.h, the doc says $hdr"
    [ -f "$dir/include/cv_$t.h" ] || fail "$ARCH, Libraries: $dir/include/cv_$t.h does not exist"
    others=$(find "$dir/include" -type f ! -name "cv_$t.h" 2>/dev/null | tr '\n' ' ')
    [ -z "$others" ] || fail "$ARCH, Libraries: $t's include folder holds more than cv_$t.h: $others"
done < <(table "$ARCH" "### Libraries")
[ $nlib -gt 0 ] || fail "$ARCH: no table under '### Libraries'"
missing_rows "$ARCH" Libraries library "$listed"

# docs/architecture.md: Programs.
listed=
nprog=0
while IFS= read -r row; do
    cells "$row"
    [ ${#CELL[@]} = 4 ] || { fail "$ARCH, Programs: a row of ${#CELL[@]} cells, not 4: $row"; continue; }
    dir=$(plain "${CELL[0]}") t=$(plain "${CELL[1]}")
    is_in "$dir" "$listed" && fail "$ARCH, Programs: two rows for $dir"
    listed="$listed $dir" nprog=$((nprog + 1))
    check_rows "$ARCH" Programs program "$dir" "$t" || continue
    differ "$ARCH, Programs: ${TARGET[$dir]} links" "${LINKS[${TARGET[$dir]}]}" "$(ticked "${CELL[3]}")" \
        "CMakeLists.txt" "the doc's row"
done < <(table "$ARCH" "### Programs")
[ $nprog -gt 0 ] || fail "$ARCH: no table under '### Programs'"
missing_rows "$ARCH" Programs program "$listed"

# docs/architecture.md: Allowed edges, the table.
listed=
while IFS= read -r row; do
    cells "$row"
    [ ${#CELL[@]} = 2 ] || { fail "$ARCH, Allowed edges: a row of ${#CELL[@]} cells, not 2: $row"; continue; }
    t=$(plain "${CELL[0]}")
    is_in "$t" "$listed" && fail "$ARCH, Allowed edges: two rows for $t"
    listed="$listed $t"
    if [ -z "${ALLOWED[$t]+x}" ]; then
        fail "$ARCH, Allowed edges: a row for $t, which layers.sh's ALLOWED does not have"
        continue
    fi
    differ "$ARCH, Allowed edges: $t may use" "${ALLOWED[$t]}" "$(ticked "${CELL[1]}")" layers.sh "the doc's table"
done < <(table "$ARCH" "### Allowed edges")
for t in $(keys ALLOWED); do
    is_in "$t" "$listed" || fail "$ARCH, Allowed edges: no row for $t (layers.sh: ${ALLOWED[$t]:-nothing})"
done

# docs/architecture.md: Allowed edges, the drawing: its arrows, followed to
# the end, reach what the table allows.
declare -A SUCC=()
drawing=$(awk -v h="### Allowed edges" '
    $0 == h { on = 1; next }
    on && /^#/ { exit }
    on && /^```/ { if (fence) exit; fence = 1; next }
    on && fence' "$ARCH")
[ -n "$drawing" ] || fail "$ARCH, Allowed edges: no drawing (a fenced block) under the heading"
while IFS= read -r chain; do
    prev=
    while IFS= read -r seg; do
        # shellcheck disable=SC2086
        seg=$(words $(tr ',' ' ' <<<"$seg"))
        for n in $seg; do
            [ -n "${SUCC[$n]+x}" ] || SUCC[$n]=
            for p in $prev; do SUCC[$p]="${SUCC[$p]} $n"; done
        done
        prev=$seg
    done < <(sed "s/$ARROW/\n/g" <<<"$chain")
done < <(sed 's/^[^:]*://' <<<"$drawing" | tr ';' '\n' | sed '/^ *$/d')
reach() { # node: everything its arrows reach
    local todo=$1 seen=" " n s
    while [ -n "$todo" ]; do
        n=${todo%% *}
        todo=${todo#"$n"}
        todo=${todo# }
        for s in ${SUCC[$n]:-}; do
            [[ $seen == *" $s "* ]] && continue
            seen="$seen$s "
            todo="$todo $s"
            todo=${todo# }
        done
    done
    # shellcheck disable=SC2086
    words $seen
}
for n in $(keys SUCC); do
    [ -n "${ALLOWED[$n]+x}" ] || fail "$ARCH, Allowed edges: the drawing names $n, which layers.sh's ALLOWED does not have"
done
for t in $(keys ALLOWED); do
    if [ -z "${SUCC[$t]+x}" ]; then
        fail "$ARCH, Allowed edges: the drawing leaves out $t"
        continue
    fi
    differ "$ARCH, Allowed edges: $t may use" "${ALLOWED[$t]}" "$(reach "$t")" layers.sh "the drawing"
done

# README.md: the Layout table's libraries and programs.
listed=
nreadme=0
while IFS= read -r row; do
    cells "$row"
    [ ${#CELL[@]} = 3 ] || { fail "$README, Layout: a row of ${#CELL[@]} cells, not 3: $row"; continue; }
    dir=$(plain "${CELL[0]}") what=${CELL[1]//\`/}
    [ "$what" = "—" ] && continue
    if [[ $what =~ ^library\ ([A-Za-z0-9_-]+),\ (pure|I/O)$ ]]; then
        kind=library t=${BASH_REMATCH[1]} k=${BASH_REMATCH[2]}
    elif [[ $what =~ ^program\ ([A-Za-z0-9_-]+)$ ]]; then
        kind=program t=${BASH_REMATCH[1]} k=
    else
        fail "$README, Layout: $dir's target is '$what', not 'library NAME, pure|I/O', 'program NAME' or '—'"
        continue
    fi
    is_in "$dir" "$listed" && fail "$README, Layout: two rows for $dir"
    listed="$listed $dir" nreadme=$((nreadme + 1))
    check_rows "$README" Layout "$kind" "$dir" "$t" "$k"
done < <(table "$README" "## Layout")
[ $nreadme -gt 0 ] || fail "$README: no library or program in the table under '## Layout'"
missing_rows "$README" Layout library "$listed"
missing_rows "$README" Layout program "$listed"

[ $rc = 0 ] && echo "docs layout: $nlib libraries, $nprog programs, ${#ALLOWED[@]} targets' edges: $ARCH and $README say what the code says"
exit $rc
