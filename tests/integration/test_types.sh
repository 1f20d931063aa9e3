# The OS::Heat types beyond the basics, each created, read through outputs,
# updated (in place or replaced, as Heat) and deleted: RandomString's
# reference id, SoftwareConfig / CloudConfig / MultipartMime, Delay,
# ResourceChain, OS::Heat::Stack, and external_id adoption.
# shellcheck shell=bash

TYPES="$DATA/stacks/types"
TP=${CONVERGE_PREFIX:-cv:}

types_id() { status_json "$1" | jqr .id; }
types_res() { redis hget "$TP{$(types_id "$1")}:res:$2" "$3"; }
# The time (ms) of the first event of resource:action:status.
types_event_ms() { event_ms "$(types_id "$1")" "$2"; }

test_types_random_string_reference_is_its_value() {
    local name out pid
    name=$(stack_name types-rsref)
    ctl submit "$name" "$TYPES/random_ref.yaml" --wait --timeout 60 >/dev/null
    out=$(status_json "$name")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$out")" status
    assert_match '^[A-Za-z0-9]{12}$' "$(jqr .outputs.ref <<<"$out")" "get_resource is a 12-character string"
    assert_eq "$(jqr .outputs.value <<<"$out")" "$(jqr .outputs.ref <<<"$out")" "get_resource = value"
    assert_eq "$(jqr .outputs.value <<<"$out")" "$(jqr .outputs.passed <<<"$out")" \
        "a successor's get_resource (through the sync point) is the value"
    assert_eq "$(jq -c .outputs.group_values <<<"$out")" "$(jq -c .outputs.group_refs <<<"$out")" \
        "a group's refs of RandomStrings are the strings"
    pid=$(ctl resources "$name" -o json | jq -r '.[] | select(.name == "pw") | .physical_id')
    assert_match "-pw-" "$pid" "convergectl resources keeps the physical id"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}

test_types_configs_are_heat_text_and_replaced_on_change() {
    local name out cc mime boundary
    name=$(stack_name types-cfg)
    ctl submit "$name" "$TYPES/configs.yaml" --wait --timeout 60 >/dev/null
    out=$(status_json "$name")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$out")" status
    # JSON-encoded, so that trailing line breaks count.
    assert_eq '"#!/bin/sh\necho hi\n"' "$(jq -c .outputs.script <<<"$out")" "SoftwareConfig config"
    # What Heat stores: yaml.dump (PyYAML, CSafeDumper) after "#cloud-config".
    assert_eq '"#cloud-config\npackages:\n- git\n- nginx\nruncmd:\n- - ls\n  - -l\n- '"'echo ''done: yes'''"'\nwrite_files:\n- content: '"'hello\n\n    world\n\n    '"'\n  path: /etc/motd\n  permissions: '"'0644'"'\n"' \
        "$(jq -c .outputs.cloud <<<"$out")" "CloudConfig config"
    mime=$(jq -j .outputs.mime <<<"$out")
    boundary=$(sed -n 's/^Content-Type: multipart\/mixed; boundary="\(.*\)"$/\1/p' <<<"$mime")
    assert_match '^={15}[0-9]{19}==$' "$boundary" "Python's boundary form"
    assert_eq 3 "$(grep -c -- "^--$boundary" <<<"$mime")" "two parts and the close delimiter"
    assert_match 'Content-Type: text/cloud-config; charset="us-ascii"' "$mime" "first part's type"
    assert_match $'charset="us-ascii"\nMIME-Version: 1.0\nContent-Transfer-Encoding: 7bit\n\n#cloud-config\npackages:' \
        "$mime" "get_resource of a config gives its text to the part"
    assert_match 'Content-Disposition: attachment; filename="run.sh"' "$mime" "second part's name"
    cc=$(types_res "$name" cc physical_id)
    ctl update "$name" --existing -P pkg=vim --wait --timeout 60 >/dev/null
    out=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$out")" "update status"
    assert_match $'packages:\n- vim' "$(jq -j .outputs.cloud <<<"$out")" "new config text"
    [ "$cc" != "$(types_res "$name" cc physical_id)" ] || fail "a changed CloudConfig is replaced"
    assert_eq CREATE_COMPLETE "$(types_res "$name" mime status)" \
        "the MultipartMime using it is replaced too"
    assert_eq CREATE_COMPLETE "$(types_res "$name" script status)" "the unchanged config is kept"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}

