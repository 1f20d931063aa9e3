# Actions in flight during updates, as Heat's convergence does them: never
# cut short by an update (retrigger), cancelled only by a stack delete or
# by `convergectl mark-unhealthy`; failures of superseded traversals; a
# rollback that reuses the replaced original; waits that last more than
# their N seconds.
# shellcheck shell=bash

U="$DATA/stacks/update"

# resource_field NAME RESOURCE FIELD -> that field of `resources -o json`
resource_field() {
    ctl resources "$1" -o json | jq -r --arg r "$2" --arg f "$3" \
        '[.[] | select(.name == $r and (.replaced // false) == false)][0][$f]'
}

# first_event EVENTS_JSON RESOURCE ACTION STATUS -> index of the first match, or null
first_event() {
    jq --arg r "$2" --arg a "$3" --arg s "$4" \
        '[.[] | .resource == $r and .action == $a and .status == $s] | index(true)' <<<"$1"
}

resource_is() { # NAME RESOURCE STATUS
    [ "$(resource_field "$1" "$2" status)" = "$3" ]
}

stack_is() { # NAME STATUS
    [ "$(status_json "$1" | jqr .status)" = "$2" ]
}

test_update_during_a_slow_create_lets_it_finish_then_updates() {
    local name s ev i_done i_upd created
    name=$(stack_name inflight-update)
    ctl submit "$name" "$U/value.yaml" -P value=slow -P wait=3 >/dev/null
    cv_wait_until 20 "thing CREATE_IN_PROGRESS" resource_is "$name" thing CREATE_IN_PROGRESS
    created=$(resource_field "$name" thing physical_id)
    ctl update "$name" "$U/value.yaml" -P value=fast -P wait=0 --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq fast "$(jqr .outputs.value <<<"$s")" "the newest definition"
    assert_eq "$created" "$(jqr .outputs.thing_id <<<"$s")" "thing updated in place, not replaced"
    ev=$(ctl events "$name" -o json)
    i_done=$(first_event "$ev" thing CREATE COMPLETE)
    i_upd=$(first_event "$ev" thing UPDATE IN_PROGRESS)
    [ "$i_done" != null ] || fail "the create in flight never completed: it was cut short"
    [ "$i_upd" != null ] || fail "thing was never updated"
    [ "$i_done" -lt "$i_upd" ] || fail "update began (event $i_upd) before the create finished ($i_done)"
}

test_update_removing_a_resource_in_flight_lets_its_create_finish() {
    local name ev i_done i_del
    name=$(stack_name inflight-remove)
    ctl submit "$name" "$U/value.yaml" -P wait=3 >/dev/null
    cv_wait_until 20 "thing CREATE_IN_PROGRESS" resource_is "$name" thing CREATE_IN_PROGRESS
    ctl update "$name" "$U/empty.yaml" --wait --timeout 60 >/dev/null
    assert_eq UPDATE_COMPLETE "$(status_json "$name" | jqr .status)" status
    ev=$(ctl events "$name" -o json)
    i_done=$(first_event "$ev" thing CREATE COMPLETE)
    i_del=$(first_event "$ev" thing DELETE IN_PROGRESS)
    [ "$i_done" != null ] && [ "$i_del" != null ] || fail "thing was not created then deleted"
    [ "$i_done" -lt "$i_del" ] || fail "delete began (event $i_del) before the create finished ($i_done)"
    assert_eq 0 "$(ctl resources "$name" -o json | jq length)" "nothing left"
}

test_stack_delete_cancels_an_action_in_flight() {
    local name ev
    name=$(stack_name inflight-delete)
    ctl submit "$name" "$U/value.yaml" -P wait=600 >/dev/null
    cv_wait_until 20 "thing CREATE_IN_PROGRESS" resource_is "$name" thing CREATE_IN_PROGRESS
    ctl delete "$name" --wait --timeout 30 >/dev/null
    ev=$(ctl events "$name" -o json 2>/dev/null || echo '[]')
    assert_eq null "$(first_event "$ev" thing CREATE COMPLETE)" "the 600 s create did not finish"
}

