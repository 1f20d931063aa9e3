#!/usr/bin/env bash
#
# up.sh — runs Converge on this machine: Redis and Kafka 4.1 (KRaft, one
# broker or three) on free loopback ports, the Converge topics, then N engines and M
# observers, each waited for until it reports ready. Writes STATE/env for
# clients. What is already running is kept and only what is missing is
# started, so a second run starts nothing twice. Every wait is bounded; on
# failure the last log lines are printed, what this run started is stopped,
# and the exit status is non-zero. With --nodes or --cluster it also starts
# one node agent (converge-agent) per node of a cluster, each waited for until
# its heartbeat is in Redis; a later run without them keeps that cluster.
#
# usage: deploy/local/up.sh [options]
#   --engines N        engine workers (default 2)
#   --observers M      observer workers (default 2)
#   --dir STATE        state directory (default .local in the repository)
#   --build-dir DIR    where the binaries are built (default build/, build-asan/ with --sanitize)
#   --sanitize         build and run the ASan+UBSan binaries
#   --partitions P     partitions of each job topic (converge.check, converge.observe and
#                      their .express twins; default 8)
#   --brokers B        Kafka brokers: 1 (default) or 3 (replication factor 3,
#                      min.insync.replicas 2; every broker is also a controller)
#   --restart-workers  stop all workers and start them again (after a rebuild)
#   --no-build         do not build (services only, or binaries built already)
#   --nodes N          a default cluster of N nodes (node-1..node-N) over 3 fault
#                      domains x 3 upgrade domains, written to STATE/cluster.json,
#                      with one converge-agent per node
#   --cluster FILE     one converge-agent per node of the cluster file FILE (the
#                      format `convergectl place` reads), copied to STATE/cluster.json
#   Secured by default (docs/security.md "Secure by default"): Redis with ACL
#   users (workers and agents as converge-worker, STATE/env as converge-cli, the
#   operator as default; random passwords in STATE/redis-*.pass, 0600) and Kafka
#   clients on SASL_SSL (SCRAM-SHA-512, or PLAIN for librdkafka < 2.6.1) with
#   topic ACLs (certificates by openssl and passwords in STATE/kafka-sasl/),
#   and secrets sealed in Redis with the key file STATE/secret.key (0600,
#   CONVERGE_SECRET_KEY_FILE: encryption at rest, docs/security.md).
#   Decided when Redis and the brokers start; a later run keeps what runs.
#   --insecure         opt out: Redis with `user default on nopass`, Kafka
#                      PLAINTEXT, no key file (a key file made before is kept);
#                      anyone who reaches their ports reads and writes
#                      everything. With --insecure, --redis-acl or --kafka-sasl
#                      keeps that one secured
#   --redis-acl, --kafka-sasl  the default; accepted for compatibility
#   --no-seal          no key file: secrets stored in Redis as they are (for
#                      tools that read records straight from Redis, as the
#                      chaos checker does)
#   --redis-tls        Redis on TLS only (plain port 0), certificates made with
#                      openssl in STATE/tls/; clients reach it through a stunnel
#                      sidecar on the plain port clients are given (docs/security.md)
#   --redis-cluster    a Redis Cluster of 3 masters and 3 replicas (redis-c1..6,
#                      `redis-cli --cluster create`); clients get
#                      redis+cluster://... (docs/redis-cluster.md). Decided when
#                      Redis first starts. Unless --insecure every node has the
#                      ACL users; with --redis-tls every node is on TLS only,
#                      with a sidecar port per node (docs/security.md)
#   --redis-one-node-cluster  Redis in cluster mode, one master holding every
#                      slot: no routing needed, yet every cluster rule applies (a
#                      script or transaction across two slots is refused, CROSSSLOT)
# env: CONVERGE_UP_TIMEOUT  seconds each readiness wait may take (default 60)
# Stop everything with deploy/local/down.sh --dir STATE.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
# shellcheck source=SCRIPTDIR/../lib/state.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/state.sh"
# shellcheck source=SCRIPTDIR/../lib/agents.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/agents.sh"
# shellcheck source=SCRIPTDIR/../lib/redis_acl.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/redis_acl.sh"
# shellcheck source=SCRIPTDIR/../lib/redis_tls.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/redis_tls.sh"
# shellcheck source=SCRIPTDIR/../lib/redis_cluster.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/redis_cluster.sh"

TIMEOUT=${CONVERGE_UP_TIMEOUT:-60} # seconds, for every readiness wait

engines=2 observers=2 partitions=8 brokers=1
state_arg=$CV_REPO_ROOT/.local
build_dir=""
sanitize=false restart_workers=false build=true redis_tls=false
# Secured unless --insecure; with it, --redis-acl / --kafka-sasl keep their part.
insecure=false seal=true want_redis_acl=false want_kafka_sasl=false
redis_cluster=false redis_cluster6=false
nodes="" cluster_arg=""
while (($#)); do
    case $1 in
    --engines | --observers | --dir | --build-dir | --partitions | --nodes | --cluster | --brokers)
        (($# >= 2)) || cv_usage 2
        case $1 in
        --nodes) nodes=$2 ;;
        --cluster) cluster_arg=$2 ;;
        --engines) engines=$2 ;;
        --observers) observers=$2 ;;
        --dir) state_arg=$2 ;;
        --build-dir) build_dir=$2 ;;
        --partitions) partitions=$2 ;;
        --brokers) brokers=$2 ;;
        esac
        shift 2
        ;;
    --sanitize) sanitize=true && shift ;;
    --restart-workers) restart_workers=true && shift ;;
    --no-build) build=false && shift ;;
    --insecure) insecure=true && shift ;;
    --no-seal) seal=false && shift ;;
    --redis-acl) want_redis_acl=true && shift ;;
    --redis-tls) redis_tls=true && shift ;;
    --kafka-sasl) want_kafka_sasl=true && shift ;;
    --redis-one-node-cluster) redis_cluster=true && shift ;;
    --redis-cluster) redis_cluster6=true && shift ;;
    -h | --help) cv_usage 0 ;;
    *) cv_usage_error "unknown argument: $1" ;;
    esac
