# Resilience: an engine killed mid-stack, lost jobs found by the reaper,
# every physical create counted once in the ledger, jobs for unknown stacks
# and jobs that keep failing dead-lettered, messages over the size limit.
# shellcheck shell=bash

RES_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
RES_PREFIX=${CONVERGE_PREFIX:-cv:}

res_status_is() { # id status
    [ "$(redis HGET "$RES_PREFIX{$1}:stack" status)" = "$2" ]
}

res_done_at_least() { # id n
    [ "$(redis HGET "$RES_PREFIX{$1}:stack" "done")" -ge "$2" ] 2>/dev/null
}

res_recorded() { # id resource
    [ -n "$(redis HGET "$RES_PREFIX{$1}:res:$2" uuid)" ]
}

res_worker_ready() { [ "$(redis HGET "${RES_PREFIX}worker:$1" state)" = ready ]; }

res_new_id() { head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# res_lua NAME: the text of a script as the workers load it (prelude + body).
res_lua() { cat "$RES_ROOT/proto/lua/lib.lua" "$RES_ROOT/proto/lua/$1.lua"; }

# res_begin_lost NAME ID TEMPLATE_JSON: stores a stack as `convergectl
# submit` does (name, definition, status, traversal 1) but publishes no job.
res_begin_lost() {
    local k="$RES_PREFIX{$2}"
    redis HSETNX "${RES_PREFIX}stacks" "$1" "$2" >/dev/null
    redis EVAL "$(res_lua stack_begin)" 3 "$k:stack" "$k:def" "$k:events" \
        CREATE "$1" "$2" "$3" '{}' lost.yaml test 0 >/dev/null
}

# res_produce TOPIC: one Kafka message per line of stdin.
res_produce() {
    kcat -P -b "$CONVERGE_KAFKA" -t "$1"
}

# msgpack of a CHECK / OBSERVE / STACK job of stack ID (16 hex), traversal 1,
# resource RESOURCE (default "x", under 32 bytes), phase PHASE (0 update,
# 1 cleanup; default 0), version 1 — what the workers publish.
res_fixstr() { printf "\\x$(printf %x $((0xa0 + ${#1})))%s" "$1"; }
res_check_job() { # id [resource]
    printf '\x86\xa1v\x01\xa1t\x02\xa1s\xb0%s\xa2tr\x01\xa1r' "$1"
    res_fixstr "${2:-x}"
    printf '\xa1p\x00\n'
}
# res_check_jobs ID RESOURCE NODES: one CHECK message carrying the job of
# RESOURCE and those of NODES ("u/a/u/b": node names joined by '/', under
# 32 bytes), as an expansion or a finished node publishes several.
res_check_jobs() {
    printf '\x87\xa1v\x01\xa1t\x02\xa1s\xb0%s\xa2tr\x01\xa1r' "$1"
    res_fixstr "$2"
    printf '\xa1p\x00\xa2ns'
    res_fixstr "$3"
    printf '\n'
}
res_observe_job() { # id [resource [phase]]
    printf '\x87\xa1v\x01\xa1t\x03\xa1s\xb0%s\xa2tr\x01\xa1r' "$1"
    res_fixstr "${2:-x}"
    printf "\\xa1p\\x0${3:-0}\\xa3ver\\x01\\n"
}
res_stack_job() { printf '\x85\xa1v\x01\xa1t\x01\xa1s\xb0%s\xa2tr\x01\xa1k\x00\n' "$1"; }

# res_dead_about TEXT: the dead letters whose reason contains TEXT (JSON list).
res_dead_about() { ctl dead -o json | jq --arg t "$1" '[.[] | select(.reason | contains($t))]'; }
res_dead_count_is() { [ "$(res_dead_about "$1" | jq length)" -ge "$2" ]; }

# res_ledger ID: the stack's ledger as JSON {"create:<uuid>": n, ...}.
res_ledger() {
    redis HGETALL "$RES_PREFIX{$1}:ledger" | jq -Rn '[inputs] | [range(0; length; 2) as $i
        | {(.[$i]): (.[$i + 1] | tonumber)}] | add // {}'
}

res_stack_id() { redis HGET "${RES_PREFIX}stacks" "$1"; }

# res_up ARGS...: up.sh on the test's state with the workers it has now.
res_up() {
    local engines observers
    engines=$(find "$STATE/pids" -name 'engine-*.pid' | wc -l)
    observers=$(find "$STATE/pids" -name 'observer-*.pid' | wc -l)
    "$RES_ROOT/deploy/local/up.sh" --dir "$STATE" --no-build \
        --build-dir "$(dirname "$CONVERGECTL")" --engines "$engines" --observers "$observers" \
        "$@" >/dev/null 2>&1
}

# A restart moves a worker's log aside (.prev) and the next one drops it:
# what a sanitizer said in it must be reported before that. Also used from
# EXIT traps, hence `exit`.
res_check_logs() {
    if grep -lE "AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer|runtime error:" \
        "$STATE"/log/engine-*.log.prev "$STATE"/log/observer-*.log.prev 2>/dev/null; then
        fail "sanitizer reports in the logs of the restarted workers above" || exit 1
    fi
}

# res_workers ENV...: restarts every worker with ENV (NAME=VALUE) added, and
# waits until they are ready; with no ENV, as up.sh starts them.
res_workers() {
    (
        for setting; do export "${setting?}"; done
        res_up --restart-workers
    ) || fail "could not restart the workers" || exit 1
    res_check_logs
}

