# Rolling updates and upgrades by upgrade domain (docs/crm.md):
# a changed process spec under a service's update_policy rolls out step by
# step (kill_first and start_first, checked every 100 ms against the
# unavailability bound), waits for a resume in manual mode, stops and rolls
# back a new version that never becomes healthy, and `convergectl upgrade`
# renews the replicas one upgrade domain at a time, each on the node it was
# on. The services run converge-hello (examples/hello) on this test's own
# nine agents (svt_up of test_services.sh).
# shellcheck shell=bash disable=SC2317 # functions defined inside tests are called by cv_wait_until

RLT_TEMPLATE="$DATA/services/rollout.yaml"
RLT_HELLO="$(dirname "$CONVERGECTL")/converge-hello"

# rlt_healthy SVC: how many replica ids of SVC assigned to this test's nodes
# now their agents report healthy (an old replica no longer assigned does
# not count, even while it still runs); one Redis round trip, so that the
# poller can sample every 100 ms.
rlt_healthy() {
    local keys=() n
    for n in "${SVT_NINE[@]}"; do keys+=("$(ckey "assign:$SVT_P$n")" "$(ckey "report:$SVT_P$n")"); done
    redis EVAL "local n = 0
        for k = 1, #KEYS, 2 do
          for _, rid in ipairs(redis.call('HKEYS', KEYS[k])) do
            local r = redis.call('HGET', KEYS[k + 1], rid)
            if string.sub(rid, 1, #ARGV[1]) == ARGV[1] and r
               and string.find(r, '\"state\":\"healthy\"', 1, true) then n = n + 1 end
          end
        end
        return n" "${#keys[@]}" "${keys[@]}" "$1/"
}

# rlt_poll_start SVC FILE: samples rlt_healthy every 100 ms into FILE until
# rlt_poll_stop; RLT_POLL is its pid.
rlt_poll_start() {
    local svc=$1 file=$2
    : >"$file"
    (while :; do rlt_healthy "$svc" >>"$file" 2>/dev/null; sleep 0.1; done) &
    RLT_POLL=$!
}
rlt_poll_stop() { kill "${RLT_POLL:-}" 2>/dev/null || true; wait "${RLT_POLL:-}" 2>/dev/null || true; }

# rlt_min FILE: the least sample of the poller's file (-1 when it has none).
rlt_min() { grep -E '^[0-9]+$' "$1" | sort -n | awk 'NR == 1 { m = $1 } END { print (NR ? m : -1) }'; }

# rlt_assert_bound FILE LEAST WHAT: no sample of the poller's file below LEAST.
rlt_assert_bound() {
    local low
    low=$(rlt_min "$1")
    [ "$low" -ge "$2" ] || fail "$3: $low healthy replicas at one sample (bound $2)"
}

rlt_rollout() { ctl rollout status "$1" web -o json; } # rlt_rollout STACK
rlt_state_is() { [ "$(rlt_rollout "$1" | jqr '.state // empty')" = "$2" ]; }

# rlt_versions SVC: the digest every placed replica's assigned spec runs,
# sorted and counted ("4 <digest>").
rlt_versions() {
    local row node rid
    while read -r row; do
        node=$(jqr .node <<<"$row") rid=$(jqr .rid <<<"$row")
        redis HGET "$(ckey "assign:$node")" "$rid" | jqr .digest
    done < <(svc_placement "$1" | jq -c '.[]') | sort | uniq -c | awk '{ print $1, $2 }'
}

rlt_spec_digest() { svc_field "$1" spec | jqr .process.digest; }

# rlt_all_on SVC N: N replicas, healthy, all of them running the spec's digest.
rlt_all_on() {
    svc_all_healthy "$1" "$2" && [ "$(rlt_versions "$1")" = "$2 $(rlt_spec_digest "$1")" ]
}

# rlt_submit STACK [-P ...]: the service on this test's nodes, settled.
rlt_submit() {
    local name=$1
    shift
    ctl submit "$name" "$RLT_TEMPLATE" -P "program=$RLT_HELLO" -P "constraint=$(svt_c)" "$@" \
        --wait --timeout 120 >/dev/null || fail "create: $(status_json "$name" | jqr .reason)"
}

# rlt_update STACK [ARGS...]: update --existing with ARGS, not waiting.
rlt_update() {
    local name=$1
    shift
    ctl update "$name" --existing "$@" >/dev/null
}

# ---------------------------------------------------------------------------

test_rollout_kill_first_and_start_first_keep_the_unavailability_bound() {
    local name svc samples="$STATE/rollout-poll.$$"
    svt_up rlt
    trap 'rlt_poll_stop; svc_agents_cleanup "${SVT_STACKS[@]}"' EXIT
    name=$(stack_name rollout-steps) && svt_stack rollout-steps
    rlt_submit "$name" -P replicas=4
    svc=$(svc_id "$name" web) || fail "no service of $name"
    cv_wait_until 60 "4 healthy replicas" svc_all_healthy "$svc" 4
    # kill_first, one replica a step, at most one unavailable
    rlt_poll_start "$svc" "$samples"
    ctl update "$name" --existing -P version=v2 --wait --timeout 180 >/dev/null ||
        { rlt_poll_stop; fail "update to v2: $(status_json "$name" | jqr .reason)"; }
    rlt_poll_stop
    rlt_assert_bound "$samples" 3 "kill_first"
    rlt_state_is "$name" complete || fail "rollout after v2: $(rlt_rollout "$name")"
    assert_eq 4 "$(rlt_rollout "$name" | jqr .steps)" "kill_first steps of one replica"
    cv_wait_until 30 "4 healthy replicas on v2" rlt_all_on "$svc" 4
    # start_first, two replicas a step: the old ones run until the new are healthy
    rlt_poll_start "$svc" "$samples"
    ctl update "$name" --existing -P version=v3 -P order=start_first -P step=2 -P max_surge=2 \
        --wait --timeout 180 >/dev/null ||
        { rlt_poll_stop; fail "update to v3: $(status_json "$name" | jqr .reason)"; }
    rlt_poll_stop
    rlt_assert_bound "$samples" 3 "start_first"
    assert_eq 2 "$(rlt_rollout "$name" | jqr .steps)" "start_first steps of two replicas"
    assert_eq start_first "$(rlt_rollout "$name" | jqr .order)" "order"
    cv_wait_until 30 "4 healthy replicas on v3" rlt_all_on "$svc" 4
    rm -f "$samples"
}

test_rollout_manual_mode_advances_one_step_per_resume_and_pauses() {
    local name svc
    svt_up rlm
    name=$(stack_name rollout-manual) && svt_stack rollout-manual
    rlt_submit "$name" -P replicas=3 -P mode=manual
    svc=$(svc_id "$name" web) || fail "no service of $name"
    cv_wait_until 60 "3 healthy replicas" svc_all_healthy "$svc" 3
    rlt_update "$name" -P version=v2
    cv_wait_until 60 "the first step done, then a wait for resume" rlt_state_is "$name" paused
    assert_eq 1 "$(rlt_rollout "$name" | jqr .step)" "steps done before a resume"
    assert_match "1 .*2 " "$(rlt_versions "$svc" | sort -n | paste -sd' ') " "one replica renewed"
    assert_match "waiting for convergectl rollout resume" "$(ctl rollout status "$name" web)" "status"
    assert_eq UPDATE_IN_PROGRESS "$(svt_status "$name")" "stack while the rollout waits"
    ctl rollout resume "$name" web >/dev/null
    rollout_step_2() { [ "$(rlt_rollout "$name" | jqr .step)" = 2 ] && rlt_state_is "$name" paused; }
    cv_wait_until 60 "the second step done" rollout_step_2
    # pause asked in manual mode: a resume lifts it and allows the last step
    ctl rollout pause "$name" web >/dev/null
    assert_eq true "$(rlt_rollout "$name" | jqr .pause)" "pause asked"
    ctl rollout resume "$name" web >/dev/null
    cv_wait_until 90 "the update complete" svt_status_is "$name" UPDATE_COMPLETE
    rlt_state_is "$name" complete || fail "rollout: $(rlt_rollout "$name")"
    cv_wait_until 30 "3 healthy replicas on v2" rlt_all_on "$svc" 3
    if ctl rollout resume "$name" web >/dev/null 2>&1; then fail "resume of a complete rollout succeeded"; fi
}

test_rollout_a_failing_version_is_stopped_and_rolled_back() {
    local name svc before
    svt_up rlf
    name=$(stack_name rollout-fail) && svt_stack rollout-fail
    rlt_submit "$name" -P replicas=3 -P deadline=8
    svc=$(svc_id "$name" web) || fail "no service of $name"
    cv_wait_until 60 "3 healthy replicas" svc_all_healthy "$svc" 3
    before=$(rlt_spec_digest "$svc")
    # a new version whose process exits at once: never healthy
    rlt_update "$name" -P program=/bin/false
    cv_wait_until 120 "the update failed" svt_status_is "$name" UPDATE_FAILED
    assert_match "rolling update rolled_back: step 1 of 3 failed: replica web-" \
        "$(status_json "$name" | jqr .reason)" "the stack's reason"
    rlt_state_is "$name" rolled_back || fail "rollout: $(rlt_rollout "$name")"
    # only the first step's replica was tried; all three run the old spec again
    assert_eq "3 $before" "$(rlt_versions "$svc")" "replicas back on the old spec"
    cv_wait_until 60 "3 healthy replicas" svc_all_healthy "$svc" 3
}

test_rollout_an_upgrade_goes_by_upgrade_domain_and_every_replica_stays_on_its_node() {
    local name svc before after order
    svt_up rlu
    name=$(stack_name rollout-ud) && svt_stack rollout-ud
    rlt_submit "$name" -P replicas=9
    svc=$(svc_id "$name" web) || fail "no service of $name"
    cv_wait_until 90 "9 healthy replicas" svc_all_healthy "$svc" 9
    before=$(svc_placement "$svc" | jq -c 'map({index, node})')
    ctl upgrade "$name" --existing -P version=v2 >/dev/null
    rollout_by_ud() { [ "$(rlt_rollout "$name" | jqr .by_upgrade_domain)" = true ]; }
    cv_wait_until 30 "a rollout by upgrade domain" rollout_by_ud
    cv_wait_until 180 "the upgrade complete" svt_status_is "$name" UPDATE_COMPLETE
    rlt_state_is "$name" complete || fail "rollout: $(rlt_rollout "$name")"
    after=$(svc_placement "$svc" | jq -c 'map({index, node})')
    assert_eq "$before" "$after" "every replica on its node before the upgrade"
    assert_eq '["UD0","UD1","UD2"]' "$(rlt_rollout "$name" | jq -c .domains)" "the domains in order"
    # the steps began domain after domain
    order=$(ctl events "$name" -o json 2>/dev/null | jq -r '.[].reason // empty' |
        sed -n 's/.*began (.*upgrade domain \(UD[0-9]\)).*/\1/p' | paste -sd' ')
    assert_eq "UD0 UD1 UD2" "$order" "steps by upgrade domain"
    cv_wait_until 30 "9 healthy replicas on v2" rlt_all_on "$svc" 9
    # a plain update afterwards is no upgrade
    ctl update "$name" --existing -P version=v3 --wait --timeout 180 >/dev/null ||
        fail "update to v3: $(status_json "$name" | jqr .reason)"
    assert_eq false "$(rlt_rollout "$name" | jqr .by_upgrade_domain)" "a plain update after it"
}

test_rollout_survives_the_death_of_every_worker_mid_way() {
    local name svc samples="$STATE/rollout-kill.$$" f starts
    svt_up rlk
    trap 'rlt_poll_stop; svt_restart_missing_workers; svc_agents_cleanup "${SVT_STACKS[@]}"' EXIT
    name=$(stack_name rollout-kill) && svt_stack rollout-kill
    rlt_submit "$name" -P replicas=4 -P interval=2
    svc=$(svc_id "$name" web) || fail "no service of $name"
    cv_wait_until 60 "4 healthy replicas" svc_all_healthy "$svc" 4
    rlt_poll_start "$svc" "$samples"
    rlt_update "$name" -P version=v2
    rollout_mid_way() { [ "$(rlt_rollout "$name" | jqr '.step // 0')" -ge 2 ]; }
    cv_wait_until 60 "the second step" rollout_mid_way
    # every engine and observer (the cluster loop's holder among them) at once
    for f in "$STATE"/pids/engine-*.pid "$STATE"/pids/observer-*.pid; do
        kill -KILL "$(cat "$f")" 2>/dev/null || true
    done
    svt_restart_missing_workers
    cv_wait_until 180 "the update complete after the kills" svt_status_is "$name" UPDATE_COMPLETE
    rlt_poll_stop
    rlt_state_is "$name" complete || fail "rollout: $(rlt_rollout "$name")"
    rlt_assert_bound "$samples" 3 "after the kills"
    cv_wait_until 30 "4 healthy replicas on v2" rlt_all_on "$svc" 4
    # each replica id started once: no step was repeated or skipped
    starts=$(svc_starts_of "$svc")
    assert_eq 8 "$(jq length <<<"$starts")" "replica ids started (4 before, 4 after: $starts)"
    assert_eq '[1]' "$(jq -c '[.[]] | unique' <<<"$starts")" "starts per replica id"
    rm -f "$samples"
}

test_rollout_rollback_command_restores_the_old_spec() {
    local name svc before
    svt_up rlr
    name=$(stack_name rollout-back) && svt_stack rollout-back
    rlt_submit "$name" -P replicas=3 -P mode=manual
    svc=$(svc_id "$name" web) || fail "no service of $name"
    cv_wait_until 60 "3 healthy replicas" svc_all_healthy "$svc" 3
    before=$(rlt_spec_digest "$svc")
    rlt_update "$name" -P version=v2
    cv_wait_until 60 "the first step done" rlt_state_is "$name" paused
    ctl rollout rollback "$name" web >/dev/null
    cv_wait_until 60 "the update failed" svt_status_is "$name" UPDATE_FAILED
    assert_match "rolling update rolled_back: asked for by convergectl rollout rollback" \
        "$(status_json "$name" | jqr .reason)" "the stack's reason"
    assert_eq "3 $before" "$(rlt_versions "$svc")" "replicas back on the old spec"
    cv_wait_until 60 "3 healthy replicas" svc_all_healthy "$svc" 3
    if ctl rollout rollback "$name" web >/dev/null 2>&1; then fail "a second rollback succeeded"; fi
}