test_mark_unhealthy_abandons_an_action_a_newer_update_waits_for() {
    local name ev was s
    name=$(stack_name inflight-mark)
    # action_wait_secs -1: a create that never ends on its own.
    ctl submit "$name" "$U/value.yaml" -P value=v1 -P wait=-1 >/dev/null
    cv_wait_until 20 "thing CREATE_IN_PROGRESS" resource_is "$name" thing CREATE_IN_PROGRESS
    was=$(resource_field "$name" thing physical_id)
    ctl update "$name" "$U/value.yaml" -P value=v2 -P wait=0 >/dev/null
    cv_wait_until 20 "the update in progress" stack_is "$name" UPDATE_IN_PROGRESS
    ctl mark-unhealthy "$name" thing --reason "stuck for good" >/dev/null
    cv_wait_until 30 "UPDATE_COMPLETE" stack_is "$name" UPDATE_COMPLETE
    s=$(status_json "$name")
    assert_eq v2 "$(jqr .outputs.value <<<"$s")" output
    [ "$(jqr .outputs.thing_id <<<"$s")" != "$was" ] || fail "thing was not replaced"
    ev=$(ctl events "$name" -o json)
    assert_eq "stuck for good" \
        "$(jq -r '[.[] | select(.resource == "thing" and .action == "CHECK" and .status == "FAILED")][0].reason' <<<"$ev")" \
        "the CHECK FAILED event with the reason"
    assert_eq 0 "$(jq --arg p "$was" '[.[] | select(.physical_id == $p and .action == "CREATE" and .status == "COMPLETE")] | length' <<<"$ev")" \
        "the abandoned create never completed"
}

test_mark_unhealthy_of_the_current_action_fails_the_stack() {
    local name rc=0
    name=$(stack_name inflight-mark-own)
    ctl submit "$name" "$U/value.yaml" -P wait=-1 >/dev/null
    cv_wait_until 20 "thing CREATE_IN_PROGRESS" resource_is "$name" thing CREATE_IN_PROGRESS
    ctl mark-unhealthy "$name" thing >/dev/null
    cv_wait_until 10 "CREATE_FAILED" stack_is "$name" CREATE_FAILED
    assert_eq CHECK_FAILED "$(resource_field "$name" thing status)" "resource status"
    assert_match "state changed by resource_mark_unhealthy api" \
        "$(status_json "$name" | jqr .reason)" "stack reason (Heat's default reason)"
    ctl mark-unhealthy "$name" nosuch >/dev/null 2>&1 || rc=$?
    assert_eq 2 "$rc" "unknown resource"
}

test_mark_unhealthy_then_update_replaces_and_reset_restores() {
    local name was rc=0
    name=$(stack_name mark-complete)
    ctl submit "$name" "$U/value.yaml" --wait --timeout 60 >/dev/null
    was=$(resource_field "$name" thing physical_id)
    ctl mark-unhealthy "$name" thing --reset >/dev/null
    assert_eq CREATE_COMPLETE "$(resource_field "$name" thing status)" "reset of a healthy resource: no change"
    ctl mark-unhealthy "$name" thing >/dev/null
    assert_eq CHECK_FAILED "$(resource_field "$name" thing status)" status
    ctl mark-unhealthy "$name" thing --reset >/dev/null
    assert_eq CHECK_COMPLETE "$(resource_field "$name" thing status)" "reset"
    ctl mark-unhealthy "$name" thing >/dev/null
    ctl update "$name" "$U/value.yaml" --wait --timeout 60 >/dev/null || rc=$?
    assert_eq 0 "$rc" "the update after mark-unhealthy"
    [ "$(resource_field "$name" thing physical_id)" != "$was" ] || fail "thing was not replaced"
    assert_eq CREATE_COMPLETE "$(resource_field "$name" thing status)" "the replacement"
}