# Starts again, as up.sh does, any worker of STATE that is not running.
res_restart_missing() {
    res_up || fail "could not start the missing workers" || exit 1
    res_check_logs
}

# A chain of N TestResources, each waiting SECS before its create completes.
res_chain_template() {
    local n=$1 secs=$2 i
    echo "heat_template_version: 2018-08-31"
    echo "resources:"
    for ((i = 0; i < n; i++)); do
        echo "  r$i:"
        echo "    type: OS::Heat::TestResource"
        echo "    properties: {value: v$i, action_wait_secs: {create: $secs}}"
        ((i == 0)) || echo "    depends_on: r$((i - 1))"
    done
}

# ---------------------------------------------------------------------------

test_resilience_engine_killed_mid_stack_the_stack_completes_creating_each_once() {
    local name tpl id pid t_kill t_done ledger
    name=$(stack_name res-killed)
    tpl=$(mktemp --suffix .yaml)
    res_chain_template 16 0.3 >"$tpl"
    ctl submit "$name" "$tpl" >/dev/null
    rm -f "$tpl"
    id=$(res_stack_id "$name")
    trap res_restart_missing EXIT
    cv_wait_until 30 "the stack to be under way" res_done_at_least "$id" 3
    pid=$(cat "$STATE/pids/engine-1.pid")
    kill -KILL "$pid"
    t_kill=$(date +%s%N)
    cv_wait_until 60 "the stack to complete after the kill" res_status_is "$id" CREATE_COMPLETE
    t_done=$(date +%s%N)
    echo "    recovered: stack complete $(((t_done - t_kill) / 1000000)) ms after kill -9 of engine-1"
    ledger=$(res_ledger "$id")
    assert_eq 16 "$(jq length <<<"$ledger")" "resource versions created"
    assert_eq '[1]' "$(jq -c '[.[]] | unique' <<<"$ledger")" "creates per version"
}

test_resilience_ledger_counts_each_create_and_delete_once() {
    local name id ledger creates deletes
    name=$(stack_name res-ledger)
    ctl submit "$name" "$DATA/stacks/chain.yaml" --wait --timeout 60 >/dev/null
    id=$(res_stack_id "$name")
    ctl delete "$name" --wait --timeout 60 >/dev/null
    assert_eq DELETE_COMPLETE "$(redis HGET "$RES_PREFIX{$id}:stack" status)" status
    ledger=$(res_ledger "$id")
    creates=$(jq -c '[to_entries[] | select(.key | startswith("create:")) | .value]' <<<"$ledger")
    deletes=$(jq -c '[to_entries[] | select(.key | startswith("delete:")) | .value]' <<<"$ledger")
    assert_eq '[1,1,1,1]' "$creates" "one create per resource"
    assert_eq '[1,1,1,1]' "$deletes" "one delete per resource"
    assert_eq '[]' "$(jq -c '[keys[] | select(startswith("create:")) | sub("create:"; "delete:")]
        - [keys[] | select(startswith("delete:"))]' <<<"$ledger")" "every version created is deleted"
}

test_resilience_ledger_counts_the_delete_of_a_replaced_version() {
    local name id ledger old new
    name=$(stack_name res-ledger-replace)
    ctl submit "$name" "$DATA/stacks/update/value.yaml" -P value=one -P replace=true \
        --wait --timeout 60 >/dev/null
    id=$(res_stack_id "$name")
    old=$(redis HGET "$RES_PREFIX{$id}:res:thing" uuid)
    ctl update "$name" "$DATA/stacks/update/value.yaml" -P value=two -P replace=true \
        --wait --timeout 60 >/dev/null
    new=$(redis HGET "$RES_PREFIX{$id}:res:thing" uuid)
    [ "$old" != "$new" ] || fail "the replacement kept the version $old"
    ledger=$(res_ledger "$id")
    assert_eq 1 "$(jq --arg k "create:$old" '.[$k]' <<<"$ledger")" "creates of the old version"
    assert_eq 1 "$(jq --arg k "create:$new" '.[$k]' <<<"$ledger")" "creates of the new version"
    assert_eq 1 "$(jq --arg k "delete:$old" '.[$k]' <<<"$ledger")" "deletes of the old version"
    assert_eq null "$(jq --arg k "delete:$new" '.[$k]' <<<"$ledger")" "deletes of the new version"
}

test_resilience_duplicated_check_job_does_not_create_twice() {
    local name id uuid
    name=$(stack_name res-dup)
    ctl submit "$name" "$DATA/stacks/wait.yaml" >/dev/null
    id=$(res_stack_id "$name")
    cv_wait_until 30 "slow's create to be recorded" res_recorded "$id" slow
    # The same CHECK job again, as a redelivery or a duplicate would bring it.
    res_check_job "$id" slow | res_produce converge.check
    cv_wait_until 30 "the stack to complete" res_status_is "$id" CREATE_COMPLETE
    uuid=$(redis HGET "$RES_PREFIX{$id}:res:slow" uuid)
    assert_eq 1 "$(redis HGET "$RES_PREFIX{$id}:ledger" "create:$uuid")" "creates of slow"
}

