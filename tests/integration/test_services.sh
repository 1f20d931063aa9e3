# Services that really run: replicas of Converge::Service are live processes
# on nodes run by converge-agent, spread over fault and upgrade domains,
# restarted by their policy, moved and blocklisted when they crash-loop,
# re-placed on a constraint change, scaled, refused when they cannot fit,
# placed when a node joins, never started twice (the cluster ledger) even
# with workers killed, and stopped by delete; moved and drained
# start-new-then-stop-old (docs/crm.md "Moves"). Every test starts its own
# agents (tests/data/services/cluster_9nodes.json, node names prefixed by
# the test) and stops them, their processes and its stacks on exit, whatever
# happened. Node loss is in test_nodeloss.sh.
# shellcheck shell=bash disable=SC2317 # functions defined inside tests are called by cv_wait_until

SVT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SVT_NINE=(N1 N2 N3 N4 N5 N6 N7 N8 N9)

# svt_up TAG [NODE...]: a cluster file with node names prefixed for this test
# (SVT_CL), SVT_P the prefix; starts the agents of NODE... (default the nine
# nodes N1-N9) and arranges the cleanup of the agents and SVT_STACKS on exit.
svt_up() {
    local tag=$1 n nodes=()
    shift
    SVT_P="$tag$(printf %04x $((RANDOM ^ RUN_ID % 65536)))-"
    SVT_STACKS=()
    SVT_CL=$(svc_cluster_file "$SVT_P")
    trap 'svc_agents_cleanup "${SVT_STACKS[@]}"' EXIT
    [ -x "$SVC_AGENT" ] || fail "$SVC_AGENT is not built"
    (($# > 0)) || set -- "${SVT_NINE[@]}"
    for n; do
        rm -rf "${STATE:?}/agents/$SVT_P$n" # an earlier run's node of that name
        nodes+=("$SVT_P$n")
    done
    svc_agents_start "$SVT_CL" "${nodes[@]}"
}

# svt_c [EXPR]: the placement constraint that keeps a service on this test's
# nodes, and EXPR.
svt_c() { svc_group_constraint "$SVT_P" "${1:-}"; }

# svt_stack TAG: a stack name for this test, deleted on exit.
svt_stack() { SVT_STACKS+=("$(stack_name "$1")"); }

# svt_domain NODE fault|upgrade: the node's fault domain URI / upgrade domain.
svt_domain() {
    jq -r --arg n "$1" --arg k "$2" '.nodes[] | select(.name == $n)
        | if $k == "fault" then .faultDomain else .upgradeDomain end' "$SVT_CL"
}

svt_color() { jq -r --arg n "$1" '.nodes[] | select(.name == $n) | .properties.Color' "$SVT_CL"; }

# svt_counts fault|upgrade NODE...: replicas per domain, sorted, e.g. "1 2 2"
# (domains of the cluster without a replica count as 0).
svt_counts() {
    local kind=$1 n d
    shift
    {
        for d in $(jq -r --arg k "$kind" '.nodes[] | select(.name | test("N10$") | not)
            | if $k == "fault" then .faultDomain else .upgradeDomain end' "$SVT_CL" | sort -u); do
            echo "$d"
        done
        for n; do svt_domain "$n" "$kind"; done
    } | sort | uniq -c | awk '{ print $1 - 1 }' | sort -n | paste -sd' '
}

# svt_environ PID: the process's environment, one VAR=VALUE a line.
svt_environ() { tr '\0' '\n' <"/proc/$1/environ"; }
svt_env() { svt_environ "$1" | sed -n "s/^$2=//p"; } # svt_env PID VAR

svt_status() { status_json "$1" | jqr .status; }
svt_status_is() { [ "$(svt_status "$1")" = "$2" ]; }

# svt_moved_off SVC INDEX NODE: INDEX is placed on a node other than NODE and
# reported healthy there.
svt_moved_off() {
    local r
    r=$(svc_replicas "$1" | jq -c --argjson i "$2" '.[] | select(.index == $i)')
    [ -n "$r" ] && [ "$(jqr .node <<<"$r")" != "$3" ] && [ "$(jqr .state <<<"$r")" = healthy ]
}

# svt_restarted SVC INDEX OLD_PID OLD_RESTARTS: a new live process, healthy,
# with more restarts counted.
svt_restarted() {
    local r pid
    r=$(svc_replicas "$1" | jq -c --argjson i "$2" '.[] | select(.index == $i)')
    pid=$(jqr '.pid // 0' <<<"$r")
    [ "$pid" != 0 ] && [ "$pid" != "$3" ] && kill -0 "$pid" 2>/dev/null &&
        [ "$(jqr '.restarts // 0' <<<"$r")" -gt "$4" ] && [ "$(jqr .state <<<"$r")" = healthy ]
}

# svt_restart_missing_workers: up.sh starts again any engine/observer not running.
svt_restart_missing_workers() {
    local engines observers
    engines=$(find "$STATE/pids" -name 'engine-*.pid' | wc -l)
    observers=$(find "$STATE/pids" -name 'observer-*.pid' | wc -l)
    "$SVT_ROOT/deploy/local/up.sh" --dir "$STATE" --no-build --build-dir "$(dirname "$CONVERGECTL")" \
        --engines "$engines" --observers "$observers" >/dev/null 2>&1 || true
}

# svt_one_proc_per_name STACK N: exactly N replica processes of the stack, each
# CONVERGE_NAME once.
svt_one_proc_per_name() {
    local procs
    procs=$(svc_procs "$1")
    assert_eq "$2" "$(grep -c . <<<"$procs" || true)" "replica processes of $1"
    assert_eq "$2" "$(awk '{ print $3 }' <<<"$procs" | sort -u | grep -c . || true)" "distinct CONVERGE_NAMEs"
}

# ---------------------------------------------------------------------------

test_services_nine_nodes_spread_environment_and_endpoints() {
    local name svc r n i row pid node port s ep answer
    svt_up spread
    name=$(stack_name svc-spread) && svt_stack svc-spread
    ctl submit "$name" "$DATA/services/hello.yaml" -P "constraint=$(svt_c)" -P replicas=5 --wait --timeout 90 >/dev/null ||
        fail "create: $(status_json "$name" | jqr .reason)"
    svc=$(svc_id "$name" hello) || fail "no service of $name in $(ckey services)"
    cv_wait_until 30 "5 healthy replicas" svc_all_healthy "$svc" 5
    r=$(svc_replicas "$svc")
    mapfile -t n < <(jqr '.[].node' <<<"$r")
    # Service Fabric's adaptive spread: 5 replicas is no multiple of 3 FDs x 3 UDs,
    # so "maximum difference": no two replicas on one node, and no domain
    # more than one replica ahead of another: per FD and per UD 2, 2 and 1.
    assert_eq 5 "$(printf '%s\n' "${n[@]}" | sort -u | wc -l)" "distinct nodes (${n[*]})"
    assert_eq "1 2 2" "$(svt_counts fault "${n[@]}")" "replicas per fault domain (${n[*]})"
    assert_eq "1 2 2" "$(svt_counts upgrade "${n[@]}")" "replicas per upgrade domain (${n[*]})"
    # Each replica a live process with its identity in its environment.
    for i in 0 1 2 3 4; do
        row=$(jq -c --argjson i "$i" '.[] | select(.index == $i)' <<<"$r")
        [ -n "$row" ] || fail "index $i not placed: $r"
        pid=$(jqr .pid <<<"$row") node=$(jqr .node <<<"$row") port=$(jqr .ports.http <<<"$row")
        [ -r "/proc/$pid/environ" ] || fail "replica $i: process $pid does not run"
        assert_eq "$i" "$(svt_env "$pid" CONVERGE_INDEX)" "CONVERGE_INDEX of $pid"
        assert_eq "hello-$i.$name" "$(svt_env "$pid" CONVERGE_NAME)" "CONVERGE_NAME of $pid"
        assert_eq "$node" "$(svt_env "$pid" CONVERGE_NODE)" "CONVERGE_NODE of $pid"
        assert_match "^(hello|$svc)$" "$(svt_env "$pid" CONVERGE_SERVICE)" "CONVERGE_SERVICE of $pid"
        assert_match "^($name|$(res_stack_id "$name"))$" "$(svt_env "$pid" CONVERGE_STACK)" "CONVERGE_STACK of $pid"
        assert_match '^[0-9]+$' "$port" "the port reported for replica $i"
        assert_eq "$port" "$(svt_env "$pid" CONVERGE_PORT_HTTP)" "CONVERGE_PORT_HTTP of $pid"
        # The endpoint is in the outputs, and the process behind it answers.
        s=$(status_json "$name")
        ep=$(jq -c .outputs.endpoints <<<"$s")
        [[ $ep == *":$port"* ]] || fail "outputs.endpoints $ep lacks replica $i's port $port"
        answer=$(curl -s --max-time 5 "http://127.0.0.1:$port/") || fail "nothing answers on port $port"
        assert_eq "hello-$i.$name" "$answer" "the answer on port $port"
    done
    svt_one_proc_per_name "$name" 5
    assert_eq CREATE_COMPLETE "$(svt_status "$name")" "stack status"
}

test_services_killed_replica_is_restarted_and_the_stack_stays_complete() {
    local name svc r row pid rid restarts ev
    svt_up restart N1 N2 N3 N4 N5 N6 N7 N8 N9
    name=$(stack_name svc-restart) && svt_stack svc-restart
    ctl submit "$name" "$DATA/services/sleeper.yaml" -P "constraint=$(svt_c)" -P replicas=3 --wait --timeout 90 >/dev/null ||
        fail "create: $(status_json "$name" | jqr .reason)"
    svc=$(svc_id "$name" web)
    cv_wait_until 30 "3 healthy replicas" svc_all_healthy "$svc" 3
    r=$(svc_replicas "$svc")
    row=$(jq -c '.[] | select(.index == 1)' <<<"$r")
    pid=$(jqr .pid <<<"$row") rid=$(jqr .rid <<<"$row") restarts=$(jqr '.restarts // 0' <<<"$row")
    kill -KILL "$pid"
    cv_wait_until 20 "replica 1 restarted in a new process" svt_restarted "$svc" 1 "$pid" "$restarts"
    row=$(svc_replicas "$svc" | jq -c '.[] | select(.index == 1)')
    assert_eq "$rid" "$(jqr .rid <<<"$row")" "a restart keeps the replica id"
    assert_eq 1 "$(svc_ledger | jq --arg k "start:$rid" '.[$k]')" "ledger start:$rid"
    [ "$(svc_ledger | jq --arg k "restart:$rid" '.[$k] // 0')" -ge 1 ] ||
        fail "no restart:$rid in the ledger: $(svc_ledger)"
    assert_eq CREATE_COMPLETE "$(svt_status "$name")" "stack status after the restart"
    # The restart and its cause are an event of the resource.
    ev=$(ctl events "$name" -o json)
    [ "$(jq '[.[] | select(.resource == "web" and (.reason | test("restart"; "i")))] | length' <<<"$ev")" -ge 1 ] ||
        fail "no event of web about the restart: $(jq -c '[.[] | select(.resource == "web")] | .[-3:]' <<<"$ev")"
    svt_one_proc_per_name "$name" 3
}

# svt_handing_over SVC INDEX: INDEX's placement entry keeps its old replica
# in "from" (a stateless handover, docs/crm.md "Moves").
svt_handing_over() {
    svc_placement "$1" | jq -e --argjson i "$2" '.[] | select(.index == $i) | .from.rid' >/dev/null
}

svt_pid_gone() { ! kill -0 "$1" 2>/dev/null; }

test_services_drained_node_starts_the_new_replica_before_it_stops_the_old() {
    local name svc row pid node ev
    svt_up drain N1 N2 N3 N5 N9
    name=$(stack_name svc-drain) && svt_stack svc-drain
    ctl submit "$name" "$DATA/services/sleeper.yaml" -P "constraint=$(svt_c)" -P replicas=2 --wait --timeout 90 >/dev/null ||
        fail "create: $(status_json "$name" | jqr .reason)"
    svc=$(svc_id "$name" web)
    cv_wait_until 30 "2 healthy replicas" svc_all_healthy "$svc" 2
    row=$(svc_replicas "$svc" | jq -c '.[] | select(.index == 0)')
    pid=$(jqr .pid <<<"$row") node=$(jqr .node <<<"$row")
    ctl node drain "$node" >/dev/null
    cv_wait_until 20 "a successor of replica 0 placed while it runs" svt_handing_over "$svc" 0
    kill -0 "$pid" 2>/dev/null || fail "the drained replica stopped before its successor ran"
    cv_wait_until 30 "replica 0 healthy off $node" svt_moved_off "$svc" 0 "$node"
    cv_wait_until 20 "the drained replica stopped" svt_pid_gone "$pid"
    svt_handing_over "$svc" 0 && fail "the handover of replica 0 did not end"
    ev=$(ctl events "$name" -o json)
    jq -e --arg n "$node" '[.[] | select(.reason | startswith("replica web-0.") and contains("moved from \($n) to ")
        and endswith("(drain: node \($n) draining)"))] | length == 1' \
        <<<"$ev" >/dev/null || fail "no drain event: $(jq -c '[.[] | select(.resource == "web")] | .[-4:]' <<<"$ev")"
    svt_one_proc_per_name "$name" 2
}

svt_no_moves() { [ -z "$(redis HGET "$(ckey "svc:$1")" moves)" ]; }

# A move written into the service's record as svc_move.lua writes it (the
# cluster resource manager's): carried out start-new-then-stop-old, then
# removed from the record.
test_services_a_move_starts_the_new_replica_before_it_stops_the_old() {
    local name svc row pid node to ev
    svt_up move N1 N5 N9 N2
    name=$(stack_name svc-move) && svt_stack svc-move
    ctl submit "$name" "$DATA/services/sleeper.yaml" -P "constraint=$(svt_c)" -P replicas=1 --wait --timeout 90 >/dev/null ||
        fail "create: $(status_json "$name" | jqr .reason)"
    svc=$(svc_id "$name" web)
    cv_wait_until 30 "1 healthy replica" svc_all_healthy "$svc" 1
    row=$(svc_replicas "$svc" | jq -c '.[] | select(.index == 0)')
    pid=$(jqr .pid <<<"$row") node=$(jqr .node <<<"$row")
    to="${SVT_P}N5"
    [ "$node" != "$to" ] || to="${SVT_P}N9"
    redis HSET "$(ckey "svc:$svc")" moves \
        "{\"0\":{\"from\":\"$node\",\"to\":\"$to\",\"reason\":\"balancing\",\"detail\":\"by hand\",\"at\":1,\"epoch\":1}}" >/dev/null
    redis HINCRBY "$(ckey "svc:$svc")" gen 1 >/dev/null
    cv_wait_until 20 "a successor of replica 0 placed on $to while it runs" svt_handing_over "$svc" 0
    kill -0 "$pid" 2>/dev/null || fail "the moved replica stopped before its successor ran"
    cv_wait_until 30 "replica 0 healthy on $to" svt_moved_off "$svc" 0 "$node"
    assert_eq "$to" "$(svc_placement "$svc" | jq -r '.[0].node')" "node of replica 0"
    cv_wait_until 20 "the old replica stopped" svt_pid_gone "$pid"
    cv_wait_until 20 "the move removed from the record" svt_no_moves "$svc"
    ev=$(ctl events "$name" -o json)
    jq -e --arg f "$node" --arg t "$to" '[.[] | select(.reason | endswith("moving from \($f) to \($t) (balancing: by hand)"))] | length == 1' \
        <<<"$ev" >/dev/null || fail "no IN_PROGRESS event: $(jq -c '[.[] | select(.resource == "web")] | .[-4:]' <<<"$ev")"
    jq -e --arg f "$node" --arg t "$to" '[.[] | select(.reason | endswith("moved from \($f) to \($t) (balancing: by hand)"))] | length == 1' \
        <<<"$ev" >/dev/null || fail "no COMPLETE event: $(jq -c '[.[] | select(.resource == "web")] | .[-4:]' <<<"$ev")"
    svt_one_proc_per_name "$name" 1
}

test_services_crash_loop_backs_off_gives_up_moves_and_blocklists() {
    local name svc first t0 t1 row bl
    svt_up crash
    name=$(stack_name svc-crash) && svt_stack svc-crash
    t0=$(cv_now_ms)
    ctl submit "$name" "$DATA/services/crashloop.yaml" -P "constraint=$(svt_c)" >/dev/null
    cv_wait_until 30 "the service to exist" svc_id "$name" crash >/dev/null
    svc=$(svc_id "$name" crash)
    svt_first_placed() { [ "$(svc_placement "$svc" | jqr '.[0].node // ""')" != "" ]; }
    cv_wait_until 30 "the replica to be placed" svt_first_placed
    first=$(svc_placement "$svc" | jqr '.[0].node')
    svt_gave_up() { svc_report "$first" "$(svc_placement "$svc" | jqr '.[0].rid')" | jq -e '.gave_up == true' >/dev/null; }
    svt_left() { [ "$(svc_placement "$svc" | jqr '.[0].node // ""')" != "$first" ]; }
    cv_wait_until 40 "the restart policy to give up on $first (or the replica to move)" \
        eval 'svt_gave_up || svt_left'
    t1=$(cv_now_ms)
    # Three starts (1 + max_times 2) spaced by interval + n x backoff (1 s, 2 s):
    # at least 3 s; without backoff they would be over at once.
    [ $((t1 - t0)) -ge 2500 ] || fail "gave up $((t1 - t0)) ms after submit: no backoff"
    cv_wait_until 30 "the replica to move off $first" svt_left
    bl=$(svc_field "$svc" blocklist)
    jq -e --arg n "$first" 'has($n)' <<<"$bl" >/dev/null || fail "$first not blocklisted for the service: ${bl:-none}"
    row=$(svc_health_about "$first")
    [ "$(jq length <<<"$row")" -ge 1 ] || fail "no health report about $first: $(redis HVALS "$(ckey health)")"
    [ "$(jq --arg s "$svc" '[.[] | select((.source + .description) | contains($s) or test("blocklist"; "i"))] | length' <<<"$row")" -ge 1 ] ||
        fail "no blocklist health report for $svc on $first: $row"
    svt_status_is "$name" CREATE_COMPLETE && fail "a crash-looping service completed"
    true
}

test_services_failing_health_checks_restart_the_replica() {
    local name svc res pid0 r
    svt_up health N1 N2 N3
    name=$(stack_name svc-health) && svt_stack svc-health
    ctl submit "$name" "$DATA/services/unhealthy.yaml" -P "constraint=$(svt_c)" >/dev/null
    for res in tcpbad cmdbad; do
        cv_wait_until 30 "service $res to exist" svc_id "$name" "$res" >/dev/null
        svc=$(svc_id "$name" "$res")
        # The pid is taken in the same read that finds it running: read again,
        # it may be 0 already (the process restarting), and kill -0 0 succeeds.
        svt_running() {
            pid0=$(svc_replicas "$svc" | jqr '.[0].pid // 0')
            [ "$pid0" != 0 ]
        }
        cv_wait_until 30 "$res to run" svt_running
        svt_health_restarted() {
            r=$(svc_replicas "$svc" | jq -c '.[0]')
            [ "$(jqr '.restarts // 0' <<<"$r")" -ge 1 ] && [ "$(jqr '.pid // 0' <<<"$r")" != "$pid0" ]
        }
        cv_wait_until 30 "$res to be restarted for its failing health check" svt_health_restarted
        # The restart and its cause are an event of the resource.
        [ "$(ctl events "$name" -o json | jq --arg r "$res" '[.[] | select(.resource == $r
            and (.reason | test("restart")) and (.reason | test("health check"; "i")))] | length')" -ge 1 ] ||
            fail "no event of $res gives the failing health check as the cause of a restart"
        kill -0 "$pid0" 2>/dev/null && fail "$res: the unhealthy process $pid0 still runs"
        true
    done
    svt_status_is "$name" CREATE_COMPLETE && fail "a service that is never healthy completed"
    true
}

