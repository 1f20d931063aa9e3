# shellcheck shell=bash
#
# state.sh — the layout of a local state directory, shared by up.sh and
# down.sh so that both agree on every file name and on how a process is
# recognised as ours. Sourced after common.sh, never run.
#
#   STATE/.converge-state       marks the directory as ours (we only ever
#                               wipe or remove paths inside such a directory)
#   STATE/env                   the exports clients source
#   STATE/ports                 REDIS_PORT, KAFKA_BROKERS, KAFKA_PORT_K and
#                               KAFKA_CTRL_PORT_K of this run (deploy/lib/kafka.sh),
#                               REDIS_CLUSTER_{,TLS_,BUS_}PORT_K (deploy/lib/redis_cluster.sh)
#   STATE/pids/NAME.pid         one per process we started
#   STATE/log/NAME.log          its output
#   STATE/redis/                Redis data (AOF), kept across restarts
#   STATE/kafka*-data/          the Kafka brokers' data, fresh every start
#   STATE/*.properties          generated configuration
#   STATE/cluster.json, STATE/agents/  the node agents (deploy/lib/agents.sh)

# shellcheck source=SCRIPTDIR/kafka.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka.sh"

# cv_state_open DIR: sets STATE to DIR's absolute path, creates the layout,
# and takes the directory's lock (held until the script exits) so that two
# up.sh/down.sh runs on one directory never interleave. Refuses a non-empty
# directory that up.sh did not create.
cv_state_open() {
    STATE=$(cv_abspath "$1")
    mkdir -p "$STATE" || cv_die "cannot create $STATE"
    if [[ ! -e $STATE/.converge-state ]]; then
        if [[ -n $(ls -A "$STATE") ]]; then
            cv_die "$STATE is not empty and was not created by up.sh; pick another --dir"
        fi
        : >"$STATE/.converge-state"
    fi
    mkdir -p "$STATE/pids" "$STATE/log" "$STATE/redis"
    exec 8>"$STATE/.lock"
    flock -w 120 8 || cv_die "another up.sh or down.sh is working on $STATE"
    REDIS_PORT="" REDIS_TLS_PORT="" REDIS_BUS_PORT="" KAFKA_PORT="" KAFKA_BROKERS="" REDIS_CLUSTER_NODES=""
    local v
    for v in ${!REDIS_CLUSTER_TLS_PORT_@} ${!REDIS_CLUSTER_BUS_PORT_@}; do unset "$v"; done
    cv_state_load_ports
}

cv_state_load_ports() {
    local key value
    [[ -f $STATE/ports ]] || return 0
    while IFS='=' read -r key value; do
        [[ $value =~ ^[0-9]+$ ]] || continue
        [[ $key =~ ^(REDIS_PORT|REDIS_TLS_PORT|REDIS_BUS_PORT|REDIS_CLUSTER_NODES|REDIS_CLUSTER_PORT_[0-9]+|REDIS_CLUSTER_TLS_PORT_[0-9]+|REDIS_CLUSTER_BUS_PORT_[0-9]+|KAFKA_BROKERS|KAFKA_PORT_[0-9]+|KAFKA_CTRL_PORT_[0-9]+)$ ]] || continue
        printf -v "$key" '%s' "$value"
    done <"$STATE/ports"
    KAFKA_PORT=${KAFKA_PORT_0:-}
}

cv_state_save_ports() {
    local k
    {
        printf 'REDIS_PORT=%s\nKAFKA_BROKERS=%s\n' "$REDIS_PORT" "${KAFKA_BROKERS:-}"
        [[ -z ${REDIS_TLS_PORT:-} ]] || printf 'REDIS_TLS_PORT=%s\n' "$REDIS_TLS_PORT"
        [[ -z ${REDIS_BUS_PORT:-} ]] || printf 'REDIS_BUS_PORT=%s\n' "$REDIS_BUS_PORT"
        [[ -z ${REDIS_CLUSTER_NODES:-} ]] || printf 'REDIS_CLUSTER_NODES=%s\n' "$REDIS_CLUSTER_NODES"
        for ((k = 1; k <= ${REDIS_CLUSTER_NODES:-0}; k++)); do
            local port_var=REDIS_CLUSTER_PORT_$k
            printf 'REDIS_CLUSTER_PORT_%d=%s\n' "$k" "${!port_var}"
            for port_var in REDIS_CLUSTER_TLS_PORT_$k REDIS_CLUSTER_BUS_PORT_$k; do
                [[ -z ${!port_var:-} ]] || printf '%s=%s\n' "$port_var" "${!port_var}"
            done
        done
        for ((k = 0; k < ${KAFKA_BROKERS:-0}; k++)); do
            printf 'KAFKA_PORT_%d=%s\nKAFKA_CTRL_PORT_%d=%s\n' "$k" "$(cv_kafka_port "$k")" \
                "$k" "$(cv_kafka_ctrl_port "$k")"
        done
    } >"$STATE/ports.tmp"
    mv -f "$STATE/ports.tmp" "$STATE/ports"
}

