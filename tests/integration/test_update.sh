# Updates at any time: in place, replacement, removal, overlapping updates,
# recovery, rollback, Retain. Outcomes proven from events and final state.
# shellcheck shell=bash

U="$DATA/stacks/update"

# deleted_events EVENTS_JSON RESOURCE -> "pid:STATUS ..." of DELETE events
delete_events() {
    jq -r --arg r "$2" '[.[] | select(.resource == $r and .action == "DELETE")
        | "\(.physical_id):\(.status)"] | join(" ")' <<<"$1"
}

test_update_in_place_keeps_the_physical_resource() {
    local name s1 s2 ev
    name=$(stack_name upd-inplace)
    ctl submit "$name" "$U/value.yaml" -P value=one --wait --timeout 60 >/dev/null
    s1=$(status_json "$name")
    ctl update "$name" "$U/value.yaml" -P value=two --wait --timeout 60 >/dev/null
    s2=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$s2")" status
    assert_eq two "$(jqr .outputs.value <<<"$s2")" "new output"
    assert_eq "$(jqr .outputs.thing_id <<<"$s1")" "$(jqr .outputs.thing_id <<<"$s2")" \
        "physical id kept by an in-place update"
    ev=$(ctl events "$name" -o json)
    assert_eq 2 "$(jq '[.[] | select(.resource == "thing" and .action == "UPDATE")] | length' <<<"$ev")" \
        "thing UPDATE IN_PROGRESS + COMPLETE"
    assert_after "$ev" child thing UPDATE
}

test_none_with_changed_properties_is_left_untouched() {
    local name s1 s2 ev
    name=$(stack_name upd-none)
    ctl submit "$name" "$U/none.yaml" -P v=one --wait --timeout 60 >/dev/null
    s1=$(status_json "$name")
    ctl update "$name" "$U/none.yaml" -P v=two --wait --timeout 60 >/dev/null
    s2=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$s2")" status
    assert_eq "$(jqr .outputs.stub_id <<<"$s1")" "$(jqr .outputs.stub_id <<<"$s2")" "physical id kept"
    assert_eq CREATE_COMPLETE "$(ctl resources "$name" -o json | jqr '.[] | select(.name == "stub") | .status')" \
        "stub status (Heat: OS::Heat::None never needs an update)"
    ev=$(ctl events "$name" -o json)
    assert_eq 0 "$(jq '[.[] | select(.resource == "stub" and .action != "CREATE")] | length' <<<"$ev")" \
        "no event for stub after its create"
}

test_replacement_creates_the_new_version_before_deleting_the_old() {
    local name s1 s2 ev old new i_new i_child i_del
    name=$(stack_name upd-replace)
    ctl submit "$name" "$U/value.yaml" -P value=one -P replace=true --wait --timeout 60 >/dev/null
    s1=$(status_json "$name")
    ctl update "$name" "$U/value.yaml" -P value=two -P replace=true --wait --timeout 60 >/dev/null
    s2=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$s2")" status
    old=$(jqr .outputs.thing_id <<<"$s1"); new=$(jqr .outputs.thing_id <<<"$s2")
    [ "$old" != "$new" ] || fail "replacement kept the physical id $old"
    assert_eq two "$(jqr .outputs.value <<<"$s2")" "new output"
    ev=$(ctl events "$name" -o json)
    i_new=$(jq --arg p "$new" '[.[] | .physical_id == $p and .status == "COMPLETE"] | index(true)' <<<"$ev")
    i_child=$(jq '[.[] | .resource == "child" and .action == "UPDATE" and .status == "COMPLETE"] | index(true)' <<<"$ev")
    i_del=$(jq --arg p "$old" '[.[] | .physical_id == $p and .action == "DELETE" and .status == "IN_PROGRESS"] | index(true)' <<<"$ev")
    [ "$i_del" != null ] || fail "old version $old was never deleted"
    [ "$i_new" -lt "$i_del" ] || fail "old deleted (event $i_del) before new completed ($i_new)"
    [ "$i_child" -lt "$i_del" ] || fail "old deleted (event $i_del) before the child moved over ($i_child)"
    assert_eq "$old:IN_PROGRESS $old:COMPLETE" "$(delete_events "$ev" thing)" "old version deleted once"
    assert_eq 0 "$(ctl resources "$name" -o json | jq '[.[] | select(.replaced == true)] | length')" \
        "no replaced version left"
}

test_removed_resources_are_deleted_children_first() {
    local name ev i_c i_b
    name=$(stack_name upd-remove)
    ctl submit "$name" "$U/chain3.yaml" --wait --timeout 60 >/dev/null
    ctl update "$name" "$U/chain1.yaml" --wait --timeout 60 >/dev/null
    assert_eq UPDATE_COMPLETE "$(status_json "$name" | jqr .status)" status
    ev=$(ctl events "$name" -o json)
    i_c=$(jq '[.[] | .resource == "c" and .action == "DELETE" and .status == "COMPLETE"] | index(true)' <<<"$ev")
    i_b=$(jq '[.[] | .resource == "b" and .action == "DELETE" and .status == "IN_PROGRESS"] | index(true)' <<<"$ev")
    [ "$i_c" != null ] && [ "$i_b" != null ] || fail "b and c were not both deleted"
    [ "$i_c" -lt "$i_b" ] || fail "b deleted before its child c"
    assert_eq '["a"]' "$(ctl resources "$name" -o json | jq -c '[.[].name]')" "resources left"
}

