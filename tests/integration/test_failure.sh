# Failures and waits.
# shellcheck shell=bash

test_failed_resource_fails_the_stack_and_names_it() {
    local name s res rc=0
    name=$(stack_name fail)
    ctl submit "$name" "$DATA/stacks/fail.yaml" --wait --timeout 60 >/dev/null || rc=$?
    assert_eq 1 "$rc" "exit code of a FAILED stack"
    s=$(status_json "$name")
    assert_eq CREATE_FAILED "$(jqr .status <<<"$s")" status
    assert_match 'Resource CREATE failed: .*resources\.broken' "$(jqr .reason <<<"$s")" reason
    res=$(ctl resources "$name" -o json)
    assert_eq CREATE_COMPLETE "$(jqr '.[] | select(.name == "ok") | .status' <<<"$res")" ok
    assert_eq CREATE_FAILED "$(jqr '.[] | select(.name == "broken") | .status' <<<"$res")" broken
    assert_eq INIT_COMPLETE "$(jqr '.[] | select(.name == "child") | .status' <<<"$res")" \
        "the child of a failed resource is never created"
}

test_action_wait_is_respected_without_blocking_others() {
    local name ev t_start t_done i_fast i_slow
    name=$(stack_name wait)
    ctl submit "$name" "$DATA/stacks/wait.yaml" --wait --timeout 60 >/dev/null
    assert_eq CREATE_COMPLETE "$(status_json "$name" | jqr .status)" status
    ev=$(ctl events "$name" -o json)
    t_start=$(jq '[.[] | select(.resource == "slow" and .status == "IN_PROGRESS")][0].time' <<<"$ev")
    t_done=$(jq '[.[] | select(.resource == "slow" and .status == "COMPLETE")][0].time' <<<"$ev")
    awk -v a="$t_start" -v b="$t_done" 'BEGIN { exit !(b - a >= 3.0) }' ||
        fail "slow completed $t_done, less than 3 s after it started at $t_start"
    i_fast=$(event_index "$ev" fast2 CREATE COMPLETE)
    i_slow=$(event_index "$ev" slow CREATE COMPLETE)
    [ "$i_fast" -lt "$i_slow" ] || fail "the fast chain waited for the slow resource"
    assert_after "$ev" after_slow slow CREATE
}
