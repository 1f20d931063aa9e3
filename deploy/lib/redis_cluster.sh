# shellcheck shell=bash
# redis_cluster.sh — Redis in cluster mode (sourced by deploy/local/up.sh,
# service.sh and down.sh; docs/redis-cluster.md).
#
# --redis-cluster: 3 masters and 3 replicas (processes redis-c1..redis-c6,
# ports REDIS_CLUSTER_PORT_K), made a cluster by `redis-cli --cluster
# create`; clients get redis+cluster://<the nodes' addresses>. With
# --redis-acl every node loads the same ACL file (deploy/lib/redis_acl.sh)
# and replicas authenticate to their masters as converge-replica, whose
# password is in STATE/redis-cluster.conf (0600, the first argument of every
# node, never a command line). With --redis-tls every node listens on TLS
# only (REDIS_CLUSTER_TLS_PORT_K, plain port 0), its cluster bus and
# replication on TLS too, and one stunnel (STATE/stunnel.conf) gives each
# node a plain loopback port, REDIS_CLUSTER_PORT_K; since the nodes announce
# their TLS ports, clients get CONVERGE_REDIS_ADDRESS_MAP, mapping each
# announced TLS port to its sidecar port (docs/security.md).
#
# --redis-one-node-cluster: one master holds all 16384 slots, so clients
# need no routing, yet Redis applies every rule of a cluster: a script, a
# transaction or a multi-key command whose keys are in two slots is refused
# (CROSSSLOT), and a script may not touch a key it was not given in another
# slot. The whole suite run against it proves Converge keeps to one slot
# per script and per transaction. The marker STATE/redis.cluster makes a
# restart (service.sh) start Redis the same way; nodes.conf in STATE/redis
# keeps the slot assignment.

# shellcheck source=SCRIPTDIR/redis_acl.sh
. "$(dirname "${BASH_SOURCE[0]}")/redis_acl.sh"
# shellcheck source=SCRIPTDIR/redis_tls.sh
. "$(dirname "${BASH_SOURCE[0]}")/redis_tls.sh"

