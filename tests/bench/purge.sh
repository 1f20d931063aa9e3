#!/usr/bin/env bash
# Benchmark ("nothing kept forever"): Redis memory after C create /
# delete cycles of an R-resource stack and the deleted stacks' retention,
# against its value before the cycles. The engines run with
# --deleted-retention-s S, so the reaper purges each deleted stack S seconds
# after its delete; the keys of every traversal are swept when it ends.
# Prints used_memory and the key count before the cycles, right after them
# and once every deleted stack is purged, the change in percent, what one
# deleted stack keeps until its purge, and the cycles' rate. Figures, not
# assertions, except that it exits 1 when the purge does not finish within
# the retention and 60 s.
# The starting value is taken after W warm-up cycles (default 20), each
# purged: the first cycles leave allocations Redis keeps for good whatever
# the data (about 160 KB here: its tables grown once), which are no cost of
# a stack. used_memory is read with the slow log emptied first (SLOWLOG
# RESET): Redis keeps the last 128 commands slower than 10 ms there, with
# their arguments, up to ~130 KB under this load; bounded, and no stack's.
# The figure before that reset is printed too.
#
#   tests/bench/purge.sh [--quick] [--build-dir DIR] [--dir STATE] [--reuse]
#                        [--cycles C] [--resources R] [--retention S]
#                        [--warmup W]
#
# Default 1,000 cycles of 100 resources and a 5 s retention; --quick 50
# cycles of 20 after 5 warm-up cycles. --reuse: the deployment in STATE is up already and is left
# running (its engines are restarted with the retention, then as they were;
# it must hold no other stack);
# otherwise one is started (2 engines, 1 observer) and stopped.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=build STATE=.local-bench-purge CYCLES=1000 RESOURCES=100 RETENTION=5 WARMUP=20 REUSE=0
while [ $# -gt 0 ]; do
    case $1 in
    --quick) CYCLES=50 RESOURCES=20 WARMUP=5 ;;
    --warmup) WARMUP=$2; shift ;;
    --build-dir) BUILD=$2; shift ;;
    --dir) STATE=$2; shift ;;
    --cycles) CYCLES=$2; shift ;;
    --resources) RESOURCES=$2; shift ;;
    --retention) RETENTION=$2; shift ;;
    --reuse) REUSE=1 ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
for v in "$CYCLES" "$RESOURCES" "$RETENTION" "$WARMUP"; do
    [[ $v =~ ^[0-9]+$ ]] || { echo "--cycles, --resources, --retention and --warmup take counts" >&2; exit 2; }
done
CTL=$ROOT/$BUILD/convergectl
[ -x "$CTL" ] || { echo "$CTL is not built" >&2; exit 2; }
# shellcheck source=deploy/lib/common.sh
CV_TAG=bench . deploy/lib/common.sh

if [ "$REUSE" = 0 ]; then
    deploy/local/up.sh --build-dir "$BUILD" --dir "$STATE" --engines 2 --observers 1 >/dev/null
fi
STATE=$(cv_abspath "$STATE")
# shellcheck disable=SC1091
source "$STATE/env"
PREFIX=${CONVERGE_PREFIX:-cv:}
hostport=${CONVERGE_REDIS#redis://}; hostport=${hostport#*@}; hostport=${hostport%%/*}
# On a secured deployment (up.sh's default) redis-cli is the operator, by REDISCLI_AUTH.
if [[ -z ${REDISCLI_AUTH:-} && -f $STATE/redis.acl ]]; then
    REDISCLI_AUTH=$(head -n1 "$STATE/redis-admin.pass")
    export REDISCLI_AUTH
fi
rcli() { redis-cli -h "${hostport%%:*}" -p "${hostport##*:}" "$@"; }
engines() { # engines ARGS...: both engines restarted with ARGS
    local e
    for e in engine-1 engine-2; do
        deploy/local/service.sh --dir "$STATE" --build-dir "$BUILD" restart "$e" -- "$@" >/dev/null
    done
}

WORK=$(mktemp -d)
NAME=bench-purge-$$
cleanup() {
    rm -rf "$WORK"
    if [ "$REUSE" = 1 ]; then engines; else deploy/local/down.sh --dir "$STATE" >/dev/null; fi
}
trap cleanup EXIT
tests/bench/gen_stack.sh flat "$RESOURCES" >"$WORK/stack.yaml"
engines --deleted-retention-s "$RETENTION"

raw() { rcli INFO memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p'; }
used() { rcli SLOWLOG RESET >/dev/null && raw; }
keys() { rcli DBSIZE; }
# No stack of this run left: every deleted one purged and forgotten.
purged() {
    [ "$(rcli ZCARD "${PREFIX}deleted")" = 0 ] &&
        [ -z "$(rcli --scan --pattern "${PREFIX}{*}:stack" | head -n1)" ] &&
        [ "$(rcli SCARD "${PREFIX}active")" = 0 ]
}
cycle() {
    "$CTL" submit "$NAME" "$WORK/stack.yaml" --wait --timeout 120 >/dev/null
    "$CTL" delete "$NAME" --wait --timeout 120 >/dev/null
}

# Warm-up cycles, purged: what any use allocates once (the scripts' caches,
# tables grown) is in the starting value.
for _ in $(seq 1 "$WARMUP"); do cycle; done
cv_wait_until $((RETENTION + 60)) "the warm-up stacks to be purged" purged || exit 1
start_raw=$(raw) start_mem=$(used) start_keys=$(keys)
# What one deleted stack keeps until its purge (the old tree kept it forever).
cycle
one_mem=$(($(used) - start_mem)) one_keys=$(($(keys) - start_keys))
cv_wait_until $((RETENTION + 60)) "that stack to be purged" purged || exit 1

t0=$(date +%s.%N)
for _ in $(seq 1 "$CYCLES"); do cycle; done
t1=$(date +%s.%N)
after_mem=$(used) after_keys=$(keys)
cv_wait_until $((RETENTION + 60)) "every deleted stack to be purged" purged || exit 1
t2=$(date +%s.%N)
end_raw=$(raw) end_mem=$(used) end_keys=$(keys)

awk -v c="$CYCLES" -v r="$RESOURCES" -v ret="$RETENTION" -v s="$start_mem" -v sk="$start_keys" \
    -v sr="$start_raw" -v er="$end_raw" -v w="$WARMUP" \
    -v a="$after_mem" -v ak="$after_keys" -v e="$end_mem" -v ek="$end_keys" \
    -v om="$one_mem" -v ok="$one_keys" -v t0="$t0" -v t1="$t1" -v t2="$t2" 'BEGIN {
    printf "purge: %d create/delete cycles of a %d-resource stack, retention %d s (after %d warm-up cycles)\n", c, r, ret, w
    printf "  before the cycles      used_memory %10d B  keys %d\n", s, sk
    printf "  right after them       used_memory %10d B  keys %d\n", a, ak
    printf "  once all were purged   used_memory %10d B  keys %d  (%+.2f %% of the start)\n",
        e, ek, 100 * (e - s) / s
    printf "  with the slow log      used_memory %10d B before, %d B after (%+.2f %%)\n",
        sr, er, 100 * (er - sr) / sr
    printf "  one deleted stack kept %d B in %d keys until its purge (x %d cycles: %.1f MB)\n",
        om, ok, c, om * c / 1e6
    printf "  cycles: %.1f s (%.2f cycles/s); purged %.1f s after the last\n",
        t1 - t0, c / (t1 - t0), t2 - t1
}'
