#!/usr/bin/env bash
#
# converge-container — the entrypoint and the health check of the Converge
# images (installed as /usr/local/bin/converge-container). Both live here
# because both must name the same worker: `run` starts a worker under the id
# `health` then looks up in Redis.
#
# usage: converge-container run ROLE [ARGS...]
#        converge-container health ROLE
#   ROLE is engine, observer, agent or web.
#
# run: execs the role's binary with its identity and the extra arguments of
#   $CONVERGE_<ROLE>_ARGS (word-split: e.g. "--verbose"), then ARGS.
#   engine, observer: --id $CONVERGE_WORKER_ID (default <role>-$HOSTNAME: a pod
#     or container restarted in place keeps its id, and so takes its leases and
#     Kafka partitions back at once).
#   agent: the node $CONVERGE_NODE (required): --cluster $CONVERGE_CLUSTER_FILE
#     --node NODE when that file is set, else --name NODE; --dir
#     /var/lib/converge/agent.
#   web: --listen $CONVERGE_WEB_LISTEN (default 0.0.0.0:8080) and, when
#     $CONVERGE_WEB_TOKEN_FILE is set, --token-file FILE: converge-web refuses
#     an address other than loopback without a token (or --insecure in
#     $CONVERGE_WEB_ARGS).
#
# health: exit 0 when the process is ready, else prints why and exits 1.
#   engine, observer: the liveness record <prefix>worker:<id> in Redis
#     (docs/keyspace.md) says state "ready", its last_seen is at most
#     $CONVERGE_HEALTH_MAX_AGE seconds old (default 6; it is rewritten every
#     2 s) and, where /proc is mounted, its pid is a live process (the check
#     runs beside the worker: same container, same PID namespace).
#     joining, isolated (cut off from Redis or Kafka) and stopping are not ready.
#   agent: the node's heartbeat <prefix>{cluster}:alive:<node> exists.
#   web: an HTTP GET / on the listen port answers 2xx, 3xx or 401 (a console
#     that wants its bearer token is up).
#   Redis is reached as the workers reach it: $CONVERGE_REDIS (redis:// or
#   redis+cluster://, whose seeds are tried in turn), $CONVERGE_PREFIX,
#   $CONVERGE_REDIS_PASSWORD_FILE. Not supported: TLS and
#   $CONVERGE_REDIS_ADDRESS_MAP (a cluster's redirections go to the addresses
#   it announces).
set -euo pipefail

die() {
    echo "converge-container: $*" >&2
    exit 2
}

unhealthy() {
    echo "converge-container health $ROLE: $*" >&2
    exit 1
}

worker_id() {
    local id=${CONVERGE_WORKER_ID:-$ROLE-${HOSTNAME:-host}}
    [[ $id =~ ^[^[:space:]@]+$ ]] || die "CONVERGE_WORKER_ID \"$id\": no spaces and no '@'"
    echo "$id"
}

# The role's extra arguments, $CONVERGE_<ROLE>_ARGS split on blanks, in EXTRA.
extra_args() {
    local var="CONVERGE_${ROLE^^}_ARGS"
    read -r -a EXTRA <<<"${!var:-}"
}

run() {
    local EXTRA
    extra_args
    case $ROLE in
    engine | observer)
        exec "converge-$ROLE" --id "$(worker_id)" "${EXTRA[@]}" "$@"
        ;;
    agent)
        [[ -n ${CONVERGE_NODE:-} ]] || die "CONVERGE_NODE is not set: the node this agent runs"
        local who=(--name "$CONVERGE_NODE")
        [[ -z ${CONVERGE_CLUSTER_FILE:-} ]] ||
            who=(--cluster "$CONVERGE_CLUSTER_FILE" --node "$CONVERGE_NODE")
        exec converge-agent "${who[@]}" --dir /var/lib/converge/agent "${EXTRA[@]}" "$@"
        ;;
    web)
        local token=()
        [[ -z ${CONVERGE_WEB_TOKEN_FILE:-} ]] || token=(--token-file "$CONVERGE_WEB_TOKEN_FILE")
        exec converge-web --listen "${CONVERGE_WEB_LISTEN:-0.0.0.0:8080}" "${token[@]}" "${EXTRA[@]}" "$@"
        ;;
    esac
}

# ---------------------------------------------------------------------------
# Redis, as $CONVERGE_REDIS names it.
# ---------------------------------------------------------------------------

