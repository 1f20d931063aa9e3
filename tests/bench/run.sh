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
# Redis CPU per resource is the masters' used_cpu_sys + used_cpu_user
# (INFO cpu) over the shape. While the group runs, the workers' RSS is
# sampled every second (a few rows printed, all in STATE/rss.tsv), and a
# 10-resource stack is submitted once the group is 10% done: its time to
# CREATE_COMPLETE is the fairness figure. The placement part runs
# bench_placement (10,000 nodes, 100,000 services; --quick: 1,000 and 5,000).
# The run ends with a summary of the figures beside the targets.
# --ceiling: first measures what the machine can do at most: Redis script
# calls per second (redis-benchmark, one client unpipelined, 50 clients, and
# pipelined 16 deep), Redis SETs per second (50 clients, unpipelined) and
# Kafka small messages per second (kcat producing and consuming a batch),
# and the floor of Redis CPU and memory per resource with the keyspace as
# documented (tests/bench/floor.sh); the summary then gives the flat
# shape's rate as a share of Redis' own SET rate in the same run.
# --redis-cluster: the same against a Redis Cluster of 3 masters and 3
# replicas (up.sh --redis-cluster); Redis figures are summed over the
# masters, and the group adds one line per master: its slots, commands/s
# (scripts' inner calls included) and memory over the group's create.
# --only LIST: some of flat,chain,fanout,update,group,services,balancing,placement.
# The deployment is secured as up.sh secures it by default (Redis ACL users,
# Kafka SASL_SSL; docs/performance.md); --insecure measures without (up.sh
# --insecure), for a comparison; --no-seal secured but without encryption at
# rest (up.sh --no-seal).
#
#   tests/bench/run.sh [--quick] [--build-dir DIR] [--dir STATE] [--redis-cluster] [--insecure] [--no-seal] [--no-build] [--ceiling]
#                      [--only LIST] [--flat N] [--chain N] [--fanout N] [--update N]
#                      [--group M N] [--services NODES REPLICAS]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=build STATE=.local-bench FLAT=10000 CHAIN=1000 FANOUT=10000 UPDATE=10000
GROUP_M=100 GROUP_N=1000 SVC_NODES=100 SVC_REPLICAS=1000 BALANCE_ARGS=
ONLY=flat,chain,fanout,update,group,services,balancing,placement UP_ARGS=() CEILING=0 PLACE_ARGS=()
CEIL_N=1000000 FLOOR_N=64000
while [ $# -gt 0 ]; do
    case $1 in
    --quick) FLAT=500 CHAIN=50 FANOUT=500 UPDATE=500 GROUP_M=5 GROUP_N=100 SVC_NODES=10 SVC_REPLICAS=100
        BALANCE_ARGS=--quick PLACE_ARGS=(--quick) CEIL_N=100000 FLOOR_N=6400 ;;
    --build-dir) BUILD=$2; shift ;;
    --dir) STATE=$2; shift ;;
    --flat) FLAT=$2; shift ;;
    --chain) CHAIN=$2; shift ;;
    --fanout) FANOUT=$2; shift ;;
    --update) UPDATE=$2; shift ;;
    --group) GROUP_M=$2; GROUP_N=$3; shift 2 ;;
    --services) SVC_NODES=$2; SVC_REPLICAS=$3; shift 2 ;;
    --redis-cluster) UP_ARGS+=(--redis-cluster) ;;
    --insecure) UP_ARGS+=(--insecure) ;;
    --no-seal) UP_ARGS+=(--no-seal) ;;
    --no-build) UP_ARGS+=(--no-build) ;;
    --only) ONLY=$2; shift ;;
    --ceiling) CEILING=1 ;;
    -h|--help) sed -n '2,50p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

for part in ${ONLY//,/ }; do
    case $part in flat|chain|fanout|update|group|services|balancing|placement) ;;
    *) echo "--only: unknown part '$part' (flat,chain,fanout,update,group,services,balancing,placement)" >&2; exit 2 ;;
    esac
done
wanted() { [[ ",$ONLY," == *",$1,"* ]]; }

