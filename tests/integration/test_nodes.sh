# shellcheck shell=bash
# The cluster views of convergectl (nodes, node, health, replicas,
# place --explain) against real Redis. The hand-written cluster lives under a
# key prefix of its own (NODES_PREFIX), so neither the deployment's agents nor
# other tests see it; the tests over real agents and services use the
# deployment's cluster (up.sh --nodes N) and say so when it has none.

NODES_PREFIX="t${RUN_ID}nodes:"
NODES_SERVICE_SH="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/deploy/local/service.sh"
NODES_EXAMPLES="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/examples"

nctl() { ctl --prefix "$NODES_PREFIX" "$@"; }

nkey() { echo "${NODES_PREFIX}{cluster}:$1"; }

# A node description in the cluster format; its heartbeat lives TTL ms (0: none).
add_node() { # name fd ud ttl_ms
    redis hset "$(nkey nodes)" "$1" \
        "{\"name\":\"$1\",\"type\":\"Small\",\"faultDomain\":\"$2\",\"upgradeDomain\":\"$3\",\"properties\":{\"rack\":\"${2##*/}\"}}" >/dev/null
    [ "$4" = 0 ] || redis set "$(nkey "alive:$1")" 1 px "$4" >/dev/null
}

# Removes every key of the hand-written cluster: each test starts from none.
clear_cluster() {
    local key
    redis --scan --pattern "${NODES_PREFIX}*" | while read -r key; do
        redis del "$key" >/dev/null
    done
}

# Three nodes: a1 and a2 up in fd:/r1 (UD1, UD2), b1 in fd:/r2 without a
# heartbeat; a1 runs web-0 (256 MB declared, reported healthy) and db-0
# (512 MB, no report yet).
hand_cluster() {
    clear_cluster
    redis set "$(nkey settings)" '{"nodeTypes":{"Small":{"capacities":{"MemoryMB":1024,"cpu":4}}}}' >/dev/null
    add_node a1 fd:/r1 UD1 60000
    add_node a2 fd:/r1 UD2 60000
    add_node b1 fd:/r2 UD1 0
    redis hset "$(nkey assign:a1)" \
        w/0/1 '{"rid":"w/0/1","name":"web-0.demo","role":"instance","load":{"MemoryMB":256}}' \
        d/0/1 '{"rid":"d/0/1","name":"db-0.demo","role":"primary","load":{"MemoryMB":512}}' >/dev/null
    redis hset "$(nkey report:a1)" \
        w/0/1 '{"rid":"w/0/1","state":"healthy","pid":4242,"restarts":0,"address":"127.0.0.1","ports":{"http":31001}}' >/dev/null
}

node_json() { # name -> its row of `nodes -o json`
    nctl nodes -o json | jq -c --arg n "$1" '.[] | select(.name == $n)'
}

node_status_is() { [ "$(node_json "$1" | jqr .status)" = "$2" ]; }

test_nodes_lists_status_capacity_load_and_replicas() {
    hand_cluster
    local a1 b1
    a1=$(node_json a1)
    b1=$(node_json b1)
    assert_eq 3 "$(nctl nodes -o json | jq length)" "node count"
    assert_eq up "$(jqr .status <<<"$a1")" "a1 status"
    assert_eq down "$(jqr .status <<<"$b1")" "b1 (no heartbeat) status"
    assert_eq fd:/r1/UD2 "$(node_json a2 | jqr '.fault_domain + "/" + .upgrade_domain')" "a2 domains"
    assert_eq 1024 "$(jqr .capacities.MemoryMB <<<"$a1")" "capacity from the node type"
    assert_eq 768 "$(jqr .load.MemoryMB <<<"$a1")" "declared load of a1's replicas"
    assert_eq declared "$(jqr .load_source <<<"$a1")" "load source"
    assert_eq 2 "$(jqr .replicas <<<"$a1")" "a1 replica count"
    assert_eq "db-0.demo web-0.demo" "$(jqr '[.replica_list[].name] | join(" ")' <<<"$a1")" "a1 replicas"
    assert_eq healthy "$(jqr '.replica_list[] | select(.rid == "w/0/1") | .state' <<<"$a1")" "reported state"
    # An agent's measured load wins over the declared one.
    redis hset "$(nkey node:a1)" load '{"MemoryMB":300}' >/dev/null
    assert_eq 300 "$(node_json a1 | jqr .load.MemoryMB)" "measured load"
    local table
    table=$(nctl nodes)
    assert_match 'a1 +Small +fd:/r1 +UD1 +up +2 +MemoryMB 300/1024 cpu 0/4 +rack=r1' \
        "$(grep '^a1' <<<"$table")" "a1's line of the table"
}