test_resilience_jobs_for_an_unknown_stack_are_dead_lettered() {
    local id
    id=$(res_new_id)
    { res_check_job "$id"; res_stack_job "$id"; } | res_produce converge.check
    res_observe_job "$id" | res_produce converge.observe
    cv_wait_until 30 "three dead letters naming stack $id" res_dead_count_is "unknown stack $id" 3
    assert_eq 2 "$(res_dead_about "unknown stack $id" | jq '[.[] | select(.reason
        | startswith("engine: "))] | length')" "dead-lettered by the engines"
    assert_eq 1 "$(res_dead_about "unknown stack $id (OBSERVE job)" | jq length)" \
        "dead-lettered by an observer"
    assert_eq 0 "$(redis EXISTS "$RES_PREFIX{$id}:stack")" "no stack is made up"
}

test_resilience_reaper_requeues_a_lost_stack_job() {
    local name id
    name=$(stack_name res-lost-stack) id=$(res_new_id)
    res_begin_lost "$name" "$id" '{"heat_template_version":"2018-08-31","resources":{"a":{
        "type":"OS::Heat::TestResource","properties":{"value":"x"}}}}'
    cv_wait_until 40 "the reaper to complete the stack" res_status_is "$id" CREATE_COMPLETE
    [ -n "$(redis HGET "$RES_PREFIX{$id}:stack" reaped)" ] || fail "the stack does not say it was reaped"
}

# res_expand_lost NAME ID: a stack a -> b stored and expanded as the engine
# does it, with no job published for it.
res_expand_lost() {
    local k="$RES_PREFIX{$2}" none='"type":"OS::Heat::None","properties":{}'
    res_begin_lost "$1" "$2" '{"heat_template_version":"2018-08-31","resources":{
        "a":{"type":"OS::Heat::None"},"b":{"type":"OS::Heat::None","depends_on":"a"}}}'
    redis HSET "$k:rdef:1:draft:t:1" \
        a "{$none,\"deletion_policy\":\"Delete\",\"metadata\":{},\"depends\":[]}" \
        b "{$none,\"deletion_policy\":\"Delete\",\"metadata\":{},\"depends\":[\"a\"]}" \
        >/dev/null
    redis HSET "$k:graph:1:draft:t:1" u/a '{"s":[["u/b",1]],"p":0}' u/b '{"s":[],"p":1}' >/dev/null
    assert_eq OK "$(redis EVAL "$(res_lua stack_expanded)" 6 "$k:stack" "$k:def" "$k:rdef:1" \
        "$k:graph:1" "$k:rdef:1:draft:t:1" "$k:graph:1:draft:t:1" 1 2 '{}')" \
        "the traversal is expanded"
    redis SADD "${RES_PREFIX}active" "$2" >/dev/null
}

# res_requeued ID CHECKS OBSERVES: an engine logged that the reaper re-queued
# that many jobs of stack ID, the first being u/a's.
res_requeued() {
    grep -qE "reaper: stack $1 traversal 1 made no progress for [0-9]+ s; re-queued $2 CHECK and \
$3 OBSERVE jobs \(u/a\)" "$STATE"/log/engine-*.log
}

# Two stalled traversals at once (the reaper's wait is the slow part): one
# whose root's CHECK job was lost, one whose root's create is recorded by an
# engine that is gone and whose OBSERVE job was lost.
test_resilience_reaper_requeues_the_lost_check_and_observe_jobs_of_ready_nodes() {
    local checked observed k
    checked=$(res_new_id) observed=$(res_new_id) k="$RES_PREFIX{$observed}"
    res_expand_lost "$(stack_name res-lost-check)" "$checked"
    res_expand_lost "$(stack_name res-lost-observe)" "$observed"
    redis EVAL "$(res_lua check_finish)" 7 "$k:res:a" "$k:lease:a" "$k:events" "$k:counts" \
        "$k:index" "$k:ledger" "$k:stack" 0 token CREATE_IN_PROGRESS CREATE "state changed" \
        "$observed-a" "uuid-a" OS::Heat::None '{}' '{}' '{}' 1 engine-gone a IN_PROGRESS '[]' \
        Delete '' '' '' '' >/dev/null
    cv_wait_until 40 "the reaper to complete the first stack" res_status_is "$checked" CREATE_COMPLETE
    cv_wait_until 10 "the reaper to complete the second stack" res_status_is "$observed" CREATE_COMPLETE
    assert_eq 2 "$(redis HGET "$RES_PREFIX{$checked}:counts" CREATE_COMPLETE)" "resources created"
    res_requeued "$checked" 1 0 || fail "u/a's CHECK job was not re-queued"
    res_requeued "$observed" 0 1 || fail "u/a's OBSERVE job was not re-queued"
    assert_eq "$observed-a" "$(redis HGET "$k:res:a" physical_id)" "the recorded version completed"
    assert_eq 1 "$(redis HGET "$k:ledger" create:uuid-a)" "creates of the recorded version"
}