done
redis_acl=true kafka_sasl=true
if $insecure; then
    redis_acl=$want_redis_acl kafka_sasl=$want_kafka_sasl
fi
[[ $engines =~ ^[0-9]+$ && $observers =~ ^[0-9]+$ ]] || cv_die "--engines and --observers take a count"
if [[ ! $partitions =~ ^[0-9]+$ ]] || ((partitions < 1)); then
    cv_die "--partitions takes a count >= 1"
fi
[[ $brokers == 1 || $brokers == 3 ]] || cv_usage_error "--brokers takes 1 or 3"
if $redis_cluster6 && $redis_cluster; then
    cv_usage_error "give --redis-cluster or --redis-one-node-cluster, not both"
fi
build_dir=$(cv_build_dir "$build_dir" "$sanitize")
if [[ -n $nodes ]] && { [[ ! $nodes =~ ^[0-9]+$ ]] || ((nodes < 1 || nodes > 200)); }; then
    cv_usage_error "--nodes takes a count from 1 to 200"
fi
[[ -n $nodes && -n $cluster_arg ]] && cv_usage_error "give --nodes or --cluster, not both"
if [[ -n $cluster_arg ]]; then
    cluster_arg=$(cv_abspath "$cluster_arg")
    [[ -r $cluster_arg ]] || cv_die "--cluster: cannot read $cluster_arg"
    jq -e '.nodes | type == "array" and length > 0' "$cluster_arg" >/dev/null 2>&1 ||
        cv_die "--cluster: $cluster_arg is not a cluster file: JSON with a non-empty \"nodes\" list"
fi

# ---------------------------------------------------------------------------
# Machine and binaries.
# ---------------------------------------------------------------------------

setup_args=(--build-dir "$build_dir")
$sanitize && setup_args+=(--sanitize)
$build || setup_args+=(--no-build)
# A failed build stops us only if we are to start workers: services alone
# must come up while the workers' code is broken or not written yet.
setup_status=0
"$CV_REPO_ROOT/deploy/local/setup.sh" "${setup_args[@]}" || setup_status=$?
if ((setup_status != 0)); then
    ((setup_status == 3 && engines + observers == 0)) || exit "$setup_status"
    cv_warn "the build failed; starting the services anyway (no workers requested)"
fi

# Fail before starting anything if a worker we must start has no binary.
((engines == 0)) || [[ -x $build_dir/converge-engine ]] ||
    cv_die "$build_dir/converge-engine does not exist; build it, or pass --engines 0"
((observers == 0)) || [[ -x $build_dir/converge-observer ]] ||
    cv_die "$build_dir/converge-observer does not exist; build it, or pass --observers 0"
[[ -z $nodes$cluster_arg ]] || [[ -x $build_dir/converge-agent ]] ||
    cv_die "$build_dir/converge-agent does not exist; build it, or start without --nodes/--cluster"

# Credentials a caller exports are for its own deployment (the integration
# helpers export their operator's): this one's come from STATE (write_env).
unset KCAT_CONFIG CONVERGE_REDIS_PASSWORD_FILE CONVERGE_KAFKA_PASSWORD_FILE

cv_state_open "$state_arg"
cd "$STATE" # every process we start runs here: core files and stray output land in STATE
# The cluster of this deployment: a new one replaces the old (whose agents
# not in the new one are stopped by ensure_agents).
if [[ -n $nodes ]]; then
    cv_agent_write_default "$nodes"
elif [[ -n $cluster_arg ]]; then
    cp -f "$cluster_arg" "$STATE/cluster.json.tmp" && mv -f "$STATE/cluster.json.tmp" "$STATE/cluster.json"
fi
services_restarted=false

# Moves NAME's previous log aside so the log holds this run only.
rotate_log() {
    [[ -f $STATE/log/$1.log ]] && mv -f "$STATE/log/$1.log" "$STATE/log/$1.log.prev"
    return 0
}