test_nodes_status_follows_the_heartbeat() {
    hand_cluster
    redis set "$(nkey alive:b1)" 1 px 1500 >/dev/null
    assert_eq up "$(node_json b1 | jqr .status)" "b1 with a heartbeat"
    # The heartbeat expires (no agent refreshes it): the node is down.
    cv_wait_until 10 "b1 to be down after its heartbeat expired" node_status_is b1 down
}

test_nodes_map_draws_fault_domains_by_upgrade_domains() {
    hand_cluster
    local map row
    map=$(nctl nodes --map)
    assert_match '^3 nodes: 2 up, 1 down; 2 replicas assigned' "$map" "summary line"
    assert_match '\| FD \\ UD +\| UD1 +\| UD2 +\|' "$(grep -F 'FD \ UD' <<<"$map")" "header of the grid"
    row=$(grep '^| fd:/r1' <<<"$map")
    assert_match 'a1  up  2 replicas .*a2  up  0 replicas' "$row" "fd:/r1 holds a1 (UD1) then a2 (UD2)"
    assert_match 'b1  down  0 replicas' "$(grep '^| fd:/r2' <<<"$map")" "fd:/r2 holds b1"
    assert_match '\[########\.\.\]  75% MemoryMB 768/1024' "$map" "a1's load bar"
    assert_match 'db-0\.demo\*\(assigned\) web-0\.demo' "$map" "a1's replicas"
    [[ $map != *$'\033'* ]] || fail "colours in a map that is not on a terminal"
}

test_nodes_drain_disable_enable_set_the_admin_state() {
    hand_cluster
    local out
    out=$(nctl node drain a2)
    assert_eq "node a2: draining" "$out" "drain's answer"
    assert_eq draining "$(redis hget "$(nkey node:a2)" admin)" "admin field"
    assert_eq up/draining "$(nctl nodes | awk '$1 == "a2" {print $5}')" "status column"
    nctl node disable a2 >/dev/null
    assert_eq disabled "$(node_json a2 | jqr .admin)" "disabled"
    nctl node enable a2 >/dev/null
    assert_eq enabled "$(node_json a2 | jqr .admin)" "enabled again"
}

test_nodes_unknown_node_exits_1_and_usage_errors_exit_2() {
    hand_cluster
    local rc=0 err
    err=$(nctl node drain nosuch 2>&1) || rc=$?
    assert_eq 1 "$rc" "exit status for an unknown node"
    assert_match 'node nosuch not found' "$err" "message"
    [ -z "$(redis hgetall "$(nkey node:nosuch)")" ] || fail "a record was written for nosuch"
    rc=0
    nctl node reboot a1 2>/dev/null || rc=$?
    assert_eq 2 "$rc" "exit status for an unknown action"
    rc=0
    nctl node drain 2>/dev/null || rc=$?
    assert_eq 2 "$rc" "exit status without a node"
    rc=0
    nctl nodes extra 2>/dev/null || rc=$?
    assert_eq 2 "$rc" "exit status of nodes with an argument"
}

test_nodes_health_sorts_error_first_and_handles_expiry() {
    clear_cluster
    local now
    now=$(date +%s)
    redis hset "$(nkey health)" \
        'System.PLB|ok' "{\"source\":\"System.PLB\",\"property\":\"ok\",\"state\":\"Ok\",\"description\":\"fine\",\"timeToLive\":600,\"removeWhenExpired\":true,\"time\":$now}" \
        'System.PLB|warn' "{\"source\":\"System.PLB\",\"property\":\"warn\",\"state\":\"Warning\",\"description\":\"watch\",\"timeToLive\":600,\"removeWhenExpired\":true,\"time\":$now}" \
        'System.PLB|err' "{\"source\":\"System.PLB\",\"property\":\"err\",\"state\":\"Error\",\"description\":\"bad\",\"timeToLive\":600,\"removeWhenExpired\":true,\"time\":$now}" \
        'System.PLB|gone' "{\"source\":\"System.PLB\",\"property\":\"gone\",\"state\":\"Error\",\"description\":\"old\",\"timeToLive\":5,\"removeWhenExpired\":true,\"time\":$((now - 60))}" \
        'System.PLB|stale' "{\"source\":\"System.PLB\",\"property\":\"stale\",\"state\":\"Ok\",\"description\":\"stale\",\"timeToLive\":5,\"removeWhenExpired\":false,\"time\":$((now - 60))}" >/dev/null
    local json
    json=$(nctl health -o json)
    assert_eq "err stale warn ok" "$(jqr '[.[].property] | join(" ")' <<<"$json")" "order (expired 'gone' hidden)"
    assert_eq "Error true" "$(jqr '.[] | select(.property == "stale") | "\(.state) \(.expired)"' <<<"$json")" "an expired report kept"
    assert_match '^Error +System\.PLB +stale .*\(expired\) stale' "$(nctl health | grep stale)" "text line"
}

