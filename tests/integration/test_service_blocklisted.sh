# A Converge::Service that every eligible node has given up on: its command
# does not exist, the restart policy gives up on each node of this test's
# group in turn and each is blocklisted for the service. Once the last one
# is, the resource fails — it does not wait the blocklist's ten minutes —
# with the blocklist (which nodes, until when) and the start error in its
# reason, "blocklisted" said as such; never while a node of the group is
# left. The agents are this test's own (svt_up of test_services.sh), their
# nodes the only ones the service's placement constraint allows.
# shellcheck shell=bash disable=SC2317 # functions defined inside tests are called by cv_wait_until

SBL_ERROR="exec /no/such/converge-cmd: No such file or directory"

test_service_blocklisted_on_every_eligible_node_fails_with_the_blocklist_and_start_error() {
    local name svc reason doc n blocked early="" waited=""
    svt_up blk N1 N2 N3
    name=$(stack_name svc-blk) && svt_stack svc-blk
    ctl submit "$name" "$DATA/services/nosuchcmd.yaml" -P "constraint=$(svt_c)" >/dev/null
    cv_wait_until 30 "the service to exist" svc_id "$name" ghost >/dev/null
    svc=$(svc_id "$name" ghost)
    # Sampled until the stack settles: FAILED only once all three nodes are
    # blocklisted (the blocklist is read after the status: it only grows),
    # and still waiting while one or two are.
    sbl_settled() {
        local status listed
        status=$(svt_status "$name")
        listed=$(svc_field "$svc" blocklist | jq 'length' 2>/dev/null || echo 0)
        if [ "$status" = CREATE_FAILED ] && [ "${listed:-0}" -lt 3 ]; then
            early="FAILED with ${listed:-0} of 3 nodes blocklisted"
        fi
        if [ "$status" = CREATE_IN_PROGRESS ] && [ "${listed:-0}" -ge 1 ]; then
            waited=1
        fi
        [ "$status" = CREATE_FAILED ] || [ "$status" = CREATE_COMPLETE ]
    }
    cv_wait_until 90 "the stack to settle" sbl_settled
    [ -z "$early" ] || fail "$early"
    [ -n "$waited" ] || fail "never seen waiting with a node blocklisted and another left"
    assert_eq CREATE_FAILED "$(svt_status "$name")" "stack status"
    doc=$(ctl resource-show "$name" ghost -o json)
    assert_match FAILED "$(jqr .status <<<"$doc")" "resource status"
    reason=$(jqr .reason <<<"$doc")
    assert_match 'every eligible node is blocklisted' "$reason" "the reason says blocklisted"
    [[ $reason == *"$SBL_ERROR"* ]] || fail "the reason does not give the start error ($SBL_ERROR): $reason"
    for n in N1 N2 N3; do
        assert_match "$SVT_P$n until [0-9]{4}-[0-9]{2}-[0-9]{2}T" "$reason" "the reason names $n's blocklist"
    done
    blocked=$(svc_field "$svc" blocked)
    assert_eq 3 "$(jq '.nodes | length' <<<"$blocked")" "nodes of the record's blocked"
    [ "$(jq -r --arg n "${SVT_P}N1" '.nodes[$n].reason' <<<"$blocked")" != null ] ||
        fail "the record's blocked has no reason for ${SVT_P}N1: $blocked"
    assert_eq 0 "$(svc_proc_count "$name")" "replica processes running"
}
