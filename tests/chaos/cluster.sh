# shellcheck shell=bash
# shellcheck disable=SC2034,SC2317 # variables and functions shared across the sourced files
#
# cluster.sh — the `cluster` chaos scenario (sourced by scenarios.sh): node
# agents and replica processes killed at random under a stack of
# CLUSTER_REPLICAS stateless replicas (default 200) and a stateful service
# `db` of 5, on 20 agents (4 FD x 5 UD, 40 Slots each) started by the
# harness. A service has at most one replica per node (ReplicaExclusion, a
# hard constraint), so the 200 are services many0..many9 of 20
# replicas each. Phases create, update (the stateless replicas cut to 3/4:
# the last services shrink or go) and delete, each under faults for
# FAULT_WINDOW s (for the delete, while it runs):
#   - kill -9 of a random replica process of the stack (restarted by policy),
#   - kill -9 of a random agent, started again at once (its replicas must
#     be re-adopted, not restarted),
#   - kill -9 of a random agent, started again 2-4 s later (within the grace:
#     its replicas stay where they are).
# Invariants after each phase: the right terminal status (CREATE_COMPLETE,
# UPDATE_COMPLETE, the stack gone); every replica healthy, one process per
# replica name, as many as the replicas; the ledger {cluster}:ledger has no
# start:<rid> above 1; a stateful index never ran in two processes at once
# (tests/integration/procscan.sh scans every 100 ms throughout); after the
# delete no process of the stack is left and no assignment of its services.

CLUSTER_REPLICAS=${CHAOS_CLUSTER_REPLICAS:-200}
CLUSTER_NODES=()
for ((k = 1; k <= 20; k++)); do CLUSTER_NODES+=("N$k"); done
CLUSTER_TTL_MS=1000
CLUSTER_PROCSCAN=$CHAOS_ROOT/tests/integration/procscan.sh
CLUSTER_AGENT=$CHAOS_BUILD/converge-agent

ckey_c() { echo "${PREFIX}{cluster}:$1"; }

cluster_agent_pid() { cv_pid_alive "$STATE/agents/$1/agent.pid" converge-agent "--node $1 "; }

# cluster_agent_start NODE: started as the integration tests start agents
# (tests/integration/lib.sh svc_agent_start); not waited for.
cluster_agent_start() {
    local node=$1 dir=$STATE/agents/$1 k
    mkdir -p "$dir"
    k=$(jq --arg n "$node" '.nodes | map(.name) | index($n)' "$CLUSTER_FILE")
    # In a subshell: no job of ours, whose kill -9 bash would report.
    # As the workers' user (STATE/worker.env) on a secured deployment.
    (
        # shellcheck disable=SC1091
        [[ ! -f $STATE/worker.env ]] || . "$STATE/worker.env"
        cv_spawn "$dir/agent.pid" "$dir/agent.log" \
            env CONVERGE_REDIS="$CONVERGE_REDIS" CONVERGE_PREFIX="$PREFIX" \
            "$CLUSTER_AGENT" --cluster "$CLUSTER_FILE" --node "$node" --dir "$dir" \
            --ports "$((33000 + k * 300))-$((33000 + k * 300 + 299))" --heartbeat-ttl "$CLUSTER_TTL_MS" \
            >/dev/null
    ) || chaos_violation "agent $node could not be started"
}

cluster_nodes_up() {
    local n
    for n in "${CLUSTER_NODES[@]}"; do
        [[ $(rcli exists "$(ckey_c "alive:c$n")") == 1 ]] || return 1
    done
}

# cluster_agent_kill NODE: SIGKILL, waited for.
cluster_agent_kill() {
    local pid
    pid=$(cluster_agent_pid "$1") || return 0
    kill -KILL "$pid" 2>/dev/null
    cv_wait_until 10 "agent $1 to die" cv_pid_gone "$pid" >/dev/null || true
}