# An engine that died between marking u/a done and publishing u/b's job:
# the CHECK job of u/a comes again (Kafka redelivers what was not committed)
# and must bring u/b's job back at once, not after the reaper's stall.
test_resilience_redelivered_check_of_a_done_node_publishes_its_lost_successor() {
    local id k
    id=$(res_new_id) k="$RES_PREFIX{$id}"
    res_expand_lost "$(stack_name res-done-redelivered)" "$id"
    assert_eq "OK 1 1 2 1 1 0" "$(redis EVAL "$(res_lua node_done)" 10 "$k:stack" "$k:res:a" \
        "$k:done:1" "$k:events" "$k:counts" "$k:index" "$k:lease:a" "$k:graph:1" \
        "$k:publishing:1" "$k:sp:1:u/b" \
        1 u/a '' '' '' "done" '{}' engine-gone a '' '' '' '' '' '' 1 u/b | tr '\n' ' ' |
        sed 's/ $//')" "u/a done, u/b's sync point complete"
    assert_eq 1 "$(redis SISMEMBER "$k:publishing:1" u/a)" "u/a waits for its successors' jobs"
    res_check_job "$id" a | res_produce converge.check
    cv_wait_until 30 "the stack to complete" res_status_is "$id" CREATE_COMPLETE
    assert_eq "" "$(redis HGET "$k:stack" reaped)" "completed without the reaper"
    assert_eq CREATE_COMPLETE "$(redis HGET "$k:res:b" status)" "b created"
}

# A Redis failover may lose a node's completion after its successors' jobs
# went out (docs/redis-cluster.md): such a job comes while its sync point
# lacks that predecessor. Forged here: u/b's CHECK before u/a ran. It must
# not act (check_begin NOTREADY), and u/a, done later, publishes it again.
test_resilience_a_check_job_before_its_predecessors_are_done_is_not_run() {
    local id k
    id=$(res_new_id) k="$RES_PREFIX{$id}"
    res_expand_lost "$(stack_name res-early)" "$id"
    res_check_job "$id" b | res_produce converge.check
    cv_wait_until 30 "an engine to refuse u/b's early job" \
        grep -q "CHECK $id/b t1: 0 of 1 predecessors done, not run before the others" "$STATE"/log/engine-*.log
    assert_eq "" "$(redis HGET "$k:res:b" status)" "b acted on before a was done"
    assert_eq 0 "$(redis SCARD "$k:done:1")" "nodes done"
    res_check_job "$id" a | res_produce converge.check
    cv_wait_until 30 "the stack to complete" res_status_is "$id" CREATE_COMPLETE
    assert_eq "" "$(redis HGET "$k:stack" reaped)" "completed without the reaper"
    assert_eq CREATE_COMPLETE "$(redis HGET "$k:res:b" status)" "b created"
}

# The jobs one message carries are each answered as if they came alone: b,
# first and not ready, is refused while a, after it, acts; a done then
# publishes b's job again.
test_resilience_the_jobs_of_one_message_are_each_answered_on_their_own() {
    local id k
    id=$(res_new_id) k="$RES_PREFIX{$id}"
    res_expand_lost "$(stack_name res-batch)" "$id"
    res_check_jobs "$id" b u/a | res_produce converge.check
    cv_wait_until 30 "an engine to refuse u/b's early job" \
        grep -q "CHECK $id/b t1: 0 of 1 predecessors done, not run before the others" "$STATE"/log/engine-*.log
    cv_wait_until 30 "the stack to complete" res_status_is "$id" CREATE_COMPLETE
    assert_eq "" "$(redis HGET "$k:stack" reaped)" "completed without the reaper"
    assert_eq CREATE_COMPLETE "$(redis HGET "$k:res:a" status)" "a created"
    assert_eq CREATE_COMPLETE "$(redis HGET "$k:res:b" status)" "b created"
    assert_eq 1 "$(redis HGET "$k:ledger" "create:$(redis HGET "$k:res:a" uuid)")" "creates of a"
}

# A fan of N TestResources (no dependencies), each create taking SECS.
res_fan_template() {
    local n=$1 secs=$2 i
    echo "heat_template_version: 2018-08-31"
    echo "resources:"
    for ((i = 0; i < n; i++)); do
        echo "  f$i: {type: OS::Heat::TestResource, properties: {value: v$i, \
action_wait_secs: {create: $secs}}}"
    done
}

# res_engine_child ID LOG [ARGS...]: starts an engine of this test's own (a
# child of this shell, so that its exit status is seen; --verbose: it logs
# each job it takes) with ARGS added; its pid goes to RES_CHILD. Its liveness
# record of an earlier run must not count for it. Appends to LOG.
res_engine_child() {
    local id=$1 log=$2
    shift 2
    redis DEL "${RES_PREFIX}worker:$id" >/dev/null
    "$(dirname "$CONVERGECTL")/converge-engine" --id "$id" --verbose "$@" >>"$log" 2>&1 &
    RES_CHILD=$!
}

# res_sigterm PID NAME: SIGTERM to a child, waits for it; its exit status
# goes to RES_RC (and is printed with the time it took).
res_sigterm() {
    local t0
    t0=$(date +%s%N)
    kill -TERM "$1"
    RES_RC=0
    wait "$1" || RES_RC=$?
    echo "    $2: exit status $RES_RC, $((($(date +%s%N) - t0) / 1000000)) ms after SIGTERM"
}