# fail_and_stop MESSAGE NAME...: reports MESSAGE, stops the named processes
# (those this run started and that are of no use without the failed one),
# and exits non-zero.
fail_and_stop() {
    local message=$1
    shift
    cv_err "$message"
    (($# == 0)) || cv_stop_all 10 "$@" || true
    cv_err "up.sh failed; see $STATE/log/"
    exit 1
}

# wait_alive NAME WHAT CONDITION...: waits (bounded) for CONDITION while
# STATE's process NAME is alive; gives up at once if NAME exits.
wait_alive() {
    local name=$1 what=$2
    shift 2
    cv_wait_until "$TIMEOUT" "$what" alive_and "$name" "$@" || return 1
    cv_alive "$name" >/dev/null || {
        cv_err "$name exited while we waited for $what"
        return 1
    }
}

alive_and() {
    local name=$1
    shift
    ! cv_alive "$name" >/dev/null || "$@"
}

# ---------------------------------------------------------------------------
# Redis. Its data (AOF) survives restarts; its port is reused when free.
# ---------------------------------------------------------------------------

redis_ping() {
    [[ $(cv_rcli ping 2>/dev/null) == PONG ]]
}

# With ACLs, the operator's password reaches redis-cli through REDISCLI_AUTH
# (never a command line); the workers get theirs from a file (write_env).
redis_acl_mode() {
    if [[ -f $STATE/redis.acl ]]; then
        redis_acl=true
        REDISCLI_AUTH=$(head -n1 "$STATE/redis-admin.pass")
        export REDISCLI_AUTH
    else
        redis_acl=false
        unset REDISCLI_AUTH
    fi
}

# The TLS sidecar, when Redis runs with TLS (STATE/stunnel.conf): started
# again if it died, since every client reaches Redis through it.
# With a TLS cluster, one stunnel serves every node (a port for each).
ensure_redis_sidecar() {
    [[ -f $STATE/stunnel.conf ]] && [[ -n $REDIS_TLS_PORT || -n ${REDIS_CLUSTER_TLS_PORT_1:-} ]] ||
        return 0
    cv_alive stunnel >/dev/null && return 0
    local servers=(redis)
    [[ -z ${REDIS_CLUSTER_NODES:-} ]] || mapfile -t servers < <(cv_redis_cluster_names)
    rm -f "$STATE/pids/stunnel.pid"
    stunnel4 "$STATE/stunnel.conf" >>"$STATE/log/stunnel.log" 2>&1 7>&- 8>&- 9>&- ||
        fail_and_stop "stunnel did not start: $(tail -3 "$STATE/log/stunnel.log")" "${servers[@]}"
    cv_wait_until 10 "stunnel to write its PID file" cv_alive stunnel >/dev/null ||
        fail_and_stop "stunnel did not come up: $(tail -3 "$STATE/log/stunnel.log")" "${servers[@]}"
    if [[ -n ${REDIS_CLUSTER_NODES:-} ]]; then
        cv_log "redis: TLS sidecar (stunnel) on $(cv_redis_cluster_seeds), one port per node's TLS port"
    else
        cv_log "redis: TLS sidecar (stunnel) on 127.0.0.1:$REDIS_PORT -> TLS 127.0.0.1:$REDIS_TLS_PORT"
    fi
}

# The redis-server arguments of this run's mode (ACL, TLS) in REDIS_MODE_ARGS.
redis_mode_args() {
    REDIS_MODE_ARGS=(--port "$REDIS_PORT")
    rm -f "$STATE/redis.acl" "$STATE/stunnel.conf"
    if $redis_acl; then
        cv_redis_acl_setup "${CONVERGE_PREFIX:-cv:}" "$STATE"
        REDIS_MODE_ARGS+=(--aclfile "$STATE/redis.acl")
    fi
    rm -f "$STATE/redis.cluster"
    if $redis_cluster; then
        touch "$STATE/redis.cluster"
        cv_pick_port REDIS_BUS_PORT
        mapfile -t -O "${#REDIS_MODE_ARGS[@]}" REDIS_MODE_ARGS < <(cv_redis_cluster_args "$STATE")
    fi
    REDIS_TLS_PORT=""
    if $redis_tls; then
        cv_pick_port REDIS_TLS_PORT
        cv_redis_tls_certs "$STATE/tls"
        cv_redis_tls_stunnel_conf "$STATE" "$REDIS_PORT" "$REDIS_TLS_PORT"
        mapfile -t REDIS_MODE_ARGS < <(cv_redis_tls_server_args "$REDIS_TLS_PORT" "$STATE/tls")
        [[ ! -f $STATE/redis.acl ]] || REDIS_MODE_ARGS+=(--aclfile "$STATE/redis.acl")
        mapfile -t -O "${#REDIS_MODE_ARGS[@]}" REDIS_MODE_ARGS < <(cv_redis_cluster_args "$STATE")
    fi
}

ensure_redis() {
    local pid
    if $redis_cluster6 || [[ -n ${REDIS_CLUSTER_NODES:-} ]]; then
        cv_redis_cluster_ensure "$TIMEOUT" "$redis_acl" "$redis_tls"
        redis_acl_mode
        ensure_redis_sidecar
        cv_log "redis: a cluster of 3 masters and 3 replicas on $(cv_redis_cluster_seeds)$($redis_acl &&
            echo ", ACL users converge-worker and converge-cli")$([[ -n ${REDIS_CLUSTER_TLS_PORT_1:-} ]] &&
            echo ", TLS only: $(cv_redis_cluster_node_addrs | tr '\n' ' ' | sed 's/ $//')")"
        return 0
    fi
    if pid=$(cv_alive redis); then
        redis_acl_mode
        ensure_redis_sidecar
        wait_alive redis "Redis on port $REDIS_PORT to answer PING" redis_ping || {
            cv_tail_log "$STATE/log/redis.log"
            fail_and_stop "Redis (pid $pid) is running but does not answer"
        }
        cv_log "redis: already running on 127.0.0.1:$REDIS_PORT (pid $pid)"
        return 0
    fi
    cv_pick_port REDIS_PORT
    redis_mode_args
    cv_state_save_ports
    rotate_log redis
    rm -f "$STATE/pids/redis.pid"
    redis_acl_mode
    if ! redis-server --bind 127.0.0.1 --dir "$STATE/redis" "${REDIS_MODE_ARGS[@]}" \
        --daemonize yes --pidfile "$STATE/pids/redis.pid" --logfile "$STATE/log/redis.log" \
        --appendonly yes --appendfsync everysec --save "" \
        >/dev/null 2>"$STATE/log/redis.start.err" 7>&- 8>&- 9>&-; then
        cv_tail_log "$STATE/log/redis.start.err"
        cv_tail_log "$STATE/log/redis.log"
        fail_and_stop "redis-server did not start"
    fi
    ensure_redis_sidecar
    if ! cv_wait_until 10 "Redis to write its PID file" cv_alive redis >/dev/null ||
        ! wait_alive redis "Redis on port $REDIS_PORT to answer PING" redis_ping; then
        cv_tail_log "$STATE/log/redis.log"
        fail_and_stop "Redis did not come up" redis
    fi
    rm -f "$STATE/log/redis.start.err"
    [[ ! -f $STATE/redis.cluster ]] || cv_redis_cluster_assign "$REDIS_PORT" "$TIMEOUT"
    services_restarted=true
    cv_log "redis: started on 127.0.0.1:$REDIS_PORT (pid $(cv_alive redis))$($redis_acl &&
        echo ", ACL users converge-worker and converge-cli")$([[ -n $REDIS_TLS_PORT ]] &&
        echo ", TLS only on port $REDIS_TLS_PORT")$([[ -f $STATE/redis.cluster ]] &&
        echo ", cluster mode: one master holds every slot")"
}

