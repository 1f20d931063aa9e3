# Nested stacks (template resources) and OS::Heat::ResourceGroup: outputs
# through the chain, updates and deletes that recurse, scaling, failures.
# shellcheck shell=bash

NESTED="$DATA/stacks/nested"
P=${CONVERGE_PREFIX:-cv:}

stack_id() { status_json "$1" | jqr .id; }
# The child stack of a nested resource: its physical id.
child_of() { redis hget "$P{$1}:res:$2" physical_id; }
child_field() { redis hget "$P{$1}:stack" "$2"; }

# "resource:action:status" of a stack's events, oldest first, one per line.
event_list() { event_lines "$1" | awk '{ print $2 ":" $3 ":" $4 }'; }

test_nested_stack_outputs_resolve_through_the_chain() {
    local name id child out
    name=$(stack_name nest)
    ctl submit "$name" "$NESTED/app.yaml" --wait --timeout 60 >/dev/null
    out=$(status_json "$name")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$out")" status
    assert_eq "vm-web-2-web-disk" "$(jqr .outputs.web_address <<<"$out")" "nested output"
    assert_eq "front of vm-web-2-web-disk" "$(jqr .outputs.front <<<"$out")" \
        "a sibling reads the nested output"
    id=$(jqr .id <<<"$out")
    child=$(child_of "$id" web)
    assert_eq "$child" "$(jqr .outputs.web_stack <<<"$out")" "get_resource is the child stack"
    assert_eq "$id" "$(child_field "$child" parent)" "child names its parent"
    assert_eq CREATE_COMPLETE "$(child_field "$child" status)" "child status"
    assert_match '^[0-9a-f]{16}$' "$child" "child id has its own hash tag"
    # Two levels, the middle template in a sub-folder.
    name=$(stack_name deep)
    ctl submit "$name" "$NESTED/deep.yaml" --wait --timeout 60 >/dev/null
    out=$(status_json "$name")
    assert_eq '["vm-deep-a-1-deep-a-disk","vm-deep-b-3-deep-b-disk"]' \
        "$(jq -c .outputs.both <<<"$out")" "outputs through two levels"
    assert_eq 3 "$(jqr .nested.stacks <<<"$out")" "nested stacks counted"
    assert_eq 6 "$(jqr '.nested.resources.CREATE_COMPLETE' <<<"$out")" "tier: a, b; each: disk, vm"
}

test_nested_update_recurses_in_place() {
    local name id child disk
    name=$(stack_name nupd)
    ctl submit "$name" "$NESTED/app.yaml" --wait --timeout 60 >/dev/null
    id=$(stack_id "$name")
    child=$(child_of "$id" web)
    disk=$(redis hget "$P{$child}:res:disk" physical_id)
    ctl update "$name" --existing -P size=5 --wait --timeout 60 >/dev/null
    assert_eq UPDATE_COMPLETE "$(status_json "$name" | jqr .status)" status
    assert_eq "front of vm-web-5-web-disk" "$(status_json "$name" | jqr .outputs.front)" output
    assert_eq "$child" "$(child_of "$id" web)" "the nested stack is updated, not replaced"
    assert_eq UPDATE_COMPLETE "$(child_field "$child" status)" "child updated"
    assert_eq 2 "$(child_field "$child" traversal)" "one child traversal per parent action"
    assert_eq "$disk" "$(redis hget "$P{$child}:res:disk" physical_id)" "unchanged inner resource kept"
    assert_eq UPDATE_COMPLETE "$(redis hget "$P{$id}:res:web" status)" "parent resource updated"
}

test_group_scales_3_10_2_with_removal_policies() {
    local name id child out
    name=$(stack_name grp)
    ctl submit "$name" "$NESTED/group.yaml" --wait --timeout 60 >/dev/null
    assert_eq '["member-0","member-1","member-2"]' \
        "$(status_json "$name" | jq -c .outputs.values)" "3 members"
    id=$(stack_id "$name")
    child=$(child_of "$id" group)
    ctl update "$name" --existing -P count=10 --wait --timeout 90 >/dev/null
    out=$(status_json "$name")
    assert_eq 10 "$(jq '.outputs.refs | length' <<<"$out")" "scaled up to 10"
    assert_eq member-9 "$(jqr '.outputs.values[9]' <<<"$out")" "new member 9"
    assert_eq "$child" "$(child_of "$id" group)" "members stay in the same nested stack"
    ctl update "$name" --existing -P count=2 -P remove=0 --wait --timeout 90 >/dev/null
    out=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$out")" status
    assert_eq '["member-1","member-2"]' "$(jq -c .outputs.values <<<"$out")" \
        "removal policy removed 0, scaling down removed the highest"
    assert_eq '["0"]' "$(jq -c .outputs.removed <<<"$out")" "removed_rsrc_list"
    assert_eq "1 2" "$(redis --scan --pattern "$P{$child}:res:*" | sed 's/.*:res://' | sort | tr '\n' ' ' | sed 's/ $//')" \
        "member records left"
    local ev
    ev=$(event_list "$child")
    for m in 0 3 4 5 6 7 8 9; do
        grep -qx "$m:DELETE:COMPLETE" <<<"$ev" || fail "member $m was not deleted"
    done
    # Scaling up again does not reuse the removed name.
    ctl update "$name" --existing -P count=3 --wait --timeout 60 >/dev/null
    assert_eq '["member-1","member-2","member-3"]' \
        "$(status_json "$name" | jq -c .outputs.values)" "0 stays removed"
}