# SIGTERM to an engine in the middle of a stack: it stops consuming, ends
# what it holds within its grace (10 s), commits and exits 0; the stack
# completes, each create once.
test_resilience_sigterm_mid_stack_exits_0_and_loses_nothing() {
    local name tpl id pid log jobs ledger
    name=$(stack_name res-sigterm) log=$(mktemp) tpl=$(mktemp --suffix .yaml)
    res_engine_child engine-term "$log"
    pid=$RES_CHILD
    cv_wait_until 30 "engine-term to be ready" res_worker_ready engine-term
    res_fan_template 300 0.2 >"$tpl"
    ctl submit "$name" "$tpl" >/dev/null
    rm -f "$tpl"
    id=$(res_stack_id "$name")
    cv_wait_until 30 "the stack to be under way" res_done_at_least "$id" 20
    res_sigterm "$pid" engine-term
    assert_eq 0 "$RES_RC" "exit status after SIGTERM"
    grep -q "signal 15: stopping" "$log" || fail "engine-term did not log the signal"
    jobs=$(sed -n 's/.*stopped: \([0-9]*\) jobs.*/\1/p' "$log")
    [ "${jobs:-0}" -ge 1 ] || fail "engine-term handled no job before the signal: $(tail -3 "$log")"
    rm -f "$log"
    cv_wait_until 60 "the stack to complete" res_status_is "$id" CREATE_COMPLETE
    ledger=$(res_ledger "$id")
    assert_eq 300 "$(jq length <<<"$ledger")" "resource versions created"
    assert_eq '[1]' "$(jq -c '[.[]] | unique' <<<"$ledger")" "creates per version"
}

# res_service ACTION NAME...: deploy/local/service.sh on the test's state.
res_service() {
    local action=$1 name
    shift
    for name; do
        "$RES_ROOT/deploy/local/service.sh" --dir "$STATE" --build-dir "$(dirname "$CONVERGECTL")" \
            "$action" "$name" >/dev/null || fail "could not $action $name" || exit 1
    done
}

# For EXIT traps: engine-1 and engine-2 running again, whatever happened.
res_engines_back() {
    res_service start engine-1 engine-2
    res_check_logs
}

res_worker_retried() { [ "$(redis HGET "${RES_PREFIX}worker:$1" retries)" -ge 1 ] 2>/dev/null; }

# A job waiting for a lease another holds when SIGTERM comes is handed back
# at once (redelivered to another engine), not waited for until the grace
# runs out. engine-term is the only engine meanwhile, so the job is its.
test_resilience_sigterm_hands_back_a_job_waiting_for_a_lease() {
    local id k pid log
    id=$(res_new_id) k="$RES_PREFIX{$id}" log=$(mktemp)
    trap res_engines_back EXIT
    res_service stop engine-1 engine-2
    res_engine_child engine-term "$log"
    pid=$RES_CHILD
    cv_wait_until 30 "engine-term to be ready" res_worker_ready engine-term
    res_expand_lost "$(stack_name res-handback)" "$id"
    redis SET "$k:lease:a" someone-else PX 120000 >/dev/null
    res_check_job "$id" a | res_produce converge.check
    cv_wait_until 30 "engine-term to wait for the lease" res_worker_retried engine-term
    res_sigterm "$pid" engine-term
    assert_eq 0 "$RES_RC" "exit status after SIGTERM"
    grep -qE ", [1-9][0-9]* handed back$" "$log" || fail "engine-term did not hand the job back: $(tail -2 "$log")"
    if grep -q "jobs in flight" "$log"; then fail "engine-term waited for the grace"; fi
    rm -f "$log"
    redis DEL "$k:lease:a" >/dev/null
    res_service start engine-1 engine-2
    cv_wait_until 60 "the stack to complete" res_status_is "$id" CREATE_COMPLETE
}

res_redis_pid() { cat "$STATE/pids/redis.pid"; }

res_redis_cont() { kill -CONT "$(res_redis_pid)" 2>/dev/null || true; }

# A job still waiting for Redis when the grace runs out: the engine gives up
# waiting, destroys what it consumed (or rd_kafka_destroy would wait for it
# forever), exits 0 with no leak, and the job is redelivered.
test_resilience_sigterm_with_a_job_stuck_on_redis_exits_0_after_the_grace() {
    local id k pid log
    id=$(res_new_id) k="$RES_PREFIX{$id}" log=$(mktemp)
    trap 'res_redis_cont; res_engines_back' EXIT
    res_service stop engine-1 engine-2
    res_engine_child engine-term "$log"
    pid=$RES_CHILD
    cv_wait_until 30 "engine-term to be ready" res_worker_ready engine-term
    res_expand_lost "$(stack_name res-grace)" "$id"
    kill -STOP "$(res_redis_pid)"
    res_check_job "$id" a | res_produce converge.check
    cv_wait_until 30 "engine-term to take the job" \
        grep -q "job CHECK: stack $id traversal 1 resource a" "$log"
    res_sigterm "$pid" engine-term
    res_redis_cont
    assert_eq 0 "$RES_RC" "exit status after SIGTERM"
    grep -qE "stopping with [0-9]+ jobs in flight" "$log" ||
        fail "engine-term did not wait out its grace: $(tail -3 "$log")"
    rm -f "$log"
    res_service start engine-1 engine-2
    cv_wait_until 60 "the stack to complete" res_status_is "$id" CREATE_COMPLETE
}