deploy/local/up.sh --build-dir "$BUILD" --dir "$STATE" --engines 2 --observers 1 "${UP_ARGS[@]}" >/dev/null
trap 'deploy/local/down.sh --dir "$STATE" >/dev/null' EXIT
# shellcheck disable=SC1091
source "$STATE/env"
# On a secured deployment, redis-cli (here, floor.sh, services.sh) is the
# operator by REDISCLI_AUTH and kcat the Kafka admin by its settings file.
if [ -f "$STATE/redis.acl" ]; then
    REDISCLI_AUTH=$(head -n1 "$STATE/redis-admin.pass")
    export REDISCLI_AUTH
fi
[ ! -f "$STATE/kafka-sasl/admin.conf" ] || export KCAT_CONFIG="$STATE/kafka-sasl/admin.conf"
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
# Seconds of CPU the masters used, system and user.
redis_cpu() { echo "$(info_sum cpu used_cpu_sys) $(info_sum cpu used_cpu_user)" | awk '{ print $1 + $2 }'; }
# Top-level script calls (what a client sends), summed over the masters.
redis_scripts() {
    local p
    for p in $MASTERS; do rinfo "$p" commandstats; done |
        sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p' | awk '{ s += $1 } END { print s + 0 }'
}
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
    for t in converge.check converge.observe converge.check.express converge.observe.express; do
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

# The figures of the summary, by name (summary() prints them).
declare -A FIG=()

# rps LINE: the requests per second of a redis-benchmark -q line.
rps() { sed -n 's/.*: \([0-9.]*\) requests per second.*/\1/p' | tail -1; }

