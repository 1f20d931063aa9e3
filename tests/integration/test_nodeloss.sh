# Node loss: a node whose agent stops for good, with its processes, has its
# replicas placed again on other nodes within the grace period + 5 s,
# honouring constraints, domains and capacity; a stateful index never runs
# in two processes at once (every replica process on the machine scanned
# every 100 ms throughout, by CONVERGE_NAME in /proc/PID/environ:
# procscan.sh); a node that comes back stops the replicas no longer assigned
# to it. Uses the helpers of test_services.sh (svt_*).
# shellcheck shell=bash disable=SC2317 # functions defined inside tests are called by cv_wait_until

# Grace period (s) of the cluster loop before it places a down node's
# replicas elsewhere (docs/services.md); a stateful replica waits for the
# node's fence time too. The test allows TTL + grace (or fence) + 5 s.
NL_GRACE_S=${SVC_DOWN_GRACE_S:-5}

# nl_allowed_ms NODE: heartbeat TTL + max(grace, fence of NODE) + 5 s.
nl_allowed_ms() {
    local fence
    fence=$(redis HGET "$(ckey "node:$1")" fence_ms)
    [[ $fence =~ ^[0-9]+$ ]] || fence=0
    echo $((SVC_TTL_MS + (NL_GRACE_S * 1000 > fence ? NL_GRACE_S * 1000 : fence) + 5000))
}

# nl_placed_off SVC INDEX NODE: the index is assigned to another node.
nl_placed_off() {
    local node
    node=$(svc_placement "$1" | jq -r --argjson i "$2" '.[] | select(.index == $i) | .node')
    [ -n "$node" ] && [ "$node" != "$3" ]
}

