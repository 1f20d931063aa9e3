# shellcheck shell=bash
# shellcheck disable=SC2034,SC2317,SC2001,SC2004 # variables and functions shared across the sourced files
#
# lib.sh — the chaos suite's harness (sourced by tests/chaos/run.sh): a
# deployment of Redis + Kafka + N engines + M observers made by
# deploy/local/up.sh, faults (kill -9 and restart a worker, SIGSTOP/SIGCONT,
# restart Redis, restart the Kafka broker, raw messages into the topics),
# stacks, and bounded waits for conditions. One process of the deployment is
# restarted by deploy/local/service.sh, which keeps everything else running.
#
# Settings (set before sourcing, or left to their defaults):
#   CHAOS_BUILD     build directory with converge-engine, -observer, convergectl
#   CHAOS_STATE     state directory of the deployment (default .local-chaos)
#   CHAOS_ENGINES, CHAOS_OBSERVERS   workers (default 2 and 2)
#   CHAOS_WORKER_ARGS  extra worker arguments (e.g. "--lease-ms 5000")

CHAOS_HERE=${CHAOS_HERE:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
CHAOS_ROOT=${CHAOS_ROOT:-$(cd "$CHAOS_HERE/../.." && pwd)}
# shellcheck disable=SC2034 # read by common.sh
CV_TAG=chaos
# shellcheck source=../../deploy/lib/common.sh
. "$CHAOS_ROOT/deploy/lib/common.sh"
# shellcheck source=../../deploy/lib/state.sh
. "$CHAOS_ROOT/deploy/lib/state.sh"
# shellcheck source=check.sh
. "$CHAOS_HERE/check.sh"

CHAOS_BUILD=${CHAOS_BUILD:-$CHAOS_ROOT/build}
CHAOS_STATE=${CHAOS_STATE:-$CHAOS_ROOT/.local-chaos}
CHAOS_ENGINES=${CHAOS_ENGINES:-2}
CHAOS_OBSERVERS=${CHAOS_OBSERVERS:-2}
CHAOS_WORKER_ARGS=${CHAOS_WORKER_ARGS:-}
CHAOS_BROKERS=${CHAOS_BROKERS:-3} # Kafka brokers (up.sh --brokers): 3, replicated
# The checker judges every event of a traversal (check.jq: dependency order),
# more than a stack keeps by default (--max-events-per-stack, 1000): the
# workers and convergectl started here keep them all.
export CONVERGE_MAX_EVENTS_PER_STACK=${CONVERGE_MAX_EVENTS_PER_STACK:-0}
CTL=$CHAOS_BUILD/convergectl
SERVICE=$CHAOS_ROOT/deploy/local/service.sh
PREFIX=${CONVERGE_PREFIX:-cv:}

# Per scenario: findings, faults, and the PIDs the harness killed on purpose.
CHAOS_VIOLATIONS=()
CHAOS_NOTES=()
CHAOS_FAULTS=0
CHAOS_RECOVERY=() # ms, one per kill that the stack recovered from
declare -A CHAOS_LOG_MARK=()

chaos_say() { cv_log "$@"; }
chaos_violation() {
    CHAOS_VIOLATIONS+=("$*")
    printf '[chaos %s]   VIOLATION: %s\n' "$(cv_elapsed)" "$*"
}
chaos_note() {
    CHAOS_NOTES+=("$*")
    printf '[chaos %s]   note: %s\n' "$(cv_elapsed)" "$*"
}

chaos_reset_scenario() {
    CHAOS_VIOLATIONS=()
    CHAOS_NOTES=()
    CHAOS_FAULTS=0
    CHAOS_RECOVERY=()
    chaos_mark_logs
}

# ---------------------------------------------------------------------------
# The deployment.
# ---------------------------------------------------------------------------

chaos_workers() {
    local k
    for ((k = 1; k <= CHAOS_ENGINES; k++)); do echo "engine-$k"; done
    for ((k = 1; k <= CHAOS_OBSERVERS; k++)); do echo "observer-$k"; done
}

# Loads STATE, the ports and the client environment of the deployment (a
# Redis Cluster's ports too, and none left of a deployment loaded before).
chaos_load_env() {
    STATE=$(cv_abspath "$CHAOS_STATE")
    # shellcheck disable=SC2034 # set by cv_state_load_ports, read by state.sh
    REDIS_PORT="" KAFKA_PORT="" KAFKA_BROKERS=""
    unset REDIS_CLUSTER_NODES "${!REDIS_CLUSTER_PORT_@}" "${!KAFKA_PORT_@}" "${!KAFKA_CTRL_PORT_@}"
    cv_state_load_ports
    mapfile -t CHAOS_REDIS_PORTS < <(chaos_redis_ports "$STATE")
    # shellcheck disable=SC1091
    . "$STATE/env"
    export CONVERGE_REDIS CONVERGE_KAFKA CONVERGE_KAFKA_OPTS
    # A secured deployment (up.sh's default): redis-cli as the operator
    # (REDISCLI_AUTH, check.sh), kcat with the admin's settings file.
    CHAOS_REDIS_AUTH=$(chaos_redis_auth "$STATE")
    KCAT_OPTS=()
    [[ ! -f $STATE/kafka-sasl/admin.conf ]] || KCAT_OPTS=(-F "$STATE/kafka-sasl/admin.conf")
}

# chaos_as_worker CMD...: CMD with the workers' Redis and Kafka users
# (STATE/worker.env), as service.sh starts workers; for the engines and
# agents a scenario starts itself.
chaos_as_worker() {
    (
        # shellcheck disable=SC1091
        [[ ! -f $STATE/worker.env ]] || . "$STATE/worker.env"
        exec "$@"
    )
}

# redis-cli on the deployment's Redis; on a Redis Cluster through a node that
# answers, following redirections (check.sh, chaos_redis_on).
CHAOS_REDIS_PORTS=()
rcli() { chaos_redis_on "${CHAOS_REDIS_PORTS[@]}" -- "$@"; }

# chaos_service ACTION NAME [--no-wait]: deploy/local/service.sh on our deployment.
chaos_service() {
    local action=$1 name=$2 wait=${3:-}
    local args=(--dir "$CHAOS_STATE" --build-dir "$CHAOS_BUILD")
    [[ -n $wait ]] && args+=("$wait")
    local worker_args=()
    [[ -n $CHAOS_WORKER_ARGS ]] && read -r -a worker_args <<<"$CHAOS_WORKER_ARGS"
    if ((${#worker_args[@]} > 0)); then
        CV_TAG=service "$SERVICE" "${args[@]}" "$action" "$name" -- "${worker_args[@]}"
    else
        CV_TAG=service "$SERVICE" "${args[@]}" "$action" "$name"
    fi
}

chaos_workers_ready() {
    local name state
    for name in $(chaos_workers); do
        cv_alive "$name" >/dev/null || return 1
        state=$(rcli hget "${PREFIX}worker:$name" state 2>/dev/null)
        [[ $state == ready ]] || return 1
    done
}

# Says, for each worker not ready, whether it runs, what it last wrote to its
# liveness record and the end of its log: why the deployment did not come up.
chaos_workers_not_ready() {
    local name state
    for name in $(chaos_workers); do
        state=$(rcli hget "${PREFIX}worker:$name" state 2>/dev/null)
        [[ $state == ready ]] && continue
        if cv_alive "$name" >/dev/null; then
            echo "$name: running, state '${state:-none}'; the end of its log:" >&2
        else
            echo "$name: not running, state '${state:-none}'; the end of its log:" >&2
        fi
        tail -n 20 "$CHAOS_STATE/log/$name.log" 2>/dev/null | sed 's/^/    /' >&2
    done
}

# Starts Redis and Kafka (up.sh, no workers, and CHAOS_UP_ARGS), then the workers.
# Without a key file (--no-seal): the checker reads records' properties
# straight from Redis.
CHAOS_UP_ARGS=()
chaos_up() {
    "$CHAOS_ROOT/deploy/local/up.sh" --dir "$CHAOS_STATE" --build-dir "$CHAOS_BUILD" --no-build \
        --engines 0 --observers 0 --brokers "$CHAOS_BROKERS" --no-seal "${CHAOS_UP_ARGS[@]}" >"$CHAOS_ROOT/.chaos-up.log" 2>&1 || {
        cat "$CHAOS_ROOT/.chaos-up.log" >&2
        return 1
    }
    rm -f "$CHAOS_ROOT/.chaos-up.log"
    chaos_load_env
    local name
    for name in $(chaos_workers); do
        chaos_service start "$name" --no-wait >/dev/null || return 1
    done
    # Joining the consumer group takes one rebalance per worker; on a busy
    # machine (the test command runs other suites beside this one) that is
    # well over the usual few seconds.
    cv_wait_until 180 "the workers to be ready" chaos_workers_ready || {
        chaos_workers_not_ready
        return 1
    }
    chaos_say "deployment up in $CHAOS_STATE: $(chaos_workers | xargs)"
}

chaos_down() {
    "$CHAOS_ROOT/deploy/local/down.sh" --dir "$CHAOS_STATE" >/dev/null 2>&1
}

# The lease time the workers use: --lease-ms of CHAOS_WORKER_ARGS, else the
# default that converge-engine --help states.
chaos_lease_ms() {
    local ms
    ms=$(sed -n 's/.*--lease-ms[ =]\([0-9]*\).*/\1/p' <<<"$CHAOS_WORKER_ARGS")
    [[ -n $ms ]] || ms=$("$CHAOS_BUILD/converge-engine" --help 2>&1 |
        sed -n 's/.*--lease-ms.*default \([0-9]*\).*/\1/p' | head -1)
    echo "${ms:-30000}"
}

# ---------------------------------------------------------------------------
# Workers: kill, restart, pause; and the watch for crashes.
# ---------------------------------------------------------------------------

# Byte offsets of the worker logs at the start of a scenario: only what is
# written after them is searched for crash reports.
chaos_mark_logs() {
    local name f
    CHAOS_LOG_MARK=()
    for name in $(chaos_workers); do
        f=$STATE/log/$name.log
        CHAOS_LOG_MARK[$name]=$(stat -c %s "$f" 2>/dev/null || echo 0)
    done
}

CHAOS_CRASH_RE='AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer|runtime error:|Assertion .* failed|Segmentation fault|stack smashing|double free|free\(\): invalid|terminate called|Aborted|core dumped'

# Crash reports written to the worker logs since chaos_mark_logs.
chaos_scan_logs() {
    local name f hits
    for name in $(chaos_workers); do
        f=$STATE/log/$name.log
        [[ -f $f ]] || continue
        hits=$(tail -c +"$((${CHAOS_LOG_MARK[$name]:-0} + 1))" "$f" | grep -aE "$CHAOS_CRASH_RE" | head -3)
        [[ -z $hits ]] || chaos_violation "$name log has a crash report: $(tr '\n' ' ' <<<"$hits")"
    done
}

# The reaper's re-queues since chaos_mark_logs: work that was lost (or held
# by a dead worker) and found again only because the stack stalled.
chaos_reaper_notes() {
    local name f lines
    for name in $(chaos_workers); do
        f=$STATE/log/$name.log
        [[ -f $f ]] || continue
        lines=$(tail -c +"$((${CHAOS_LOG_MARK[$name]:-0} + 1))" "$f" | grep -a "reaper: stack" | cut -c1-260)
        while IFS= read -r l; do
            [[ -n $l ]] && chaos_note "$l"
        done <<<"$lines"
    done
}

# Every worker is alive; one that died without the harness killing it is a
# crash: reported (with its last log lines) and restarted so the run goes on.
chaos_watch_workers() {
    local name
    for name in $(chaos_workers); do
        cv_alive "$name" >/dev/null && continue
        chaos_violation "$name died without being killed by the harness; last log lines: $(tail -n 3 "$STATE/log/$name.log" | tr '\n' '|')"
        chaos_service start "$name" --no-wait >/dev/null 2>&1 || true
    done
}

# chaos_kill_restart NAME: SIGKILL, then started again at once (not waited for).
chaos_kill_restart() {
    local name=$1 pid
    if pid=$(cv_alive "$name"); then
        kill -KILL "$pid" 2>/dev/null
        cv_wait_until 10 "$name to die" cv_pid_gone "$pid" >/dev/null || true
        rm -f "$STATE/pids/$name.pid"
    fi
    chaos_service start "$name" --no-wait >/dev/null 2>&1 ||
        chaos_violation "$name could not be restarted after kill -9"
}

chaos_random_worker() {
    local names
    mapfile -t names < <(chaos_workers)
    echo "${names[RANDOM % ${#names[@]}]}"
}

# ---------------------------------------------------------------------------
# Redis and Kafka outages.
# ---------------------------------------------------------------------------

# chaos_hold SECONDS: lets an outage last SECONDS while checking every 100 ms
# that the workers live through it (they must keep running without Redis or Kafka).
chaos_hold() {
    local until=$(($(cv_now_ms) + $1 * 1000))
    while (($(cv_now_ms) < until)); do
        chaos_watch_workers
        sleep 0.1
    done
}

# chaos_restart_redis OUTAGE_SECS: SIGTERM (Redis writes its AOF), down for
# OUTAGE_SECS, started again on the same port and data.
chaos_restart_redis() {
    chaos_service stop redis >/dev/null || { chaos_violation "Redis would not stop"; return 1; }
    chaos_hold "$1"
    chaos_service start redis >/dev/null || { chaos_violation "Redis would not start again"; return 1; }
}

# chaos_restart_kafka KILL|TERM OUTAGE_SECS: every broker down at once, then
# started again on its data (nothing acknowledged is lost).
chaos_restart_kafka() {
    local how=$1 name
    for name in $(cv_kafka_names); do
        if [[ $how == KILL ]]; then
            chaos_service kill "$name" >/dev/null || { chaos_violation "$name would not die"; return 1; }
        else
            chaos_service stop "$name" >/dev/null || { chaos_violation "$name would not stop"; return 1; }
        fi
    done
    chaos_hold "$2"
    for name in $(cv_kafka_names); do
        chaos_service start "$name" --no-wait >/dev/null ||
            { chaos_violation "$name would not start again"; return 1; }
    done
    cv_wait_until 60 "Kafka to list every broker" cv_kafka_brokers_listed ||
        chaos_violation "Kafka is not back after its restart"
}

# The broker that leads the most partitions of the Converge job topics
# (both lanes).
chaos_busiest_broker() {
    cv_kafka_metadata | jq -r '[.topics[] | select(.topic | test("^converge[.](check|observe)"))
        | .partitions[].leader] | group_by(.) | max_by(length) | "\(.[0]) \(length)"'
}

# True once every partition of the job topics has a leader other than broker $1.
chaos_led_without() {
    cv_kafka_metadata | jq -e --argjson gone "$1" '[.topics[] | select(.topic | startswith("converge."))
        | .partitions[]] | length > 0 and all(.leader >= 0 and .leader != $gone)' >/dev/null 2>&1
}

# ---------------------------------------------------------------------------
# Messages.
# ---------------------------------------------------------------------------

KCAT_OPTS=() # chaos_load_env sets them

# chaos_produce_files TOPIC FILE...: one message per file, its exact bytes, no key.
chaos_produce_files() {
    local topic=$1
    shift
    timeout 120 kcat -P -q -b "$CONVERGE_KAFKA" "${KCAT_OPTS[@]}" -t "$topic" "$@"
}

# The dead letters as JSON (convergectl dead -o json).
chaos_dead_json() { timeout 60 "$CTL" dead -o json --limit 1000000 2>/dev/null || timeout 60 "$CTL" dead -o json; }

# ---------------------------------------------------------------------------
# Stacks.
# ---------------------------------------------------------------------------

stack_get() { rcli hget "${PREFIX}{$1}:stack" "$2" 2>/dev/null; }

# chaos_submit NAME TEMPLATE: prints the new stack's id.
chaos_submit() {
    local out
    out=$(timeout 60 "$CTL" submit "$1" "$2" 2>&1) || {
        echo "submit failed: $out" >&2
        return 1
    }
    sed -n 's/^stack [^ ]* (\([0-9a-f]*\)).*/\1/p' <<<"$out" | head -1
}

stack_settled() {
    local s
    s=$(stack_get "$1" status)
    [[ -n $s && $s != *_IN_PROGRESS ]]
}

# Where a stuck stack waits: for the report of a stack that did not settle.
chaos_explain_stuck() {
    local id=$1 name trav
    trav=$(stack_get "$id" traversal)
    echo "    stack: $(rcli hmget "${PREFIX}{$id}:stack" status traversal "done" total expanded | xargs)"
    echo "    counts: $(rcli hgetall "${PREFIX}{$id}:counts" | paste -sd' ')"
    echo "    leases: $(leases_of "$id" | grep -c .) held"
    # The stack's key named, so that on a Redis Cluster it runs on its master.
    rcli --eval "$CHAOS_HERE/stuck.lua" "${PREFIX}{$id}:stack" , "$PREFIX" "$id" "$trav" 2>/dev/null | head -8 | sed 's/^/    /'
    for name in $(chaos_workers); do
        echo "    $name: state/jobs/actions/inflight $(rcli hmget "${PREFIX}worker:$name" state jobs actions inflight | xargs)"
    done
}

# ---------------------------------------------------------------------------
# The fault loop: a phase runs while FAULT is injected every so often; the
# stack's done counter is polled to measure recovery after each fault.
# ---------------------------------------------------------------------------

# chaos_run_phase ID FAULT_WINDOW_S IDLE_S FAULT_FN MIN_MS MAX_MS
# Calls FAULT_FN (which injects one fault) first 100-500 ms after the phase
# started, then every MIN_MS..MAX_MS ms, while the stack is in progress and
# for at most FAULT_WINDOW_S; then waits for the stack to settle, giving up
# when its done counter has not moved for IDLE_S since the last fault (or the
# last progress, whichever is later): a stack stuck with nobody working on it.
# Recovery of a fault: from it to the next increase of the done counter.
# Sets PHASE_MS (phase start to settled) and returns 1 if it did not settle.
chaos_run_phase() {
    local id=$1 window=$2 idle=$3 fault=$4 min=$5 max=$6
    local t0 now next_fault fault_until ndone last_done=-1 status last_move
    local pending_t=() pending_d=() i f
    t0=${PHASE_T0:-$(cv_now_ms)} # when the phase's command was issued, if known
    PHASE_T0=""
    last_move=$(cv_now_ms)
    next_fault=$((last_move + 100 + RANDOM % 401))
    fault_until=$((last_move + window * 1000))
    # shellcheck disable=SC2034 # read by the scenarios
    PHASE_MS=0
    while :; do
        now=$(cv_now_ms)
        mapfile -t f < <(rcli hmget "${PREFIX}{$id}:stack" status "done" 2>/dev/null)
        status=${f[0]:-} ndone=${f[1]:-}
        [[ $ndone =~ ^[0-9]+$ ]] || ndone=$last_done
        ((ndone != last_done)) && last_move=$now
        if ((${#pending_t[@]} > 0 && ndone > pending_d[0])); then
            for i in "${!pending_t[@]}"; do
                if ((ndone > pending_d[i])); then
                    CHAOS_RECOVERY+=($((now - pending_t[i])))
                    unset 'pending_t[i]' 'pending_d[i]'
                fi
            done
            pending_t=("${pending_t[@]}") pending_d=("${pending_d[@]}")
        fi
        last_done=$ndone
        if [[ -n $status && $status != *_IN_PROGRESS ]]; then
            PHASE_MS=$((now - t0))
            return 0
        fi
        if ((now >= fault_until && now - last_move >= idle * 1000)); then
            PHASE_MS=$((now - t0))
            chaos_violation "stack $id stuck: no progress for ${idle} s (status ${status:-?}, done ${ndone:-?}/$(stack_get "$id" total)) after $(chaos_secs $((now - t0)))"
            chaos_explain_stuck "$id"
            return 1
        fi
        if [[ -n $fault ]] && ((now >= next_fault && now < fault_until)); then
            "$fault"
            CHAOS_FAULTS=$((CHAOS_FAULTS + 1))
            pending_t+=("$now")
            pending_d+=("${ndone:-0}")
            last_move=$(cv_now_ms)
            next_fault=$((last_move + min + RANDOM % (max - min + 1)))
        fi
        chaos_watch_workers
        sleep 0.1
    done
}

# chaos_wait_settled ID IDLE_S: no faults, just the bounded wait.
chaos_wait_settled() {
    chaos_run_phase "$1" 0 "$2" "" 0 0
}

# chaos_wait_progress ID FRACTION TIMEOUT_S: until done >= FRACTION% of total
# (total known), polling every 20 ms. Returns 1 if the stack settled first.
chaos_wait_progress() {
    local id=$1 pct=$2 deadline=$(($(cv_now_ms) + $3 * 1000)) st t d f
    while (($(cv_now_ms) < deadline)); do
        mapfile -t f < <(rcli hmget "${PREFIX}{$id}:stack" status total "done" 2>/dev/null)
        st=${f[0]:-} t=${f[1]:-} d=${f[2]:-}
        [[ -n $st && $st != *_IN_PROGRESS ]] && return 1
        if [[ $t =~ ^[0-9]+$ && $d =~ ^[0-9]+$ ]] && ((t > 0 && d * 100 >= t * pct)); then
            return 0
        fi
        sleep 0.02
    done
    return 1
}

# ---------------------------------------------------------------------------
# Figures.
# ---------------------------------------------------------------------------

# median and max of integers (ms) as "M/X ms", or "-".
chaos_median_max() {
    (($# > 0)) || { echo "-"; return; }
    printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { printf "%d/%d ms", a[int((NR + 1) / 2)], a[NR] }'
}

chaos_secs() { awk -v ms="$1" 'BEGIN { printf "%.1f s", ms / 1000 }'; }