# ---------------------------------------------------------------------------
# Kafka: KAFKA_BROKERS brokers in KRaft combined mode (deploy/lib/kafka.sh),
# always started together with fresh data: a quorum of old and new members
# would not form. The topics are created by `convergectl topics --create`,
# the way an operator creates them on a cluster of their own.
# ---------------------------------------------------------------------------

JOB_TOPICS=(converge.check converge.observe converge.check.express converge.observe.express)
declare -A TOPIC_PARTITIONS=([converge.dead]=1)
for t in "${JOB_TOPICS[@]}"; do TOPIC_PARTITIONS[$t]=$partitions; done

# True once every Converge topic has all its partitions and each has a leader.
topics_ready() {
    cv_kafka_metadata | jq -e --argjson want "$(topics_json)" '
        (reduce .topics[] as $t ({};
            .[$t.topic] = ([$t.partitions[] | select(.leader >= 0)] | length))) as $have
        | all($want | to_entries[]; $have[.key] == .value)' >/dev/null 2>&1
}

topics_json() {
    local t
    for t in "${JOB_TOPICS[@]}" converge.dead; do
        printf '{"%s": %d}\n' "$t" "${TOPIC_PARTITIONS[$t]}"
    done | jq -s add
}

# Creates the topics that are missing (an existing one with another
# partition count is an error: convergectl names it).
create_topics() {
    local ctl=$build_dir/convergectl
    [[ -x $ctl ]] || cv_die "$ctl does not exist: it creates the Kafka topics; build it first"
    local as=(env CONVERGE_KAFKA_OPTS="")
    if cv_kafka_sasl_on; then as=(cv_kafka_sasl_as admin); fi
    if ! CONVERGE_KAFKA="$(cv_kafka_bootstrap)" "${as[@]}" \
        "$ctl" topics --create --partitions "$partitions" >>"$STATE/log/topics.log" 2>&1; then
        cv_tail_log "$STATE/log/topics.log"
        return 1
    fi
}

start_kafka_cluster() {
    local k names=() cid pids=() failed=""
    KAFKA_BROKERS=$brokers
    for ((k = 0; k < brokers; k++)); do
        cv_pick_port "KAFKA_PORT_$k"
        cv_pick_port "KAFKA_CTRL_PORT_$k"
        names+=("$(cv_kafka_name "$k")")
    done
    KAFKA_PORT=$KAFKA_PORT_0
    cv_state_save_ports
    rm -rf "$STATE"/kafka*-data
    if $kafka_sasl; then cv_kafka_sasl_setup; else cv_kafka_sasl_off; fi
    cid=$(cv_kafka_cluster_id)
    for ((k = 0; k < brokers; k++)); do
        cv_kafka_write_config "$k" "$partitions"
        rotate_log "${names[k]}"
        cv_kafka_format "$cid" "$k" &
        pids+=($!)
    done
    for k in "${!pids[@]}"; do
        wait "${pids[k]}" || failed=${names[k]}
    done
    if [[ -n $failed ]]; then
        cv_tail_log "$STATE/log/$failed-format.log"
        fail_and_stop "formatting the storage of $failed failed"
    fi
    for ((k = 0; k < brokers; k++)); do cv_kafka_spawn "$k"; done
    services_restarted=true
    wait_alive kafka "Kafka to list its $brokers broker(s)" cv_kafka_brokers_listed ||
        kafka_start_failed kafka "Kafka did not come up" "${names[@]}"
    for name in "${names[@]}"; do
        cv_alive "$name" >/dev/null || kafka_start_failed "$name" "$name exited" "${names[@]}"
    done
    cv_log "kafka: $brokers broker(s) up on $(cv_kafka_bootstrap) (KRaft, Kafka $CV_KAFKA_VERSION$(
        cv_kafka_sasl_on && echo ", SASL_SSL: SCRAM-SHA-512 and PLAIN; clients use $(cv_kafka_sasl_mechanism)"))"
    rotate_log topics
    create_topics || kafka_start_failed topics "the topics could not be created" "${names[@]}"
    if cv_kafka_sasl_on; then
        cv_kafka_sasl_grant "$build_dir" >>"$STATE/log/topics.log" 2>&1 ||
            kafka_start_failed topics "the Kafka ACLs could not be granted" "${names[@]}"
        cv_log "kafka: ACLs granted to converge-worker and converge-cli ($(grep -c . "$STATE/kafka-sasl/acl.rules") rules)"
    fi
    wait_alive kafka "every topic partition to have a leader" topics_ready ||
        kafka_start_failed topics "Kafka topics did not become ready" "${names[@]}"
    cv_log "kafka: topics ready: ${JOB_TOPICS[*]} ($partitions partitions each), converge.dead=1"
}

