# The live placement engine without the engine or agents: nodes registered
# by hand (their description, heartbeat and admin hash, as converge-agent
# writes them), a service record written by hand (as svc_put.lua writes it),
# and the observers' cluster loop placing, re-placing, scaling and deleting
# it (docs/services.md). Node names, the service and its placement
# constraint are unique to the run; everything is removed at the end, so no
# other test's service is placed on nodes nobody runs.
# shellcheck shell=bash

LV_PREFIX=${CONVERGE_PREFIX:-cv:}

lv_key() { echo "${LV_PREFIX}{cluster}:$1"; }

# Registers node $1 in fault domain $2, upgrade domain $3, alive, enabled.
lv_node() {
    local run=$4
    redis HSET "$(lv_key nodes)" "$1" \
        "{\"name\":\"$1\",\"faultDomain\":\"fd:/$2\",\"upgradeDomain\":\"$3\",\"properties\":{\"run\":\"$run\"},\"capacities\":{\"MemoryMB\":1000}}" >/dev/null
    redis SET "$(lv_key "alive:$1")" x >/dev/null
    redis HSET "$(lv_key "node:$1")" admin enabled fence_ms 1000 >/dev/null
}

lv_cleanup() { # run nodes...
    local run=$1 n; shift
    for n in "$@"; do
        redis HDEL "$(lv_key nodes)" "$n" >/dev/null
        redis DEL "$(lv_key "alive:$n")" "$(lv_key "node:$n")" "$(lv_key "assign:$n")" \
            "$(lv_key "down:$n")" "$(lv_key "report:$n")" >/dev/null
        redis HDEL "$(lv_key health)" "System.FM:$n|State" >/dev/null
    done
}

# Replicas of this run's services (their ids start with the run, as the
# nodes' names do) assigned over the given nodes: another test's service
# the manager balanced onto them does not count.
lv_assigned() {
    local n total=0 run=${1%-*}
    for n in "$@"; do
        total=$((total + $(redis HKEYS "$(lv_key "assign:$n")" | grep -c "^$run\." || true)))
    done
    echo "$total"
}

lv_assigned_is() { [ "$(lv_assigned "${@:2}")" = "$1" ]; }

# The node a replica index of service $1 is placed on.
lv_node_of() { redis HGET "$(lv_key "svc:$1")" placement | jq -r ".[] | select(.index == $2) | .node"; }

lv_moved_from() { # svc index node
    local n
    n=$(lv_node_of "$1" "$2")
    [ -n "$n" ] && [ "$n" != "$3" ]
}

# Every replica placed for service $1 reported running, as its agent would.
lv_report_running() {
    local row
    for row in $(redis HGET "$(lv_key "svc:$1")" placement | jq -c '.[] | {node, rid}'); do
        redis HSET "$(lv_key "report:$(jq -r .node <<<"$row")")" "$(jq -r .rid <<<"$row")" \
            "$(jq -c '{rid, state: "running"}' <<<"$row")" >/dev/null
    done
}

lv_gone() { [ "$(redis EXISTS "$(lv_key "svc:$1")")" = 0 ]; }

lv_spec() { # replicas run
    printf '{"name":"web","serviceType":"web","replicas":%d,"placementConstraints":"run == %s","metrics":[{"name":"MemoryMB","primaryLoad":64}],"process":{"tasks":[{"name":"main","command":["sleep","600"]}],"restart_policy":{"policy":"Always"},"digest":"d1"}}' "$1" "$2"
}

# The stack and resource record that own a hand-written service (a service
# no record names is an orphan the loop deletes).
lv_owner() { # stack svc
    redis HSET "${LV_PREFIX}{$1}:stack" status CREATE_COMPLETE >/dev/null
    redis HSET "${LV_PREFIX}{$1}:res:web" physical_id "$2" >/dev/null
}

