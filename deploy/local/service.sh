#!/usr/bin/env bash
#
# service.sh — starts, stops, kills or restarts ONE process of a deployment
# that up.sh made, leaving everything else running: Redis (its AOF data is
# kept), one Kafka broker (its data directory is kept, so no message is
# lost), or one worker. For fault injection (tests/chaos) and for
# operators who need to bounce one piece. Same PID files, logs, ports and
# command lines as up.sh; a worker's log is appended to, not rotated, so the
# log of a worker restarted many times holds all of its runs.
#
# usage: deploy/local/service.sh [--dir STATE] [--build-dir DIR] [--no-wait]
#                                ACTION NAME [-- WORKER-ARGS...]
#   ACTION       start | stop (SIGTERM, SIGKILL after a grace) | kill (SIGKILL)
#                | restart (stop, then start) | kill-restart (SIGKILL, then start)
#                | pid (print the PID of NAME if it runs; exit 1 if not)
#   NAME         redis | kafka | kafka-K (the brokers of up.sh --brokers 3: kafka is
#                broker 0, kafka-1 and kafka-2 the others) | engine-K | observer-K | agent-NODE (a node agent of
#                up.sh --nodes/--cluster: stopping or killing it leaves its replicas
#                running, as a lost agent does; started again, it re-adopts them)
#   --dir STATE  state directory of up.sh (default .local in the repository)
#   --build-dir DIR  where converge-engine / converge-observer are (default build/)
#   --no-wait    after starting, do not wait for readiness (Redis PING, Kafka
#                broker listed with every partition led, worker state=ready)
#   WORKER-ARGS  extra arguments for a worker (e.g. --lease-ms 5000); also taken
#                from $CONVERGE_WORKER_ARGS (whitespace-separated) when none given
# env: CONVERGE_UP_TIMEOUT  seconds each readiness wait may take (default 60)
# Exit status: 0 done, 1 failed, 2 usage.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
# shellcheck source=SCRIPTDIR/../lib/state.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/state.sh"
# shellcheck source=SCRIPTDIR/../lib/agents.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/agents.sh"
# shellcheck source=SCRIPTDIR/../lib/redis_cluster.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/redis_cluster.sh"

TIMEOUT=${CONVERGE_UP_TIMEOUT:-60}

state_arg=$CV_REPO_ROOT/.local
build_dir=$CV_REPO_ROOT/build
wait_ready=true
action="" name=""
worker_args=()
while (($#)); do
    case $1 in
    --dir | --build-dir)
        (($# >= 2)) || cv_usage 2
        [[ $1 == --dir ]] && state_arg=$2 || build_dir=$2
        shift 2
        ;;
    --no-wait) wait_ready=false && shift ;;
    -h | --help) cv_usage 0 ;;
    --)
        shift
        worker_args=("$@")
        break
        ;;
    -*) cv_usage_error "unknown option: $1" ;;
    *)
        if [[ -z $action ]]; then
            action=$1
        elif [[ -z $name ]]; then
            name=$1
        else
            cv_usage_error "unexpected argument: $1"
        fi
        shift
        ;;
    esac
done
[[ -n $action && -n $name ]] || cv_usage 2
case $action in start | stop | kill | restart | kill-restart | pid) ;; *)
    cv_usage_error "unknown action: $action"
    ;;
esac
case $name in redis | kafka | kafka-[0-9]* | engine-[0-9]* | observer-[0-9]* | agent-?*) ;; *)
    cv_usage_error "unknown process: $name (redis, kafka, kafka-K, engine-K, observer-K, agent-NODE)"
    ;;