# What the machine can do at most, measured before the shapes: a trivial
# script on one master (one client unpipelined: the serial round trip; 50
# clients; 50 clients pipelined 16 deep) and a million (--quick: 100,000) 48-byte Kafka
# messages produced in batches by kcat (librdkafka) and consumed back.
ceiling() {
    local p sha one many piped n=$CEIL_N t0 t1 t2 got
    p=$(head -n1 <<<"$MASTERS")
    sha=$(redis-cli -p "$p" script load "return 1")
    # redis-benchmark takes a password on its command line only: on a secured
    # deployment it runs as a throwaway user, deleted after, whose password
    # is no other's (given to redis-cli on stdin).
    local auth=() user=bench-ceiling-$$ pw
    if [ -n "${REDISCLI_AUTH:-}" ]; then
        pw=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
        printf 'ACL SETUSER %s on >%s ~* &* +@all\n' "$user" "$pw" | redis-cli -p "$p" >/dev/null
        auth=(--user "$user" -a "$pw")
    fi
    one=$(redis-benchmark -p "$p" "${auth[@]}" -c 1 -n $((n / 50)) -q evalsha "$sha" 0 2>/dev/null | rps)
    many=$(redis-benchmark -p "$p" "${auth[@]}" -c 50 -n $((n / 5)) -q evalsha "$sha" 0 2>/dev/null | rps)
    piped=$(redis-benchmark -p "$p" "${auth[@]}" -c 50 -P 16 -n "$n" -q evalsha "$sha" 0 2>/dev/null | rps)
    # Redis' own rate for the simplest write, the yardstick of the flat shape.
    FIG[ceil.set]=$(redis-benchmark -p "$p" "${auth[@]}" -c 50 -n $((n / 5)) -q -t set 2>/dev/null | rps)
    awk -v one="$one" -v many="$many" -v piped="$piped" -v set="${FIG[ceil.set]}" 'BEGIN {
        printf "ceiling  Redis script calls/s: %.0f unpipelined from one client (round trip %.0f µs), %.0f from 50 clients, %.0f pipelined 16 deep; SET %.0f/s unpipelined from 50 clients\n",
            one, 1e6 / one, many, piped, set }'
    awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "%048d\n", i }' >"$STATE/ceiling.msgs"
    t0=$(date +%s%N)
    kcat -P -b "$CONVERGE_KAFKA" -t converge.ceiling -X linger.ms=5 -X batch.num.messages=10000 \
        -X queue.buffering.max.messages=2000000 <"$STATE/ceiling.msgs"
    t1=$(date +%s%N)
    got=$(timeout 300 kcat -C -b "$CONVERGE_KAFKA" -t converge.ceiling -o beginning -e -q | wc -l)
    t2=$(date +%s%N)
    rm -f "$STATE/ceiling.msgs"
    awk -v n="$n" -v got="$got" -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {
        printf "ceiling  Kafka 48-byte messages/s: %.0f produced (batched), %.0f consumed (%d of %d back)\n",
            n / ((b - a) / 1e9), got / ((c - b) / 1e9), got, n }'
    # The least a resource can cost Redis with the keyspace as documented.
    local floor
    floor=$(CV_BENCH_USER=${auth[1]:-} CV_BENCH_PASS=${pw:-} tests/bench/floor.sh "$p" "$FLOOR_N")
    [ ${#auth[@]} = 0 ] || redis-cli -p "$p" ACL DELUSER "$user" >/dev/null
    echo "$floor"
    FIG[floor.cpu]=$(sed -n 's/^ *\([0-9.]*\) µs in Lua.*/\1/p' <<<"$floor")
    FIG[floor.mem]=$(sed -n 's/^ *memory \([0-9]*\) B.*/\1/p' <<<"$floor")
}
[ "$CEILING" = 0 ] || ceiling

printf '%-8s %8s %10s %12s %12s %12s %12s %10s   %s\n' shape resources "res/s" \
    "redis cmd/r" "redis µs/r" "redis B/r" "kafka msg/r" "hop p50/p99 ms" "peak RSS (VmHWM)"
# Restarts the workers, so that each figure's peak RSS is its own.
restart_workers() {
    deploy/local/up.sh --build-dir "$BUILD" --dir "$STATE" --engines 2 --observers 1 \
        "${UP_ARGS[@]}" --restart-workers >/dev/null
}

run_shape() { # shape count
    local shape=$1 n=$2 tpl name s total c0 c1 b0 b1 k0 k1 u0 u1 e0 e1 created updated hops="" row
    tpl=$(mktemp --suffix .yaml)
    tests/bench/gen_stack.sh "$shape" "$n" >"$tpl"
    restart_workers
    name="bench-$shape-$(date +%s%N)"
    c0=$(redis_calls); k0=$(kafka_messages); u0=$(redis_cpu); e0=$(redis_scripts)
    b0=$(($(redis_stat total_net_input_bytes) + $(redis_stat total_net_output_bytes)))
    "$CTL" submit "$name" "$tpl" --wait --timeout 900 >/dev/null
    c1=$(redis_calls); k1=$(kafka_messages); u1=$(redis_cpu); e1=$(redis_scripts)
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
    row=$(awk -v shape="$shape" -v n="$total" -v t0="$created" -v t1="$updated" -v dc=$((c1 - c0)) \
        -v du="$(awk -v a="$u0" -v b="$u1" 'BEGIN { print b - a }')" \
        -v db=$((b1 - b0)) -v dk=$((k1 - k0)) -v hops="${hops:--}" -v rss="$(worker_rss)" 'BEGIN {
        printf "%-8s %8d %10.0f %12.1f %12.1f %12.0f %12.2f %14s   %s\n", shape, n,
            n / (t1 - t0), dc / n, du * 1e6 / n, db / n, dk / n, hops, rss }')
    echo "$row"
    read -r _ _ "FIG[$shape.rate]" "FIG[$shape.cmd]" "FIG[$shape.cpu]" _ "FIG[$shape.msgs]" \
        "FIG[$shape.hops]" _ <<<"$row"
    FIG[$shape.scripts]=$(awk -v d=$((e1 - e0)) -v n="$total" 'BEGIN { printf "%.2f", d / n }')
    rm -f "$tpl"
    "$CTL" delete "$name" --wait --timeout 900 >/dev/null
}
wanted flat && run_shape flat "$FLAT"
wanted chain && run_shape chain "$CHAIN"
wanted fanout && run_shape fanout "$FANOUT"

run_update() { # count: a flat stack, then an update changing every 10th resource
    local n=$1 tpl name t0 t1 s updated
    tpl=$(mktemp --suffix .yaml)
    tests/bench/gen_stack.sh flatparam "$n" 10 >"$tpl"
    name="bench-update-$(date +%s%N)"
    "$CTL" submit "$name" "$tpl" --wait --timeout 900 >/dev/null
    # From submit to UPDATE_COMPLETE on the Redis clock, as the other shapes:
    # not from the events, of which a stack keeps only its last 1000 entries.
    t0=$(redis-cli -p "${MASTERS%% *}" TIME | tr -d '\r' | paste -sd' ' | awk '{ printf "%d.%06d", $1, $2 }')
    "$CTL" update "$name" "$tpl" -P ver=2 --wait --timeout 900 >/dev/null
    s=$("$CTL" status "$name" -o json)
    t1=$(jq .updated <<<"$s")
    updated=$("$CTL" resources "$name" -o json | jq '[.[] | select(.status == "UPDATE_COMPLETE")] | length')
    FIG[update.rate]=$(awk -v t0="$t0" -v t1="$t1" -v c=$(((n + 9) / 10)) 'BEGIN { printf "%.0f", c / (t1 - t0) }')
    awk -v n="$n" -v t0="$t0" -v t1="$t1" -v changed=$(((n + 9) / 10)) -v updated="$updated" \
        'BEGIN { printf "update   %8d %10.0f   (%d changed, %d updated in place, %.2f s: %.0f changed res/s)\n",
                 n, n / (t1 - t0), changed, updated, t1 - t0, changed / (t1 - t0) }'
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

# The workers of the deployment, in the order worker_rss and rss_sampler use.
worker_pids() { ls "$STATE"/pids/engine-*.pid "$STATE"/pids/observer-*.pid 2>/dev/null; }

# stack_done NAME: resources of NAME and its nested stacks done so far.
stack_done() {
    timeout 10 "$CTL" status "$1" -o json 2>/dev/null | jq '(.done // 0) + (.nested.done // 0)' 2>/dev/null
}

# done_prober NAME FILE STOP: until the file STOP exists, the resources of
# NAME done so far into FILE, as often as `convergectl status` answers
# (slower than a second for a big group on a busy machine).
done_prober() {
    local d
    while [ ! -e "$3" ]; do
        d=$(stack_done "$1") && [ -n "$d" ] && echo "$d" >"$2.tmp" && mv "$2.tmp" "$2"
        sleep 0.5
    done
}

# rss_sampler NAME OUT STOP: until the file STOP exists, every second a line
# "seconds done MB..." into OUT: the resources of NAME done as last probed,
# and each worker's VmRSS.
rss_sampler() {
    local name=$1 out=$2 stop=$3 start f row
    start=$(date +%s%N)
    echo 0 >"$out.done"
    done_prober "$name" "$out.done" "$stop" &
    echo "# seconds done $(worker_pids | xargs -n1 basename | sed 's/\.pid$//' | tr '\n' ' ')" >"$out"
    while [ ! -e "$stop" ]; do
        row="$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.0f", (b - a) / 1e9 }') $(cat "$out.done")"
        for f in $(worker_pids); do
            row="$row $(awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$(cat "$f")/status" 2>/dev/null || echo -)"
        done
        echo "$row" >>"$out"
        sleep 1
    done
    wait
    rm -f "$out.done"
}