test_types_delay_waits_on_create_and_delete_and_a_change_replaces_it() {
    local name began ended next
    name=$(stack_name types-delay)
    ctl submit "$name" "$TYPES/delay.yaml" --wait --timeout 60 >/dev/null
    assert_eq CREATE_COMPLETE "$(status_json "$name" | jqr .status)" status
    assert_eq pause "$(status_json "$name" | jqr .outputs.ref)" "get_resource of a Delay is its name"
    assert_eq "" "$(types_res "$name" pause physical_id)" "a Delay has no physical resource"
    began=$(types_event_ms "$name" pause:CREATE:IN_PROGRESS)
    ended=$(types_event_ms "$name" pause:CREATE:COMPLETE)
    next=$(types_event_ms "$name" second:CREATE:IN_PROGRESS)
    [ $((ended - began)) -gt 2000 ] || fail "the create waited $((ended - began)) ms, not over 2 s"
    [ "$next" -ge "$ended" ] || fail "the successor began before the delay ended"
    # A changed property replaces a Delay (Heat's Delay inherits
    # Resource.handle_update, which raises UpdateReplace): the new one waits
    # on its create, the one it replaced on its delete.
    local uuid
    uuid=$(types_res "$name" pause uuid)
    ctl update "$name" --existing -P wait=1 --wait --timeout 30 >/dev/null
    assert_eq CREATE_COMPLETE "$(types_res "$name" pause status)" "min_wait replaces the Delay"
    [ "$uuid" != "$(types_res "$name" pause uuid)" ] || fail "the Delay was updated in place"
    local id t0
    id=$(types_id "$name")
    t0=$(date +%s%N)
    ctl delete "$name" --wait --timeout 30 >/dev/null
    [ $((($(date +%s%N) - t0) / 1000000)) -ge 1000 ] || fail "the delete did not wait 1 s"
    assert_eq "" "$(redis hget "$TP{$id}:res:pause" status)" "deleted"
}

test_types_resource_chain_members_follow_each_other() {
    local name out id child m0 m1
    name=$(stack_name types-chain)
    ctl submit "$name" "$TYPES/chain.yaml" --wait --timeout 60 >/dev/null
    out=$(status_json "$name")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$out")" status
    assert_eq '["v","v","v"]' "$(jq -c .outputs.values <<<"$out")" "member attribute list"
    assert_eq '{"0":"v","1":"v","2":"v"}' "$(jq -c .outputs.by_name <<<"$out")" "attributes by member"
    assert_eq v "$(jqr .outputs.second <<<"$out")" "resource.1.value"
    assert_eq 3 "$(jq '.outputs.refs | length' <<<"$out")" "refs"
    id=$(types_id "$name")
    child=$(redis hget "$TP{$id}:res:chain" physical_id)
    m0=$(redis --raw xrange "$TP{$child}:events" - + | grep -c '^0$')
    [ "$m0" -ge 1 ] || fail "member 0 has events"
    # Each member begins after the one before it completes.
    local c0 b1 c1 b2
    c0=$(types_child_event_ms "$child" 0:CREATE:COMPLETE)
    b1=$(types_child_event_ms "$child" 1:CREATE:IN_PROGRESS)
    c1=$(types_child_event_ms "$child" 1:CREATE:COMPLETE)
    b2=$(types_child_event_ms "$child" 2:CREATE:IN_PROGRESS)
    [ "$b1" -ge "$c0" ] && [ "$b2" -ge "$c1" ] || fail "members not in chain order"
    # resources may change in place: the child stack is updated.
    ctl update "$name" --existing -P types=OS::Heat::Value,OS::Heat::Value --wait --timeout 60 >/dev/null
    out=$(status_json "$name")
    assert_eq '["v","v"]' "$(jq -c .outputs.values <<<"$out")" "a member removed"
    assert_eq "$child" "$(redis hget "$TP{$id}:res:chain" physical_id)" "updated in place"
    m1=$(redis hget "$TP{$child}:res:1" physical_id)
    # concurrent has no update_allowed: the chain is replaced.
    ctl update "$name" --existing -P concurrent=true --wait --timeout 60 >/dev/null
    [ "$child" != "$(redis hget "$TP{$id}:res:chain" physical_id)" ] || fail "concurrent replaces"
    [ -n "$m1" ] || fail "member 1 existed"
    ctl delete "$name" --wait --timeout 60 >/dev/null
    assert_match '^(DELETE_COMPLETE)?$' "$(redis hget "$TP{$child}:stack" status)" \
        "the child stack is deleted"
}

types_child_event_ms() { event_ms "$1" "$2"; }

test_types_heat_stack_is_a_nested_stack_from_template_text() {
    local name out id child
    name=$(stack_name types-hstack)
    ctl submit "$name" "$TYPES/heat_stack.yaml" --wait --timeout 60 >/dev/null
    out=$(status_json "$name")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$out")" status
    assert_eq '{"said":"hello world","n":42}' "$(jq -c .outputs.all <<<"$out")" "outputs attribute"
    assert_eq "hello world" "$(jqr .outputs.said <<<"$out")" "one output through a path"
    id=$(types_id "$name")
    child=$(redis hget "$TP{$id}:res:inner" physical_id)
    assert_eq "$child" "$(jqr .outputs.ref <<<"$out")" "get_resource is the child stack's id"
    assert_eq "$(redis hget "$TP{$child}:stack" name)" "$(jqr .outputs.name <<<"$out")" \
        "stack_name is the child's name"
    ctl update "$name" --existing -P greeting=goodbye --wait --timeout 60 >/dev/null
    out=$(status_json "$name")
    assert_eq "goodbye world" "$(jqr .outputs.said <<<"$out")" "parameters update"
    assert_eq "$child" "$(redis hget "$TP{$id}:res:inner" physical_id)" "updated in place"
    assert_eq UPDATE_COMPLETE "$(redis hget "$TP{$child}:stack" status)" "child updated"
    ctl delete "$name" --wait --timeout 60 >/dev/null
    assert_match '^(DELETE_COMPLETE)?$' "$(redis hget "$TP{$child}:stack" status)" \
        "the child stack is deleted"
}

