#!/usr/bin/env bash
# Instruction counts of the pure hot paths, under valgrind --tool=callgrind:
# deterministic figures that do not depend on a noisy machine.
#
#   tests/bench/hotpath.sh [--quick] [--build-dir DIR]
#
# Per resource (bench_hotpath; tests/bench/hotpath/bench_hotpath.c and, for the
# jobs whole as step machines, bench_jobs.c say what each part does): each
# part runs N and 2N times in a function of its own that
# callgrind alone counts (--toggle-collect), and the figure is the difference
# divided by N, so that one-time costs (first allocations, type registry)
# drop out. Per placement: cv_place's instructions over bench_placement's
# run divided by the replicas it placed. --quick: N = 200 and a 1,000-node
# cluster with 100 services (about 15 s); otherwise N = 2,000 and 10,000
# nodes with 1,000 services. Figures, not assertions.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=build N=2000 NODES=10000 SERVICES=1000
while [ $# -gt 0 ]; do
    case $1 in
    --quick) N=200 NODES=1000 SERVICES=100 ;;
    --build-dir) BUILD=${2:?--build-dir takes a directory}; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "hotpath.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
HOT=$BUILD/tests/bench/hotpath/bench_hotpath
PLACE=$BUILD/tests/bench/placement/bench_placement
command -v valgrind >/dev/null || { echo "hotpath.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
for b in "$HOT" "$PLACE"; do
    [ -x "$b" ] || { echo "hotpath.sh: $b is missing: build first" >&2; exit 2; }
done
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# instructions FUNCTION LOG COMMAND...: callgrind's count of FUNCTION (and
# what it calls) over COMMAND; COMMAND's output goes to LOG.
instructions() {
    local fn=$1 log=$2
    shift 2
    valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.out" --toggle-collect="$fn" \
        "$@" >"$log" 2>"$WORK/valgrind.log" || {
        echo "hotpath.sh: $* failed:" >&2
        cat "$log" "$WORK/valgrind.log" >&2
        return 1
    }
    sed -n 's/^summary: //p' "$WORK/cg.out"
}

echo "hot path, instructions (valgrind --tool=callgrind; deterministic):"
for part in codec check settle observe syncpoint checkjob settlejob observejob; do
    one=$(instructions "hot_$part" "$WORK/one.log" "$HOT" "$part" "$N")
    two=$(instructions "hot_$part" "$WORK/two.log" "$HOT" "$part" $((2 * N)))
    awk -v part="$part" -v n="$N" -v one="$one" -v two="$two" -v what="$(cat "$WORK/two.log")" 'BEGIN {
        printf "  %-10s %10.0f per resource   (%s)\n", part, (two - one) / n, what }'
done
ir=$(instructions cv_placer_place "$WORK/place.log" "$PLACE" --nodes "$NODES" --services "$SERVICES")
placed=$(sed -n 's/^ *placed \([0-9]*\) replicas.*/\1/p' "$WORK/place.log")
[[ $ir =~ ^[1-9][0-9]*$ ]] || { echo "hotpath.sh: no instructions counted in cv_placer_place" >&2; exit 1; }
[[ $placed =~ ^[1-9][0-9]*$ ]] || { echo "hotpath.sh: bench_placement placed nothing" >&2; cat "$WORK/place.log" >&2; exit 1; }
awk -v ir="$ir" -v placed="$placed" -v nodes="$NODES" -v svc="$SERVICES" 'BEGIN {
    printf "  %-10s %10.0f per replica    (cv_placer_place, %d nodes, %d services, %d replicas)\n",
        "placement", ir / placed, nodes, svc, placed }'