# Observer jobs for nodes the traversal's graph lacks (forged, with the
# right stack and traversal): dead-lettered; a cleanup one must not count as
# done (the resource has no record, which once made it look deleted already).
test_resilience_observe_jobs_for_nodes_outside_the_graph_are_dead_lettered() {
    local id k
    id=$(res_new_id) k="$RES_PREFIX{$id}"
    res_expand_lost "$(stack_name res-forged-observe)" "$id"
    { res_observe_job "$id" zz 1; res_observe_job "$id" zz 0; } | res_produce converge.observe
    cv_wait_until 30 "two dead letters" res_dead_count_is "stack $id traversal 1 has no" 2
    assert_eq 1 "$(res_dead_about "stack $id traversal 1 has no cleanup node for resource zz" |
        jq length)" "the cleanup job dead-lettered"
    assert_eq 1 "$(res_dead_about "stack $id traversal 1 has no update node for resource zz" |
        jq length)" "the update job dead-lettered"
    assert_eq 0 "$(redis HGET "$k:stack" "done")" "nodes counted done"
    assert_eq 0 "$(redis SCARD "$k:done:1")" "nodes in the done set"
}

# res_graph ID: the traversal 1 graph of stack ID, sorted, one field per line.
res_graph() { redis HGETALL "$RES_PREFIX{$1}:graph:1" | paste - - | sort; }

res_expansions_are() { # id n: engines logged n expansions of stack ID
    [ "$(cat "$STATE"/log/engine-*.log | grep -c "expanding stack $1 traversal 1")" -eq "$2" ]
}

# The STACK job of a stack whose first resource is done comes again: the
# index has moved since the first expansion, so a second one would build a
# different graph (cleanup nodes for recorded resources); the graph jobs run
# on must stand, with its node count.
test_resilience_duplicated_stack_job_never_changes_a_running_graph() {
    local name tpl id k graph total uuid r
    name=$(stack_name res-dup-stack)
    tpl=$(mktemp --suffix .yaml)
    res_chain_template 3 1 >"$tpl"
    ctl submit "$name" "$tpl" >/dev/null
    rm -f "$tpl"
    id=$(res_stack_id "$name") k="$RES_PREFIX{$id}"
    cv_wait_until 30 "r0 to be created" res_done_at_least "$id" 1
    graph=$(res_graph "$id") total=$(redis HGET "$k:stack" total)
    res_stack_job "$id" | res_produce converge.check
    cv_wait_until 30 "the duplicate STACK job to be handled" res_expansions_are "$id" 2
    assert_eq "$graph" "$(res_graph "$id")" "the traversal graph"
    cv_wait_until 30 "the stack to complete" res_status_is "$id" CREATE_COMPLETE
    assert_eq "$total" "$(redis HGET "$k:stack" total)" "graph nodes counted"
    assert_eq "$total" "$(redis HGET "$k:stack" "done")" "graph nodes done"
    assert_eq 0 "$(redis --scan --pattern "$k:*draft*" | wc -l)" "draft keys left"
    for r in r0 r1 r2; do
        uuid=$(redis HGET "$k:res:$r" uuid)
        assert_eq 1 "$(redis HGET "$k:ledger" "create:$uuid")" "creates of $r"
    done
}

test_resilience_job_failing_repeatedly_is_dead_lettered_and_fails_its_stack() {
    local name id k reason
    name=$(stack_name res-poison-job) id=$(res_new_id) k="$RES_PREFIX{$id}"
    trap res_workers EXIT
    res_workers CONVERGE_MAX_ATTEMPTS=3
    res_expand_lost "$name" "$id"
    # Every check_begin now fails: the lease is no string (WRONGTYPE).
    redis HSET "$k:lease:a" not a-string >/dev/null
    res_check_job "$id" a | res_produce converge.check
    cv_wait_until 30 "the job to be dead-lettered" res_dead_count_is "gave up: stack $id" 1
    reason=$(res_dead_about "gave up: stack $id" | jq -r '.[0].reason')
    assert_match "resources.a: its CHECK job failed 3 times" "$reason" "dead-letter reason"
    cv_wait_until 10 "the stack to fail" res_status_is "$id" CREATE_FAILED
    assert_match "resources.a: its CHECK job failed 3 times" \
        "$(redis HGET "$k:stack" reason)" "stack reason"
}

# res_dead_starting TEXT: the dead letters whose original bytes start with TEXT.
res_dead_starting() {
    ctl dead -o json | jq --arg t "$1" '[.[] | select(.original_base64 | @base64d | startswith($t))]'
}
res_dead_starting_exists() { [ "$(res_dead_starting "$1" | jq length)" -ge 1 ]; }

test_resilience_message_over_the_size_limit_is_dead_lettered() {
    local tag dead
    tag=$(res_new_id)
    trap res_workers EXIT
    res_workers CONVERGE_MAX_MESSAGE_BYTES=4096
    { printf '%s' "$tag"; head -c 6000 /dev/zero | tr '\0' 'x'; echo; } | res_produce converge.check
    cv_wait_until 30 "the message to be dead-lettered" res_dead_starting_exists "$tag"
    dead=$(res_dead_starting "$tag")
    assert_eq "engine: message size 6016 bytes exceeds the limit of 4096 (--max-message-bytes, \
CONVERGE_MAX_MESSAGE_BYTES) (first 6016 bytes kept)" "$(jq -r '.[0].reason' <<<"$dead")" \
        "dead-letter reason"
    assert_eq 6016 "$(jq -r '.[0].original_len' <<<"$dead")" "original bytes kept"
}

