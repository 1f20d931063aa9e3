#!/usr/bin/env bash
# Benchmark: OS::Heat::None stacks of three shapes on the local services with
# 2 engines and 1 observer. Prints, per shape: resources/s from submit to
# COMPLETE, per-hop latency (median, p99) for the chain, Redis commands and
# bytes per resource (INFO deltas), Kafka messages per resource, and the peak
# RSS of each worker (workers restarted before each shape, so the peak is that
# shape's). Figures, not assertions.
#
# Then an update of a flat stack where 10% of the resources change: resources
# per second of the update (from its UPDATE IN_PROGRESS event to COMPLETE);
# and an OS::Heat::ResourceGroup of M members, each a nested stack of N
# resources (default 100 x 1,000 = 100,000 resources): resources/s of the
# create, counted over every nested stack, and Redis memory per resource.
# Last, services (tests/bench/services.sh, when converge-agent is built): the
# time to place and start 1,000 replicas on 100 simulated nodes (--quick: 100
# on 10; --services N R for others). And the cluster resource manager's
# balancing pass (build/tests/bench/placement/bench_balance: 1,000 nodes and
# 10,000 replicas; --quick: 100 and 1,000) beside a greedy baseline.
#
#   tests/bench/run.sh [--quick] [--build-dir DIR] [--dir STATE]
#                      [--flat N] [--chain N] [--fanout N] [--update N]
#                      [--group M N] [--services NODES REPLICAS]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=build STATE=.local-bench FLAT=10000 CHAIN=1000 FANOUT=10000 UPDATE=10000
GROUP_M=100 GROUP_N=1000 SVC_NODES=100 SVC_REPLICAS=1000 BALANCE_ARGS=
while [ $# -gt 0 ]; do
    case $1 in
    --quick) FLAT=500 CHAIN=50 FANOUT=500 UPDATE=500 GROUP_M=5 GROUP_N=100 SVC_NODES=10 SVC_REPLICAS=100
        BALANCE_ARGS=--quick ;;
    --build-dir) BUILD=$2; shift ;;
    --dir) STATE=$2; shift ;;
    --flat) FLAT=$2; shift ;;
    --chain) CHAIN=$2; shift ;;
    --fanout) FANOUT=$2; shift ;;
    --update) UPDATE=$2; shift ;;
    --group) GROUP_M=$2; GROUP_N=$3; shift 2 ;;
    --services) SVC_NODES=$2; SVC_REPLICAS=$3; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

deploy/local/up.sh --build-dir "$BUILD" --dir "$STATE" --engines 2 --observers 1 >/dev/null
trap 'deploy/local/down.sh --dir "$STATE" >/dev/null' EXIT
# shellcheck disable=SC1091
source "$STATE/env"
CTL="$ROOT/$BUILD/convergectl"
hostport=${CONVERGE_REDIS#redis://}; hostport=${hostport%%/*}
rcli() { redis-cli -h "${hostport%%:*}" -p "${hostport##*:}" "$@"; }
redis_stat() { rcli info stats | tr -d '\r' | awk -F: -v k="$1" '$1 == k { print $2 }'; }
# Commands run inside scripts included: the sum of calls over commandstats.
redis_calls() { rcli info commandstats | tr -d '\r' | sed -n 's/^cmdstat_[^:]*:calls=\([0-9]*\),.*/\1/p' |
    awk '{ s += $1 } END { print s }'; }
kafka_messages() { # total messages ever produced to the converge topics
    local t total=0 n
    for t in converge.check converge.observe; do
        # the last message of each partition: its offset + 1 messages were produced there
        n=$(timeout 30 kcat -C -b "$CONVERGE_KAFKA" -t "$t" -o -1 -e -q -f '%o\n' 2>/dev/null |
            awk '{ s += $1 + 1 } END { print s + 0 }')
        total=$((total + n))
    done
    echo $total
}
worker_rss() { # "engine-1 12.3 MB, ..." from VmHWM
    local f out=""
    for f in "$STATE"/pids/engine-*.pid "$STATE"/pids/observer-*.pid; do
        [ -f "$f" ] || continue
        local w pid kb
        w=$(basename "$f" .pid); pid=$(cat "$f")
        kb=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
        out="$out$w $(awk -v k="$kb" 'BEGIN { printf "%.1f", k / 1024 }') MB, "
    done
    echo "${out%, }"
}

printf '%-8s %8s %10s %12s %12s %12s %10s   %s\n' shape resources "res/s" \
    "redis cmd/r" "redis B/r" "kafka msg/r" "hop p50/p99 ms" "peak RSS (VmHWM)"
# Restarts the workers, so that each figure's peak RSS is its own.
restart_workers() {
    deploy/local/up.sh --build-dir "$BUILD" --dir "$STATE" --engines 2 --observers 1 \
        --restart-workers >/dev/null
}

run_shape() { # shape count
    local shape=$1 n=$2 tpl name s total c0 c1 b0 b1 k0 k1 created updated hops=""
    tpl=$(mktemp --suffix .yaml)
    tests/bench/gen_stack.sh "$shape" "$n" >"$tpl"
    restart_workers
    name="bench-$shape-$(date +%s%N)"
    c0=$(redis_calls); k0=$(kafka_messages)
    b0=$(($(redis_stat total_net_input_bytes) + $(redis_stat total_net_output_bytes)))
    "$CTL" submit "$name" "$tpl" --wait --timeout 900 >/dev/null
    c1=$(redis_calls); k1=$(kafka_messages)
    b1=$(($(redis_stat total_net_input_bytes) + $(redis_stat total_net_output_bytes)))
    s=$("$CTL" status "$name" -o json)
    total=$(jq .resources.CREATE_COMPLETE <<<"$s")
    created=$(jq .created <<<"$s"); updated=$(jq .updated <<<"$s")
    if [ "$shape" = chain ]; then
        # Hop = a resource's COMPLETE to its child's COMPLETE (check + observe each).
        hops=$("$CTL" events "$name" -o json | jq -r '[.[] | select(.status == "COMPLETE"
              and .resource != "'"$name"'") | .time] | sort | . as $t
              | [range(1; length) | ($t[.] - $t[. - 1]) * 1000] | sort
              | "\(.[(length / 2) | floor] * 100 | round / 100)/\(.[(length * 0.99) | floor] * 100 | round / 100)"')
    fi
    awk -v shape="$shape" -v n="$total" -v t0="$created" -v t1="$updated" -v dc=$((c1 - c0)) \
        -v db=$((b1 - b0)) -v dk=$((k1 - k0)) -v hops="${hops:--}" -v rss="$(worker_rss)" 'BEGIN {
        printf "%-8s %8d %10.0f %12.1f %12.0f %12.2f %14s   %s\n", shape, n,
            n / (t1 - t0), dc / n, db / n, dk / n, hops, rss }'
    rm -f "$tpl"
    "$CTL" delete "$name" --wait --timeout 900 >/dev/null
}
run_shape flat "$FLAT"
run_shape chain "$CHAIN"
run_shape fanout "$FANOUT"

