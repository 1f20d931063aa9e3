#!/usr/bin/env bash
# Benchmark: time to place and start R replicas of
# Converge::Services on N simulated nodes — one `converge-agent --simulate N`
# process hosting every node (processes replaced by simulated ones with the
# same reports). Prints, from submit: the time until every replica is placed
# (the services' placements in {cluster}:svc:<svc>), until every replica is
# reported healthy by the agent, and until the stack is CREATE_COMPLETE;
# replicas per second; the ledger's starts (each replica id started once);
# then the time to delete the stack (every replica stopped). Figures, not
# assertions, except that a run that does not complete exits 1.
#
#   tests/bench/services.sh [--quick] [--build-dir DIR] [--dir STATE] [--reuse]
#                           [--nodes N] [--replicas R]
#
# Default 100 nodes and 1,000 replicas; --quick 10 nodes and 100 replicas.
# A service has at most one replica per node (ReplicaExclusion, a hard
# constraint of the placement library), so the R replicas are
# ceil(R / N) services of one stack, each of N replicas (the last of the rest).
# --reuse: the deployment in STATE is up already (tests/bench/run.sh) and is
# left running; otherwise one is started (2 engines, 1 observer) and stopped.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=build STATE=.local-bench NODES=100 REPLICAS=1000 REUSE=0
while [ $# -gt 0 ]; do
    case $1 in
    --quick) NODES=10 REPLICAS=100 ;;
    --build-dir) BUILD=$2; shift ;;
    --dir) STATE=$2; shift ;;
    --nodes) NODES=$2; shift ;;
    --replicas) REPLICAS=$2; shift ;;
    --reuse) REUSE=1 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[[ $NODES =~ ^[0-9]+$ && $REPLICAS =~ ^[0-9]+$ ]] || { echo "--nodes and --replicas take counts" >&2; exit 2; }
AGENT=$ROOT/$BUILD/converge-agent
[ -x "$AGENT" ] || { echo "$AGENT is not built" >&2; exit 2; }
# shellcheck source=deploy/lib/common.sh
CV_TAG=bench . deploy/lib/common.sh

if [ "$REUSE" = 0 ]; then
    deploy/local/up.sh --build-dir "$BUILD" --dir "$STATE" --engines 2 --observers 1 >/dev/null