test_services_agent_killed_keeps_replicas_and_readopts_them() {
    local name svc r node pids0 pids1 rid
    svt_up adopt
    name=$(stack_name svc-adopt) && svt_stack svc-adopt
    ctl submit "$name" "$DATA/services/sleeper.yaml" -P "constraint=$(svt_c)" -P replicas=5 --wait --timeout 90 >/dev/null ||
        fail "create: $(status_json "$name" | jqr .reason)"
    svc=$(svc_id "$name" web)
    cv_wait_until 30 "5 healthy replicas" svc_all_healthy "$svc" 5
    r=$(svc_replicas "$svc")
    pids0=$(jq -c '[.[] | {rid, pid}]' <<<"$r")
    node=$(jqr '.[0].node' <<<"$r")
    svc_agent_kill "$node" KILL
    # Its replicas keep running, nothing doubles, while the agent is away.
    for pid in $(jqr '.[].pid' <<<"$r"); do kill -0 "$pid" || fail "replica process $pid died with agent $node"; done
    svt_one_proc_per_name "$name" 5
    svc_agent_start "$SVT_CL" "$node"
    cv_wait_until 20 "5 healthy replicas after the agent came back" svc_all_healthy "$svc" 5
    r=$(svc_replicas "$svc")
    pids1=$(jq -c '[.[] | {rid, pid}]' <<<"$r")
    assert_eq "$pids0" "$pids1" "replica ids and pids after the agent came back (re-adopted)"
    for rid in $(jqr '.[].rid' <<<"$r"); do
        assert_eq 1 "$(svc_ledger | jq --arg k "start:$rid" '.[$k]')" "ledger start:$rid"
    done
    svt_one_proc_per_name "$name" 5
    assert_eq CREATE_COMPLETE "$(svt_status "$name")" "stack status"
}

