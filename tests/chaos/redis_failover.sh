# shellcheck shell=bash
# shellcheck disable=SC2034,SC2317 # variables and functions shared across the sourced files
#
# redis_failover.sh — the redis-failover scenario (sourced by scenarios.sh).
#
# The rest of the suite runs on one Redis; this scenario needs a Redis
# Cluster, so it brings up a deployment of its own next to the suite's:
# up.sh --redis-cluster (3 masters, 3 replicas, node timeout 2 s) with one
# Kafka broker and the suite's workers (CHAOS_WORKER_ARGS), in
# CHAOS_STATE-redis-cluster. While it runs the harness's globals (STATE, the
# ports, the client environment) are that deployment's; rf_down stops it and
# loads the suite's back (also from run.sh's cleanup if the run is cut
# short), so the scenarios after it are unaffected.
#
# Three stacks of SIZE resources each (their ids, by their hash tag, decide
# which master holds them) go through create, update (10% changed) and
# delete. In each phase the master holding the most of the stacks is killed
# (SIGKILL) at 20% of the last of its stacks to be given the phase's
# command; its replica takes over. Measured: from
# the kill to the replica being a master (its ROLE), and to the next progress
# of every stack on the failed master. The killed node is started again
# before the next phase (it rejoins as the new master's replica, so every
# master has a replica to fail over to).
# During the create, small stacks are submitted one after another with
# convergectl from before the kill to 3 s after the promotion: every submit
# convergectl acknowledged (exit 0 and an id) must exist afterwards and reach
# CREATE_COMPLETE with the invariants (nothing acknowledged is lost:
# convergectl WAITs for a replica before it answers, docs/redis-cluster.md).

RF_STATE=""     # the cluster deployment's state directory while it is up
RF_SAVED=()     # the suite's CHAOS_STATE and CHAOS_BROKERS, restored by rf_down
RF_ACK_PID=""   # the submitting loop, while it runs
RF_ACK_STOP=""  # the file that stops it

rf_port() { local v=REDIS_CLUSTER_PORT_$1 && echo "${!v:-}"; }

# The node (1..6) listening on port $1.
rf_node_of_port() {
    local k
    for ((k = 1; k <= ${REDIS_CLUSTER_NODES:-0}; k++)); do
        [[ $(rf_port "$k") == "$1" ]] && { echo "$k"; return 0; }
    done
    return 1
}

rf_is_master() { [[ $(chaos_rcli -p "$(rf_port "$1")" ROLE 2>/dev/null | head -1) == master ]]; }

# The node serving slot $1 as a master now, as the cluster tells it.
rf_master_of() {
    local port
    port=$(rcli CLUSTER NODES | awk -v s="$1" '$3 ~ /master/ && $3 !~ /fail/ {
        for (i = 9; i <= NF; i++) { n = split($i, r, "-"); if (n == 1) r[2] = r[1]
            if (s >= r[1] + 0 && s <= r[2] + 0) { split($2, a, "[:@]"); print a[2]; exit } } }')
    [[ -n $port ]] && rf_node_of_port "$port"
}