test_three_quick_updates_end_at_the_last() {
    local name s reruns
    name=$(stack_name upd-three)
    ctl submit "$name" "$U/value.yaml" -P value=v0 -P wait=2 >/dev/null
    ctl update "$name" "$U/value.yaml" -P value=v1 -P wait=2 >/dev/null
    ctl update "$name" "$U/value.yaml" -P value=v2 -P replace=true >/dev/null
    ctl update "$name" "$U/value.yaml" -P value=v3 --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq v3 "$(jqr .outputs.value <<<"$s")" "the last definition wins"
    # A record made behind the last update's back makes it run again
    # (stack_finish.lua AGAIN), counted in the stack's `reruns`.
    reruns=$(redis hget "${CONVERGE_PREFIX:-cv:}{$(jqr .id <<<"$s")}:stack" reruns)
    assert_eq $((4 + ${reruns:-0})) "$(jqr .traversal <<<"$s")" \
        "one traversal per submit/update (and per re-run: ${reruns:-0})"
    assert_eq 0 "$(ctl resources "$name" -o json | jq '[.[] | select(.replaced == true)] | length')" \
        "every replaced version cleaned up"
}

test_update_after_a_failed_create_recovers() {
    local name rc=0 s
    name=$(stack_name upd-recover)
    ctl submit "$name" "$U/value.yaml" -P fail=true --wait --timeout 60 >/dev/null || rc=$?
    assert_eq 1 "$rc" "the create failed"
    ctl update "$name" "$U/value.yaml" -P value=fixed --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq fixed "$(jqr .outputs.value <<<"$s")" output
}

test_rollback_restores_the_previous_outputs() {
    local name rc=0 s
    name=$(stack_name upd-rollback)
    ctl submit "$name" "$U/value.yaml" -P value=good --enable-rollback --wait --timeout 60 >/dev/null
    ctl update "$name" "$U/value.yaml" -P value=bad -P fail=true --wait --timeout 60 >/dev/null || rc=$?
    assert_eq 1 "$rc" "a rolled-back update exits 1"
    s=$(status_json "$name")
    assert_eq ROLLBACK_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq good "$(jqr .outputs.value <<<"$s")" "outputs of the last complete definition"
}

test_rollback_disabled_leaves_update_failed() {
    local name rc=0
    name=$(stack_name upd-norollback)
    ctl submit "$name" "$U/value.yaml" -P value=good --wait --timeout 60 >/dev/null
    ctl update "$name" "$U/value.yaml" -P fail=true --wait --timeout 60 >/dev/null || rc=$?
    assert_eq 1 "$rc" "exit code"
    assert_eq UPDATE_FAILED "$(status_json "$name" | jqr .status)" status
}

test_failed_create_with_rollback_deletes_what_was_created() {
    local name rc=0 s
    name=$(stack_name upd-createrb)
    ctl submit "$name" "$DATA/stacks/fail.yaml" --enable-rollback --wait --timeout 60 >/dev/null || rc=$?
    assert_eq 1 "$rc" "exit code"
    s=$(status_json "$name")
    assert_eq ROLLBACK_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq 0 "$(redis hlen "${CONVERGE_PREFIX:-cv:}{$(jqr .id <<<"$s")}:index")" "no records left"
}

test_retain_keeps_the_resource_out_of_the_delete() {
    local name ev
    name=$(stack_name upd-retain)
    ctl submit "$name" "$U/retain.yaml" --wait --timeout 60 >/dev/null
    ctl update "$name" "$U/empty.yaml" --wait --timeout 60 >/dev/null
    assert_eq UPDATE_COMPLETE "$(status_json "$name" | jqr .status)" status
    ev=$(ctl events "$name" -o json)
    assert_eq 0 "$(jq '[.[] | select(.resource == "keep" and .action == "DELETE" and .status == "IN_PROGRESS")] | length' <<<"$ev")" \
        "no delete action on the retained resource"
    assert_match retained "$(jq -r '[.[] | select(.resource == "keep" and .action == "DELETE")][0].reason' <<<"$ev")" \
        "retained event"
    assert_eq 2 "$(jq '[.[] | select(.resource == "drop" and .action == "DELETE")] | length' <<<"$ev")" \
        "the other resource is deleted"
    assert_eq 0 "$(ctl resources "$name" -o json | jq length)" "both left the stack"
}

# True while a replaced version of RESOURCE is being deleted.
replaced_deleting() { # name resource
    ctl resources "$1" -o json | jq -e --arg r "$2" \
        '[.[] | select(.replaced == true and .status == "DELETE_IN_PROGRESS")] | length > 0' \
        >/dev/null
}

# Waits (bounded) until a replaced version of RESOURCE is being deleted.
wait_for_replaced_deleting() { # name resource
    cv_wait_until 30 "a replaced version of $2 to be deleted" replaced_deleting "$1" "$2" ||
        fail "no replaced version of $2 was being deleted within 30 s"
}

test_replacement_during_a_running_cleanup_cleans_every_version() {
    local name s
    name=$(stack_name upd-cleanrace)
    ctl submit "$name" "$U/slow_delete.yaml" -P value=one --wait --timeout 60 >/dev/null
    ctl update "$name" "$U/slow_delete.yaml" -P value=two >/dev/null
    wait_for_replaced_deleting "$name" a
    ctl update "$name" "$U/slow_delete.yaml" -P value=three --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq three "$(jqr .outputs.value <<<"$s")" output
    assert_eq 0 "$(ctl resources "$name" -o json | jq '[.[] | select(.replaced == true)] | length')" \
        "both replaced versions deleted"
    assert_eq 2 "$(ctl events "$name" -o json |
        jq '[.[] | select(.resource == "a" and .action == "DELETE" and .status == "COMPLETE")] | length')" \
        "two DELETE COMPLETE events"
}
