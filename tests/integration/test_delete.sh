# Deleting stacks: children before parents, nothing left behind.
# shellcheck shell=bash

test_delete_removes_children_before_parents() {
    local name id
    name=$(stack_name del)
    ctl submit "$name" "$DATA/stacks/diamond.yaml" --wait --timeout 60 >/dev/null
    id=$(status_json "$name" | jqr .id)
    ctl delete "$name" --wait --timeout 60 >/dev/null
    # The name is free again once the delete completed; read the record by id.
    assert_eq 0 "$(redis hexists "${CONVERGE_PREFIX:-cv:}stacks" "$name")" "name freed"
    assert_eq DELETE_COMPLETE "$(redis hget "${CONVERGE_PREFIX:-cv:}{$id}:stack" status)" status
    assert_eq 0 "$(redis --scan --pattern "${CONVERGE_PREFIX:-cv:}{$id}:res:*" | wc -l)" \
        "no resource records left"
    # Order from the stream: the delete of bottom completes before top's starts.
    local order
    order=$(event_lines "$id" | awk '$3 == "DELETE" { print $2 ":" $4 }' | tr '\n' ' ')
    [[ $order == *"bottom:COMPLETE"*"left:IN_PROGRESS"* ]] || fail "bottom before left: $order"
    [[ $order == *"left:COMPLETE"*"top:IN_PROGRESS"* ]] || fail "left before top: $order"
    [[ $order == *"right:COMPLETE"*"top:IN_PROGRESS"* ]] || fail "right before top: $order"
}

test_deleted_name_can_be_submitted_again() {
    local name
    name=$(stack_name again)
    ctl submit "$name" "$DATA/stacks/flat.yaml" --wait --timeout 60 >/dev/null
    ctl delete "$name" --wait --timeout 60 >/dev/null
    ctl submit "$name" "$DATA/stacks/flat.yaml" --wait --timeout 60 >/dev/null
    assert_eq CREATE_COMPLETE "$(status_json "$name" | jqr .status)" status
}

# A name left behind by a purge of its stack's keys is released by a
# delete (a compare-and-delete of the name alone: the name and the stack's
# keys are in different Redis Cluster slots), and may be submitted again.
test_delete_of_a_purged_stack_releases_its_name() {
    local name id out try
    name=$(stack_name purged)
    # The engines' reaper frees the name of a purged stack too (it reads the
    # names every --reap-stall-ms). When it does so between the purge and
    # the delete, the delete finds no stack and the name is free: right, but
    # not the delete's path this test is about (nor is the delete that sees
    # the reaper release the name under it, and says to try again); then it
    # purges another stack of the name, up to 5 times.
    for try in 1 2 3 4 5; do
        ctl submit "$name" "$DATA/stacks/flat.yaml" --wait --timeout 60 >/dev/null
        id=$(status_json "$name" | jqr .id)
        # Every key of the stack in one redis-cli (they share the {id} slot).
        redis --scan --pattern "${CONVERGE_PREFIX:-cv:}{$id}:*" | sed 's/^/DEL /' | redis >/dev/null
        out=$(ctl delete "$name" 2>&1) && break
        assert_match "stack $name (not found|changed while being deleted; try again)" "$out" \
            "delete after the reaper freed the name (try $try)"
        del_name_free "$name" || fail "delete said not found, yet $name is mapped"
    done
    assert_match "had no status record .*its name is released" "$out" "what delete says"
    assert_eq "" "$(redis HGET "${CONVERGE_PREFIX:-cv:}stacks" "$name")" "the name after the delete"
    ctl submit "$name" "$DATA/stacks/flat.yaml" --wait --timeout 60 >/dev/null
}

test_submitting_an_existing_name_is_refused() {
    local name rc=0
    name=$(stack_name dup)
    ctl submit "$name" "$DATA/stacks/flat.yaml" --wait --timeout 60 >/dev/null
    ctl submit "$name" "$DATA/stacks/flat.yaml" 2>/dev/null || rc=$?
    assert_eq 2 "$rc" "exit code"
}

# The worker that finishes a delete frees the name in a second step (the name
# hash is a global key); these simulate a worker that died before it: the
# name mapped back to the deleted stack with redis-cli.
del_unmap_lost() { # name id: the name maps to the deleted stack again
    redis hset "${CONVERGE_PREFIX:-cv:}stacks" "$1" "$2" >/dev/null
}

del_name_free() { # name
    [ "$(redis hexists "${CONVERGE_PREFIX:-cv:}stacks" "$1")" = 0 ]
}

test_a_name_left_to_a_deleted_stack_can_be_submitted_again() {
    local name old new
    name=$(stack_name left)
    ctl submit "$name" "$DATA/stacks/flat.yaml" --wait --timeout 60 >/dev/null
    old=$(status_json "$name" | jqr .id)
    ctl delete "$name" --wait --timeout 60 >/dev/null
    del_unmap_lost "$name" "$old"
    ctl submit "$name" "$DATA/stacks/flat.yaml" --wait --timeout 60 >/dev/null ||
        fail "submit refused a name left to a DELETE_COMPLETE stack"
    new=$(status_json "$name" | jqr .id)
    [ "$new" != "$old" ] || fail "the name still maps to the deleted stack $old"
    assert_eq CREATE_COMPLETE "$(status_json "$name" | jqr .status)" status
}

test_the_reaper_frees_a_name_left_to_a_deleted_stack() {
    local name id
    name=$(stack_name reaped)
    ctl submit "$name" "$DATA/stacks/flat.yaml" --wait --timeout 60 >/dev/null
    id=$(status_json "$name" | jqr .id)
    ctl delete "$name" --wait --timeout 60 >/dev/null
    del_unmap_lost "$name" "$id"
    cv_wait_until 60 "the reaper to free the name $name" del_name_free "$name"
}