# Agents killed with a delayed restart: "node restart-at-ms" lines.
CLUSTER_LATE=()
cluster_restart_late() {
    local now keep=() e
    now=$(cv_now_ms)
    for e in "${CLUSTER_LATE[@]}"; do
        if ((${e#* } <= now)); then cluster_agent_start "${e%% *}"; else keep+=("$e"); fi
    done
    CLUSTER_LATE=("${keep[@]}")
}

# cluster_many TOTAL: "name replicas" of the stateless services that make
# TOTAL replicas, one per node at most.
cluster_many() {
    local left=$1 k=0 per
    while ((left > 0)); do
        per=$((left < ${#CLUSTER_NODES[@]} ? left : ${#CLUSTER_NODES[@]}))
        echo "many$k $per"
        left=$((left - per)) k=$((k + 1))
    done
}

cluster_template() { # total stateless replicas
    local svc n
    echo "heat_template_version: 2018-08-31"
    echo "resources:"
    while read -r svc n; do
        cat <<EOF
  $svc:
    type: Converge::Service
    properties:
      replicas: $n
      command: [sleep, "86400"]
      placement_constraints: "ChaosGroup == cluster"
      metrics: [{name: Slots, primary_load: 1, secondary_load: 1, weight: medium}]
      restart_policy: {policy: Always, interval: 1, backoff: 0, max_times: 1000}
      kill_policy: {grace_period: 1}
EOF
    done < <(cluster_many "$1")
    cat <<EOF
  db:
    type: Converge::Service
    properties:
      replicas: 5
      stateful: true
      command: [sleep, "86400"]
      placement_constraints: "ChaosGroup == cluster"
      metrics: [{name: Slots, primary_load: 1, secondary_load: 1, weight: medium}]
      restart_policy: {policy: Always, interval: 1, backoff: 0, max_times: 1000}
      kill_policy: {grace_period: 1}
EOF
}

fault_cluster() {
    local r pids node
    cluster_restart_late
    r=$((RANDOM % 10))
    if ((r < 5)); then
        mapfile -t pids < <("$CLUSTER_PROCSCAN" once "$NAME" | awk '{ print $1 }')
        ((${#pids[@]} > 0)) && kill -KILL "${pids[RANDOM % ${#pids[@]}]}" 2>/dev/null
        CLUSTER_KILLS[replica]=$((${CLUSTER_KILLS[replica]:-0} + 1))
        return 0
    fi
    node=c${CLUSTER_NODES[RANDOM % ${#CLUSTER_NODES[@]}]}
    [[ " ${CLUSTER_LATE[*]} " == *" $node "* ]] && return 0
    cluster_agent_kill "$node"
    if ((r < 8)); then
        cluster_agent_start "$node"
        CLUSTER_KILLS[agent]=$((${CLUSTER_KILLS[agent]:-0} + 1))
    else
        CLUSTER_LATE+=("$node $(($(cv_now_ms) + 2000 + RANDOM % 2001))")
        CLUSTER_KILLS[agent_late]=$((${CLUSTER_KILLS[agent_late]:-0} + 1))
    fi
}

# cluster_fault_loop UNTIL_MS: fault_cluster every 0.5-2 s until UNTIL_MS.
cluster_fault_loop() {
    local next
    next=$(($(cv_now_ms) + 500 + RANDOM % 1501))
    while (($(cv_now_ms) < $1)); do
        if (($(cv_now_ms) >= next)); then
            fault_cluster
            CHAOS_FAULTS=$((CHAOS_FAULTS + 1))
            next=$(($(cv_now_ms) + 500 + RANDOM % 1501))
        fi
        chaos_watch_workers
        sleep 0.1
    done
}

# cluster_svc STACK_NAME RESOURCE: the service id (docs/services.md).
cluster_svc() {
    local s
    for s in $(rcli smembers "$(ckey_c services)"); do
        [[ $(rcli hget "$(ckey_c "svc:$s")" stack_name) == "$1" &&
            $(rcli hget "$(ckey_c "svc:$s")" resource) == "$2" ]] && { echo "$s"; return 0; }
    done
    return 1
}

# cluster_healthy SVC N: N replicas placed, every one reported healthy.
cluster_healthy() {
    local placement n node rids healthy=0
    placement=$(rcli hget "$(ckey_c "svc:$1")" placement)
    [[ $(jq length <<<"${placement:-[]}") == "$2" ]] || return 1
    for node in $(jq -r '[.[].node] | unique[]' <<<"$placement"); do
        rids=$(jq -r --arg n "$node" '.[] | select(.node == $n) | .rid' <<<"$placement")
        n=$(for r in $rids; do echo "HGET $(ckey_c "report:$node") $r"; done |
            rcli | jq -s '[.[] | select(.state == "healthy")] | length' 2>/dev/null)
        healthy=$((healthy + ${n:-0}))
    done
    ((healthy == $2))
}

# cluster_check PHASE MANY: the invariants after a phase (MANY: the
# stateless replicas of the phase's template).
cluster_check() {
    local phase=$1 many=$2 st svc want ledger over procs doubles res n
    st=$(stack_get "$CLUSTER_ID" status)
    case $phase in
    create) want=CREATE_COMPLETE ;;
    update) want=UPDATE_COMPLETE ;;
    delete) want=DELETE_COMPLETE ;;
    esac
    if [[ $phase == delete ]]; then
        [[ -z $st || $st == DELETE_COMPLETE ]] || chaos_violation "delete: stack status $st"
        cv_wait_until 30 "the processes of $NAME to stop" cluster_no_procs 2>/dev/null ||
            chaos_violation "delete: $("$CLUSTER_PROCSCAN" once "$NAME" | wc -l) processes of the stack still run"
        for svc in "${CLUSTER_SVCS[@]}"; do
            for node in "${CLUSTER_NODES[@]}"; do
                rcli hkeys "$(ckey_c "assign:c$node")" | grep -q -F "$svc/" &&
                    chaos_violation "delete: c$node is still assigned replicas of $svc"
            done
        done
    else
        [[ $st == "$want" ]] || chaos_violation "$phase: stack status ${st:-none}, expected $want"
        while read -r res n; do
            svc=$(cluster_svc "$NAME" "$res") || { chaos_violation "$phase: no service for $res"; continue; }
            CLUSTER_SVCS+=("$svc")
            cv_wait_until 60 "$n replicas of $res healthy" cluster_healthy "$svc" "$n" 2>/dev/null ||
                chaos_violation "$phase: $res is not $n healthy replicas"
        done < <(cluster_many "$many")
        svc=$(cluster_svc "$NAME" db) || chaos_violation "$phase: no service for db"
        CLUSTER_SVCS+=("$svc")
        cv_wait_until 60 "5 replicas of db healthy" cluster_healthy "$svc" 5 2>/dev/null ||
            chaos_violation "$phase: db is not 5 healthy replicas"
        procs=$("$CLUSTER_PROCSCAN" once "$NAME")
        (($(grep -c . <<<"$procs") == many + 5)) ||
            chaos_violation "$phase: $(grep -c . <<<"$procs") replica processes, expected $((many + 5))"
        over=$(awk '{ print $3 }' <<<"$procs" | sort | uniq -d | head -3 | xargs)
        [[ -z $over ]] || chaos_violation "$phase: replica names in two processes: $over"
    fi
    ledger=$(rcli hgetall "$(ckey_c ledger)" | paste - - | awk -v s="$CLUSTER_ID." \
        'index($1, "start:" s) == 1 && $2 > 1 { print $1 "=" $2 }' | head -5 | xargs)
    [[ -z $ledger ]] || chaos_violation "$phase: replicas started more than once (ledger): $ledger"
    doubles=$("$CLUSTER_PROCSCAN" doubles "$CLUSTER_SCAN" | awk '$2 ~ /^db-/' | head -3)
    [[ -z $doubles ]] || chaos_violation "$phase: a stateful index ran twice at once: $(tr '\n' '|' <<<"$doubles")"
}

cluster_no_procs() { [[ -z $("$CLUSTER_PROCSCAN" once "$NAME") ]]; }

scenario_cluster() {
    local run=$1 tpl phase rc times=() n scanpid
    [[ -x $CLUSTER_AGENT ]] || { chaos_violation "$CLUSTER_AGENT is not built"; return 1; }
    declare -gA CLUSTER_KILLS=()
    CLUSTER_SVCS=()
    NAME=chaos-cluster-$run-$$-$RANDOM
    mkdir -p "$STATE/agents"
    CLUSTER_FILE=$STATE/agents/chaos-cluster.json
    # 20 nodes, node k in fd:/FD(k % 4) and UD(k % 5): every (FD, UD) pair once.
    # Capacities on the nodes too: {cluster}:settings (the node types) is
    # rewritten by every agent from its own manifest. The services keep to
    # these nodes (ChaosGroup), whatever other agents the deployment has.
    jq -n --argjson n "${#CLUSTER_NODES[@]}" '{nodeTypes: {Worker: {capacities: {Slots: 40}}},
        nodes: [range($n) | {name: "cN\(. + 1)", type: "Worker", faultDomain: "fd:/FD\(. % 4)",
                             upgradeDomain: "UD\(. % 5)", capacities: {Slots: 40},
                             properties: {ChaosGroup: "cluster"}}]}' >"$CLUSTER_FILE"
    for n in "${CLUSTER_NODES[@]}"; do cluster_agent_start "c$n"; done
    cv_wait_until 30 "the agents to register" cluster_nodes_up ||
        { chaos_violation "the agents did not come up"; cluster_stop; return 1; }
    CLUSTER_SCAN=$WORK/cluster-$run.procscan
    : >"$CLUSTER_SCAN"
    "$CLUSTER_PROCSCAN" watch "$CLUSTER_SCAN" "$NAME" &
    scanpid=$!
    tpl=$WORK/cluster-$run.yaml
    cluster_template "$CLUSTER_REPLICAS" >"$tpl"
    PHASE_T0=$(cv_now_ms)
    CLUSTER_ID=$(chaos_submit "$NAME" "$tpl") || { chaos_violation "submit failed"; kill "$scanpid"; cluster_stop; return 1; }
    SCEN_MS=0
    for phase in create update delete; do
        [[ $phase == create ]] || PHASE_T0=$(cv_now_ms)
        case $phase in
        update)
            cluster_template $((CLUSTER_REPLICAS * 3 / 4)) >"$tpl"
            timeout 60 "$CTL" update "$NAME" "$tpl" >/dev/null || { chaos_violation "convergectl update failed"; break; }
            ;;
        delete) timeout 60 "$CTL" delete "$NAME" >/dev/null || { chaos_violation "convergectl delete failed"; break; } ;;
        esac
        # Done counters move only when a whole service completes: a long idle bound.
        local p0
        p0=$(cv_now_ms)
        chaos_run_phase "$CLUSTER_ID" "$FAULT_WINDOW" 180 fault_cluster 500 2000
        rc=$?
        # Services are kept converged after they completed too: the faults
        # go on for the rest of the window (not during a delete: nothing is
        # left to keep).
        [[ $phase == delete ]] || cluster_fault_loop $((p0 + FAULT_WINDOW * 1000))
        while ((${#CLUSTER_LATE[@]} > 0)); do
            cluster_restart_late
            sleep 0.1
        done
        times+=("$phase $(chaos_secs "$PHASE_MS")")
        ((rc == 0)) || times[-1]+=" (stuck)"
        SCEN_MS=$((SCEN_MS + PHASE_MS))
        case $phase in
        create) cluster_check create "$CLUSTER_REPLICAS" ;;
        update) cluster_check update $((CLUSTER_REPLICAS * 3 / 4)) ;;
        delete) cluster_check delete 0 ;;
        esac
    done
    kill "$scanpid" 2>/dev/null
    SCEN_DETAIL="$(IFS=,; echo "${times[*]}" | sed 's/,/, /g'); kills: ${CLUSTER_KILLS[replica]:-0} replica processes, ${CLUSTER_KILLS[agent]:-0} agents restarted at once, ${CLUSTER_KILLS[agent_late]:-0} agents restarted 2-4 s later; $(grep -c -v ' -$' "$CLUSTER_SCAN") process samples"
    cluster_stop
    scen_end
}

# Stops the agents, kills whatever replica process of the stack is left and
# removes the nodes from the cluster.
cluster_stop() {
    local n pid
    for n in "${CLUSTER_NODES[@]}"; do
        pid=$(cluster_agent_pid "c$n") && kill -TERM "$pid" 2>/dev/null
    done
    for n in "${CLUSTER_NODES[@]}"; do
        pid=$(cluster_agent_pid "c$n") && { cv_wait_until 10 "agent c$n to stop" cv_pid_gone "$pid" >/dev/null ||
            kill -KILL "$pid" 2>/dev/null; }
        rcli hdel "$(ckey_c nodes)" "c$n" >/dev/null
        rcli del "$(ckey_c "node:c$n")" "$(ckey_c "alive:c$n")" "$(ckey_c "down:c$n")" "$(ckey_c "report:c$n")" >/dev/null
    done
    for pid in $("$CLUSTER_PROCSCAN" once "$NAME" | awk '{ print $1 }'); do kill -KILL "$pid" 2>/dev/null; done
    CLUSTER_FILE=""
}