fi
STATE=$(cv_abspath "$STATE")
# shellcheck disable=SC1091
source "$STATE/env"
CTL="$ROOT/$BUILD/convergectl"
PREFIX=${CONVERGE_PREFIX:-cv:}
hostport=${CONVERGE_REDIS#redis://}; hostport=${hostport#*@}; hostport=${hostport%%/*}
# On a secured deployment (up.sh's default) redis-cli is the operator, by REDISCLI_AUTH.
if [[ -z ${REDISCLI_AUTH:-} && -f $STATE/redis.acl ]]; then
    REDISCLI_AUTH=$(head -n1 "$STATE/redis-admin.pass")
    export REDISCLI_AUTH
fi
rcli() { redis-cli -h "${hostport%%:*}" -p "${hostport##*:}" "$@"; }
ck() { echo "$PREFIX{cluster}:$1"; }

WORK=$(mktemp -d)
SIM_DIR=$STATE/agents/bench-sim
SIM_PID=""
NAME=bench-services-$(date +%s%N)
cleanup() {
    "$CTL" delete "$NAME" --wait --timeout 300 >/dev/null 2>&1 || true
    if [ -n "$SIM_PID" ]; then
        kill -TERM "$SIM_PID" 2>/dev/null || true
        cv_wait_until 20 "the simulating agent to stop" cv_pid_gone "$SIM_PID" 2>/dev/null ||
            kill -KILL "$SIM_PID" 2>/dev/null || true
    fi
    for n in $(jq -r '.nodes[].name' "$WORK/cluster.json" 2>/dev/null); do
        rcli hdel "$(ck nodes)" "$n" >/dev/null
        rcli del "$(ck "node:$n")" "$(ck "alive:$n")" "$(ck "down:$n")" "$(ck "report:$n")" "$(ck "assign:$n")" >/dev/null
    done
    rm -rf "$WORK"
    [ "$REUSE" = 1 ] || deploy/local/down.sh --dir "$STATE" >/dev/null
}
trap cleanup EXIT

# N nodes over 10 fault domains x 10 upgrade domains (fewer for small N),
# each with room for 4 times its share of the replicas.
slots=$(((REPLICAS * 4 + NODES - 1) / NODES))
jq -n --argjson n "$NODES" --argjson slots "$slots" '
    ([$n, 10] | min) as $d |
    {nodeTypes: {Sim: {capacities: {Slots: $slots, MemoryMB: 65536}}},
     nodes: [range($n) | {name: "sim\(.)", type: "Sim", faultDomain: "fd:/FD\(. % $d)",
                          upgradeDomain: "UD\((. / $d | floor) % $d)",
                          capacities: {Slots: $slots, MemoryMB: 65536}}]}' >"$WORK/cluster.json"
{
    echo "heat_template_version: 2018-08-31"
    echo "resources:"
    left=$REPLICAS k=0
    while [ "$left" -gt 0 ]; do
        per=$((left < NODES ? left : NODES))
        echo "  bench$k:"
        echo "    type: Converge::Service"
        echo "    properties:"
        echo "      replicas: $per"
        echo "      command: [sleep, \"86400\"]"
        echo "      metrics: [{name: Slots, primary_load: 1, secondary_load: 1, weight: medium}]"
        left=$((left - per)) k=$((k + 1))
    done
} >"$WORK/svc.yaml"
SERVICES=$k

mkdir -p "$SIM_DIR"
(
    # The agent as the workers' user (STATE/worker.env), as up.sh starts agents.
    # shellcheck disable=SC1091
    [[ ! -f $STATE/worker.env ]] || . "$STATE/worker.env"
    cv_spawn "$SIM_DIR/agent.pid" "$SIM_DIR/agent.log" \
        env CONVERGE_REDIS="$CONVERGE_REDIS" CONVERGE_PREFIX="$PREFIX" \
        "$AGENT" --simulate "$NODES" --cluster "$WORK/cluster.json" --dir "$SIM_DIR"
)
SIM_PID=$(cat "$SIM_DIR/agent.pid")
nodes_up() { [ "$(rcli --scan --pattern "$(ck 'alive:sim*')" | wc -l)" -ge "$NODES" ]; }
cv_wait_until 60 "$NODES simulated nodes to register" nodes_up ||
    { cv_tail_log "$SIM_DIR/agent.log"; exit 1; }

# The stack's service ids, once all of them exist.
svcs_of() {
    local s out=()
    for s in $(rcli smembers "$(ck services)"); do
        [ "$(rcli hget "$(ck "svc:$s")" stack_name)" = "$NAME" ] && out+=("$s")
    done
    [ "${#out[@]}" = "$SERVICES" ] && echo "${out[*]}"
}
placed() {
    local s n=0
    for s in $SVCS; do n=$((n + $(rcli hget "$(ck "svc:$s")" placement | jq length 2>/dev/null || echo 0))); done
    [ "$n" = "$REPLICAS" ]
}
# Healthy reports of the service's replicas over every node, one Lua call.
HEALTHY_LUA='local n = 0
for _, k in ipairs(redis.call("KEYS", ARGV[1])) do
  for _, v in ipairs(redis.call("HVALS", k)) do
    if string.find(v, ARGV[2], 1, true) and string.find(v, [["state"%s*:%s*"healthy"]]) then n = n + 1 end
  end
end
return n'
healthy() { [ "$(rcli eval "$HEALTHY_LUA" 0 "$(ck 'report:sim*')" "\"$ID." 2>/dev/null)" -ge "$REPLICAS" ]; }
complete() { [ "$("$CTL" status "$NAME" -o json | jq -r .status)" = CREATE_COMPLETE ]; }

t0=$(cv_now_ms)
ID=$("$CTL" submit "$NAME" "$WORK/svc.yaml" | sed -n 's/^stack [^ ]* (\([0-9a-f]*\)).*/\1/p')
cv_wait_until 60 "the service records" svcs_of >/dev/null
SVCS=$(svcs_of)
cv_wait_until 600 "$REPLICAS replicas placed" placed
t_placed=$(cv_now_ms)
cv_wait_until 600 "$REPLICAS replicas healthy" healthy || true
t_healthy=$(cv_now_ms)
cv_wait_until 600 "the stack to complete" complete
t_done=$(cv_now_ms)
starts=$(rcli hgetall "$(ck ledger)" | paste - - | awk -v s="start:$ID." 'index($1, s) == 1 { n++; if ($2 > 1) d++ }
    END { printf "%d replica ids started, %d more than once", n, d }')
t1=$(cv_now_ms)
"$CTL" delete "$NAME" --wait --timeout 600 >/dev/null
t_del=$(($(cv_now_ms) - t1))
awk -v n="$NODES" -v r="$REPLICAS" -v k="$SERVICES" -v p=$((t_placed - t0)) -v h=$((t_healthy - t0)) -v c=$((t_done - t0)) \
    -v d="$t_del" -v starts="$starts" 'BEGIN {
    printf "services: %d replicas (%d services) on %d simulated nodes: placed %.2f s, healthy %.2f s, CREATE_COMPLETE %.2f s (%.0f replicas/s); delete %.2f s; %s\n",
        r, k, n, p / 1000, h / 1000, c / 1000, r / (c / 1000), d / 1000, starts }'
