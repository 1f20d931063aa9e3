# shellcheck shell=bash
#
# agents.sh — the node agents of a local deployment (docs/services.md): one
# converge-agent per node of STATE/cluster.json, each with its own directory
# STATE/agents/NODE (its replicas' state files, logs and volumes) and its own
# range of host ports. Shared by up.sh, down.sh and service.sh; sourced after
# common.sh and state.sh, never run.
#
#   STATE/cluster.json          the cluster: written by up.sh --nodes N, or a
#                               copy of up.sh --cluster FILE
#   STATE/agents/port-base      the first host port of node 1 (node k gets
#                               CV_AGENT_PORTS ports from base + (k-1) * CV_AGENT_PORTS)
#   STATE/agents/NODE/          the agent's --dir
#   STATE/pids/agent-NODE.pid   STATE/log/agent-NODE.log

CV_AGENT_PORTS=50

# shellcheck source=SCRIPTDIR/metrics.sh
. "$(dirname "${BASH_SOURCE[0]}")/metrics.sh"

# The nodes of STATE/cluster.json in file order (our format's "name" or
# Service Fabric's "nodeName").
cv_agent_nodes() {
    [[ -f $STATE/cluster.json ]] || return 0
    jq -r '.nodes[]? | (.name // .nodeName) // empty' "$STATE/cluster.json"
}

# The agents that have a PID file, as agent-NODE.
cv_agent_names() {
    local f name
    for f in "$STATE"/pids/agent-*.pid; do
        [[ -e $f ]] || continue
        name=${f##*/}
        echo "${name%.pid}"
    done
}

# cv_agent_write_default N: writes a cluster of N nodes over 3 fault domains
# x 3 upgrade domains to STATE/cluster.json. Node k (0-based) is in rack
# k % 3 and upgrade domain (k + k / 3) % 3: the first nine nodes fill every
# FD x UD cell once (Service Fabric's diagonal layout), so any 3 of them in
# a row span three FDs and three UDs.
cv_agent_write_default() {
    local n=$1
    jq -n --argjson n "$n" '{
        description: "\($n) local nodes over 3 fault domains x 3 upgrade domains (deploy/local/up.sh --nodes \($n))",
        nodeTypes: {Local: {capacities: {MemoryMB: 1024, cpu: 4}}},
        nodes: [range(0; $n) as $k | {
            name: "node-\($k + 1)",
            type: "Local",
            faultDomain: "fd:/dc1/rack\($k % 3 + 1)",
            upgradeDomain: "UD\(($k + (($k / 3) | floor)) % 3 + 1)",
            properties: {rack: "rack\($k % 3 + 1)", ud: "UD\(($k + (($k / 3) | floor)) % 3 + 1)"}
        }]
    }' >"$STATE/cluster.json.tmp" && mv -f "$STATE/cluster.json.tmp" "$STATE/cluster.json"
}

# Prints the port base of this STATE, picking one the first time: a block
# below 20000 (up.sh's services take 20000 and up, the kernel's ephemeral
# ports start higher) chosen from STATE's path, so that two deployments on
# one machine rarely share ports, and kept for the life of STATE.
cv_agent_port_base() {
    local file=$STATE/agents/port-base base
    if [[ -f $file ]] && read -r base <"$file" && [[ $base =~ ^[0-9]+$ ]]; then
        echo "$base"
        return 0
    fi
    base=$((10000 + ($(cksum <<<"$STATE" | cut -d' ' -f1) % 16) * 500))
    mkdir -p "$STATE/agents"
    echo "$base" >"$file"
    echo "$base"
}