test_services_constraint_change_moves_exactly_the_violating_replicas() {
    local name svc r0 r1 color moved kept i row
    svt_up constraint
    name=$(stack_name svc-constraint) && svt_stack svc-constraint
    ctl submit "$name" "$DATA/services/sleeper.yaml" -P "constraint=$(svt_c)" -P replicas=5 --wait --timeout 90 >/dev/null ||
        fail "create: $(status_json "$name" | jqr .reason)"
    svc=$(svc_id "$name" web)
    cv_wait_until 30 "5 healthy replicas" svc_all_healthy "$svc" 5
    r0=$(svc_replicas "$svc")
    # The color held by the fewest replicas (5 replicas on 5 of 9 nodes span
    # at least two of the three colors): excluding it moves only those.
    color=$(for n in $(jqr '.[].node' <<<"$r0"); do svt_color "$n"; done | sort | uniq -c | sort -n | awk 'NR == 1 { print $2 }')
    ctl update "$name" --existing -P "constraint=$(svt_c "Color != $color")" --wait --timeout 90 >/dev/null ||
        fail "update: $(status_json "$name" | jqr .reason)"
    cv_wait_until 30 "5 healthy replicas after the update" svc_all_healthy "$svc" 5
    r1=$(svc_replicas "$svc")
    moved=0 kept=0
    for i in 0 1 2 3 4; do
        row=$(jq -c --argjson i "$i" '.[] | select(.index == $i)' <<<"$r0")
        if [ "$(svt_color "$(jqr .node <<<"$row")")" = "$color" ]; then
            [ "$(jq -r --argjson i "$i" '.[] | select(.index == $i) | .rid' <<<"$r1")" != "$(jqr .rid <<<"$row")" ] ||
                fail "replica $i on a $color node kept its replica id"
            moved=$((moved + 1))
            kill -0 "$(jqr .pid <<<"$row")" 2>/dev/null && fail "the process of moved replica $i still runs"
        else
            assert_eq "$(jqr .rid <<<"$row")" "$(jq -r --argjson i "$i" '.[] | select(.index == $i) | .rid' <<<"$r1")" \
                "replica id of replica $i, which did not violate the constraint"
            assert_eq "$(jqr .pid <<<"$row")" "$(jq -r --argjson i "$i" '.[] | select(.index == $i) | .pid' <<<"$r1")" \
                "process of replica $i, which did not violate the constraint"
            kept=$((kept + 1))
        fi
    done
    [ "$moved" -ge 1 ] || fail "no replica was on a $color node"
    for n in $(jqr '.[].node' <<<"$r1"); do
        [ "$(svt_color "$n")" != "$color" ] || fail "a replica is still on $n, which is $color"
    done
    mapfile -t nodes < <(jqr '.[].node' <<<"$r1")
    assert_eq 5 "$(printf '%s\n' "${nodes[@]}" | sort -u | wc -l)" "distinct nodes after the move"
    assert_eq "1 2 2" "$(svt_counts fault "${nodes[@]}")" "replicas per fault domain after the move"
    assert_eq "1 2 2" "$(svt_counts upgrade "${nodes[@]}")" "replicas per upgrade domain after the move"
    echo "    $moved replica(s) moved off $color nodes, $kept kept"
    svt_one_proc_per_name "$name" 5
}