test_nodeloss_replicas_replaced_within_grace_and_a_stateful_index_never_runs_twice() {
    local name svc r0 r1 lost idx pid t0 t1 allowed scan doubles nodes n used
    svt_up loss
    name=$(stack_name svc-loss) && svt_stack svc-loss
    ctl submit "$name" "$DATA/services/sleeper.yaml" -P replicas=3 -P stateful=true \
        -P "constraint=$(svt_c "Color != red")" --wait --timeout 90 >/dev/null ||
        fail "create: $(status_json "$name" | jqr .reason)"
    svc=$(svc_id "$name" web)
    cv_wait_until 30 "3 healthy replicas" svc_all_healthy "$svc" 3
    scan=$STATE/agents/$name.procscan
    : >"$scan"
    "$SVC_PROCSCAN" watch "$scan" "$name" &
    NL_SCANPID=$! # global: the EXIT trap runs after the function returned
    trap 'kill "${NL_SCANPID:-}" 2>/dev/null || true; svc_agents_cleanup "${SVT_STACKS[@]}"' EXIT
    r0=$(svc_replicas "$svc")
    lost=$(jqr '.[0].node' <<<"$r0")
    mapfile -t idx < <(jqr --arg n "$lost" '.[] | select(.node == $n) | .index' <<<"$r0")
    allowed=$(nl_allowed_ms "$lost")
    # The node is lost: its agent and its processes die together.
    svc_agent_kill "$lost" KILL
    svc_kill_node_procs "$lost"
    t0=$(cv_now_ms)
    # What is promised: re-placed once the node has been down for the grace
    # period (or its fence); how soon the new process is healthy is its own
    # start and health check, waited for but not bounded here.
    for i in "${idx[@]}"; do
        cv_wait_until $(((allowed + 15000) / 1000)) "replica $i to be placed off $lost" \
            nl_placed_off "$svc" "$i" "$lost"
    done
    t1=$(cv_now_ms)
    for i in "${idx[@]}"; do
        cv_wait_until 30 "replica $i to run healthy off $lost" svt_moved_off "$svc" "$i" "$lost"
    done
    echo "    replicas of $lost (indexes ${idx[*]}) placed elsewhere $((t1 - t0)) ms after the loss (allowed $allowed ms), healthy $(($(cv_now_ms) - t0)) ms after"
    cv_wait_until 20 "3 healthy replicas" svc_all_healthy "$svc" 3
    [ $((t1 - t0)) -le "$allowed" ] || fail "re-placed after $((t1 - t0)) ms, more than the $allowed ms allowed"
    # Let the scan see the settled state for a while, then stop it.
    cv_wait_until 5 "the scan to run on" test "$(wc -l <"$scan")" -ge 30
    kill "$NL_SCANPID" || true
    r1=$(svc_replicas "$svc")
    mapfile -t nodes < <(jqr '.[].node' <<<"$r1")
    for n in "${nodes[@]}"; do
        [ "$n" != "$lost" ] || fail "a replica is still placed on the lost node $n"
        [ "$(svt_color "$n")" != red ] || fail "a replica was placed on $n, which is red (constraint Color != red)"
    done
    # 3 replicas over 3 FDs x 3 UDs, one per domain before the loss. The
    # grid has one node per (FD, UD) cell, so the lost node's cell has no
    # other node: with the two kept replicas staying, the replacement goes
    # to the lost node's FD (the fault domain constraint is hard, priority 0
    # in Service Fabric's defaults) and another UD (the upgrade domain constraint
    # is the soft one, priority 1): FDs 1, 1, 1 and UDs 0, 1, 2.
    assert_eq "1 1 1" "$(svt_counts fault "${nodes[@]}")" "replicas per fault domain after the loss"
    assert_eq "0 1 2" "$(svt_counts upgrade "${nodes[@]}")" "replicas per upgrade domain after the loss"
    assert_eq "$(svt_domain "$lost" fault)" \
        "$(svt_domain "$(jq -r --argjson i "${idx[0]}" '.[] | select(.index == $i) | .node' <<<"$r1")" fault)" \
        "fault domain of the replacement (the lost node's: the other two FDs hold a replica each)"
    assert_eq 3 "$(printf '%s\n' "${nodes[@]}" | sort -u | wc -l)" "distinct nodes after the loss"
    # The replicas kept on their nodes are the same processes.
    for n in $(jqr --arg n "$lost" '.[] | select(.node != $n) | .index' <<<"$r0"); do
        assert_eq "$(jq -c --argjson i "$n" '.[] | select(.index == $i) | {rid, pid}' <<<"$r0")" \
            "$(jq -c --argjson i "$n" '.[] | select(.index == $i) | {rid, pid}' <<<"$r1")" "replica $n, not on the lost node"
    done
    # Capacity: no node holds more Slots than its 4, counting every replica
    # assigned to it.
    local total=0
    for n in $(jq -r '.nodes[].name' "$SVT_CL"); do
        used=$(redis HVALS "$(ckey "assign:$n")" | jq -s '[.[].load.Slots // 0] | add // 0')
        [ "$used" -le 4 ] || fail "$n is assigned $used Slots of 4"
        total=$((total + used))
    done
    assert_eq 3 "$total" "Slots assigned over the nodes (one per replica)"
    [ "$(grep -c -v ' -$' "$scan")" -gt 0 ] || fail "the process scan never saw a replica"
    doubles=$("$SVC_PROCSCAN" doubles "$scan")
    [ -z "$doubles" ] || fail "a stateful index ran twice at once (t_ms name pids nodes): $(head -3 <<<"$doubles")"
    for pid in $(jqr '.[].rid' <<<"$r1"); do
        assert_eq 1 "$(svc_ledger | jq --arg k "start:$pid" '.[$k]')" "ledger start:$pid"
    done
    svt_one_proc_per_name "$name" 3
    assert_match 'COMPLETE' "$(svt_status "$name")" "stack status after the loss"
}

test_nodeloss_a_node_that_comes_back_stops_the_replicas_moved_away() {
    local name svc r0 lost pid0 i
    svt_up back
    name=$(stack_name svc-back) && svt_stack svc-back
    ctl submit "$name" "$DATA/services/sleeper.yaml" -P "constraint=$(svt_c)" -P replicas=3 --wait --timeout 90 >/dev/null ||
        fail "create: $(status_json "$name" | jqr .reason)"
    svc=$(svc_id "$name" web)
    cv_wait_until 30 "3 healthy replicas" svc_all_healthy "$svc" 3
    r0=$(svc_replicas "$svc")
    lost=$(jqr '.[0].node' <<<"$r0") i=$(jqr '.[0].index' <<<"$r0") pid0=$(jqr '.[0].pid' <<<"$r0")
    # The agent alone dies (its process lives on) and stays away past the grace.
    svc_agent_kill "$lost" KILL
    cv_wait_until $(((SVC_TTL_MS + NL_GRACE_S * 1000 + 20000) / 1000)) "replica $i to move off $lost" \
        svt_moved_off "$svc" "$i" "$lost"
    kill -0 "$pid0" 2>/dev/null || fail "the process $pid0 died without its agent"
    svc_agent_start "$SVT_CL" "$lost"
    svt_gone() { ! kill -0 "$pid0" 2>/dev/null; }
    cv_wait_until 20 "the agent back on $lost to stop replica $i's old process $pid0" svt_gone
    cv_wait_until 20 "3 healthy replicas" svc_all_healthy "$svc" 3
    svt_one_proc_per_name "$name" 3
}