# ---------------------------------------------------------------------------
# Leases of a worker restarted with its id (docs/architecture.md "Delivery,
# leases, fencing"): tokens are "<worker id>@<incarnation>:<n>", and a lease
# of an earlier incarnation of the taker's own worker id is taken over at
# once; any other holder's is waited for.

res_incarnation() { redis HGET "${RES_PREFIX}worker:$1" incarnation; }

# For EXIT traps: the test's own engine gone (even if a test failed
# halfway), engine-1 and engine-2 running again.
res_child_gone_engines_back() {
    kill -KILL "${RES_CHILD:-0}" 2>/dev/null || true
    res_engines_back
}

# res_begin_as TOKEN ID RESOURCE: check_begin.lua of u/RESOURCE of stack ID
# (expanded by res_expand_lost) called with TOKEN; prints its answer.
res_begin_as() {
    local k="$RES_PREFIX{$2}"
    redis EVAL "$(res_lua check_begin)" 9 "$k:stack" "$k:res:$3" "$k:lease:$3" "$k:rdef:1" \
        "$k:sp:1:u/$3" "$k:done:1" "$k:def" "$k:graph:1" "$k:publishing:1" \
        1 "u/$3" "$1" 60000 "$3" | head -1
}

# The rule on the scripts themselves, case by case: who may take a lease
# another token holds.
test_resilience_only_an_earlier_incarnation_of_the_same_worker_id_loses_its_lease() {
    local id k held token want signals
    id=$(res_new_id) k="$RES_PREFIX{$id}"
    res_expand_lost "$(stack_name res-lease-rule)" "$id"
    # held | taker's token | answer
    while read -r held token want; do
        redis SET "$k:lease:a" "$held" PX 60000 >/dev/null
        assert_eq "$want" "$(res_begin_as "$token" "$id" a)" "check_begin as $token, lease $held"
        if [ "$want" = OK ]; then
            assert_eq "$token" "$(redis GET "$k:lease:a")" "the lease after $token took it"
        else
            assert_eq "$held" "$(redis GET "$k:lease:a")" "the lease $token left"
        fi
    done <<'EOF_CASES'
engine-9@5f3c0a1b2c3d4-1f2e:7 engine-9@5f3c0a1b2c3d5-2a01:1 OK
engine-9@5f3c0a1b2c3d4-1f2e:7 engine-9@5f3c0a1b2c3d4-1f2e:8 BUSY
engine-9@5f3c0a1b2c3d4-1f2e:7 engine-8@5f3c0a1b2c3d5-2a01:1 BUSY
engine-9@5f3c0a1b2c3d4-1f2e:7 engine-9x@5f3c0a1b2c3d5-2a01:1 BUSY
engine-9@5f3c0a1b2c3d4-1f2e:7 engine@5f3c0a1b2c3d5-2a01:1 BUSY
engine-9:7 engine-9@5f3c0a1b2c3d5-2a01:1 BUSY
someone-else engine-9@5f3c0a1b2c3d5-2a01:1 BUSY
EOF_CASES
    # signal_begin.lua follows the same rule.
    signals=$k:signals:a
    redis HSET "$k:res:a" status CREATE_COMPLETE >/dev/null
    redis HSET "$signals" s:1 pending q:1 1 d:1 null >/dev/null
    redis SET "$k:lease:a" "engine-9@5f3c0a1b2c3d4-1f2e:s3" PX 60000 >/dev/null
    assert_eq BUSY "$(redis EVAL "$(res_lua signal_begin)" 4 "$k:stack" "$k:res:a" "$k:lease:a" \
        "$signals" "engine-8@5f3c0a1b2c3d5-2a01:s1" 60000 | head -1)" "signal_begin of another worker"
    assert_eq OK "$(redis EVAL "$(res_lua signal_begin)" 4 "$k:stack" "$k:res:a" "$k:lease:a" \
        "$signals" "engine-9@5f3c0a1b2c3d5-2a01:s1" 60000 | head -1)" "signal_begin of its restart"
    redis DEL "$k:lease:a" "$signals" "$k:res:a" >/dev/null
    # Left to the engines: the stack completes.
    res_check_job "$id" a | res_produce converge.check
    cv_wait_until 30 "the stack to complete" res_status_is "$id" CREATE_COMPLETE
}