test_failure_in_a_superseded_traversal_never_fails_the_stack() {
    local name ev failed s
    name=$(stack_name inflight-superseded)
    ctl submit "$name" "$U/value.yaml" -P fail=true -P wait=2 >/dev/null
    cv_wait_until 20 "thing CREATE_IN_PROGRESS" resource_is "$name" thing CREATE_IN_PROGRESS
    failed=$(resource_field "$name" thing physical_id)
    ctl update "$name" "$U/value.yaml" -P value=ok --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$s")" status
    ev=$(ctl events "$name" -o json)
    [ "$(first_event "$ev" thing CREATE FAILED)" != null ] || fail "the old create did not fail"
    assert_eq 0 "$(jq --arg n "$name" '[.[] | select(.resource == $n and .status == "FAILED")] | length' <<<"$ev")" \
        "no stack FAILED event"
    [ "$(jqr .outputs.thing_id <<<"$s")" != "$failed" ] || fail "the failed thing was kept, not replaced"
}

test_rollback_reuses_the_replaced_original() {
    local name was rc=0 s
    name=$(stack_name inflight-restore)
    ctl submit "$name" "$U/replace_fail.yaml" --enable-rollback --wait --timeout 60 >/dev/null
    was=$(status_json "$name" | jqr .outputs.thing_id)
    ctl update "$name" "$U/replace_fail.yaml" -P value=two -P fail=true --wait --timeout 60 \
        >/dev/null 2>&1 || rc=$?
    assert_eq 1 "$rc" "the update failed"
    s=$(status_json "$name")
    assert_eq ROLLBACK_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq "$was" "$(jqr .outputs.thing_id <<<"$s")" "the original thing is the resource again"
    assert_eq "$was" "$(resource_field "$name" thing physical_id)" "thing's physical id"
    assert_eq 0 "$(ctl resources "$name" -o json | jq '[.[] | select(.replaced == true)] | length')" \
        "the failed replacement deleted"
    assert_eq 2 "$(ctl events "$name" -o json | jq '[.[] | select(.resource == "thing" and .action == "CREATE" and .status == "IN_PROGRESS")] | length')" \
        "thing created twice (original, replacement), never a third time"
}

# Heat's manual rollback: after an update whose replacement failed (rollback
# disabled), an update giving the first template back keeps the original
# physical resource, creates nothing, and the failed replacement goes.
test_manual_rollback_after_a_failed_replacement_keeps_the_original() {
    local name was rc=0 s
    name=$(stack_name inflight-manual)
    ctl submit "$name" "$U/replacement_fails.yaml" --wait --timeout 60 >/dev/null
    was=$(status_json "$name" | jqr .outputs.thing_id)
    ctl update "$name" "$U/replacement_fails.yaml" -P value=two -P fail=true --disable-rollback \
        --wait --timeout 60 >/dev/null 2>&1 || rc=$?
    assert_eq 1 "$rc" "the update failed"
    assert_eq UPDATE_FAILED "$(status_json "$name" | jqr .status)" "no automatic rollback"
    ctl update "$name" "$U/replacement_fails.yaml" --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq "$was" "$(jqr .outputs.thing_id <<<"$s")" "the original thing is the resource again"
    assert_eq "$was" "$(resource_field "$name" thing physical_id)" "thing's physical id"
    assert_eq 2 "$(ctl events "$name" -o json | jq '[.[] | select(.resource == "thing" and .action == "CREATE" and .status == "IN_PROGRESS")] | length')" \
        "thing created twice (original, failed replacement), never a third time"
    assert_eq 1 "$(ctl resources "$name" -o json | jq 'length')" "the failed replacement deleted"
}

test_a_wait_of_n_seconds_shows_more_than_n() {
    local name ev d
    name=$(stack_name inflight-duration)
    ctl submit "$name" "$U/value.yaml" -P wait=1 --wait --timeout 60 >/dev/null
    ev=$(ctl events "$name" -o json)
    d=$(jq '[.[] | select(.resource == "thing" and .action == "CREATE")] as $e
        | (($e | map(select(.status == "COMPLETE")))[0].time - ($e | map(select(.status == "IN_PROGRESS")))[0].time) * 1000 | round' <<<"$ev")
    [ "$d" -gt 1000 ] || fail "IN_PROGRESS to COMPLETE took $d ms, not more than 1000"
}
