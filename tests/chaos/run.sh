#!/usr/bin/env bash
# The chaos suite: real faults against a real deployment (Redis + three Kafka
# brokers + 2 engines + 2 observers on loopback, deploy/local/up.sh), each
# scenario ending in the invariants of tests/chaos/check.sh.
#
#   tests/chaos/run.sh [--long DURATION_SECS] [--scenario NAME]... [--build-dir DIR]
#                      [--size N] [--dir STATE] [--keep]
#
# Scenarios (all by default; --scenario repeatable or comma-separated):
#   kill       kill -9 a random engine or observer every 0.5-2 s, restarted at
#              once, during a create, an update changing 10% and a delete
#   pause      SIGSTOP an engine holding leases for longer than the lease, then
#              SIGCONT: its stale writes must be refused, never applied
#   redis      restart Redis (AOF) at 20% of a create
#   kafka      restart every Kafka broker at once (SIGKILL; --long alternates SIGTERM)
#   broker-failover  SIGKILL the broker leading the most job partitions at 20%
#              of a create; no job lost, new leaders and progress timed
#   redis-failover  on a Redis Cluster deployment of its own (3 masters +
#              3 replicas, 1 broker, in STATE-redis-cluster): three stacks of
#              SIZE each through create, update and delete; in each the master
#              holding the most of them SIGKILL at 20%, its replica takes
#              over; small stacks submitted across the create's failover:
#              every acknowledged one exists and completes; times to the
#              promotion and to the stacks' next progress
#   partition-redis, partition-kafka  an extra engine in a network namespace
#              cut off from Redis only / Kafka only at 20% of a create: it
#              steps aside, the stack completes on the others, no lease of its
#              after its old ones ran out; healed, it rejoins (needs root, nft)
#   poison     1,000 malformed and hostile messages into converge.check and
#              converge.observe during a create: all end in converge.dead
#   duplicate  every message on both topics published twice, for a create,
#              update and delete
#   cluster    node agents and replica processes killed at random under a
#              stack of 200 stateless replicas and a 5-replica stateful
#              service on 20 agents (needs converge-agent), for a create, a
#              scale-down update and a delete
# CI form (default): each scenario once at --size (default 2200 resources,
# mixed chains and fans; 5000 with --size 5000); exits 1 on any violation.
# --long SECS: repeats the scenarios until SECS have passed, then prints a
# summary table (runs, faults, median/max time to complete, violations).
# Each scenario prints one line: name, result, time to complete, faults
# injected and, for faults with a recovery, the median/max time from a fault
# to the next progress of the stack.
# --build-dir: binaries (default build/); --dir: state directory (default
# .local-chaos), stopped at the end unless --keep.
# env: CHAOS_WORKER_ARGS (extra worker arguments, e.g. "--lease-ms 5000"),
#      CHAOS_FAULT_WINDOW (s of kills per phase at most, default 15),
#      CHAOS_SETTLE (s without progress, on top of lease + session, after which
#                    a stack counts as stuck; default 20),
#      CHAOS_OUTAGE_S (s Redis / Kafka stay down, default 3),
#      CHAOS_BROKERS (Kafka brokers, 1 or 3, default 3; broker-failover needs 3),
#      CHAOS_POISON_COUNT (default 1000),
#      CHAOS_CLUSTER_REPLICAS (stateless replicas of the cluster scenario, default 200)
set -uo pipefail
# shellcheck disable=SC2034,SC2317,SC2001,SC2004 # variables and functions shared across the sourced files
CHAOS_HERE=$(cd "$(dirname "$0")" && pwd)
CHAOS_ROOT=$(cd "$CHAOS_HERE/../.." && pwd)
cd "$CHAOS_ROOT" || exit 2

LONG=0 SIZE=2200 KEEP=0
CHAOS_BUILD=$CHAOS_ROOT/build
CHAOS_STATE=$CHAOS_ROOT/.local-chaos
ONLY=()
usage() { sed -n '2,53p' "$0" | sed 's/^# \{0,1\}//'; }
while (($#)); do
    case $1 in
    --long) LONG=${2:?}; shift ;;
    --scenario) IFS=, read -r -a more <<<"${2:?}"; ONLY+=("${more[@]}"); shift ;;
    --build-dir) CHAOS_BUILD=$(realpath -m "${2:?}"); shift ;;
    --size) SIZE=${2:?}; shift ;;
    --dir) CHAOS_STATE=$(realpath -m "${2:?}"); shift ;;
    --keep) KEEP=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "unknown argument: $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