# rss_report FILE TOTAL: a dozen of the samples, evenly spaced, and each
# worker's RSS once a quarter of the resources were done against at the end.
rss_report() {
    local file=$1 total=$2
    awk -v total="$total" 'NR == 1 { sub(/^# /, ""); head = $0; next }
        { row[++n] = $0 }
        END {
            printf "  RSS sampled every second (%d samples, all in %s), MB:\n    %s\n", n, FILENAME, head
            step = n > 12 ? n / 12 : 1
            for (i = 1; i <= n; i += step) printf "    %s\n", row[int(i)]
            if (int(i - step) != n) printf "    %s\n", row[n]
        }' "$file"
}

# fairness NAME AT: once AT resources of NAME are done, a 10-resource stack;
# prints its seconds from submit to CREATE_COMPLETE (Redis clock).
fairness() {
    local big=$1 at=$2 tpl name s d
    while d=$(stack_done "$big"); [ "${d:-0}" -lt "$at" ]; do sleep 0.2; done
    tpl=$(mktemp --suffix .yaml)
    tests/bench/gen_stack.sh flat 10 >"$tpl"
    name="bench-small-$(date +%s%N)"
    "$CTL" submit "$name" "$tpl" --wait --timeout 3600 >/dev/null
    s=$("$CTL" status "$name" -o json)
    jq -r '.updated - .created | . * 100 | round / 100' <<<"$s"
    "$CTL" delete "$name" --wait --timeout 600 >/dev/null
    rm -f "$tpl"
}