# Sets SEEDS (host:port...), DB, CLUSTER and the credentials redis-cli reads.
parse_redis_url() {
    local url=${CONVERGE_REDIS:-redis://127.0.0.1:6379/0} rest cred=""
    CLUSTER=false
    [[ $url == redis+cluster://* ]] && CLUSTER=true
    rest=${url#*://}
    if [[ $rest == *@* ]]; then
        cred=${rest%%@*}
        rest=${rest#*@}
    fi
    DB=0
    if [[ $rest == */* ]]; then
        DB=${rest#*/}
        rest=${rest%%/*}
    fi
    [[ $DB =~ ^[0-9]+$ ]] || die "CONVERGE_REDIS: database \"$DB\" is not a number"
    IFS=, read -r -a SEEDS <<<"$rest"
    ((${#SEEDS[@]} > 0)) || die "CONVERGE_REDIS names no host"
    USER_ARGS=()
    [[ -z ${cred%%:*} ]] || USER_ARGS=(--user "${cred%%:*}")
    if [[ -n ${CONVERGE_REDIS_PASSWORD_FILE:-} ]]; then
        [[ -r $CONVERGE_REDIS_PASSWORD_FILE ]] ||
            die "CONVERGE_REDIS_PASSWORD_FILE: cannot read $CONVERGE_REDIS_PASSWORD_FILE"
        REDISCLI_AUTH=$(head -n1 "$CONVERGE_REDIS_PASSWORD_FILE")
        export REDISCLI_AUTH
    elif [[ $cred == *:* ]]; then
        local pass=${cred#*:}
        REDISCLI_AUTH=$(printf '%b' "${pass//%/\\x}") # percent-decoded, as the workers do
        export REDISCLI_AUTH
    fi
}

# rcli ARGS...: redis-cli against the first seed that answers.
rcli() {
    local seed out cluster_args=()
    $CLUSTER && cluster_args=(-c)
    for seed in "${SEEDS[@]}"; do
        if out=$(timeout 5 redis-cli --no-auth-warning --raw "${cluster_args[@]}" \
            -h "${seed%:*}" -p "${seed##*:}" -n "$DB" "${USER_ARGS[@]}" "$@" 2>&1) &&
            [[ $out != ERR* && $out != NOAUTH* && $out != WRONGPASS* && $out != *"Connection refused"* ]]; then
            printf '%s\n' "$out"
            return 0
        fi
    done
    unhealthy "Redis (${SEEDS[*]}) does not answer: ${out:-no reply}"
}

# ---------------------------------------------------------------------------
# Health.
# ---------------------------------------------------------------------------

worker_health() {
    local id key record state last_seen pid now max_age=${CONVERGE_HEALTH_MAX_AGE:-6}
    id=$(worker_id)
    key=${CONVERGE_PREFIX:-cv:}worker:$id
    parse_redis_url
    record=$(rcli HMGET "$key" state last_seen pid)
    { read -r state && read -r last_seen && read -r pid; } <<<"$record" || true
    [[ -n $state ]] || unhealthy "no liveness record $key (the worker is not running, or not yet connected)"
    [[ $state == ready ]] || unhealthy "worker $id is $state"
    now=$(date +%s)
    ((now - ${last_seen%.*} <= max_age)) ||
        unhealthy "worker $id last wrote its liveness record $((now - ${last_seen%.*})) s ago"
    if [[ -d /proc/self ]] && [[ ! -d /proc/$pid ]]; then
        unhealthy "worker $id: its process $pid is gone"
    fi
}

agent_health() {
    [[ -n ${CONVERGE_NODE:-} ]] || die "CONVERGE_NODE is not set: the node this agent runs"
    local key="${CONVERGE_PREFIX:-cv:}{cluster}:alive:$CONVERGE_NODE"
    parse_redis_url
    [[ $(rcli EXISTS "$key") == 1 ]] || unhealthy "node $CONVERGE_NODE has no heartbeat ($key)"
}

web_health() {
    local listen=${CONVERGE_WEB_LISTEN:-0.0.0.0:8080} host port status
    host=${listen%:*} port=${listen##*:}
    [[ $host == 0.0.0.0 || $host == "" || $host == "[::]" ]] && host=127.0.0.1
    # shellcheck disable=SC2016 # expanded by the inner bash
    status=$(timeout 5 bash -c '
        exec 3<>"/dev/tcp/$1/$2" || exit 1
        printf "GET / HTTP/1.0\r\nHost: localhost\r\n\r\n" >&3
        head -n1 <&3' _ "$host" "$port" 2>/dev/null) || unhealthy "nothing answers on $host:$port"
    # 401: a console started with --token-file, answering.
    [[ $status =~ ^HTTP/[0-9.]+\ ([23][0-9][0-9]|401) ]] ||
        unhealthy "GET http://$host:$port/ answered: ${status:-nothing}"
}

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    sed -n '/^# usage:/,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
fi
(($# >= 2)) || die "usage: converge-container run|health engine|observer|agent|web [ARGS...]"
MODE=$1 ROLE=$2
shift 2
case $ROLE in
engine | observer | agent | web) ;;
*) die "unknown role \"$ROLE\": engine, observer, agent or web" ;;
esac
case $MODE in
run) run "$@" ;;
health)
    case $ROLE in
    engine | observer) worker_health ;;
    agent) agent_health ;;
    web) web_health ;;
    esac
    ;;
*) die "unknown command \"$MODE\": run or health" ;;
esac
