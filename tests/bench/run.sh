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
# --redis-cluster: the same against a Redis Cluster of 3 masters and 3
# replicas (up.sh --redis-cluster); Redis figures are summed over the
# masters, and the group adds one line per master: its slots, commands/s
# (scripts' inner calls included) and memory over the group's create.
# --only LIST: some of flat,chain,fanout,update,group,services,balancing.
#
#   tests/bench/run.sh [--quick] [--build-dir DIR] [--dir STATE] [--redis-cluster]
#                      [--only LIST] [--flat N] [--chain N] [--fanout N] [--update N]
#                      [--group M N] [--services NODES REPLICAS]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=build STATE=.local-bench FLAT=10000 CHAIN=1000 FANOUT=10000 UPDATE=10000
GROUP_M=100 GROUP_N=1000 SVC_NODES=100 SVC_REPLICAS=1000 BALANCE_ARGS=
ONLY=flat,chain,fanout,update,group,services,balancing UP_ARGS=()
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
    --redis-cluster) UP_ARGS=(--redis-cluster) ;;
    --only) ONLY=$2; shift ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

for part in ${ONLY//,/ }; do
    case $part in flat|chain|fanout|update|group|services|balancing) ;;
    *) echo "--only: unknown part '$part' (flat,chain,fanout,update,group,services,balancing)" >&2; exit 2 ;;
    esac
done
wanted() { [[ ",$ONLY," == *",$1,"* ]]; }

deploy/local/up.sh --build-dir "$BUILD" --dir "$STATE" --engines 2 --observers 1 "${UP_ARGS[@]}" >/dev/null
trap 'deploy/local/down.sh --dir "$STATE" >/dev/null' EXIT
# shellcheck disable=SC1091
source "$STATE/env"
CTL="$ROOT/$BUILD/convergectl"
# The Redis servers that take writes: the one Redis, or every node of a
# cluster that is a master now.
redis_masters() {
    local ports p
    ports=$(sed -n 's/^REDIS_CLUSTER_PORT_[0-9]*=//p' "$STATE/ports")
    [ -n "$ports" ] || ports=$(sed -n 's/^REDIS_PORT=//p' "$STATE/ports")
    for p in $ports; do
        if redis-cli -p "$p" info replication | tr -d '\r' | grep -qx 'role:master'; then echo "$p"; fi
    done
}
MASTERS=$(redis_masters)
rinfo() { redis-cli -p "$1" info "$2" | tr -d '\r'; }
# info_sum SECTION FIELD: FIELD of INFO SECTION summed over the masters.
info_sum() {
    local p
    for p in $MASTERS; do rinfo "$p" "$1"; done | awk -F: -v k="$2" '$1 == k { s += $2 } END { print s + 0 }'
}
redis_stat() { info_sum stats "$1"; }
redis_used() { info_sum memory used_memory; }
# Commands run inside scripts included: the sum of calls over commandstats.
node_calls() { rinfo "$1" commandstats | sed -n 's/^cmdstat_[^:]*:calls=\([0-9]*\),.*/\1/p' |
    awk '{ s += $1 } END { print s + 0 }'; }
redis_calls() {
    local p s=0
    for p in $MASTERS; do s=$((s + $(node_calls "$p"))); done
    echo $s
}
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
wanted flat && run_shape flat "$FLAT"
wanted chain && run_shape chain "$CHAIN"
wanted fanout && run_shape fanout "$FANOUT"

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
wanted update && run_update "$UPDATE"

# node_slots PORT: the slot ranges a cluster node masters.
node_slots() {
    redis-cli -p "$1" cluster nodes | awk '$3 ~ /myself/ { s = ""
        for (i = 9; i <= NF; i++) s = s (s == "" ? "" : ",") $i
        print s }'
}
# Per master, "port calls used_memory", for the figures of one master each.
master_snapshot() {
    local p
    for p in $MASTERS; do echo "$p $(node_calls "$p") $(rinfo "$p" memory | awk -F: '$1 == "used_memory" { print $2 }')"; done
}
# per_master BEFORE AFTER SECONDS TOTAL: one line per master of a cluster.
per_master() {
    local before=$1 after=$2 secs=$3 total=$4 p c0 m0 c1 m1
    while read -r p c1 m1; do
        read -r c0 m0 < <(awk -v p="$p" '$1 == p { print $2, $3 }' <<<"$before")
        awk -v p="$p" -v slots="$(node_slots "$p")" -v dc=$((c1 - c0)) -v m1="$m1" -v dm=$((m1 - m0)) \
            -v secs="$secs" -v total="$total" 'BEGIN {
            printf "  master :%-6s slots %-12s %8.0f cmd/s  %6.1f cmd/r  memory %7.1f MB (+%.1f MB, %.0f B/r)\n",
                p, slots, dc / secs, dc / total, m1 / 1048576, dm / 1048576, dm / total }'
    done <<<"$after"
}

run_group() { # members, resources per member
    local m=$1 n=$2 dir name s total t0 t1 mem0 mem1 snap0 snap1
    dir=$(mktemp -d)
    tests/bench/gen_stack.sh flat "$n" >"$dir/member.yaml"
    printf '%s\n' "heat_template_version: 2018-08-31" "resources:" "  group:" \
        "    type: OS::Heat::ResourceGroup" "    properties:" "      count: $m" \
        "      resource_def: {type: member.yaml}" >"$dir/group.yaml"
    restart_workers
    name="bench-group-$(date +%s%N)"
    mem0=$(redis_used); snap0=$(master_snapshot)
    "$CTL" submit "$name" "$dir/group.yaml" --wait --timeout 3600 >/dev/null
    mem1=$(redis_used); snap1=$(master_snapshot)
    s=$("$CTL" status "$name" -o json)
    total=$(jq '.resources.CREATE_COMPLETE + .nested.resources.CREATE_COMPLETE' <<<"$s")
    t0=$(jq .created <<<"$s"); t1=$(jq .updated <<<"$s")
    awk -v m="$m" -v n="$n" -v total="$total" -v t0="$t0" -v t1="$t1" \
        -v st="$(jq .nested.stacks <<<"$s")" -v mem=$((mem1 - mem0)) -v rss="$(worker_rss)" 'BEGIN {
        printf "group    %8d %10.0f   (%d x %d, %d nested stacks, %.1f s, Redis %.0f B/resource)   %s\n",
            total, total / (t1 - t0), m, n, st, t1 - t0, mem / total, rss }'
    [ "$(wc -w <<<"$MASTERS")" -lt 2 ] ||
        per_master "$snap0" "$snap1" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$total"
    "$CTL" delete "$name" --wait --timeout 3600 >/dev/null
    rm -rf "$dir"
}
wanted group && run_group "$GROUP_M" "$GROUP_N"

if ! wanted services; then
    :
elif [ -x "$BUILD/converge-agent" ]; then
    tests/bench/services.sh --build-dir "$BUILD" --dir "$STATE" --reuse \
        --nodes "$SVC_NODES" --replicas "$SVC_REPLICAS"
else
    echo "services: skipped, $BUILD/converge-agent is not built"
fi

if ! wanted balancing; then
    :
elif [ -x "$BUILD/tests/bench/placement/bench_balance" ]; then
    # shellcheck disable=SC2086
    "$BUILD/tests/bench/placement/bench_balance" $BALANCE_ARGS
else
    echo "balancing: skipped, $BUILD/tests/bench/placement/bench_balance is not built"
fi