esac
if ((${#worker_args[@]} == 0)) && [[ -n ${CONVERGE_WORKER_ARGS:-} ]]; then
    read -r -a worker_args <<<"$CONVERGE_WORKER_ARGS"
fi
build_dir=$(cv_abspath "$build_dir")
state_dir=$(cv_abspath "$state_arg")
[[ -e $state_dir/.converge-state && -f $state_dir/ports ]] ||
    cv_die "$state_dir is not a deployment of up.sh (run up.sh --dir $state_dir first)"

# The directory lock is up.sh's: taken only while we start or stop something,
# never held while we merely answer "pid".
if [[ $action == pid ]]; then
    STATE=$state_dir
    REDIS_PORT="" KAFKA_PORT="" KAFKA_BROKERS=""
    cv_state_load_ports
    cv_alive "$name"
    exit
fi
cv_state_open "$state_dir"
cd "$STATE"

redis_ping() {
    [[ $(cv_rcli ping 2>/dev/null) == PONG ]]
}

# Every broker listed and every partition of every topic has a leader.
kafka_ready() {
    cv_kafka_brokers_listed || return 1
    cv_kafka_metadata | jq -e '(.topics | length > 0)
        and all(.topics[].partitions[]; .leader >= 0)' >/dev/null 2>&1
}

worker_ready() {
    cv_alive "$name" >/dev/null || return 0 # exited: reported by the caller
    [[ $(cv_rcli hget \
        "${CONVERGE_PREFIX:-cv:}worker:$name" state 2>/dev/null) == ready ]]
}

start_redis() {
    [[ -n $REDIS_PORT ]] || cv_die "no Redis port recorded in $STATE/ports"
    rm -f "$STATE/pids/redis.pid"
    # The same command line as up.sh: same port, same data directory (AOF).
    local mode_args
    mapfile -t mode_args < <(cv_redis_cluster_args "$STATE")
    [[ ! -f $STATE/redis.acl ]] || mode_args+=(--aclfile "$STATE/redis.acl")
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$STATE/redis" "${mode_args[@]}" \
        --daemonize yes --pidfile "$STATE/pids/redis.pid" --logfile "$STATE/log/redis.log" \
        --appendonly yes --appendfsync everysec --save "" >/dev/null 7>&- 8>&- 9>&- ||
        cv_die "redis-server did not start (port $REDIS_PORT); see $STATE/log/redis.log"
    cv_wait_until 10 "Redis to write its PID file" cv_alive redis >/dev/null ||
        cv_die "Redis did not start; see $STATE/log/redis.log"
    if $wait_ready; then
        cv_wait_until "$TIMEOUT" "Redis on port $REDIS_PORT to answer PING" redis_ping ||
            cv_die "Redis does not answer; see $STATE/log/redis.log"
    fi
}

start_kafka() {
    local k=0
    [[ $name == kafka-* ]] && k=${name#kafka-}
    [[ -n $(cv_kafka_port "$k") && -f $STATE/$name.properties ]] ||
        cv_die "no configuration of broker $name in $STATE"
    # As up.sh starts it, on the same properties: the same ports and data.
    cv_kafka_spawn "$k"
    if $wait_ready; then
        cv_wait_until "$TIMEOUT" "Kafka to list every broker and lead every partition" kafka_ready ||
            cv_die "Kafka did not come back; see $STATE/log/$name.log"
    fi
}

start_worker() {
    local role=${name%-*} env_file=$STATE/env
    [[ -x $build_dir/converge-$role ]] || cv_die "$build_dir/converge-$role does not exist"
    [[ -f $env_file ]] || cv_die "$env_file is missing"
    local CONVERGE_REDIS CONVERGE_KAFKA CONVERGE_KAFKA_OPTS CONVERGE_SESSION_MS
    # shellcheck disable=SC2034 # set by the env files, read by the worker
    local CONVERGE_REDIS_PASSWORD_FILE CONVERGE_KAFKA_PASSWORD_FILE CONVERGE_SECRET_KEY_FILE
    # shellcheck disable=SC1090
    . "$env_file"
    # The workers' own users (--redis-acl, --kafka-sasl), over the clients'.
    # shellcheck disable=SC1091
    [[ ! -f $STATE/worker.env ]] || . "$STATE/worker.env"
    cv_rcli del "${CONVERGE_PREFIX:-cv:}worker:$name" \
        >/dev/null 2>&1 || true
    printf '=== service.sh: starting %s %s at %s\n' "$name" "${worker_args[*]}" "$(date -u +%FT%T.%3NZ)" \
        >>"$STATE/log/$name.log"
    # The deployment's password and key files only: never a caller's exported ones.
    local -a secrets=(-u CONVERGE_REDIS_PASSWORD_FILE -u CONVERGE_KAFKA_PASSWORD_FILE
        -u CONVERGE_SECRET_KEY_FILE)
    [[ -z ${CONVERGE_SECRET_KEY_FILE:-} ]] ||
        secrets+=("CONVERGE_SECRET_KEY_FILE=$CONVERGE_SECRET_KEY_FILE")
    [[ -z ${CONVERGE_REDIS_PASSWORD_FILE:-} ]] ||
        secrets+=("CONVERGE_REDIS_PASSWORD_FILE=$CONVERGE_REDIS_PASSWORD_FILE")
    [[ -z ${CONVERGE_KAFKA_PASSWORD_FILE:-} ]] ||
        secrets+=("CONVERGE_KAFKA_PASSWORD_FILE=$CONVERGE_KAFKA_PASSWORD_FILE")
    cv_spawn "$STATE/pids/$name.pid" "$STATE/log/$name.log" \
        env "${secrets[@]}" CONVERGE_REDIS="$CONVERGE_REDIS" CONVERGE_KAFKA="$CONVERGE_KAFKA" \
        CONVERGE_KAFKA_OPTS="$CONVERGE_KAFKA_OPTS" CONVERGE_SESSION_MS="${CONVERGE_SESSION_MS:-6000}" \
        "$build_dir/converge-$role" --id "$name" --metrics-addr "$(cv_metrics_addr "$name")" \
        "${worker_args[@]}"
    if $wait_ready; then
        cv_wait_until "$TIMEOUT" "$name to be ready" worker_ready || {
            cv_tail_log "$STATE/log/$name.log"
            cv_die "$name did not become ready; see $STATE/log/$name.log"
        }
        cv_alive "$name" >/dev/null || {
            cv_tail_log "$STATE/log/$name.log"
            cv_die "$name exited at start; see $STATE/log/$name.log"
        }
    fi
}

start_agent() {
    local node=${name#agent-} env_file=$STATE/env
    [[ -x $build_dir/converge-agent ]] || cv_die "$build_dir/converge-agent does not exist"
    [[ -f $env_file ]] || cv_die "$env_file is missing"
    cv_agent_nodes | grep -qxF -- "$node" || cv_die "no node $node in $STATE/cluster.json"
    local CONVERGE_REDIS CONVERGE_KAFKA CONVERGE_KAFKA_OPTS
    # shellcheck disable=SC1090
    . "$env_file"
    printf '=== service.sh: starting %s at %s\n' "$name" "$(date -u +%FT%T.%3NZ)" \
        >>"$STATE/log/$name.log"
    cv_agent_start "$build_dir" "$node"
    if $wait_ready; then
        cv_wait_until "$TIMEOUT" "the heartbeat of $node" cv_agent_up "$node" ||
            cv_die "$name sent no heartbeat; see $STATE/log/$name.log"
        cv_alive "$name" >/dev/null || cv_die "$name exited at start; see $STATE/log/$name.log"
    fi
}

do_start() {
    local pid
    if pid=$(cv_alive "$name"); then
        cv_log "$name: already running (pid $pid)"
        return 0
    fi
    case $name in
    redis) start_redis ;;
    kafka | kafka-*) start_kafka ;;
    agent-*) start_agent ;;
    *) start_worker ;;
    esac
    cv_log "$name: started (pid $(cv_alive "$name" || echo '?'))"
}

do_stop() {
    local grace=10
    [[ $name == kafka* ]] && grace=20
    cv_stop_all "$grace" "$name"
}

do_kill() {
    local pid
    if pid=$(cv_alive "$name"); then
        kill -KILL "$pid" 2>/dev/null || true
        cv_wait_until 10 "$name (pid $pid) to die" cv_pid_gone "$pid" ||
            cv_die "$name (pid $pid) survived SIGKILL"
        rm -f "$STATE/pids/$name.pid"
        cv_log "$name: killed (pid $pid)"
    else
        rm -f "$STATE/pids/$name.pid"
        cv_log "$name: not running"
    fi
}

case $action in
start) do_start ;;
stop) do_stop ;;
kill) do_kill ;;
restart) do_stop && do_start ;;
kill-restart) do_kill && do_start ;;
esac