test_live_cluster_loop_places_replaces_scales_and_deletes_a_service() {
    local run="lv${RUN_ID}" nodes=() i
    for i in 1 2 3 4 5 6 7 8 9; do nodes+=("$run-n$i"); done
    local svc="$run.web.00000001" stack="$run-stack"
    trap 'lv_cleanup '"$run"' '"${nodes[*]}"'; redis DEL "$(lv_key "svc:'"$svc"'")" >/dev/null; redis SREM "$(lv_key services)" "'"$svc"'" >/dev/null; redis DEL "${LV_PREFIX}{'"$stack"'}:stack" "${LV_PREFIX}{'"$stack"'}:res:web" >/dev/null' EXIT
    for i in 1 2 3 4 5 6 7 8 9; do
        lv_node "$run-n$i" "fd$(((i - 1) / 3 + 1))" "ud$(((i - 1) % 3 + 1))" "$run"
    done
    redis HSET "$(lv_key "svc:$svc")" spec "$(lv_spec 5 "$run")" state active gen 0 \
        stack "$stack" stack_name demo resource web >/dev/null
    lv_owner "$stack" "$svc"
    redis SADD "$(lv_key services)" "$svc" >/dev/null

    # 5 replicas, at most 2 per fault domain and per upgrade domain
    cv_wait_until 20 "5 replicas assigned" lv_assigned_is 5 "${nodes[@]}"
    local placement
    placement=$(redis HGET "$(lv_key "svc:$svc")" placement)
    assert_eq 5 "$(jq length <<<"$placement")" "placement entries"
    for i in 1 2 3; do
        [ "$(jq "[.[] | select(.node | test(\"-n[$((3 * i - 2))-$((3 * i))]\$\"))] | length" <<<"$placement")" -le 2 ] ||
            fail "more than 2 replicas in fd$i: $placement"
    done
    local spec
    spec=$(redis HGET "$(lv_key "assign:$(lv_node_of "$svc" 2)")" "$svc/2/1")
    assert_eq "web-2.demo" "$(jq -r .name <<<"$spec")" "replica name in its spec"
    assert_eq 64 "$(jq -r .load.MemoryMB <<<"$spec")" "declared load in its spec"
    redis XRANGE "${LV_PREFIX}{$stack}:events" - + | grep -q "replica web-2.demo placed on" ||
        fail "no placement event in the stack's events"

    # node lost: its replica re-placed after the grace period (5 s), the
    # lost node's assignment removed
    local lost
    lost=$(lv_node_of "$svc" 2)
    redis DEL "$(lv_key "alive:$lost")" >/dev/null
    cv_wait_until 20 "replica 2 re-placed away from $lost" lv_moved_from "$svc" 2 "$lost"
    assert_eq 0 "$(redis HLEN "$(lv_key "assign:$lost")")" "assignments left on the lost node"
    [ -n "$(redis GET "$(lv_key "down:$lost")")" ] || fail "no down mark for $lost"
    redis HGET "$(lv_key health)" "System.FM:$lost|State" | grep -q '"Error"' ||
        fail "no health report for the lost node"

    # scale down by the spec: the highest indexes go. The cluster resource
    # manager's constraint check may meanwhile move a replica back into the
    # upgrade domain the lost node left empty: a handover that ends when the
    # new replica runs, which these agentless nodes are told here; their
    # reports go once it is done, as an agent's of replicas it stopped.
    redis HSET "$(lv_key "svc:$svc")" spec "$(lv_spec 3 "$run")" >/dev/null
    redis HINCRBY "$(lv_key "svc:$svc")" gen 1 >/dev/null
    cv_wait_until 20 "3 replicas assigned" eval 'lv_report_running "$svc"; lv_assigned_is 3 "${nodes[@]}"'
    for i in "${nodes[@]}"; do redis DEL "$(lv_key "report:$i")" >/dev/null; done # as the agents would
    assert_eq "0,1,2" "$(redis HGET "$(lv_key "svc:$svc")" placement | jq -r '[.[].index] | join(",")')" \
        "indexes kept"

    # deleting: every replica unassigned, then the service removed
    redis HSET "$(lv_key "svc:$svc")" state deleting >/dev/null
    redis HINCRBY "$(lv_key "svc:$svc")" gen 1 >/dev/null
    cv_wait_until 20 "the service removed" lv_gone "$svc"
    assert_eq 0 "$(lv_assigned "${nodes[@]}")" "replicas assigned after the delete"
    assert_eq 0 "$(redis SISMEMBER "$(lv_key services)" "$svc")" "service still listed"
}

# A node's admin state as `convergectl node` writes it.
lv_admin() { redis HSET "$(lv_key "node:$1")" admin "$2" >/dev/null; }

lv_unplaced_is() { # svc count
    [ "$(redis HGET "$(lv_key "svc:$1")" unplaced | jq length)" = "$2" ]
}

# Whether service $1's index $2 waits on a draining node with nowhere to go.
lv_drain_waiting() {
    redis HGET "$(lv_key health)" "System.PLB:$1|ReplicaDrainWaiting_$2" | grep -q Warning
}

lv_placed_on() { [ "$(lv_node_of "$1" "$2")" = "$3" ]; }

test_live_an_unplaceable_replica_waits_then_lands_on_a_joining_node_and_drain_hands_it_over() {
    local run="lw${RUN_ID}" nodes=("lw${RUN_ID}-a" "lw${RUN_ID}-b" "lw${RUN_ID}-c" "lw${RUN_ID}-d")
    local svc="$run.web.00000002" stack="$run-stack"
    trap 'lv_cleanup '"$run"' '"${nodes[*]}"'; redis DEL "$(lv_key "svc:'"$svc"'")" >/dev/null; redis SREM "$(lv_key services)" "'"$svc"'" >/dev/null; redis DEL "${LV_PREFIX}{'"$stack"'}:stack" "${LV_PREFIX}{'"$stack"'}:res:web" >/dev/null' EXIT
    lv_node "${nodes[0]}" fd1 ud1 "$run"
    lv_node "${nodes[1]}" fd2 ud2 "$run"
    redis HSET "$(lv_key "svc:$svc")" spec "$(lv_spec 3 "$run")" state active gen 0 \
        stack "$stack" stack_name demo resource web >/dev/null
    lv_owner "$stack" "$svc"
    redis SADD "$(lv_key services)" "$svc" >/dev/null

    # two nodes for three replicas (one per node): index 2 waits, and says why
    cv_wait_until 20 "2 replicas assigned, 1 unplaced" lv_unplaced_is "$svc" 1
    assert_eq 2 "$(lv_assigned "${nodes[@]}")" "replicas assigned on two nodes"
    redis HGET "$(lv_key "svc:$svc")" unplaced | jq -e '.[0].index == 2 and (.[0].eliminationSequence | length) > 0' >/dev/null ||
        fail "no elimination sequence for index 2"
    redis HGET "$(lv_key health)" "System.PLB:$svc|ServiceReplicaUnplacedHealth_Instance_2" | grep -q Warning ||
        fail "no unplaced health report"

    # a node joins: index 2 lands on it, the report goes
    lv_node "${nodes[2]}" fd3 ud3 "$run"
    cv_wait_until 20 "index 2 placed on the new node" lv_unplaced_is "$svc" 0
    assert_eq "${nodes[2]}" "$(lv_node_of "$svc" 2)" "node of index 2"
    assert_eq "" "$(redis HGET "$(lv_key health)" "System.PLB:$svc|ServiceReplicaUnplacedHealth_Instance_2")" \
        "unplaced report after placement"

    # drain a node with nowhere else to go: its (stateless) replica stays, and says why
    local drained
    drained=$(lv_node_of "$svc" 0)
    lv_admin "$drained" draining
    cv_wait_until 20 "a drain-waiting report" lv_drain_waiting "$svc" 0
    assert_eq 1 "$(lv_assigned "$drained")" "replicas still on the drained node"
    lv_unplaced_is "$svc" 0 || fail "the drained replica was unplaced"

    # a node joins: the replica starts there first; the drained one stops once
    # the new one runs (no health check: running is enough)
    lv_node "${nodes[3]}" fd1 ud1 "$run"
    cv_wait_until 20 "index 0 starting on the new node" lv_placed_on "$svc" 0 "${nodes[3]}"
    assert_eq 1 "$(lv_assigned "$drained")" "the old replica during the handover"
    local rid
    rid=$(redis HGET "$(lv_key "svc:$svc")" placement | jq -r '.[] | select(.index == 0) | .rid')
    redis HSET "$(lv_key "report:${nodes[3]}")" "$rid" "{\"rid\":\"$rid\",\"state\":\"running\"}" >/dev/null
    cv_wait_until 20 "the drained node emptied" lv_assigned_is 0 "$drained"
    redis XRANGE "${LV_PREFIX}{$stack}:events" - + |
        grep -q "replica web-0.demo moved from $drained to ${nodes[3]} (drain: node $drained draining)" ||
        fail "no event for the drained replica"
}