test_resilience_worker_id_with_the_holder_separator_is_refused() {
    local out rc=0
    out=$("$(dirname "$CONVERGECTL")/converge-engine" --id "engine@1" 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit status"
    assert_match "--id \"engine@1\": .*no '@'" "$out" "the error"
}

# An engine killed (kill -9) while it held a resource's lease, restarted at
# once with the same id: its redelivered job takes the lease over from its
# dead predecessor at once, instead of waiting for it to run out. The
# leases are 120 s long and the wait for the stack 60 s: had the job waited
# for the lease, the stack could not complete in time. The lease is left as
# the engine's check_begin.lua leaves it (its token, with the incarnation its
# liveness record showed), since catching a live engine inside the
# milliseconds it holds a lease would be a race.
test_resilience_engine_restarted_with_its_id_takes_its_dead_predecessors_lease_at_once() {
    local id k log inc1 inc2 t_restart
    id=$(res_new_id) k="$RES_PREFIX{$id}" log=$(mktemp)
    trap res_child_gone_engines_back EXIT
    res_service stop engine-1 engine-2
    res_engine_child engine-lease "$log" --lease-ms 120000
    cv_wait_until 30 "engine-lease to be ready" res_worker_ready engine-lease
    inc1=$(res_incarnation engine-lease)
    assert_match '^[0-9a-f]+-[0-9a-f]+$' "$inc1" "the incarnation in the liveness record"
    { kill -KILL "$RES_CHILD" && wait "$RES_CHILD"; } 2>/dev/null || true
    res_expand_lost "$(stack_name res-restart-lease)" "$id"
    redis SET "$k:lease:a" "engine-lease@$inc1:1" PX 120000 >/dev/null
    res_check_job "$id" a | res_produce converge.check
    t_restart=$(date +%s%N)
    res_engine_child engine-lease "$log" --lease-ms 120000
    cv_wait_until 60 "the restarted engine-lease to be ready" res_worker_ready engine-lease
    inc2=$(res_incarnation engine-lease)
    [ "$inc2" != "$inc1" ] || fail "the restart kept the incarnation $inc1"
    cv_wait_until 60 "the stack to complete, long before the lease of $inc1 would run out" \
        res_status_is "$id" CREATE_COMPLETE
    echo "    restart to stack complete: $((($(date +%s%N) - t_restart) / 1000000)) ms (lease 120000 ms)"
    assert_eq 0 "$(redis EXISTS "$k:lease:a")" "leases left"
    assert_eq 1 "$(res_metric engine-lease converge_lease_takeovers_total)" "lease takeovers counted"
    res_sigterm "$RES_CHILD" engine-lease
    rm -f "$log"
    trap - EXIT
    res_engines_back
}

# res_metric WORKER NAME: the value of an unlabelled metric on the /metrics
# of the worker (its address from its liveness record).
res_metric() {
    local addr
    addr=$(redis HGET "${RES_PREFIX}worker:$1" metrics)
    curl -sf "http://$addr/metrics" | awk -v n="$2" '$1 == n { print $2 }'
}

# The same with the lease of another worker id (one that starts like it):
# the engine waits for it — it may be alive — and acts once it is gone.
test_resilience_engine_waits_for_the_lease_of_another_worker_id() {
    local id k log held
    id=$(res_new_id) k="$RES_PREFIX{$id}" log=$(mktemp)
    trap res_child_gone_engines_back EXIT
    res_service stop engine-1 engine-2
    res_engine_child engine-lease "$log" --lease-ms 120000
    cv_wait_until 30 "engine-lease to be ready" res_worker_ready engine-lease
    res_expand_lost "$(stack_name res-other-lease)" "$id"
    held="engine-lease-2@$(res_incarnation engine-lease):1"
    redis SET "$k:lease:a" "$held" PX 120000 >/dev/null
    res_check_job "$id" a | res_produce converge.check
    cv_wait_until 30 "engine-lease to wait for the lease" res_worker_retried engine-lease
    assert_eq "$held" "$(redis GET "$k:lease:a")" "the lease while engine-lease waits"
    assert_eq CREATE_IN_PROGRESS "$(redis HGET "$k:stack" status)" "the stack while the lease is held"
    redis DEL "$k:lease:a" >/dev/null
    cv_wait_until 30 "the stack to complete once the lease is gone" res_status_is "$id" CREATE_COMPLETE
    assert_eq 0 "$(res_metric engine-lease converge_lease_takeovers_total)" "lease takeovers counted"
    res_sigterm "$RES_CHILD" engine-lease
    rm -f "$log"
    trap - EXIT
    res_engines_back
}

res_children_gone_engines_back() {
    kill -KILL "${RES_CHILD:-0}" "${RES_TWIN:-0}" 2>/dev/null || true
    res_engines_back
}

# A second engine started with the same id joins the group as the same
# static member and fences the first: librdkafka raises a fatal error, and
# a consumer in that state never consumes again. The first replaces its
# consumer, takes its place back once the twin is gone, and a stack
# submitted then completes with no other engine running.
test_resilience_engine_fenced_by_a_twin_of_its_id_replaces_its_consumer() {
    local log twin_log name
    log=$(mktemp) twin_log=$(mktemp) name=$(stack_name res-fenced)
    trap res_children_gone_engines_back EXIT
    res_service stop engine-1 engine-2
    res_engine_child engine-fenced "$log"
    cv_wait_until 30 "engine-fenced to be ready" res_worker_ready engine-fenced
    local first=$RES_CHILD
    res_engine_child engine-fenced "$twin_log"
    RES_TWIN=$RES_CHILD RES_CHILD=$first
    cv_wait_until 30 "the first engine-fenced to replace its fenced consumer" \
        grep -q "the Kafka consumer failed for good: replaced by a new one" "$log"
    grep -q "fenced" "$log" || fail "the first engine-fenced did not log why: $(tail -5 "$log")"
    { kill -KILL "$RES_TWIN" && wait "$RES_TWIN"; } 2>/dev/null || true
    RES_TWIN=
    ctl submit "$name" "$DATA/stacks/chain.yaml" --wait --timeout 60 >/dev/null ||
        fail "the stack did not complete with engine-fenced alone: $(tail -5 "$log")"
    res_sigterm "$RES_CHILD" engine-fenced
    assert_eq 0 "$RES_RC" "the first engine-fenced's exit status"
    rm -f "$log" "$twin_log"
    trap - EXIT
    res_engines_back
}