# The replica (node 1..6) of master node $1.
rf_replica_of() {
    local port
    port=$(rcli CLUSTER NODES | awk -v p="127.0.0.1:$(rf_port "$1")@" '
        index($2, p) == 1 { id = $1 } $3 ~ /slave/ && !($3 ~ /fail/) { rep[$4] = $2 }
        END { if (id in rep) { split(rep[id], a, "[:@]"); print a[2] } }')
    [[ -n $port ]] && rf_node_of_port "$port"
}

# rf_replica_synced K: node K is a replica whose link to its master is up.
rf_replica_synced() {
    chaos_rcli -p "$(rf_port "$1")" INFO replication 2>/dev/null | tr -d '\r' |
        grep -qx 'master_link_status:up'
}

# Node K started again (deploy/lib/redis_cluster.sh: the same command line as
# up.sh, its data and nodes.conf kept).
rf_node_start() {
    (
        # shellcheck source=/dev/null
        . "$CHAOS_ROOT/deploy/lib/redis_cluster.sh"
        cv_redis_cluster_node_start "$1"
    ) >/dev/null 2>&1
}

# Brings the cluster deployment up (three attempts: up.sh picks the nodes'
# ports at random, and a node whose cluster bus port, its port + 10000, is
# taken at that moment does not start) and makes it the harness's.
rf_up() {
    local attempt ok=1
    RF_SAVED=("$CHAOS_STATE" "$CHAOS_BROKERS")
    RF_STATE=$CHAOS_STATE-redis-cluster
    CHAOS_STATE=$RF_STATE CHAOS_BROKERS=1 CHAOS_UP_ARGS=(--redis-cluster)
    for attempt in 1 2 3; do
        "$CHAOS_ROOT/deploy/local/down.sh" --dir "$RF_STATE" --purge >/dev/null 2>&1
        if chaos_up 2>"$WORK/rf-up.err"; then
            ok=0
            break
        fi
        chaos_note "up.sh --redis-cluster failed (attempt $attempt): $(grep -a 'error' "$WORK/rf-up.err" | tail -2 | tr '\n' ' ')"
    done
    CHAOS_UP_ARGS=()
    chaos_mark_logs
    return $ok
}

# Stops the cluster deployment (its logs stay in RF_STATE), reports any crash
# its workers wrote while stopping, and loads the suite's deployment back.
rf_down() {
    [[ -n $RF_STATE ]] || return 0
    rf_ack_stop
    chaos_mark_logs
    "$CHAOS_ROOT/deploy/local/down.sh" --dir "$RF_STATE" >/dev/null 2>&1 ||
        chaos_violation "down.sh could not stop $RF_STATE"
    chaos_scan_logs
    CHAOS_STATE=${RF_SAVED[0]} CHAOS_BROKERS=${RF_SAVED[1]}
    RF_STATE=""
    chaos_load_env
    chaos_mark_logs
}

# ---------------------------------------------------------------------------
# Submits acknowledged during the failover.
# ---------------------------------------------------------------------------

# The small stack submitted again and again: a chain of three.
rf_ack_files() {
    printf '%s\n' 'heat_template_version: 2018-08-31' 'resources:' '  a:' '    type: OS::Heat::None' \
        '  b:' '    type: OS::Heat::None' '    depends_on: a' '  c:' '    type: OS::Heat::None' \
        '    depends_on: b' >"$WORK/rf-ack.yaml"
    echo '{"a": [], "b": ["a"], "c": ["b"]}' >"$WORK/rf-ack.deps.json"
}

# rf_ack_loop LOG: one submit after another until RF_ACK_STOP exists; a line
# per submit: "START_MS END_MS EXIT NAME ID" (ID "-" when none was printed).
rf_ack_loop() {
    local log=$1 n=0 t1 out rc id name
    while [[ ! -e $RF_ACK_STOP ]]; do
        n=$((n + 1))
        name=chaos-rf-ack-$$-$n-$RANDOM
        t1=$(cv_now_ms)
        out=$(timeout 30 "$CTL" submit "$name" "$WORK/rf-ack.yaml" 2>&1)
        rc=$?
        id=$(sed -n 's/^stack [^ ]* (\([0-9a-f]*\)).*/\1/p' <<<"$out" | head -1)
        echo "$t1 $(cv_now_ms) $rc $name ${id:--}" >>"$log"
        [[ $rc == 0 ]] || sleep 0.1
    done
}

rf_ack_start() {
    RF_ACK_STOP=$WORK/rf-ack.stop
    rm -f "$RF_ACK_STOP" "$1"
    : >"$1"
    rf_ack_loop "$1" &
    RF_ACK_PID=$!
}

rf_ack_stop() {
    [[ -n $RF_ACK_PID ]] || return 0
    : >"$RF_ACK_STOP"
    wait "$RF_ACK_PID" 2>/dev/null
    RF_ACK_PID=""
}

# rf_check_acks LOG T_KILL T_PROMOTED REPLICA: every acknowledged submit
# exists and completes, with the invariants; sets RF_ACK_DETAIL.
rf_check_acks() {
    local log=$1 t_kill=$2 t_prom=$3 replica=$4
    local t1 t2 rc name id acked=() names=() before=0 during=0 after=0 on_failed=0 refused=0 left=0 done_ok=0
    local before_failed=0 deadline out line bad i
    while read -r t1 t2 rc name id; do
        if [[ $rc == 0 && $id != - ]]; then
            acked+=("$id") names+=("$name")
            local failed=0
            [[ -n $replica && $(rf_master_of "$(rcli CLUSTER KEYSLOT "{$id}")") == "$replica" ]] && failed=1
            on_failed=$((on_failed + failed))
            if ((t2 < t_kill)); then
                before=$((before + 1)) before_failed=$((before_failed + failed))
            elif [[ -n $t_prom ]] && ((t1 >= t_prom)); then
                after=$((after + 1))
            else
                during=$((during + 1))
            fi
        else
            refused=$((refused + 1))
            # Not acknowledged: may or may not exist; noted, not judged.
            [[ -n $(rcli HGET "${PREFIX}stacks" "$name" 2>/dev/null) ]] && left=$((left + 1))
        fi
    done <"$log"
    ((${#acked[@]} > 0)) || chaos_violation "no submit was acknowledged around the failover"
    # Every acknowledged stack settles (bounded), then is checked.
    deadline=$(($(cv_now_ms) + $(settle_s) * 1000))
    rf_acks_settled() {
        local i
        for i in "${acked[@]}"; do stack_settled "$i" || return 1; done
    }
    while ! rf_acks_settled && (($(cv_now_ms) < deadline)); do sleep 0.2; done
    for i in "${!acked[@]}"; do
        id=${acked[i]}
        if [[ -z $(stack_get "$id" status) ]]; then
            chaos_violation "acknowledged submit lost: ${names[i]} ($id) has no stack record after the failover"
            continue
        fi
        out=$(chaos_check "$STATE" "$id" create "$WORK/rf-ack.deps.json" "" "" CREATE_COMPLETE "$LEDGER")
        bad=0
        while IFS= read -r line; do
            [[ $line == VIOLATION:* ]] || continue
            chaos_violation "acknowledged stack ${names[i]} ($id): ${line#VIOLATION: }"
            bad=1
        done <<<"$out"
        ((bad)) || done_ok=$((done_ok + 1))
    done
    RF_ACK_DETAIL="submits: ${#acked[@]} acknowledged ($before before the kill, $before_failed of them in the failed master's slots; $during during the failover; $after after; $on_failed in the failed master's slots in all), $done_ok of them CREATE_COMPLETE and sound; $refused refused ($left of those left their name mapped)"
}

# ---------------------------------------------------------------------------
# One phase: command, the busiest master killed at 20%, figures, checks.
# ---------------------------------------------------------------------------

RF_IDS=() RF_NAMES=() RF_DEPS=() RF_CHANGES=() RF_DUMPS=()

# rf_phase create|update|delete RUN: appends to RF_DETAIL, SCEN_MS.
rf_phase() {
    local phase=$1 run=$2 i id k victim="" best=0 replica pid t_ph t_kill now d st
    local t_prom="" rec_all="" placement="" first="" slot
    local -A on=()
    local masters=() d0=() rec=() trav=() victims=()
    # Where the stacks are: their ids' slots' masters.
    for i in "${!RF_IDS[@]}"; do
        slot=$(rcli CLUSTER KEYSLOT "{${RF_IDS[i]}}")
        masters[i]=$(rf_master_of "$slot") || masters[i]="?"
        on[${masters[i]}]=$((${on[${masters[i]}]:-0} + 1))
    done
    for k in "${!on[@]}"; do
        placement+="${placement:+, }redis-c$k: ${on[$k]}"
        [[ $k != "?" ]] && ((on[$k] > best)) && best=${on[$k]} victim=$k
    done
    if [[ -z $victim ]]; then
        chaos_violation "$phase: no master found for the stacks' slots"
        return 1
    fi
    local order=()
    for i in "${!RF_IDS[@]}"; do
        [[ ${masters[i]} == "$victim" ]] && victims+=("$i") || order+=("$i")
    done
    replica=$(rf_replica_of "$victim") || replica=""
    [[ -n $replica ]] || chaos_violation "$phase: redis-c$victim has no replica to fail over to"
    # The command (update, delete) for the victim's stacks last, and the kill
    # at 20% of the last of them: a delete of a few hundred resources may be
    # over before the commands for the others are.
    t_ph=$(cv_now_ms)
    for i in "${order[@]}" "${victims[@]}"; do
        case $phase in
        update) timeout 60 "$CTL" update "${RF_NAMES[i]}" --existing -P ver=2 >/dev/null ||
            chaos_violation "update of ${RF_NAMES[i]} failed" ;;
        delete) timeout 60 "$CTL" delete "${RF_NAMES[i]}" >/dev/null ||
            chaos_violation "delete of ${RF_NAMES[i]} failed" ;;
        esac
        trav[i]=$(stack_get "${RF_IDS[i]}" traversal)
    done
    first=${RF_IDS[${victims[-1]}]}
    chaos_wait_progress "$first" 20 60 ||
        chaos_note "$phase: the stack did not reach 20% before the kill (done $(stack_get "$first" "done")/$(stack_get "$first" total), $(stack_get "$first" status))"
    for i in "${victims[@]}"; do d0[i]=$(stack_get "${RF_IDS[i]}" "done"); done
    local at
    at="${d0[${victims[-1]}]:-?}/$(stack_get "$first" total)"
    pid=$(cv_alive "redis-c$victim") || { chaos_violation "$phase: redis-c$victim is not running"; return 1; }
    kill -KILL "$pid"
    t_kill=$(cv_now_ms)
    CHAOS_FAULTS=$((CHAOS_FAULTS + 1))
    chaos_say "  $phase: redis-c$victim (master of $best of the stacks; stacks on $placement) SIGKILL at $at done; its replica redis-c${replica:-?}"
    # The replica promoted; every stack on the failed master moving again;
    # the submits going on until 3 s after the promotion.
    while :; do
        now=$(cv_now_ms)
        [[ -z $t_prom && -n $replica ]] && rf_is_master "$replica" && t_prom=$now
        for i in "${victims[@]}"; do
            [[ -z ${rec[i]:-} ]] || continue
            id=${RF_IDS[i]}
            d=$(stack_get "$id" "done") st=$(stack_get "$id" status)
            if [[ $d =~ ^[0-9]+$ && ${d0[i]} =~ ^[0-9]+$ ]] && ((d > d0[i])) ||
                [[ -n $st && $st != *_IN_PROGRESS ]]; then
                rec[i]=$((now - t_kill))
            fi
        done
        if [[ -n $RF_ACK_PID && -n $t_prom ]] && ((now - t_prom >= 3000)); then rf_ack_stop; fi
        ((${#rec[@]} == ${#victims[@]})) && [[ -n $t_prom && -z $RF_ACK_PID ]] && break
        if ((now - t_kill > $(settle_s) * 1000)); then
            [[ -n $t_prom ]] || chaos_violation "$phase: redis-c${replica:-?} not a master $(settle_s) s after redis-c$victim was killed"
            ((${#rec[@]} == ${#victims[@]})) ||
                chaos_violation "$phase: $((${#victims[@]} - ${#rec[@]})) stacks on redis-c$victim made no progress in $(settle_s) s after the kill"
            break
        fi
        chaos_watch_workers
        sleep 0.05
    done
    rf_ack_stop
    for i in "${victims[@]}"; do
        [[ -n ${rec[i]:-} ]] && { [[ -z $rec_all ]] || ((rec[i] > rec_all)); } && rec_all=${rec[i]}
    done
    ((${#rec[@]} == ${#victims[@]})) && CHAOS_RECOVERY+=("$rec_all")
    for i in "${!RF_IDS[@]}"; do
        PHASE_TRAV=${trav[i]}
        chaos_wait_settled "${RF_IDS[i]}" "$(settle_s)"
    done
    SCEN_MS=$((SCEN_MS + $(cv_now_ms) - t_ph))
    RF_DETAIL+="${RF_DETAIL:+; }$phase $(chaos_secs $(($(cv_now_ms) - t_ph))): redis-c$victim (${best} of ${#RF_IDS[@]} stacks) killed at $at, redis-c${replica:-?} master after ${t_prom:+$((t_prom - t_kill))} ms, progress after ${rec_all:-?} ms"
    # A failover may lose a node's completion after its successors' jobs
    # went out: those jobs come early and are refused (check_begin.lua
    # NOTREADY) until the lost node is redone; the order checks stay strict.
    for i in "${!RF_IDS[@]}"; do
        DEPS=${RF_DEPS[i]} CHANGES=${RF_CHANGES[i]} PHASE_TRAV=${trav[i]}
        scen_check "${RF_IDS[i]}" "$phase" "${RF_DUMPS[i]}" "$([[ $phase == create ]] && echo "${RF_DUMPS[i]}")"
    done
    local early
    early=$(cat "$STATE"/log/engine-*.log 2>/dev/null | grep -c 'not run before the others')
    ((early == RF_EARLY)) || RF_DETAIL+=", $((early - RF_EARLY)) early jobs refused"
    RF_EARLY=$early
    [[ $phase != create ]] || rf_check_acks "$WORK/rf-ack-$run.log" "$t_kill" "$t_prom" "$replica"
    # The killed node back, as the new master's replica.
    rf_node_start "$victim" || chaos_violation "redis-c$victim would not start again"
    cv_wait_until 60 "redis-c$victim to be a replica in sync again" rf_replica_synced "$victim" >/dev/null ||
        chaos_violation "redis-c$victim is not a replica in sync 60 s after it was started again"
}

scenario_redis-failover() {
    # SIZE each: a create of SIZE/3 now ends before the kill can be aimed at it.
    local run=$1 i size=$SIZE phase
    RF_DETAIL="" RF_ACK_DETAIL="" SCEN_MS=0 RF_EARLY=0
    if ! rf_up; then
        chaos_violation "could not start the Redis Cluster deployment in $RF_STATE"
        rf_down
        return 1
    fi
    rf_ack_files
    RF_IDS=() RF_NAMES=() RF_DEPS=() RF_CHANGES=() RF_DUMPS=()
    local saved=$SIZE
    SIZE=$size
    for i in 1 2 3; do
        scen_stack redis-failover "$run-$i" || break
        RF_NAMES+=("$NAME") RF_DEPS+=("$DEPS") RF_CHANGES+=("$CHANGES") RF_DUMPS+=("$WORK/rf-$run-$i.create.json")
    done
    SIZE=$saved
    # The submits start a few seconds before the kill: before the stacks.
    rf_ack_start "$WORK/rf-ack-$run.log"
    rf_acks_logged() { (($(grep -cE ' 0 [^ ]+ [0-9a-f]+$' "$WORK/rf-ack-$run.log") >= 10)); }
    cv_wait_until 60 "10 submits to be acknowledged" rf_acks_logged >/dev/null ||
        chaos_violation "convergectl acknowledged fewer than 10 submits in 60 s before the kill"
    for i in "${!RF_NAMES[@]}"; do
        RF_IDS[i]=$(chaos_submit "${RF_NAMES[i]}" "${RF_DEPS[i]%.deps.json}.yaml") ||
            { chaos_violation "submit of ${RF_NAMES[i]} failed"; rf_down; return 1; }
    done
    for phase in create update delete; do
        rf_phase "$phase" "$run" || break
    done
    SCEN_DETAIL="3 stacks of $(jq length "${RF_DEPS[0]}"); $RF_DETAIL; $RF_ACK_DETAIL"
    scen_end
    rf_down
}