# What /proc/PID/cmdline must contain for a PID file to be believed. Redis
# rewrites its title to "redis-server 127.0.0.1:PORT"; the Java processes
# carry the path of their properties file, which is unique to this STATE.
# With --redis-tls, Redis listens on REDIS_TLS_PORT only and the stunnel
# sidecar (named by its configuration file) on REDIS_PORT.
cv_markers_redis() {
    CV_MARKERS=(redis-server "127.0.0.1:${REDIS_TLS_PORT:-${REDIS_PORT:-unknown}}")
}
# cv_markers_redis_node K: node K of up.sh --redis-cluster (deploy/lib/redis_cluster.sh),
# named by its TLS port when it has one (its plain port is then the sidecar's).
cv_markers_redis_node() {
    local port_var=REDIS_CLUSTER_TLS_PORT_$1
    [[ -n ${!port_var:-} ]] || port_var=REDIS_CLUSTER_PORT_$1
    CV_MARKERS=(redis-server "127.0.0.1:${!port_var:-unknown}")
}
cv_markers_stunnel() { CV_MARKERS=(stunnel "$STATE/stunnel.conf"); }
# cv_markers_kafka NAME: NAME is kafka or kafka-K (deploy/lib/kafka.sh).
cv_markers_kafka() { CV_MARKERS=(kafka.Kafka "$STATE/$1.properties"); }
# A node agent: its --dir is unique to STATE (deploy/lib/agents.sh); the
# trailing space keeps node-1 from matching node-10.
cv_markers_agent() { CV_MARKERS=("converge-agent " "--dir $STATE/agents/$1 "); }
# cv_markers_worker NAME: NAME is engine-K or observer-K.
cv_markers_worker() { CV_MARKERS=("converge-${1%-*} " "--id $1"); }

# redis-cli on STATE's Redis, for 5 s at most; on a cluster (up.sh
# --redis-cluster) it follows redirections, and the lines saying so are
# left out of its output.
cv_rcli() {
    # with --redis-acl, as the operator (default) user, whose password only
    # the environment carries to redis-cli (never a command line)
    if [[ -f $STATE/redis.acl && -z ${REDISCLI_AUTH:-} ]]; then
        REDISCLI_AUTH=$(head -n1 "$STATE/redis-admin.pass") cv_rcli "$@"
        return
    fi
    if [[ -z ${REDIS_CLUSTER_NODES:-} ]]; then
        timeout 5 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" "$@"
        return
    fi
    # With TLS (--redis-cluster --redis-tls), to the first node's TLS port:
    # a redirection names a node's TLS port, which no sidecar port is.
    local out rc=0 to=(-p "$REDIS_PORT")
    [[ -z ${REDIS_CLUSTER_TLS_PORT_1:-} ]] ||
        to=(--tls --cacert "$STATE/tls/ca.crt" -p "$REDIS_CLUSTER_TLS_PORT_1")
    out=$(timeout 5 redis-cli -c -h 127.0.0.1 "${to[@]}" "$@") || rc=$?
    [[ -z $out ]] || sed '/^-> Redirected to slot/d' <<<"$out"
    return $rc
}

# cv_alive NAME: prints the PID of STATE's process NAME (redis, kafka,
# kafka-K, engine-K, observer-K, agent-NODE) if it is running.
cv_alive() {
    case $1 in
    redis) cv_markers_redis ;;
    redis-c[0-9]*) cv_markers_redis_node "${1#redis-c}" ;;
    stunnel) cv_markers_stunnel ;;
    kafka | kafka-[0-9]*) cv_markers_kafka "$1" ;;
    agent-*) cv_markers_agent "${1#agent-}" ;;
    *) cv_markers_worker "$1" ;;
    esac
    cv_pid_alive "$STATE/pids/$1.pid" "${CV_MARKERS[@]}"
}

# cv_stop_all GRACE NAME...: sends SIGTERM to every running NAME at once,
# waits up to GRACE seconds for all of them, then SIGKILLs the ones left
# (re-checking each is still ours first). PID files are removed; a PID file
# naming no live process of ours is simply removed.
cv_stop_all() {
    local grace=$1 name pid i
    shift
    local names=() pids=()
    for name; do
        if pid=$(cv_alive "$name"); then
            kill -TERM "$pid" 2>/dev/null || true
            names+=("$name")
            pids+=("$pid")
        else
            rm -f "$STATE/pids/$name.pid"
        fi
    done
    ((${#pids[@]} > 0)) || return 0
    if ! cv_wait_until "$grace" "${names[*]} to exit" cv_pids_gone "${pids[@]}" 2>/dev/null; then
        for name in "${names[@]}"; do
            if pid=$(cv_alive "$name"); then
                cv_warn "$name (pid $pid) ignored SIGTERM for ${grace}s; sending SIGKILL"
                kill -KILL "$pid" 2>/dev/null || true
            fi
        done
        cv_wait_until 5 "killed processes to die" cv_pids_gone "${pids[@]}" || return 1
    fi
    for i in "${!names[@]}"; do
        rm -f "$STATE/pids/${names[i]}.pid"
        cv_log "stopped ${names[i]} (pid ${pids[i]})"
    done
}

# Prints the names of the workers that have a PID file in STATE.
cv_worker_names() {
    local f name
    for f in "$STATE"/pids/engine-*.pid "$STATE"/pids/observer-*.pid; do
        [[ -e $f ]] || continue
        name=${f##*/}
        echo "${name%.pid}"
    done
}