# cv_agent_start BUILD_DIR NODE: starts NODE's agent (returns once its PID
# file is written). Its host ports follow from NODE's position in the file.
cv_agent_start() {
    local build_dir=$1 node=$2 k=0 name base lo
    while read -r name; do
        [[ $name == "$node" ]] && break
        k=$((k + 1))
    done < <(cv_agent_nodes)
    base=$(cv_agent_port_base)
    lo=$((base + k * CV_AGENT_PORTS))
    mkdir -p "$STATE/agents/$node"
    # An agent reads no stack's secrets: it never gets the key file.
    cv_spawn "$STATE/pids/agent-$node.pid" "$STATE/log/agent-$node.log" \
        env -u CONVERGE_SECRET_KEY_FILE CONVERGE_REDIS="$CONVERGE_REDIS" "$build_dir/converge-agent" \
        --redis "$CONVERGE_REDIS" --prefix "${CONVERGE_PREFIX:-cv:}" \
        --cluster "$STATE/cluster.json" --node "$node" \
        --dir "$STATE/agents/$node" --ports "$lo-$((lo + CV_AGENT_PORTS - 1))" \
        --metrics-addr "$(cv_metrics_addr "agent-$node")"
}

# True while NODE's heartbeat key lives in Redis.
cv_agent_up() {
    [[ $(cv_rcli exists \
        "${CONVERGE_PREFIX:-cv:}{cluster}:alive:$1" 2>/dev/null) == 1 ]]
}

# cv_agent_replica_pids [NODE...]: prints the PID of every replica process
# the state files of the agents of NODE... (default: all) name that still
# runs as the process the agent started (same /proc start time, field 22 of
# /proc/PID/stat), so a recycled PID is never signalled.
cv_agent_replica_pids() {
    local f node
    for node in "${@:-*}"; do
        # shellcheck disable=SC2086,SC2231 # the default "*" is a glob: every agent
        for f in "$STATE"/agents/$node/replicas/*.json; do
            cv__agent_pids_of "$f"
        done
    done
}

# The live replica processes of one state file (cv_agent_replica_pids).
cv__agent_pids_of() {
    local f=$1 pid start stat fields
    [[ -e $f ]] || return 0
    while read -r pid start; do
        [[ $pid =~ ^[0-9]+$ && $pid -gt 1 ]] || continue
        # Not $(<file): under set -e a missing file there ends the shell,
        # whatever || follows (a process gone is the common case here).
        stat=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
        stat=${stat##*) }
        read -r -a fields <<<"$stat"
        # fields[0] is field 3 (state): field 22 is fields[19].
        [[ ${fields[0]} != Z && ${fields[19]} == "$start" ]] && echo "$pid"
    done < <(jq -r '.tasks[]? | "\(.pid // 0) \(.start_time // 0)"' "$f" 2>/dev/null)
    return 0
}

# cv_agent_stop_replicas GRACE [NODE...]: SIGTERM to every replica process
# of the agents of NODE... (default: all; and to its process group when it
# leads one), SIGKILL to those left after GRACE seconds. Call after the
# agents are stopped, or they restart them.
cv_agent_stop_replicas() {
    local grace=$1 pid pids=()
    shift
    mapfile -t pids < <(cv_agent_replica_pids "$@")
    ((${#pids[@]} > 0)) || return 0
    for pid in "${pids[@]}"; do
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    done
    if ! cv_wait_until "$grace" "${#pids[@]} replica process(es) to exit" \
        cv_pids_gone "${pids[@]}" 2>/dev/null; then
        for pid in $(cv_agent_replica_pids "$@"); do
            cv_warn "replica process $pid ignored SIGTERM for ${grace}s; sending SIGKILL"
            kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
        done
        cv_wait_until 5 "killed replica processes to die" cv_pids_gone "${pids[@]}" || return 1
    fi
    cv_log "stopped ${#pids[@]} replica process(es)"
}

# cv_agent_forget NODE: removes NODE from the cluster in Redis (its
# registration, record and heartbeat): a node dropped from the cluster file
# is gone for good, and the live engine re-places what it ran.
cv_agent_forget() {
    local p=${CONVERGE_PREFIX:-cv:}
    printf 'HDEL %s %s\nDEL %s %s\n' "${p}{cluster}:nodes" "$1" "${p}{cluster}:node:$1" \
        "${p}{cluster}:alive:$1" | cv_rcli >/dev/null
}

# The nodes registered in Redis ({cluster}:nodes), one a line.
cv_agent_registered() {
    cv_rcli hkeys "${CONVERGE_PREFIX:-cv:}{cluster}:nodes" 2>/dev/null
}
