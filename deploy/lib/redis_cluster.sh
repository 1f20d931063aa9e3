# shellcheck shell=bash
# redis_cluster.sh — Redis in cluster mode (sourced by deploy/local/up.sh,
# service.sh and down.sh; docs/redis-cluster.md).
#
# --redis-cluster: 3 masters and 3 replicas (processes redis-c1..redis-c6,
# ports REDIS_CLUSTER_PORT_K), made a cluster by `redis-cli --cluster
# create`; clients get redis+cluster://<the masters' addresses>.
#
# --redis-one-node-cluster: one master holds all 16384 slots, so clients
# need no routing, yet Redis applies every rule of a cluster: a script, a
# transaction or a multi-key command whose keys are in two slots is refused
# (CROSSSLOT), and a script may not touch a key it was not given in another
# slot. The whole suite run against it proves Converge keeps to one slot
# per script and per transaction. The marker STATE/redis.cluster makes a
# restart (service.sh) start Redis the same way; nodes.conf in STATE/redis
# keeps the slot assignment.

# The extra redis-server arguments of a cluster-mode Redis in STATE (none
# without the marker), one per line.
cv_redis_cluster_args() {
    [[ -f $1/redis.cluster ]] || return 0
    printf '%s\n' --cluster-enabled yes --cluster-config-file nodes.conf \
        --cluster-node-timeout 2000
}

# Gives every slot to the Redis on PORT unless it holds them already, and
# waits (up to TIMEOUT s) for the cluster to say it is ok.
cv_redis_cluster_assign() {
    local port=$1 timeout=$2 assigned
    assigned=$(redis-cli -h 127.0.0.1 -p "$port" cluster info 2>/dev/null |
        awk -F: '/^cluster_slots_assigned:/ { print $2 + 0 }')
    if [[ $assigned == 0 ]]; then
        redis-cli -h 127.0.0.1 -p "$port" cluster addslotsrange 0 16383 >/dev/null
    elif [[ $assigned != 16384 ]]; then
        # Data without its nodes.conf: Redis took the slots of its keys;
        # redis-cli covers the others (it asks first, hence the yes).
        yes yes | redis-cli --cluster fix "127.0.0.1:$port" >/dev/null 2>&1 || true
    fi
    cv_wait_until "$timeout" "the one-node Redis cluster on port $port to be ok" \
        cv_redis_cluster_ok "$port" >/dev/null || cv_die "the Redis cluster on port $port is not ok"
}

cv_redis_cluster_ok() {
    redis-cli -h 127.0.0.1 -p "$1" cluster info 2>/dev/null | grep -q '^cluster_state:ok'
}

# ---- --redis-cluster: 3 masters + 3 replicas ----

CV_REDIS_CLUSTER_SIZE=6

cv_redis_cluster_node_start() {
    local k=$1 port_var=REDIS_CLUSTER_PORT_$1
    mkdir -p "$STATE/redis-c$k"
    rm -f "$STATE/pids/redis-c$k.pid"
    redis-server --port "${!port_var}" --bind 127.0.0.1 --dir "$STATE/redis-c$k" \
        --daemonize yes --pidfile "$STATE/pids/redis-c$k.pid" --logfile "$STATE/log/redis-c$k.log" \
        --appendonly yes --appendfsync everysec --save "" \
        --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 2000 \
        >/dev/null 7>&- 8>&- 9>&- || cv_die "redis-server (cluster node $k) did not start"
}

cv_redis_cluster_seeds() {
    local k port_var out=()
    for ((k = 1; k <= ${REDIS_CLUSTER_NODES:-0}; k++)); do
        port_var=REDIS_CLUSTER_PORT_$k
        out+=("127.0.0.1:${!port_var}")
    done
    (IFS=,; echo "${out[*]}")
}

cv_redis_cluster_all_ok() {
    local k port_var
    for ((k = 1; k <= REDIS_CLUSTER_NODES; k++)); do
        port_var=REDIS_CLUSTER_PORT_$k
        cv_redis_cluster_ok "${!port_var}" || return 1
    done
}

# Starts the nodes that are not running (picking ports the first time) and,
# on a first start, makes them one cluster; waits until every node says ok.
cv_redis_cluster_ensure() {
    local timeout=$1 k port_var fresh=false
    if [[ -z ${REDIS_CLUSTER_NODES:-} ]]; then
        REDIS_CLUSTER_NODES=$CV_REDIS_CLUSTER_SIZE
        fresh=true
        for ((k = 1; k <= REDIS_CLUSTER_NODES; k++)); do
            port_var=REDIS_CLUSTER_PORT_$k
            cv_pick_port "$port_var"
        done
        REDIS_PORT=$REDIS_CLUSTER_PORT_1 # what redis-cli and the tests talk to first
        cv_state_save_ports
    fi
    for ((k = 1; k <= REDIS_CLUSTER_NODES; k++)); do
        cv_alive "redis-c$k" >/dev/null || cv_redis_cluster_node_start "$k"
    done
    for ((k = 1; k <= REDIS_CLUSTER_NODES; k++)); do
        port_var=REDIS_CLUSTER_PORT_$k
        cv_wait_until "$timeout" "Redis cluster node $k to answer PING" \
            eval "[[ \$(redis-cli -p ${!port_var} ping 2>/dev/null) == PONG ]]" >/dev/null ||
            cv_die "Redis cluster node $k does not answer; see $STATE/log/redis-c$k.log"
    done
    if $fresh; then
        # shellcheck disable=SC2046 # one argument per node, on purpose
        redis-cli --cluster create $(cv_redis_cluster_seeds | tr , ' ') --cluster-replicas 1 \
            --cluster-yes >"$STATE/log/redis-cluster-create.log" 2>&1 ||
            cv_die "redis-cli --cluster create failed; see $STATE/log/redis-cluster-create.log"
    fi
    cv_wait_until "$timeout" "every Redis cluster node to say the cluster is ok" \
        cv_redis_cluster_all_ok >/dev/null || cv_die "the Redis cluster is not ok"
}

# The names of the cluster's processes, for down.sh.
cv_redis_cluster_names() {
    (cd "$STATE/pids" 2>/dev/null && ls redis-c*.pid 2>/dev/null | sed 's/\.pid$//')
}