test_nodes_replicas_and_explain_need_a_known_stack() {
    local rc=0 err
    err=$(nctl replicas "$(stack_name nosuch)" 2>&1) || rc=$?
    assert_eq 2 "$rc" "replicas of an unknown stack"
    assert_match 'not found' "$err" "message"
    rc=0
    nctl place --explain "$(stack_name nosuch)" web 2>/dev/null || rc=$?
    assert_eq 2 "$rc" "place --explain of an unknown stack"
    rc=0
    nctl place --explain only-one-word 2>/dev/null || rc=$?
    assert_eq 2 "$rc" "place --explain without a service"
    rc=0
    nctl place --explain a b --cluster x.json 2>/dev/null || rc=$?
    assert_eq 2 "$rc" "place --explain with a manifest option"
}

# ---------------------------------------------------------------------------
# Over the deployment's own cluster (up.sh --nodes N): real agents.
# ---------------------------------------------------------------------------

# True when the deployment runs node agents; says so when it does not.
have_agents() {
    [ -n "${CONVERGE_AGENTS:-}" ] && return 0
    echo "    skipped: the deployment has no node agents (up.sh --nodes N)" >&2
    return 1
}

test_nodes_real_agents_are_listed_up_with_their_domains() {
    have_agents || return 0
    local json node want
    json=$(ctl nodes -o json)
    for node in $CONVERGE_AGENTS; do
        want=$(jq -c --arg n "$node" '.nodes[] | select(.name == $n)
            | [.faultDomain, .upgradeDomain]' "$CONVERGE_CLUSTER")
        assert_eq "$want" "$(jq -c --arg n "$node" '.[] | select(.name == $n)
            | [.fault_domain, .upgrade_domain]' <<<"$json")" "$node's domains"
        assert_eq up "$(jq -r --arg n "$node" '.[] | select(.name == $n) | .status' <<<"$json")" \
            "$node's status"
    done
}

test_nodes_a_killed_agent_is_down_then_up_again() {
    have_agents || return 0
    local node svc=("$NODES_SERVICE_SH" --dir "$STATE" --build-dir "$(dirname "$CONVERGECTL")")
    node=$(awk '{print $NF}' <<<"$CONVERGE_AGENTS")
    "${svc[@]}" kill "agent-$node" >/dev/null
    cv_wait_until 15 "$node to be down once its agent is killed" node_is "$node" down ||
        { "${svc[@]}" start "agent-$node" >/dev/null; return 1; }
    "${svc[@]}" start "agent-$node" >/dev/null
    cv_wait_until 15 "$node to be up again" node_is "$node" up
}

node_is() { # node status: over the deployment's prefix
    [ "$(ctl nodes -o json | jq -r --arg n "$1" '.[] | select(.name == $n) | .status')" = "$2" ]
}

# True when this build has the Converge::Service type; says so when not.
have_service_type() {
    local out
    out=$(ctl validate "$NODES_EXAMPLES/web.yaml" -P program=/bin/true 2>&1) && return 0
    [[ $out == *"could not be found"* ]] || { echo "$out" >&2; return 1; }
    echo "    skipped: this build has no Converge::Service type" >&2
    return 2
}

replicas_healthy() { # stack count
    [ "$(ctl replicas "$1" -o json | jq '[.[] | select(.status == "healthy")] | length')" = "$2" ]
}

test_nodes_replicas_of_a_running_service_answer_on_their_endpoints() {
    have_agents || return 0
    local rc=0 name json ep
    have_service_type || rc=$?
    [ "$rc" = 2 ] && return 0
    [ "$rc" = 0 ] || return 1
    name=$(stack_name web)
    ctl submit "$name" "$NODES_EXAMPLES/web.yaml" -P "program=$(dirname "$CONVERGECTL")/converge-hello" \
        --wait --timeout 60 >/dev/null
    cv_wait_until 20 "3 healthy replicas of $name" replicas_healthy "$name" 3
    json=$(ctl replicas "$name" web -o json)
    assert_eq "0 1 2" "$(jqr '[.[].index] | join(" ")' <<<"$json")" "indexes"
    assert_eq 3 "$(jq '[.[].node] | unique | length' <<<"$json")" "three distinct nodes"
    for ep in $(jqr '.[].endpoint' <<<"$json"); do
        assert_match "^hello from web-[0-2]\.$name\$" "$(curl -sS --max-time 5 "http://$ep/")" \
            "the answer of $ep"
    done
    # The nodes view lists each replica on the node the placement chose.
    local r node rid
    while read -r node rid; do
        ctl nodes -o json | jq -e --arg n "$node" --arg r "$rid" \
            '.[] | select(.name == $n) | .replica_list | any(.rid == $r)' >/dev/null ||
            fail "nodes does not list $rid on $node"
    done < <(jqr '.[] | "\(.node) \(.rid)"' <<<"$json")
    # place --explain: every replica placed, each with where cv_place puts it now.
    ctl place --explain "$name" web -o json >"$STATE/explain.$$.json" || fail "place --explain exit $?"
    assert_eq 3 "$(jq '[.replicas[] | select(.node != null and .choice != null)] | length' \
        "$STATE/explain.$$.json")" "explained replicas"
    rm -f "$STATE/explain.$$.json"
    r=0
    ctl replicas "$name" nosuch 2>/dev/null || r=$?
    assert_eq 2 "$r" "replicas of a resource that is not a service"
    ctl delete "$name" --wait --timeout 60 >/dev/null
    for ep in $(jqr '.[].endpoint' <<<"$json"); do
        ! curl -s --max-time 2 "http://$ep/" >/dev/null || fail "$ep still answers after delete"
    done
}

# The live engine committed its placement with an index unplaced (not the
# moment before its first commit), and --explain says so too.
explain_has_unplaced() { # stack
    ctl replicas "$1" -o json 2>/dev/null | jq -e 'any(.[]; .status == "unplaced")' >/dev/null ||
        return 1
    # exit 1 with a replica unplaced: the file is what counts
    ctl place --explain "$1" web -o json 2>/dev/null >"$STATE/explain.$$.json" || true
    jq -e '.unplaced | length > 0' "$STATE/explain.$$.json" >/dev/null
}

test_nodes_explain_shows_why_a_replica_finds_no_node() {
    have_agents || return 0
    local rc=0 name n seq
    have_service_type || rc=$?
    [ "$rc" = 2 ] && return 0
    [ "$rc" = 0 ] || return 1
    # One replica more than there are nodes: replica exclusion leaves one unplaced.
    n=$(wc -w <<<"$CONVERGE_AGENTS")
    name=$(stack_name unplaced)
    ctl submit "$name" "$NODES_EXAMPLES/web.yaml" -P "program=$(dirname "$CONVERGECTL")/converge-hello" \
        -P "replicas=$((n + 1))" >/dev/null
    cv_wait_until 30 "a replica of $name to be unplaced" explain_has_unplaced "$name"
    rc=0
    ctl place --explain "$name" web >"$STATE/explain.$$.txt" || rc=$?
    assert_eq 1 "$rc" "place --explain exit status with a replica unplaced"
    seq=$(jq -c '[.unplaced[0].eliminationSequence[] | select(.constraint == "ReplicaExclusion")
        | .eliminated | length]' "$STATE/explain.$$.json")
    assert_eq "[$n]" "$seq" "replica exclusion eliminated every node"
    assert_match "ReplicaExclusion +eliminated $n node\\(s\\)" "$(cat "$STATE/explain.$$.txt")" \
        "the text's elimination sequence"
    assert_eq unplaced "$(ctl replicas "$name" -o json | jq -r '.[] | select(.index == '"$n"') | .status')" \
        "replicas shows the unplaced index"
    rm -f "$STATE/explain.$$.json" "$STATE/explain.$$.txt"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}