test_types_external_id_adopts_and_refuses_a_change() {
    local name out
    name=$(stack_name types-ext)
    ctl submit "$name" "$TYPES/external.yaml" --wait --timeout 60 >/dev/null
    out=$(status_json "$name")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$out")" status
    assert_eq vol-0001 "$(jqr .outputs.ref <<<"$out")" "get_resource is the adopted id"
    assert_eq vol-0001 "$(types_res "$name" adopted physical_id)" "physical id"
    assert_eq ADOPT_COMPLETE "$(types_res "$name" adopted status)" "adopted, not created"
    # Another property value: Heat skips the update of an external resource.
    ctl update "$name" --existing -P value=b --wait --timeout 60 >/dev/null
    assert_eq UPDATE_COMPLETE "$(status_json "$name" | jqr .status)" "update status"
    assert_eq ADOPT_COMPLETE "$(types_res "$name" adopted status)" "left as it is"
    # Another external_id: Heat's NotSupported.
    ctl update "$name" --existing -P ext=vol-0002 --wait --timeout 60 >/dev/null || true
    out=$(status_json "$name")
    assert_eq UPDATE_FAILED "$(jqr .status <<<"$out")" "a changed external_id fails the update"
    assert_match "Update to property external_id of adopted \\(OS::Heat::TestResource\\) is not supported" \
        "$(types_res "$name" adopted reason)$(jqr .reason <<<"$out")" "Heat's message"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}

test_types_noop_update_touches_no_resource() {
    local f name before after
    for f in heat_stack chain configs delay external random_ref; do
        name=$(stack_name "types-noop-${f//_/-}")
        ctl submit "$name" "$TYPES/$f.yaml" --wait --timeout 60 >/dev/null
        before=$(redis xlen "$TP{$(types_id "$name")}:events")
        ctl update "$name" --existing --wait --timeout 60 >/dev/null
        assert_eq UPDATE_COMPLETE "$(status_json "$name" | jqr .status)" "$f: update status"
        after=$(redis xlen "$TP{$(types_id "$name")}:events")
        assert_eq $((before + 2)) "$after" "$f: only the stack's two update events"
        ctl delete "$name" --wait --timeout 60 >/dev/null
    done
}

# "ms resource action status" of a stack's events, oldest first.
types_child_events() { event_lines "$1"; }

test_types_group_batch_create_creates_batches_in_turn() {
    local name id child events
    name=$(stack_name types-batch)
    ctl submit "$name" "$TYPES/group_batch.yaml" --wait --timeout 60 >/dev/null
    assert_eq '["m-0","m-1","m-2","m-3","m-4"]' "$(status_json "$name" | jq -c .outputs.values)" \
        "five members"
    id=$(types_id "$name")
    child=$(redis hget "$TP{$id}:res:group" physical_id)
    events=$(types_child_events "$child" | grep -E ' [0-9]+ CREATE ')
    # Never more than max_batch_size (2) members in progress at once.
    awk '$4 == "IN_PROGRESS" { n++; if (n > max) max = n } $4 == "COMPLETE" { n-- }
         END { exit !(max == 2) }' <<<"$events" || fail "at most 2 members at once, and 2 in a batch"
    # Batch k+1 begins a pause (1 s) after batch k completed: 0,1 | 2,3 | 4.
    local done01 begin23 done23 begin4
    done01=$(awk '($2 == 0 || $2 == 1) && $4 == "COMPLETE" { t = $1 } END { print t }' <<<"$events")
    begin23=$(awk '($2 == 2 || $2 == 3) && $4 == "IN_PROGRESS" { print $1; exit }' <<<"$events")
    done23=$(awk '($2 == 2 || $2 == 3) && $4 == "COMPLETE" { t = $1 } END { print t }' <<<"$events")
    begin4=$(awk '$2 == 4 && $4 == "IN_PROGRESS" { print $1; exit }' <<<"$events")
    [ $((begin23 - done01)) -ge 1000 ] || fail "batch 2 began $((begin23 - done01)) ms after batch 1"
    [ $((begin4 - done23)) -ge 1000 ] || fail "batch 3 began $((begin4 - done23)) ms after batch 2"
    # A no-op update changes nothing; the group is deleted as a whole.
    ctl update "$name" --existing --wait --timeout 60 >/dev/null
    assert_eq CREATE_COMPLETE "$(redis hget "$TP{$id}:res:group" status)" "no-op update"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}