[[ $LONG =~ ^[0-9]+$ && $SIZE =~ ^[0-9]+$ ]] || { echo "--long and --size take numbers" >&2; exit 2; }
((SIZE >= 110)) || { echo "--size: at least 110" >&2; exit 2; }

# shellcheck source=lib.sh
. "$CHAOS_HERE/lib.sh"
# shellcheck source=scenarios.sh
. "$CHAOS_HERE/scenarios.sh"

if ((${#ONLY[@]} == 0)); then
    ONLY=("${SCENARIOS[@]}")
else
    for s in "${ONLY[@]}"; do
        [[ " ${SCENARIOS[*]} " == *" $s "* ]] || { echo "unknown scenario: $s (${SCENARIOS[*]})" >&2; exit 2; }
    done
fi
for f in converge-engine converge-observer convergectl; do
    [[ -x $CHAOS_BUILD/$f ]] || { echo "$CHAOS_BUILD/$f is missing: build first" >&2; exit 2; }
done
for tool in kcat jq perl redis-cli redis-server; do
    command -v "$tool" >/dev/null || { echo "$tool is needed" >&2; exit 2; }
done

# shellcheck disable=SC2034 # read by scenarios.sh
FAULT_WINDOW=${CHAOS_FAULT_WINDOW:-15}
# shellcheck disable=SC2034
SETTLE=${CHAOS_SETTLE:-20}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/chaos.XXXXXX")
LEDGER=$(chaos_ledger_mode "$CHAOS_BUILD")

# One run per state directory: a second one would kill and restart the
# first one's workers and services. The claim is a PID file outside the
# directory (up.sh wants the directory to itself).
CLAIM=${TMPDIR:-/tmp}/converge-chaos-$(printf '%s' "$CHAOS_STATE" | md5sum | cut -c1-12).pid
if [[ -f $CLAIM ]] && other=$(<"$CLAIM") && [[ $other =~ ^[0-9]+$ ]] && kill -0 "$other" 2>/dev/null &&
    tr '\0' ' ' <"/proc/$other/cmdline" 2>/dev/null | grep -q 'chaos/run.sh'; then
    echo "another chaos run (pid $other) is using $CHAOS_STATE; pass --dir to use another state directory" >&2
    rm -rf "$WORK"
    exit 2
fi
echo $$ >"$CLAIM"

# The partition scenarios' engine-cut: part_stop (scenarios.sh) signals the
# subshell it was started from, not the engine, which ran on after the suite
# in its namespace (without a network by then). Stopped here by its PID,
# found by its command line and this deployment's Redis in its environment.
stop_engine_cut() {
    local pid port
    port=$(sed -n 's/^REDIS_PORT=//p' "$CHAOS_STATE/ports" 2>/dev/null)
    [[ -n $port ]] || return 0
    for pid in $(pgrep -f -- "--id $PART_WORKER "); do
        tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -q "^CONVERGE_REDIS=.*@127\.0\.0\.1:$port/" &&
            kill -TERM "$pid" 2>/dev/null
    done
    return 0
}

cleanup() {
    ((${#DUP_PIDS[@]} == 0)) || dup_stop
    stop_engine_cut
    # The cluster scenario's agents and replica processes, if it was cut short.
    [[ -z ${CLUSTER_FILE:-} ]] || cluster_stop
    # The redis-failover scenario's deployment, if it was cut short.
    [[ -z ${RF_STATE:-} ]] || rf_down >/dev/null 2>&1
    local name pid
    # Never leave a worker stopped (SIGSTOP) behind.
    for name in $(chaos_workers); do
        pid=$(cv_alive "$name") && kill -CONT "$pid" 2>/dev/null
    done
    if ((KEEP == 0)); then
        chaos_down
    fi
    rm -rf "$WORK"
    [[ $(cat "$CLAIM" 2>/dev/null) != "$$" ]] || rm -f "$CLAIM"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

chaos_say "chaos suite: scenarios ${ONLY[*]}; size $SIZE; build $CHAOS_BUILD; lease $(chaos_lease_ms) ms; ledger $LEDGER"
if ! chaos_up; then
    echo "chaos: could not start the deployment" >&2
    exit 1
fi
declare -A FIRST_MARK=()
for name in $(chaos_workers); do FIRST_MARK[$name]=$(stat -c %s "$STATE/log/$name.log" 2>/dev/null || echo 0); done

declare -A RUNS=() FAULTS=() VIOLS=() TIMES=() RECOV=()
TOTAL_VIOLATIONS=0
T_START=$(cv_now_ms)

run_one() { # scenario run
    local s=$1 run=$2 result recovery line
    chaos_reset_scenario
    SCEN_MS=0 SCEN_DETAIL="" PHASE_TRAV=""
    chaos_say "--- $s (run $run)"
    "scenario_$s" "$run"
    result=PASS
    ((${#CHAOS_VIOLATIONS[@]} == 0)) || result=FAIL
    recovery=""
    ((${#CHAOS_RECOVERY[@]} == 0)) || recovery=", recovery $(chaos_median_max "${CHAOS_RECOVERY[@]}") (median/max, ${#CHAOS_RECOVERY[@]} faults)"
    line=$(printf 'chaos: %-9s %s  time %s  faults %d%s  violations %d  [%s]' "$s" "$result" \
        "$(chaos_secs "$SCEN_MS")" "$CHAOS_FAULTS" "$recovery" "${#CHAOS_VIOLATIONS[@]}" "$SCEN_DETAIL")
    echo "$line"
    LINES+=("$line")
    RUNS[$s]=$((${RUNS[$s]:-0} + 1))
    FAULTS[$s]=$((${FAULTS[$s]:-0} + CHAOS_FAULTS))
    VIOLS[$s]=$((${VIOLS[$s]:-0} + ${#CHAOS_VIOLATIONS[@]}))
    TIMES[$s]="${TIMES[$s]:-} $SCEN_MS"
    RECOV[$s]="${RECOV[$s]:-} ${CHAOS_RECOVERY[*]}"
    TOTAL_VIOLATIONS=$((TOTAL_VIOLATIONS + ${#CHAOS_VIOLATIONS[@]}))
}

LINES=()
run=1
while :; do
    for s in "${ONLY[@]}"; do
        run_one "$s" "$run"
        ((LONG > 0 && $(cv_now_ms) - T_START >= LONG * 1000)) && break 2
    done
    ((LONG > 0)) || break
    run=$((run + 1))
done

# Stopping the workers (SIGTERM) must be clean too: exit 0, no leak report.
if ((KEEP == 0)); then
    chaos_down
    CHAOS_LOG_MARK=()
    for name in $(chaos_workers); do CHAOS_LOG_MARK[$name]=${FIRST_MARK[$name]:-0}; done
    CHAOS_VIOLATIONS=()
    chaos_scan_logs >/dev/null
    for v in "${CHAOS_VIOLATIONS[@]}"; do echo "chaos: after shutdown: VIOLATION: $v"; done
    TOTAL_VIOLATIONS=$((TOTAL_VIOLATIONS + ${#CHAOS_VIOLATIONS[@]}))
fi

echo
if ((LONG > 0)); then
    printf '%-10s %5s %8s %18s %22s %11s\n' scenario runs faults "time median/max" "recovery median/max" violations
    for s in "${ONLY[@]}"; do
        [[ -n ${RUNS[$s]:-} ]] || continue
        # shellcheck disable=SC2086
        printf '%-10s %5d %8d %18s %22s %11d\n' "$s" "${RUNS[$s]}" "${FAULTS[$s]}" \
            "$(chaos_median_max ${TIMES[$s]} | sed 's/ ms//' | awk -F/ '{ printf "%.1f/%.1f s", $1 / 1000, $2 / 1000 }')" \
            "$(chaos_median_max ${RECOV[$s]})" "${VIOLS[$s]}"
    done
    echo
fi
printf '%s\n' "${LINES[@]}"
echo "chaos: $TOTAL_VIOLATIONS violations in $(chaos_secs $(($(cv_now_ms) - T_START)))"
((TOTAL_VIOLATIONS == 0))