run_group() { # members, resources per member
    local m=$1 n=$2 dir name s total t0 t1 mem0 mem1 snap0 snap1 u0 u1 gpid fair
    dir=$(mktemp -d)
    tests/bench/gen_stack.sh flat "$n" >"$dir/member.yaml"
    printf '%s\n' "heat_template_version: 2018-08-31" "resources:" "  group:" \
        "    type: OS::Heat::ResourceGroup" "    properties:" "      count: $m" \
        "      resource_def: {type: member.yaml}" >"$dir/group.yaml"
    restart_workers
    name="bench-group-$(date +%s%N)"
    mem0=$(redis_used); snap0=$(master_snapshot); u0=$(redis_cpu)
    "$CTL" submit "$name" "$dir/group.yaml" --wait --timeout 3600 >/dev/null &
    gpid=$!
    rss_sampler "$name" "$STATE/rss.tsv" "$dir/stop" &
    fair=$(fairness "$name" $((m * n / 10)))
    wait "$gpid"
    touch "$dir/stop"
    wait
    mem1=$(redis_used); snap1=$(master_snapshot); u1=$(redis_cpu)
    s=$("$CTL" status "$name" -o json)
    total=$(jq '.resources.CREATE_COMPLETE + .nested.resources.CREATE_COMPLETE' <<<"$s")
    t0=$(jq .created <<<"$s"); t1=$(jq .updated <<<"$s")
    awk -v m="$m" -v n="$n" -v total="$total" -v t0="$t0" -v t1="$t1" -v du="$(awk -v a="$u0" -v b="$u1" 'BEGIN { print b - a }')" \
        -v st="$(jq .nested.stacks <<<"$s")" -v mem=$((mem1 - mem0)) -v rss="$(worker_rss)" 'BEGIN {
        printf "group    %8d %10.0f   (%d x %d, %d nested stacks, %.1f s, Redis %.0f B/resource, %.1f µs CPU/resource)   %s\n",
            total, total / (t1 - t0), m, n, st, t1 - t0, mem / total, du * 1e6 / total, rss }'
    rss_report "$STATE/rss.tsv" "$total"
    echo "  fairness: a 10-resource stack submitted once 10% of the group was done: CREATE_COMPLETE after $fair s"
    if [ "$(wc -w <<<"$MASTERS")" -ge 2 ]; then
        per_master "$snap0" "$snap1" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$total"
        FIG[group.masters]=$(join -j1 <(sort <<<"$snap0") <(sort <<<"$snap1") |
            awk '{ d = $4 - $2; if (max == "" || d > max) max = d; if (min == "" || d < min) min = d }
                 END { printf "%.2f", min > 0 ? max / min : 0 }')
    fi
    FIG[group.size]="$m x $n" FIG[group.secs]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    FIG[group.rate]=$(awk -v a="$t0" -v b="$t1" -v n="$total" 'BEGIN { printf "%.0f", n / (b - a) }')
    FIG[group.mem]=$(awk -v d=$((mem1 - mem0)) -v n="$total" 'BEGIN { printf "%.0f", d / n }')
    FIG[group.rss]=$(worker_rss) FIG[fair]=$fair
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

if wanted placement; then
    out=$("$BUILD/tests/bench/placement/bench_placement" "${PLACE_ARGS[@]}")
    echo "$out"
    FIG[place.size]=$(sed -n 's/^placement benchmark: \([0-9]*\) nodes.*, \([0-9]*\) services.*/\1 nodes, \2 services/p' <<<"$out")
    FIG[place.rate]=$(sed -n 's/^ *\([0-9]*\) replicas\/s.*/\1/p' <<<"$out")
    FIG[place.util]=$(awk '$1 == "placement" && /utilisation/ { printf "%s%s %s", sep, $2, $NF; sep = ", " }' <<<"$out")
fi

if ! wanted balancing; then
    :
elif [ -x "$BUILD/tests/bench/placement/bench_balance" ]; then
    # shellcheck disable=SC2086
    "$BUILD/tests/bench/placement/bench_balance" $BALANCE_ARGS
else
    echo "balancing: skipped, $BUILD/tests/bench/placement/bench_balance is not built"
fi

# The figures beside their targets, one row each.
row() { printf '  %-52s %-34s %s\n' "$@"; }
summary() {
    echo
    echo "summary (targets for the full sizes on 2 cores)"
    row figure measured target
    if [ -n "${FIG[ceil.set]:-}" ] && [ -n "${FIG[flat.rate]:-}" ]; then
        row "flat res/s / Redis SET/s (50 clients, this run)" \
            "$(awk -v r="${FIG[flat.rate]}" -v s="${FIG[ceil.set]}" 'BEGIN { printf "%.2f (%d / %.0f)", r / s, r, s }')" ">= 0.40"
    fi
    [ -z "${FIG[flat.rate]:-}" ] || row "flat $FLAT OS::Heat::None, res/s" "${FIG[flat.rate]}" ""
    [ -z "${FIG[flat.cpu]:-}" ] || row "Redis CPU per resource (flat), µs" "${FIG[flat.cpu]}" "<= 12"
    [ -z "${FIG[floor.cpu]:-}" ] || row "  its floor with the documented keyspace, µs" "${FIG[floor.cpu]} (tests/bench/floor.sh)" ""
    [ -z "${FIG[flat.cmd]:-}" ] || row "Redis commands per resource (flat)" "${FIG[flat.cmd]} (${FIG[flat.scripts]} script calls)" ""
    [ -z "${FIG[group.mem]:-}" ] || row "Redis memory per resource after COMPLETE (group), B" "${FIG[group.mem]}" "<= 600"
    [ -z "${FIG[floor.mem]:-}" ] || row "  its floor, B" "${FIG[floor.mem]} (record, event, ledger, done)" ""
    [ -z "${FIG[chain.hops]:-}" ] || row "chain $CHAIN, per hop p50/p99 ms" "${FIG[chain.hops]}" "<= 1 / 3"
    [ -z "${FIG[group.secs]:-}" ] || row "ResourceGroup ${FIG[group.size]}, seconds" "${FIG[group.secs]} (${FIG[group.rate]} res/s)" "<= 60 (1000 x 1000)"
    [ -z "${FIG[group.rss]:-}" ] || row "peak worker RSS during the group" "${FIG[group.rss]}" "<= 64 MB each"
    [ -z "${FIG[update.rate]:-}" ] || row "update of 10 % of $UPDATE: changed res/s" "${FIG[update.rate]}" ">= flat's res/s${FIG[flat.rate]:+ (${FIG[flat.rate]})}"
    [ -z "${FIG[fair]:-}" ] || row "10 resources while the group runs, s" "${FIG[fair]}" "<= 1"
    [ -z "${FIG[group.masters]:-}" ] || row "commands per master during the group, max/min" "${FIG[group.masters]}" "<= 1.2"
    [ -z "${FIG[place.rate]:-}" ] || row "placement (${FIG[place.size]}), replicas/s" "${FIG[place.rate]}" ">= 100,000"
    [ -z "${FIG[place.util]:-}" ] || row "placement max/min utilisation" "${FIG[place.util]}" "<= 1.25 each"
    echo "  (engine instructions per settled OS::Heat::None: tests/bench/hotpath.sh, target <= 40,000)"
}
summary