test_group_of_nested_stacks_exposes_member_outputs() {
    local name out
    name=$(stack_name grpn)
    ctl submit "$name" "$NESTED/servers.yaml" --wait --timeout 60 >/dev/null
    out=$(status_json "$name")
    assert_eq '["vm-srv0-1-srv0-disk","vm-srv1-1-srv1-disk"]' "$(jq -c .outputs.addresses <<<"$out")" \
        "attribute list over members"
    assert_eq vm-srv1-1-srv1-disk "$(jqr '.outputs.by_name["1"]' <<<"$out")" "attributes map"
    assert_eq vm-srv1-1-srv1-disk "$(jqr .outputs.second <<<"$out")" "resource.1.address"
    assert_eq 3 "$(jqr .nested.stacks <<<"$out")" "group stack and two member stacks"
    assert_eq 6 "$(jqr .nested.resources.CREATE_COMPLETE <<<"$out")" "2 members + 4 inner"
}

test_delete_with_nested_stacks_removes_everything_in_reverse_order() {
    local name id child ev
    name=$(stack_name ndel)
    ctl submit "$name" "$NESTED/app.yaml" --wait --timeout 60 >/dev/null
    id=$(stack_id "$name")
    child=$(child_of "$id" web)
    ctl delete "$name" --wait --timeout 60 >/dev/null
    assert_eq DELETE_COMPLETE "$(child_field "$child" status)" "child stack deleted"
    assert_eq 0 "$(redis --scan --pattern "$P{$child}:res:*" | wc -l)" "no records in the child"
    assert_eq 0 "$(redis --scan --pattern "$P{$id}:res:*" | wc -l)" "no records in the parent"
    # Parent: front (depends on web) goes first.
    ev=$(event_list "$id" | tr '\n' ' ')
    [[ $ev == *"front:DELETE:COMPLETE"*"web:DELETE:IN_PROGRESS"* ]] ||
        fail "front deleted before web: $ev"
    # Child: vm (depends on disk) before disk; all of it before web is done.
    ev=$(event_list "$child" | tr '\n' ' ')
    [[ $ev == *"vm:DELETE:COMPLETE"*"disk:DELETE:IN_PROGRESS"* ]] || fail "vm before disk: $ev"
    local inner outer
    inner=$(event_ms "$child" "disk:DELETE:COMPLETE")
    outer=$(event_ms "$id" "web:DELETE:COMPLETE")
    [ -n "$inner" ] && [ -n "$outer" ] || fail "missing delete events ($inner, $outer)"
    [ "$inner" -le "$outer" ] ||
        fail "web deleted ($outer) before its nested disk ($inner)"
}

test_nested_failure_names_the_inner_resource() {
    local name out
    name=$(stack_name nfail)
    ctl submit "$name" "$NESTED/broken.yaml" --wait --timeout 60 >/dev/null || true
    out=$(status_json "$name")
    assert_eq CREATE_FAILED "$(jqr .status <<<"$out")" status
    assert_match 'resources\.inner: nested stack [0-9a-f]{16} CREATE_FAILED: .*resources\.bad: Test Resource failed bad' \
        "$(jqr .reason <<<"$out")" reason
}

test_template_files_are_checked_before_anything_is_stored() {
    local rc=0 err
    err=$(ctl submit "$(stack_name esc)" "$NESTED/escape.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code"
    assert_match 'resources\.x\.type: template file "\.\./flat\.yaml" is outside the template.s folder' \
        "$err" message
    rc=0
    err=$(ctl submit "$(stack_name badp)" "$NESTED/badprop.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code"
    assert_match 'resources\.web\.properties: unknown property "colour": template server\.yaml' \
        "$err" message
    assert_eq 0 "$(stack_keys_of "$(stack_name esc)")" "nothing stored (esc)"
    assert_eq 0 "$(stack_keys_of "$(stack_name badp)")" "nothing stored (badp)"
}

test_rollback_restores_a_nested_stack() {
    local name id child
    name=$(stack_name nrb)
    ctl submit "$name" "$NESTED/app.yaml" --enable-rollback --wait --timeout 60 >/dev/null
    id=$(stack_id "$name")
    child=$(child_of "$id" web)
    ctl update "$name" "$NESTED/app_broken.yaml" -P size=7 --wait --timeout 90 >/dev/null 2>&1 || true
    assert_eq ROLLBACK_COMPLETE "$(status_json "$name" | jqr .status)" status
    assert_eq vm-web-2-web-disk "$(status_json "$name" | jqr .outputs.web_address)" \
        "nested output back to the previous definition"
    assert_eq "$child" "$(child_of "$id" web)" "same nested stack, updated back"
    assert_eq vm-web-2-web-disk "$(redis hget "$P{$child}:stack" outputs | jqr .address)" \
        "the nested stack itself rolled back"
}