# kafka_start_failed LOG MESSAGE NAME...: the end of a failed start.
kafka_start_failed() {
    local log=$1 message=$2
    shift 2
    cv_tail_log "$STATE/log/$log.log"
    [[ $log == kafka ]] || cv_tail_log "$STATE/log/kafka.log" 10
    fail_and_stop "$message" "$@"
}

# For brokers that were already running: the topics must exist with the
# partition counts asked for; missing ones are created.
check_running_topics() {
    local t have metadata
    metadata=$(cv_kafka_metadata) || metadata='{"topics":[]}'
    for t in "${JOB_TOPICS[@]}"; do
        have=$(jq -r --arg t "$t" '.topics[] | select(.topic == $t) | .partitions | length' <<<"$metadata")
        if [[ -n $have && $have != 0 && $have != "$partitions" ]]; then
            cv_die "topic $t has $have partitions, not $partitions; run down.sh first to change --partitions"
        fi
    done
    topics_ready && return 0
    cv_log "kafka: creating missing topics"
    create_topics || cv_die "the Kafka topics could not be created"
    cv_wait_until "$TIMEOUT" "every topic partition to have a leader" topics_ready ||
        cv_die "Kafka topics did not become ready"
}

ensure_kafka() {
    local running=() name
    for name in $(KAFKA_BROKERS=${KAFKA_BROKERS:-$brokers} cv_kafka_names); do
        cv_alive "$name" >/dev/null && running+=("$name")
    done
    if ((${#running[@]} > 0)) && [[ ${KAFKA_BROKERS:-} == "$brokers" ]] &&
        ((${#running[@]} == brokers)); then
        if ! cv_wait_until "$TIMEOUT" "Kafka to list its $brokers broker(s)" cv_kafka_brokers_listed; then
            cv_tail_log "$STATE/log/kafka.log"
            cv_die "Kafka is running but not answering; run down.sh, then up.sh"
        fi
        check_running_topics
        local running_sasl=false
        if cv_kafka_sasl_on; then running_sasl=true; fi
        [[ $running_sasl == "$kafka_sasl" ]] ||
            cv_warn "kafka: keeping the running brokers, $($running_sasl || echo "not ")started with --kafka-sasl"
        cv_log "kafka: already running on $(cv_kafka_bootstrap)"
        return 0
    fi
    if ((${#running[@]} > 0)); then
        cv_log "kafka: ${#running[@]} of ${KAFKA_BROKERS:-?} brokers running, $brokers wanted; restarting them with fresh data"
        cv_stop_all 20 "${running[@]}"
    fi
    start_kafka_cluster
}

# ---------------------------------------------------------------------------
# The environment clients use.
# ---------------------------------------------------------------------------

write_env() {
    local scheme=redis:// where=127.0.0.1:$REDIS_PORT/0 client_auth="" address_map=""
    [[ -z ${REDIS_CLUSTER_NODES:-} ]] || scheme=redis+cluster:// where=$(cv_redis_cluster_seeds)
    local client_redis=$scheme$where
    CONVERGE_REDIS=$client_redis
    unset CONVERGE_REDIS_PASSWORD_FILE CONVERGE_REDIS_ADDRESS_MAP
    if $redis_acl; then
        # This script's workers and agents inherit the worker user's file.
        CONVERGE_REDIS=${scheme}converge-worker@$where
        export CONVERGE_REDIS_PASSWORD_FILE=$STATE/redis-worker.pass
        client_redis=${scheme}converge-cli@$where
        client_auth="export CONVERGE_REDIS_PASSWORD_FILE=$STATE/redis-cli.pass"
    fi
    # A TLS cluster's nodes announce their TLS ports; everyone reaches them
    # through the sidecar's ports instead.
    address_map=$(cv_redis_cluster_address_map)
    [[ -z $address_map ]] || export CONVERGE_REDIS_ADDRESS_MAP=$address_map
    CONVERGE_KAFKA=$(cv_kafka_bootstrap)
    CONVERGE_KAFKA_OPTS="" client_kafka_opts="" client_kafka_auth=""
    unset CONVERGE_KAFKA_PASSWORD_FILE
    if cv_kafka_sasl_on; then
        # As for Redis: the workers inherit the worker user's password file.
        CONVERGE_KAFKA_OPTS=$(cv_kafka_sasl_client_opts worker)
        export CONVERGE_KAFKA_PASSWORD_FILE=$STATE/kafka-sasl/worker.pass
        client_kafka_opts=$(cv_kafka_sasl_client_opts cli)
        client_kafka_auth="export CONVERGE_KAFKA_PASSWORD_FILE=$STATE/kafka-sasl/cli.pass"
    fi
    # Encryption at rest: one key file for every program of the deployment,
    # made once; a rotation edits it (docs/security.md).
    local key=$STATE/secret.key
    if ! $insecure && $seal && [[ ! -s $key ]]; then
        (umask 077 && printf 'k1 %s\n' "$(head -c 32 /dev/urandom | base64)" >"$key.tmp") &&
            mv -f "$key.tmp" "$key"
    fi
    unset CONVERGE_SECRET_KEY_FILE
    ! $seal || [[ ! -s $key ]] || export CONVERGE_SECRET_KEY_FILE=$key
    # The workers' Kafka session: 1 s locally, so that the partitions of a
    # worker killed for good move within about a second (docs/kafka.md).
    CONVERGE_SESSION_MS=1000
    cat >"$STATE/env.tmp" <<EOF
# Converge local services, written by deploy/local/up.sh. Use: source $STATE/env
# Kafka: $KAFKA_BROKERS broker(s), KRaft (Kafka $CV_KAFKA_VERSION).
export CONVERGE_REDIS=$client_redis
${client_auth:-unset CONVERGE_REDIS_PASSWORD_FILE}
$([[ -n $address_map ]] && echo "export CONVERGE_REDIS_ADDRESS_MAP=$address_map" ||
        echo "unset CONVERGE_REDIS_ADDRESS_MAP")
export CONVERGE_KAFKA=$CONVERGE_KAFKA
export CONVERGE_KAFKA_OPTS="$client_kafka_opts"
${client_kafka_auth:-unset CONVERGE_KAFKA_PASSWORD_FILE}
$([[ -n ${CONVERGE_SECRET_KEY_FILE:-} ]] && echo "export CONVERGE_SECRET_KEY_FILE=$CONVERGE_SECRET_KEY_FILE" ||
        echo "unset CONVERGE_SECRET_KEY_FILE")
export CONVERGE_SESSION_MS=$CONVERGE_SESSION_MS
EOF
    if [[ -f $STATE/cluster.json ]]; then
        cat >>"$STATE/env.tmp" <<EOF
# The node agents (converge-agent) of STATE/cluster.json, one per node.
export CONVERGE_CLUSTER=$STATE/cluster.json
export CONVERGE_AGENTS="$(cv_agent_nodes | tr '\n' ' ' | sed 's/ $//')"
EOF
    fi
    chmod 0644 "$STATE/env.tmp"
    mv -f "$STATE/env.tmp" "$STATE/env"
    write_worker_env
}

# STATE/worker.env: what workers use unlike clients (their Redis and Kafka
# users), sourced after STATE/env by service.sh when it starts a worker.
write_worker_env() {
    {
        echo "# The workers' own users, written by deploy/local/up.sh; sourced after $STATE/env."
        echo "export CONVERGE_REDIS=$CONVERGE_REDIS"
        if [[ -n ${CONVERGE_REDIS_PASSWORD_FILE:-} ]]; then
            echo "export CONVERGE_REDIS_PASSWORD_FILE=$CONVERGE_REDIS_PASSWORD_FILE"
        fi
        echo "export CONVERGE_KAFKA_OPTS=\"$CONVERGE_KAFKA_OPTS\""
        if [[ -n ${CONVERGE_KAFKA_PASSWORD_FILE:-} ]]; then
            echo "export CONVERGE_KAFKA_PASSWORD_FILE=$CONVERGE_KAFKA_PASSWORD_FILE"
        else
            echo "unset CONVERGE_KAFKA_PASSWORD_FILE"
        fi
    } >"$STATE/worker.env.tmp"
    chmod 0644 "$STATE/worker.env.tmp"
    mv -f "$STATE/worker.env.tmp" "$STATE/worker.env"
}

# ---------------------------------------------------------------------------
# Metrics: a loopback port per worker and agent (deploy/lib/metrics.sh), and
# their addresses in STATE/env: CONVERGE_METRICS_<NAME> each and
# CONVERGE_METRICS_TARGETS, all of them comma-separated (docs/metrics.md).
# ---------------------------------------------------------------------------

write_metrics_env() {
    local names=() node k
    for ((k = 1; k <= engines; k++)); do names+=("engine-$k"); done
    for ((k = 1; k <= observers; k++)); do names+=("observer-$k"); done
    [[ ! -f $STATE/cluster.json ]] || while read -r node; do
        names+=("agent-$node")
    done < <(cv_agent_nodes)
    cv_metrics_assign "${names[@]}"
    {
        cat "$STATE/env"
        echo "# Prometheus metrics of each process (docs/metrics.md)."
        cv_metrics_env "${names[@]}"
    } >"$STATE/env.tmp"
    mv -f "$STATE/env.tmp" "$STATE/env"
}

# ---------------------------------------------------------------------------
# Workers. Each keeps the hash <prefix>worker:<id> with state=ready while it
# is connected to Redis and Kafka.
# ---------------------------------------------------------------------------

WORKER_KEY_PREFIX=${CONVERGE_PREFIX:-cv:}worker:
failed_worker=""

# True once every named worker reports ready; also true (with failed_worker
# set) as soon as one of them has exited, so a crash is reported at once.
workers_ready() {
    local name states state i=0
    for name; do
        if ! cv_alive "$name" >/dev/null; then
            failed_worker=$name
            return 0
        fi
    done
    states=$(for name; do printf 'HGET %s state\n' "$WORKER_KEY_PREFIX$name"; done |
        cv_rcli 2>/dev/null) || return 1
    while IFS= read -r state; do
        [[ $state == ready ]] || return 1
        i=$((i + 1))
    done <<<"$states"
    ((i == $#))
}

ensure_workers() {
    local names=() name pid k
    for ((k = 1; k <= engines; k++)); do names+=("engine-$k"); done
    for ((k = 1; k <= observers; k++)); do names+=("observer-$k"); done

    local running=()
    mapfile -t running < <(cv_worker_names)
    if ((${#running[@]} > 0)); then
        if $restart_workers; then
            cv_log "workers: restarting (--restart-workers)"
            cv_stop_all 10 "${running[@]}"
        elif $services_restarted; then
            cv_log "workers: restarting, the services they were connected to were restarted"
            cv_stop_all 10 "${running[@]}"
        fi
    fi

    local start=()
    for name in "${names[@]}"; do
        if pid=$(cv_alive "$name"); then
            cv_log "$name: already running (pid $pid)"
        else
            start+=("$name")
        fi
    done
    ((${#start[@]} > 0)) || return 0

    for name in "${start[@]}"; do
        # A ready hash left by an earlier process must not count for this one.
        cv_rcli del "$WORKER_KEY_PREFIX$name" >/dev/null
        rotate_log "$name"
        cv_spawn "$STATE/pids/$name.pid" "$STATE/log/$name.log" \
            env -u REDISCLI_AUTH CONVERGE_REDIS="$CONVERGE_REDIS" CONVERGE_KAFKA="$CONVERGE_KAFKA" \
            CONVERGE_KAFKA_OPTS="$CONVERGE_KAFKA_OPTS" CONVERGE_SESSION_MS="$CONVERGE_SESSION_MS" \
            "$build_dir/converge-${name%-*}" --id "$name" --metrics-addr "$(cv_metrics_addr "$name")"
    done
    cv_log "workers: started ${start[*]}; waiting for them to be ready"
    if ! cv_wait_until "$TIMEOUT" "${start[*]} to be ready" workers_ready "${start[@]}" ||
        [[ -n $failed_worker ]]; then
        if [[ -n $failed_worker ]]; then
            cv_err "$failed_worker exited before it was ready"
            cv_tail_log "$STATE/log/$failed_worker.log"
        else
            for name in "${start[@]}"; do
                workers_ready "$name" || cv_tail_log "$STATE/log/$name.log"
            done
        fi
        fail_and_stop "workers did not become ready" "${start[@]}"
    fi
    cv_log "workers: ${start[*]} ready"
}

# ---------------------------------------------------------------------------
# Node agents: one per node of STATE/cluster.json, each ready once its
# heartbeat is in Redis. Restarting an agent never stops its replicas (a new
# agent re-adopts them), so agents are restarted as freely as workers.
# ---------------------------------------------------------------------------

failed_agent=""

# True once every named node's heartbeat is in Redis; also true (with
# failed_agent set) as soon as one agent has exited.
agents_ready() {
    local node
    for node; do
        if ! cv_alive "agent-$node" >/dev/null; then
            failed_agent=$node
            return 0
        fi
    done
    for node; do
        cv_agent_up "$node" || return 1
    done
}

# A new cluster (--nodes, --cluster) replaces the old: the nodes no longer
# in it are stopped, their replica processes too, and forgotten in Redis.
drop_old_nodes() {
    local want=("$@") node gone=()
    while read -r node; do
        [[ -n $node && " ${want[*]} " != *" $node "* ]] && gone+=("$node")
    done < <(
        cv_agent_names | sed 's/^agent-//'
        cv_agent_registered
    )
    ((${#gone[@]} > 0)) || return 0
    mapfile -t gone < <(printf '%s\n' "${gone[@]}" | sort -u)
    for node in "${gone[@]}"; do
        cv_stop_all 10 "agent-$node"
    done
    cv_agent_stop_replicas 10 "${gone[@]}"
    for node in "${gone[@]}"; do
        cv_agent_forget "$node"
    done
    cv_log "agents: removed ${gone[*]} (not in the new cluster)"
}

ensure_agents() {
    local want=() running=() start=() node name pid
    mapfile -t want < <(cv_agent_nodes)
    [[ -z $nodes$cluster_arg ]] || drop_old_nodes "${want[@]}"
    mapfile -t running < <(cv_agent_names)
    for name in "${running[@]}"; do
        if $restart_workers || $services_restarted; then
            cv_stop_all 10 "$name"
        fi
    done
    ((${#want[@]} > 0)) || return 0
    [[ -x $build_dir/converge-agent ]] ||
        cv_die "$build_dir/converge-agent does not exist; cannot start the agents of $STATE/cluster.json"
    for node in "${want[@]}"; do
        if pid=$(cv_alive "agent-$node"); then
            cv_log "agent-$node: already running (pid $pid)"
        else
            start+=("$node")
        fi
    done
    ((${#start[@]} > 0)) || return 0
    for node in "${start[@]}"; do
        rotate_log "agent-$node"
        cv_agent_start "$build_dir" "$node"
    done
    cv_log "agents: started ${#start[@]} (${start[*]}); waiting for their heartbeats"
    if ! cv_wait_until "$TIMEOUT" "the heartbeats of ${start[*]}" agents_ready "${start[@]}" ||
        [[ -n $failed_agent ]]; then
        if [[ -n $failed_agent ]]; then
            cv_err "agent-$failed_agent exited before its heartbeat"
            cv_tail_log "$STATE/log/agent-$failed_agent.log"
        fi
        local names=()
        for node in "${start[@]}"; do names+=("agent-$node"); done
        fail_and_stop "node agents did not come up" "${names[@]}"
    fi
    cv_log "agents: ${start[*]} up"
}

# ---------------------------------------------------------------------------
# The web console (converge-web, docs/web.md): one per state directory, on a
# free loopback port kept in STATE/web.port, reading Redis as STATE/env's
# client does; CONVERGE_WEB_URL in STATE/env says where. Skipped when the
# build has no converge-web. Self-contained: down.sh stops it (web.pid).
# ---------------------------------------------------------------------------

web_alive() { cv_pid_alive "$STATE/pids/web.pid" "converge-web" "--listen 127.0.0.1:$1"; }

web_answers() { curl -fsS -o /dev/null "http://127.0.0.1:$1/" 2>/dev/null; }

# Answers, or has exited (no use waiting then: its log says why). Exited,
# not "not yet converge-web": until the shell that sources STATE/env execs
# it, the process's command line is that shell's.
web_settled() {
    local pid
    web_answers "$1" && return 0
    pid=$(cv_pid_read "$STATE/pids/web.pid") || return 0
    ! kill -0 "$pid" 2>/dev/null
}

ensure_web() {
    [[ -x $build_dir/converge-web ]] || return 0
    local pid
    WEB_PORT="" # not local: cv_pick_port sets it by name
    [[ -f $STATE/web.port ]] && read -r WEB_PORT <"$STATE/web.port"
    if [[ -n $WEB_PORT ]] && pid=$(web_alive "$WEB_PORT"); then
        cv_log "web: already running (pid $pid)"
    else
        cv_pick_port WEB_PORT
        echo "$WEB_PORT" >"$STATE/web.port"
        rotate_log web
        # shellcheck disable=SC2016 # $1..$3 belong to the inner shell.
        cv_spawn "$STATE/pids/web.pid" "$STATE/log/web.log" \
            bash -c 'source "$1" && exec "$2" --listen "$3"' web "$STATE/env" \
            "$build_dir/converge-web" "127.0.0.1:$WEB_PORT"
        cv_wait_until "$TIMEOUT" "the web console on port $WEB_PORT" web_settled "$WEB_PORT" || true
        if ! web_answers "$WEB_PORT"; then
            cv_tail_log "$STATE/log/web.log"
            cv_die "converge-web did not come up"
        fi
        cv_log "web: http://127.0.0.1:$WEB_PORT"
    fi
    echo "export CONVERGE_WEB_URL=http://127.0.0.1:$WEB_PORT" >>"$STATE/env"
}

# ---------------------------------------------------------------------------

summary() {
    local name pid
    echo "Converge local services are up ($(cv_elapsed)); state in $STATE"
    local k
    if [[ -n ${REDIS_CLUSTER_NODES:-} ]]; then
        for ((k = 1; k <= REDIS_CLUSTER_NODES; k++)); do
            local port_var=REDIS_CLUSTER_PORT_$k
            printf '  %-12s %-22s pid %s\n' "redis-c$k" "127.0.0.1:${!port_var}" "$(cv_alive "redis-c$k")"
        done
    else
        printf '  %-12s %-22s pid %s\n' redis "127.0.0.1:$REDIS_PORT" "$(cv_alive redis)"
    fi
    for ((k = 0; k < KAFKA_BROKERS; k++)); do
        name=$(cv_kafka_name "$k")
        printf '  %-12s %-22s pid %s\n' "$name" "127.0.0.1:$(cv_kafka_port "$k")" "$(cv_alive "$name")"
    done
    while read -r name; do
        pid=$(cv_alive "$name") && printf '  %-12s %-22s pid %s\n' "$name" "" "$pid"
    done < <(cv_worker_names | sort -V)
    local agents
    agents=$(cv_agent_names | wc -l)
    ((agents == 0)) || printf '  %-12s %-22s see: convergectl nodes --map\n' agents "$agents node(s)"
    if [[ -f $STATE/redis.acl ]] && cv_kafka_sasl_on; then
        echo "  secured: Redis ACL users, Kafka SASL_SSL; STATE/env holds the client's credentials"
    else
        local open=()
        [[ -f $STATE/redis.acl ]] || open+=("Redis without passwords")
        cv_kafka_sasl_on || open+=("Kafka PLAINTEXT")
        cv_warn "not secured ($(printf '%s, ' "${open[@]}" | sed 's/, $//')): anyone on this machine" \
            "can read and change every stack (docs/security.md \"Secure by default\")"
    fi
    echo "  logs in $STATE/log/; stop with: deploy/local/down.sh --dir $STATE"
    echo "To use them:  source $STATE/env"
    sed 's/^/  /' "$STATE/env" | grep '  export'
}

ensure_redis
ensure_kafka
write_env
write_metrics_env
ensure_workers
ensure_agents
ensure_web
summary
