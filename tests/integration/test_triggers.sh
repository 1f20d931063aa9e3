# Manual triggers (converge or observe now) and rollback on demand.
# shellcheck shell=bash

test_converge_recreates_a_resource_lost_out_of_band() {
    local name id s
    name=$(stack_name trig-converge)
    ctl submit "$name" "$DATA/stacks/update/chain3.yaml" --wait --timeout 60 >/dev/null
    id=$(status_json "$name" | jqr .id)
    # Reality drifts: the record of c disappears as if c was deleted behind our back.
    redis del "${CONVERGE_PREFIX:-cv:}{$id}:res:c" >/dev/null
    redis hdel "${CONVERGE_PREFIX:-cv:}{$id}:index" c >/dev/null
    ctl converge "$name" --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq CREATE_COMPLETE "$(redis hget "${CONVERGE_PREFIX:-cv:}{$id}:res:c" status)" \
        "c created again"
    assert_eq CREATE_COMPLETE "$(redis hget "${CONVERGE_PREFIX:-cv:}{$id}:res:a" status)" \
        "a untouched"
}

test_rollback_on_demand_returns_to_the_last_complete_definition() {
    local name rc=0 s
    name=$(stack_name trig-rollback)
    ctl submit "$name" "$DATA/stacks/update/value.yaml" -P value=good --wait --timeout 60 >/dev/null
    ctl update "$name" "$DATA/stacks/update/value.yaml" -P fail=true --wait --timeout 60 \
        >/dev/null 2>&1 || rc=$?
    assert_eq 1 "$rc" "the update failed"
    assert_eq UPDATE_FAILED "$(status_json "$name" | jqr .status)" "no automatic rollback"
    ctl rollback "$name" --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq ROLLBACK_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq good "$(jqr .outputs.value <<<"$s")" "outputs of the last complete definition"
}

test_cancel_stops_a_slow_update_and_rolls_it_back() {
    local name t0 s
    name=$(stack_name trig-cancel)
    ctl submit "$name" "$DATA/stacks/update/slow_update.yaml" -P value=one --wait --timeout 60 >/dev/null
    ctl update "$name" "$DATA/stacks/update/slow_update.yaml" -P value=two -P wait=30 >/dev/null
    t0=$SECONDS
    ctl cancel "$name" --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq ROLLBACK_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq one "$(jqr .outputs.value <<<"$s")" "the update did not take effect"
    [ $((SECONDS - t0)) -lt 20 ] || fail "cancel waited for the 30 s update"
}

test_cancel_without_an_update_in_progress_is_refused() {
    local name rc=0
    name=$(stack_name trig-nocancel)
    ctl submit "$name" "$DATA/stacks/flat.yaml" --wait --timeout 60 >/dev/null
    ctl cancel "$name" >/dev/null 2>&1 || rc=$?
    assert_eq 2 "$rc" "exit code"
}