run_update() { # count: a flat stack, then an update changing every 10th resource
    local n=$1 tpl name t0 t1 ev
    tpl=$(mktemp --suffix .yaml)
    tests/bench/gen_stack.sh flatparam "$n" 10 >"$tpl"
    name="bench-update-$(date +%s%N)"
    "$CTL" submit "$name" "$tpl" --wait --timeout 900 >/dev/null
    "$CTL" update "$name" "$tpl" -P ver=2 --wait --timeout 900 >/dev/null
    ev=$("$CTL" events "$name" -o json)
    t0=$(jq --arg s "$name" '[.[] | select(.resource == $s and .action == "UPDATE"
          and .status == "IN_PROGRESS")][0].time' <<<"$ev")
    t1=$(jq --arg s "$name" '[.[] | select(.resource == $s and .action == "UPDATE"
          and .status == "COMPLETE")][0].time' <<<"$ev")
    awk -v n="$n" -v t0="$t0" -v t1="$t1" -v changed=$(((n + 9) / 10)) -v updated="$(jq \
        '[.[] | select(.action == "UPDATE" and .status == "COMPLETE")] | length - 1' <<<"$ev")" \
        'BEGIN { printf "update   %8d %10.0f   (%d changed, %d updated in place, %.2f s)\n",
                 n, n / (t1 - t0), changed, updated, t1 - t0 }'
    rm -f "$tpl"
    "$CTL" delete "$name" --wait --timeout 900 >/dev/null
}
run_update "$UPDATE"

run_group() { # members, resources per member
    local m=$1 n=$2 dir name s total t0 t1 mem0 mem1
    dir=$(mktemp -d)
    tests/bench/gen_stack.sh flat "$n" >"$dir/member.yaml"
    printf '%s\n' "heat_template_version: 2018-08-31" "resources:" "  group:" \
        "    type: OS::Heat::ResourceGroup" "    properties:" "      count: $m" \
        "      resource_def: {type: member.yaml}" >"$dir/group.yaml"
    restart_workers
    name="bench-group-$(date +%s%N)"
    mem0=$(rcli info memory | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 }')
    "$CTL" submit "$name" "$dir/group.yaml" --wait --timeout 1800 >/dev/null
    mem1=$(rcli info memory | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 }')
    s=$("$CTL" status "$name" -o json)
    total=$(jq '.resources.CREATE_COMPLETE + .nested.resources.CREATE_COMPLETE' <<<"$s")
    t0=$(jq .created <<<"$s"); t1=$(jq .updated <<<"$s")
    awk -v m="$m" -v n="$n" -v total="$total" -v t0="$t0" -v t1="$t1" \
        -v st="$(jq .nested.stacks <<<"$s")" -v mem=$((mem1 - mem0)) -v rss="$(worker_rss)" 'BEGIN {
        printf "group    %8d %10.0f   (%d x %d, %d nested stacks, %.1f s, Redis %.0f B/resource)   %s\n",
            total, total / (t1 - t0), m, n, st, t1 - t0, mem / total, rss }'
    "$CTL" delete "$name" --wait --timeout 1800 >/dev/null
    rm -rf "$dir"
}
run_group "$GROUP_M" "$GROUP_N"

if [ -x "$BUILD/converge-agent" ]; then
    tests/bench/services.sh --build-dir "$BUILD" --dir "$STATE" --reuse \
        --nodes "$SVC_NODES" --replicas "$SVC_REPLICAS"
else
    echo "services: skipped, $BUILD/converge-agent is not built"
fi

if [ -x "$BUILD/tests/bench/placement/bench_balance" ]; then
    # shellcheck disable=SC2086
    "$BUILD/tests/bench/placement/bench_balance" $BALANCE_ARGS
else
    echo "balancing: skipped, $BUILD/tests/bench/placement/bench_balance is not built"
fi