test_services_stateful_scale_up_and_down_removes_the_highest_indexes() {
    local name svc r0 r1 r2 i
    svt_up scale
    name=$(stack_name svc-scale) && svt_stack svc-scale
    ctl submit "$name" "$DATA/services/sleeper.yaml" -P "constraint=$(svt_c)" -P replicas=3 -P stateful=true --wait --timeout 90 >/dev/null ||
        fail "create: $(status_json "$name" | jqr .reason)"
    svc=$(svc_id "$name" web)
    cv_wait_until 30 "3 healthy replicas" svc_all_healthy "$svc" 3
    r0=$(svc_replicas "$svc")
    ctl update "$name" --existing -P replicas=5 --wait --timeout 90 >/dev/null ||
        fail "scale up: $(status_json "$name" | jqr .reason)"
    cv_wait_until 30 "5 healthy replicas" svc_all_healthy "$svc" 5
    r1=$(svc_replicas "$svc")
    assert_eq "[0,1,2,3,4]" "$(jq -c '[.[].index] | sort' <<<"$r1")" "indexes after scaling to 5"
    assert_eq "$(jq -c '[.[] | {index, rid, pid}]' <<<"$r0")" \
        "$(jq -c '[.[] | select(.index < 3) | {index, rid, pid}]' <<<"$r1")" "replicas 0-2 untouched by the scale up"
    ctl update "$name" --existing -P replicas=2 --wait --timeout 90 >/dev/null ||
        fail "scale down: $(status_json "$name" | jqr .reason)"
    cv_wait_until 30 "2 healthy replicas" svc_all_healthy "$svc" 2
    r2=$(svc_replicas "$svc")
    assert_eq "[0,1]" "$(jq -c '[.[].index] | sort' <<<"$r2")" "indexes after scaling to 2 (highest removed)"
    assert_eq "$(jq -c '[.[] | select(.index < 2) | {index, rid, pid}]' <<<"$r0")" \
        "$(jq -c '[.[] | {index, rid, pid}]' <<<"$r2")" "replicas 0-1 untouched by the scale down"
    svc_two_left() { [ "$(svc_proc_count "$name")" = 2 ]; }
    cv_wait_until 20 "the processes of indexes 2-4 to stop" svc_two_left
    assert_eq "web-0.$name web-1.$name" "$(svc_procs "$name" | awk '{ print $3 }' | sort | paste -sd' ')" "replica processes left"
    for i in 2 3 4; do
        kill -0 "$(jq -r --argjson i "$i" '.[] | select(.index == $i) | .pid' <<<"$r1")" 2>/dev/null &&
            fail "the process of removed index $i still runs"
    done
    true
}