# The extra redis-server arguments of a cluster-mode Redis in STATE (none
# without the marker), one per line. Its bus port is picked free like the
# others (REDIS_BUS_PORT), not port + 10000, which another process may hold.
cv_redis_cluster_args() {
    [[ -f $1/redis.cluster ]] || return 0
    printf '%s\n' --cluster-enabled yes --cluster-config-file nodes.conf \
        --cluster-node-timeout 2000
    [[ -z ${REDIS_BUS_PORT:-} ]] || printf '%s\n' --cluster-port "$REDIS_BUS_PORT"
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

# cv_redis_cluster_node_args K: node K's redis-server arguments, one per
# line, after the settings file: its ports, and its ACL and TLS when the
# deployment has them (STATE/redis.acl, REDIS_CLUSTER_TLS_PORT_K).
cv_redis_cluster_node_args() {
    local port_var=REDIS_CLUSTER_PORT_$1 tls_var=REDIS_CLUSTER_TLS_PORT_$1 bus_var=REDIS_CLUSTER_BUS_PORT_$1
    # The bus port picked free like the others (not port + 10000, which may
    # be in the kernel's ephemeral range); none recorded by an older up.sh.
    [[ -z ${!bus_var:-} ]] || printf '%s\n' --cluster-port "${!bus_var}"
    if [[ -n ${!tls_var:-} ]]; then
        cv_redis_tls_server_args "${!tls_var}" "$STATE/tls"
        printf '%s\n' --tls-cluster yes --tls-replication yes
    else
        printf '%s\n' --port "${!port_var}"
    fi
    [[ ! -f $STATE/redis.acl ]] || printf '%s\n' --aclfile "$STATE/redis.acl"
}

cv_redis_cluster_node_start() {
    local k=$1 args
    mkdir -p "$STATE/redis-c$k"
    rm -f "$STATE/pids/redis-c$k.pid"
    mapfile -t args < <(cv_redis_cluster_node_args "$k")
    # (none yet: a deployment of an up.sh from before it had one)
    [[ -f $STATE/redis-cluster.conf ]] || : >"$STATE/redis-cluster.conf"
    redis-server "$STATE/redis-cluster.conf" "${args[@]}" --bind 127.0.0.1 --dir "$STATE/redis-c$k" \
        --daemonize yes --pidfile "$STATE/pids/redis-c$k.pid" --logfile "$STATE/log/redis-c$k.log" \
        --appendonly yes --appendfsync everysec --save "" \
        --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 2000 \
        >/dev/null 7>&- 8>&- 9>&- || cv_die "redis-server (cluster node $k) did not start"
}

# cv_redis_cluster_setup ACL TLS: on a first start, the ACL users, the
# settings file every node reads and, with TLS (true/false), the nodes' TLS
# ports, the certificates and the sidecar's configuration.
cv_redis_cluster_setup() {
    local acl=$1 tls=$2 k tls_var pairs=()
    rm -f "$STATE/redis.acl" "$STATE/stunnel.conf"
    (
        umask 077
        echo "# Read by every node of up.sh --redis-cluster, before its arguments."
        if $acl; then
            cv_redis_acl_setup "${CONVERGE_PREFIX:-cv:}" "$STATE" cluster
            echo "masteruser converge-replica"
            echo "masterauth $(head -n1 "$STATE/redis-replica.pass")"
        fi
    ) >"$STATE/redis-cluster.conf"
    $tls || return 0
    cv_redis_tls_certs "$STATE/tls"
    for ((k = 1; k <= REDIS_CLUSTER_NODES; k++)); do
        tls_var=REDIS_CLUSTER_TLS_PORT_$k
        cv_pick_port "$tls_var"
        local port_var=REDIS_CLUSTER_PORT_$k
        pairs+=("${!port_var}" "${!tls_var}")
    done
    cv_redis_tls_stunnel_conf "$STATE" "${pairs[@]}"
}

# cv_redis_node_cli K ARGS...: redis-cli on node K itself, for 5 s at most:
# on its TLS port when it has one, as the operator with ACLs.
cv_redis_node_cli() {
    local port_var=REDIS_CLUSTER_PORT_$1 tls_var=REDIS_CLUSTER_TLS_PORT_$1 to
    shift
    to=(-p "${!port_var}")
    [[ -z ${!tls_var:-} ]] || to=(--tls --cacert "$STATE/tls/ca.crt" -p "${!tls_var}")
    cv_redis_as_admin timeout 5 redis-cli -h 127.0.0.1 "${to[@]}" "$@"
}

# cv_redis_as_admin CMD...: CMD with the operator's password in
# REDISCLI_AUTH when the deployment has ACLs (never on a command line).
cv_redis_as_admin() {
    if [[ -f $STATE/redis.acl && -z ${REDISCLI_AUTH:-} ]]; then
        REDISCLI_AUTH=$(head -n1 "$STATE/redis-admin.pass") "$@"
    else
        "$@"
    fi
}

# The redis-cli options that reach the nodes directly (TLS with the CA),
# one per line; none without TLS.
cv_redis_cluster_cli_opts() {
    [[ -z ${REDIS_CLUSTER_TLS_PORT_1:-} ]] || printf '%s\n' --tls --cacert "$STATE/tls/ca.crt"
}

# The addresses the nodes announce (their TLS ports) mapped to their
# sidecar ports, as CONVERGE_REDIS_ADDRESS_MAP takes them; "" without TLS.
cv_redis_cluster_address_map() {
    local k port_var tls_var out=()
    for ((k = 1; k <= ${REDIS_CLUSTER_NODES:-0}; k++)); do
        port_var=REDIS_CLUSTER_PORT_$k tls_var=REDIS_CLUSTER_TLS_PORT_$k
        [[ -n ${!tls_var:-} ]] && out+=("127.0.0.1:${!tls_var}=127.0.0.1:${!port_var}")
    done
    (IFS=,; echo "${out[*]}")
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
    local k
    for ((k = 1; k <= REDIS_CLUSTER_NODES; k++)); do
        cv_redis_node_cli "$k" cluster info 2>/dev/null | grep -q '^cluster_state:ok' || return 1
    done
}

# Whether no node has a slot yet and each knows only itself: the cluster
# was never made (a node of a made cluster keeps its slots and peers in
# nodes.conf across restarts).
cv_redis_cluster_unmade() {
    local k info
    for ((k = 1; k <= REDIS_CLUSTER_NODES; k++)); do
        info=$(cv_redis_node_cli "$k" cluster info 2>/dev/null) || return 1
        grep -q '^cluster_slots_assigned:0' <<<"$info" && grep -q '^cluster_known_nodes:1' <<<"$info" ||
            return 1
    done
}

# The ports of every node as `redis-cli --cluster create` takes them: the
# nodes' own (their TLS ports with TLS).
cv_redis_cluster_node_addrs() {
    local k port_var
    for ((k = 1; k <= REDIS_CLUSTER_NODES; k++)); do
        port_var=REDIS_CLUSTER_TLS_PORT_$k
        [[ -n ${!port_var:-} ]] || port_var=REDIS_CLUSTER_PORT_$k
        echo "127.0.0.1:${!port_var}"
    done
}

# cv_redis_cluster_ensure TIMEOUT [ACL TLS]: starts the nodes that are not
# running (on a first start picking their ports and setting up ACL and TLS
# as asked, true/false) and, on a first start, makes them one cluster;
# waits until every node says ok. A later run keeps what the first chose.
cv_redis_cluster_ensure() {
    local timeout=$1 acl=${2:-false} tls=${3:-false} k fresh=false addrs opts
    if [[ -z ${REDIS_CLUSTER_NODES:-} ]]; then
        REDIS_CLUSTER_NODES=$CV_REDIS_CLUSTER_SIZE
        fresh=true
        for ((k = 1; k <= REDIS_CLUSTER_NODES; k++)); do
            cv_pick_port "REDIS_CLUSTER_PORT_$k"
            cv_pick_port "REDIS_CLUSTER_BUS_PORT_$k"
        done
        REDIS_PORT=$REDIS_CLUSTER_PORT_1 # what redis-cli and the tests talk to first
        cv_redis_cluster_setup "$acl" "$tls"
        cv_state_save_ports
    fi
    for ((k = 1; k <= REDIS_CLUSTER_NODES; k++)); do
        cv_alive "redis-c$k" >/dev/null || cv_redis_cluster_node_start "$k"
    done
    for ((k = 1; k <= REDIS_CLUSTER_NODES; k++)); do
        cv_wait_until "$timeout" "Redis cluster node $k to answer PING" \
            eval "[[ \$(cv_redis_node_cli $k ping 2>/dev/null) == PONG ]]" >/dev/null || {
            cv_tail_log "$STATE/log/redis-c$k.log"
            cv_die "Redis cluster node $k does not answer; see $STATE/log/redis-c$k.log"
        }
    done
    # Also when an earlier first start died before the cluster was made (its
    # ports saved, every node still alone with no slot).
    if $fresh || cv_redis_cluster_unmade; then
        mapfile -t addrs < <(cv_redis_cluster_node_addrs)
        mapfile -t opts < <(cv_redis_cluster_cli_opts)
        cv_redis_as_admin redis-cli "${opts[@]}" --cluster create "${addrs[@]}" --cluster-replicas 1 \
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