# The up-front check is on the whole cluster's capacity, and a node
# without a capacity for a metric has no limit on it: MemoryMB, which every
# node of the test (4096) and of up.sh --nodes has, rather than Slots.
test_services_service_that_cannot_fit_is_rejected_with_the_shortfall() {
    local name s reason remain
    svt_up nofit
    name=$(stack_name svc-nofit) && svt_stack svc-nofit
    # What the cluster has left: every node up and enabled, capacity - load;
    # exact only when the test's nodes are the only ones up (other agents'
    # node types live in {cluster}:settings, which the test's agents rewrite).
    remain=$(ctl nodes -o json | jq --arg p "$SVT_P" '[.[] | select(.status == "up" and .admin == "enabled")]
        | if all(.name | startswith($p)) then [.[] | (.capacities.MemoryMB // 0) - (.load.MemoryMB // 0)] | add
          else "[0-9]+" end')
    # 4 replicas x 100,000 MemoryMB = 400,000 needed; the nine nodes have 9 x 4,096.
    ctl submit "$name" "$DATA/services/sleeper.yaml" -P "constraint=$(svt_c)" -P replicas=4 \
        -P metric=MemoryMB -P slots=100000 --wait --timeout 60 >/dev/null &&
        fail "a service needing 400000 MemoryMB of $remain was created"
    s=$(status_json "$name")
    assert_eq CREATE_FAILED "$(jqr .status <<<"$s")" "stack status"
    reason=$(ctl resource-show "$name" web -o json | jqr .reason)
    assert_match 'MemoryMB' "$reason" "the reason names the metric"
    [[ $reason == *400000* && $reason =~ (^|[^0-9])${remain//\"/}([^0-9]|$) ]] ||
        fail "the reason does not give the shortfall (400000 MemoryMB needed, $remain left): $reason"
    assert_eq 0 "$(svc_proc_count "$name")" "replica processes started"
}

test_services_unplaceable_replica_waits_and_is_placed_when_a_node_joins() {
    local name svc s reason
    svt_up join
    name=$(stack_name svc-join) && svt_stack svc-join
    ctl submit "$name" "$DATA/services/sleeper.yaml" -P replicas=1 -P "constraint=$(svt_c "Color == purple")" >/dev/null
    cv_wait_until 30 "the service to exist" svc_id "$name" web >/dev/null
    svc=$(svc_id "$name" web)
    svt_unplaced() { [ "$(svc_field "$svc" unplaced | jq 'length' 2>/dev/null)" -ge 1 ] 2>/dev/null; }
    cv_wait_until 30 "the replica to be recorded unplaced" svt_unplaced
    s=$(status_json "$name")
    assert_eq CREATE_IN_PROGRESS "$(jqr .status <<<"$s")" "stack status while the replica waits"
    # Why it waits: the elimination sequence (every node eliminated by the
    # placement constraint), a health report, an event of the resource...
    assert_eq 9 "$(svc_field "$svc" unplaced | jq --arg p "$SVT_P" '[.[0].eliminationSequence[]
        | select(.constraint == "PlacementConstraint") | .eliminated[] | select(startswith($p))] | length')" \
        "nodes of the test the PlacementConstraint eliminated in the unplaced record"
    [ "$(svc_health_about "web-0.$name" | jq '[.[] | select(.state != "Ok")] | length')" -ge 1 ] ||
        fail "no health report about the unplaced replica: $(redis HVALS "$(ckey health)")"
    [ "$(ctl events "$name" -o json | jq '[.[] | select(.resource == "web"
        and (.reason | test("PlacementConstraint")))] | length')" -ge 1 ] ||
        fail "no event of web says the placement constraint keeps its replica waiting"
    # ...and what `convergectl status` and `resource-show` say (the resource's
    # reason or the stack's waiting line), checked after the join below.
    reason="$(ctl resource-show "$name" web -o json | jqr .reason) | $(jq -c .waiting <<<"$s")"
    assert_eq 0 "$(svc_proc_count "$name")" "replica processes before the node joins"
    svc_agent_start "$SVT_CL" "${SVT_P}N10"
    cv_wait_until 30 "the stack to complete once N10 joined" svt_status_is "$name" CREATE_COMPLETE
    assert_eq "${SVT_P}N10" "$(svc_placement "$svc" | jqr '.[0].node')" "node of the replica"
    svt_one_proc_per_name "$name" 1
    assert_match 'PlacementConstraint|purple|Color|unplaced|placement' "$reason" \
        "what status / resource-show said while the replica waited (resource reason | waiting)"
}

test_services_workers_killed_during_create_start_no_replica_twice_and_delete_stops_all() {
    local name id svc starts
    svt_up workers
    name=$(stack_name svc-workers) && svt_stack svc-workers
    SVT_SCAN=$STATE/agents/$name.procscan
    : >"$SVT_SCAN"
    "$SVC_PROCSCAN" watch "$SVT_SCAN" "$name" &
    SVT_SCANPID=$! # global: the EXIT trap runs after the function returned
    trap 'kill "${SVT_SCANPID:-}" 2>/dev/null || true; svt_restart_missing_workers; svc_agents_cleanup "${SVT_STACKS[@]}"' EXIT
    ctl submit "$name" "$DATA/services/sleeper.yaml" -P "constraint=$(svt_c)" -P replicas=6 >/dev/null
    id=$(res_stack_id "$name")
    cv_wait_until 30 "the service to exist" svc_id "$name" web >/dev/null
    kill -KILL "$(cat "$STATE/pids/engine-1.pid")" "$(cat "$STATE/pids/observer-1.pid")"
    svt_restart_missing_workers
    cv_wait_until 90 "the stack to complete after the kills" svt_status_is "$name" CREATE_COMPLETE
    svc=$(svc_id "$name" web)
    cv_wait_until 30 "6 healthy replicas" svc_all_healthy "$svc" 6
    starts=$(svc_starts_of "$svc")
    assert_eq 6 "$(jq length <<<"$starts")" "replica ids started ($starts)"
    assert_eq '[1]' "$(jq -c '[.[]] | unique' <<<"$starts")" "starts per replica id"
    svt_one_proc_per_name "$name" 6
    # Never two processes of one replica at once, from the submit on
    # (scanned every 100 ms).
    kill "$SVT_SCANPID" || true
    [ "$(grep -c -v ' -$' "$SVT_SCAN")" -gt 0 ] || fail "the process scan never saw a replica"
    [ -z "$("$SVC_PROCSCAN" doubles "$SVT_SCAN")" ] ||
        fail "a replica ran in two processes at once: $("$SVC_PROCSCAN" doubles "$SVT_SCAN" | head -3)"
    [ -n "$id" ]
    ctl delete "$name" --wait --timeout 60 >/dev/null
    assert_eq 0 "$(svc_proc_count "$name")" "replica processes after delete"
    assert_eq '[1]' "$(svc_starts_of "$svc" | jq -c '[.[]] | unique')" "starts per replica id after delete"
    for n in "${SVT_NINE[@]}"; do
        [ -z "$(redis HKEYS "$(ckey "assign:$SVT_P$n")" | grep -F "$svc/")" ] ||
            fail "$SVT_P$n is still assigned replicas of the deleted service"
    done
}

# svt_expect_refused TAG REGEX [VALIDATE_ARGS...] < template: validate
# (with VALIDATE_ARGS) and submit refuse it with exit 2 and a message
# matching REGEX; nothing of the stack in Redis.
svt_expect_refused() {
    local name tpl err rc=0 before re=$2
    name=$(stack_name "$1")
    shift 2
    tpl=$(mktemp --suffix .yaml)
    cat >"$tpl"
    before=$(redis SMEMBERS "$(ckey services)" | sort)
    err=$(ctl validate "$tpl" "$@" 2>&1 >/dev/null) || rc=$?
    assert_eq 2 "$rc" "validate exit code ($err)"
    assert_match "$re" "$err" "validate's message"
    rc=0
    err=$(ctl submit "$name" "$tpl" 2>&1 >/dev/null) || rc=$?
    rm -f "$tpl"
    assert_eq 2 "$rc" "submit exit code ($err)"
    assert_match "$re" "$err" "submit's message"
    assert_eq 0 "$(redis hexists "${CONVERGE_PREFIX:-cv:}stacks" "$name")" "name not stored"
    assert_eq 0 "$(stack_keys_of "$name")" "stack keys in Redis"
    # No service added (others' deletes may end meanwhile: count nothing else).
    assert_eq "" "$(comm -13 <(echo "$before") <(redis SMEMBERS "$(ckey services)" | sort))" \
        "services added to the cluster"
}

test_services_negative_replicas_are_refused_with_the_property_path() {
    svt_expect_refused neg 'resources\.web\.properties\.replicas' <<'T'
heat_template_version: 2018-08-31
resources:
  web:
    type: Converge::Service
    properties: {replicas: -1, command: [sleep, "1"]}
T
}

test_services_empty_command_is_refused_with_the_property_path() {
    svt_expect_refused emptycmd 'resources\.web\.properties\.command' <<'T'
heat_template_version: 2018-08-31
resources:
  web:
    type: Converge::Service
    properties: {replicas: 1, command: []}
T
}

# A metric no node and no node type of the cluster names (agents up, so the
# cluster has metrics to compare with): submit checks it against the cluster
# in Redis; validate, which contacts no service, against a manifest given
# with --cluster.
test_services_unknown_metric_is_refused_with_the_property_path() {
    svt_up metric N1 N2 N3
    svt_expect_refused metric 'resources\.web\.properties\.metrics.*NoSuchMetric|NoSuchMetric.*resources\.web\.properties\.metrics' \
        --cluster "$SVT_CL" <<'T'
heat_template_version: 2018-08-31
resources:
  web:
    type: Converge::Service
    properties:
      replicas: 1
      command: [sleep, "1"]
      metrics: [{name: NoSuchMetric, primary_load: 1}]
T
}

test_services_malformed_constraint_is_refused_with_the_property_path() {
    svt_expect_refused constraint 'resources\.web\.properties\.placement_constraints' <<'T'
heat_template_version: 2018-08-31
resources:
  web:
    type: Converge::Service
    properties:
      replicas: 1
      command: [sleep, "1"]
      placement_constraints: "(Color == red &&"
T
}

test_services_agent_with_a_bad_node_description_exits_2_naming_the_field() {
    local cl rc err field value
    mkdir -p "$STATE/agents"
    [ -x "$SVC_AGENT" ] || fail "$SVC_AGENT is not built"
    for field in capacities faultDomain; do
        cl=$STATE/agents/bad-$field.json
        case $field in
        capacities) value='{"Slots": "lots"}' ;;
        faultDomain) value='42' ;;
        esac
        jq --argjson v "$value" --arg f "$field" '.nodes |= map(.name = "bad" + .name)
            | .nodes[0][$f] = $v' "$DATA/services/cluster_9nodes.json" >"$cl"
        rc=0
        err=$(timeout 20 env CONVERGE_REDIS="$CONVERGE_REDIS" "$SVC_AGENT" --cluster "$cl" --node badN1 \
            --dir "$STATE/agents/badN1" --ports 39000-39009 2>&1 >/dev/null) || rc=$?
        assert_eq 2 "$rc" "exit status of an agent whose $field is bad ($err)"
        assert_match "$field" "$err" "the agent's message names the field"
        assert_eq 0 "$(redis HEXISTS "$(ckey nodes)" badN1)" "node registered"
        assert_eq 0 "$(redis EXISTS "$(ckey alive:badN1)")" "heartbeat of the bad node"
    done
}

# A program that cannot be executed on a node is not retried there (the
# restart policy is for processes that ran): the agent gives up on the node
# at once and the replica moves on, until every node of the group is
# blocklisted and the resource fails with the operating system's error.
test_services_unexecutable_command_is_given_up_at_once_on_each_node() {
    local name tpl reason
    svt_up noexec N1 N2 N3
    name=$(stack_name svc-noexec) && svt_stack svc-noexec
    tpl=$STATE/agents/$name.yaml
    cat >"$tpl" <<'T'
heat_template_version: 2018-08-31
resources:
  ghost:
    type: Converge::Service
    properties:
      replicas: 1
      command: [/nonexistent/converge-test-binary, --flag]
      placement_constraints: "TestGroup == GROUP"
      metrics: [{name: Slots, primary_load: 1, secondary_load: 1, weight: medium}]
      restart_policy: {policy: Always, interval: 1, backoff: 0, max_times: 3}
T
    sed -i "s/GROUP/${SVT_P%?}/" "$tpl"
    ctl submit "$name" "$tpl" >/dev/null
    cv_wait_until 60 "the resource to fail" svt_status_is "$name" CREATE_FAILED
    reason=$(ctl resources "$name" -o json | jqr '.[] | select(.name == "ghost") | .reason')
    assert_match "exec /nonexistent/converge-test-binary: No such file or directory" "$reason" \
        "the operating system's error"
    assert_match "cannot be executed on this node: the restart policy gave up at once" "$reason" \
        "given up without a restart, max_times notwithstanding"
}
