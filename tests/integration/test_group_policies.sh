# Group and chain policies as Heat carries them out, without machinery of
# Converge's own in the nested stacks:
# - OS::Heat::Delay: a changed property replaces it (Heat's Delay inherits
#   Resource.handle_update, which raises UpdateReplace for any property diff);
# - OS::Heat::ResourceChain: a type appended to `resources` is a member added
#   in place after the last one, `concurrent: true` creates every member at
#   once, and a type that does not exist is refused by validation;
# - OS::Heat::ResourceGroup's batch_create and rolling_update walk Heat's
#   batches, one nested update per batch with its temporary members
#   (min_in_service), the pauses between them timers of the walk: the nested
#   stack lists the members and nothing else.
#
# shellcheck shell=bash

GP=${CONVERGE_PREFIX:-cv:}

gp_id() { status_json "$1" | jqr .id; }
gp_res() { redis hget "$GP{$1}:res:$2" "$3"; } # gp_res STACK_ID RESOURCE FIELD

# gp_events ID: the events of stack ID (a nested stack's id too) as JSON.
gp_events() { ctl events "$1" -o json; }

# gp_members ID: the names of stack ID's resources, in name order, as JSON.
gp_members() {
    ctl resources "$1" -o json | jq -c '[.[] | select(.replaced != true) | .name] | unique
        | sort_by(tonumber? // .)'
}

# gp_time EVENTS RESOURCES ACTION STATUS first|last: the time (s) of the
# first or last event of one of RESOURCES (a regex) with ACTION and STATUS.
gp_time() {
    jq -r --arg r "^($2)\$" --arg a "$3" --arg s "$4" --arg w "$5" \
        '[.[] | select((.resource | test($r)) and .action == $a and .status == $s) | .time]
         | if length == 0 then "" elif $w == "first" then min else max end' <<<"$1"
}

# gp_gap_ms EARLIER LATER: LATER - EARLIER in whole ms (times in seconds).
gp_gap_ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%d", (b - a) * 1000 }'; }

# ---------------------------------------------------------------- Delay

test_group_policies_delay_changed_property_replaces_it() {
    local name tpl id uuid before events
    name=$(stack_name gp-delay)
    tpl=$(template_file delay <<'EOF'
heat_template_version: 2018-08-31
parameters:
  wait: {type: number, default: 0.2}
resources:
  d:
    type: OS::Heat::Delay
    properties: {min_wait: {get_param: wait}}
EOF
)
    ctl submit "$name" "$tpl" --wait --timeout 60 >/dev/null
    id=$(gp_id "$name")
    uuid=$(gp_res "$id" d uuid)
    before=$(gp_events "$id" | jq length)
    ctl update "$name" "$tpl" -P wait=0.3 --wait --timeout 60 >/dev/null
    rm -f "$tpl"
    assert_eq UPDATE_COMPLETE "$(status_json "$name" | jqr .status)" "the update"
    assert_eq CREATE_COMPLETE "$(gp_res "$id" d status)" "the Delay is a new one"
    [ "$uuid" != "$(gp_res "$id" d uuid)" ] || fail "the Delay kept its version: updated in place"
    events=$(gp_events "$id" | jq -c --argjson n "$before" '[.[$n:][] | select(.resource == "d")
        | .action + " " + .status]')
    assert_eq '["CREATE IN_PROGRESS","CREATE COMPLETE","DELETE IN_PROGRESS","DELETE COMPLETE"]' \
        "$(jq -c '[.[] | select(startswith("UPDATE") | not)]' <<<"$events")" \
        "the replacement's create, then the old Delay's delete"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}

# Heat's events of the replacement begin with the old Delay's update that
# found it needs one: UPDATE IN_PROGRESS, then UPDATE COMPLETE "The Resource
# d requires replacement." (Resource._action_recorder on UpdateReplace).
test_group_policies_delay_replacement_has_heats_update_events() {
    local name tpl id before events
    name=$(stack_name gp-delay-ev)
    tpl=$(template_file delay-ev <<'EOF'
heat_template_version: 2018-08-31
parameters:
  wait: {type: number, default: 0.2}
resources:
  d:
    type: OS::Heat::Delay
    properties: {min_wait: {get_param: wait}}
EOF
)
    ctl submit "$name" "$tpl" --wait --timeout 60 >/dev/null
    id=$(gp_id "$name")
    before=$(gp_events "$id" | jq length)
    ctl update "$name" "$tpl" -P wait=0.3 --wait --timeout 60 >/dev/null
    rm -f "$tpl"
    events=$(gp_events "$id" | jq -c --argjson n "$before" '[.[$n:][] | select(.resource == "d")
        | .action + " " + .status + " " + .reason]')
    assert_eq '["UPDATE IN_PROGRESS state changed","UPDATE COMPLETE The Resource d requires replacement.","CREATE IN_PROGRESS state changed","CREATE COMPLETE state changed","DELETE IN_PROGRESS state changed","DELETE COMPLETE state changed"]' \
        "$events" "Heat's events of a replaced Delay"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}

# ---------------------------------------------------------------- ResourceChain

GP_CHAIN=$(
    cat <<'EOF'
heat_template_version: 2016-04-08
parameters:
  types: {type: comma_delimited_list, default: "OS::Heat::Delay,OS::Heat::Delay"}
  concurrent: {type: boolean, default: false}
resources:
  my-chain:
    type: OS::Heat::ResourceChain
    properties:
      resources: {get_param: types}
      concurrent: {get_param: concurrent}
      resource_properties: {min_wait: 0.5}
outputs:
  refs:
    value: {get_attr: [my-chain, refs]}
EOF
)

test_group_policies_chain_appended_type_is_added_in_place_after_the_last() {
    local name tpl id child before events
    name=$(stack_name gp-chain-append)
    tpl=$(template_file chain <<<"$GP_CHAIN")
    ctl submit "$name" "$tpl" --wait --timeout 60 >/dev/null
    id=$(gp_id "$name")
    child=$(gp_res "$id" my-chain physical_id)
    assert_eq '["0","1"]' "$(status_json "$name" | jq -c .outputs.refs)" \
        "refs of two Delays (a Delay's reference is its name)"
    before=$(gp_events "$child" | jq length)
    ctl update "$name" "$tpl" -P types=OS::Heat::Delay,OS::Heat::Delay,OS::Heat::None \
        --wait --timeout 60 >/dev/null
    rm -f "$tpl"
    assert_eq UPDATE_COMPLETE "$(status_json "$name" | jqr .status)" "the update"
    assert_eq "$child" "$(gp_res "$id" my-chain physical_id)" "the chain is updated in place"
    assert_eq '["0","1","2"]' "$(gp_members "$child")" "the nested stack's members"
    assert_eq OS::Heat::None "$(ctl resources "$child" -o json | jqr '.[] | select(.name == "2") | .type')" \
        "the new member's type"
    # Only the new member acted, and only once the one before it was there.
    events=$(gp_events "$child" | jq -c --argjson n "$before" '.[$n:] | [.[]
        | select(.resource | test("^[0-9]+$")) | .resource + " " + .action + " " + .status]')
    assert_eq '["2 CREATE IN_PROGRESS","2 CREATE COMPLETE"]' "$events" "the update's member events"
    # The outputs grow with the chain: the Delays' names, then the None's id.
    assert_eq '["0","1",true]' "$(status_json "$name" | jq -c '.outputs.refs
        | .[0:2] + [(.[2] | type == "string" and length > 0)]')" "refs"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}

test_group_policies_chain_concurrent_creates_every_member_at_once() {
    local name tpl id child events last_begin first_end
    name=$(stack_name gp-chain-conc)
    tpl=$(template_file chain-conc <<<"$GP_CHAIN")
    ctl submit "$name" "$tpl" -P types=OS::Heat::Delay,OS::Heat::Delay,OS::Heat::Delay \
        -P concurrent=true --wait --timeout 60 >/dev/null
    rm -f "$tpl"
    id=$(gp_id "$name")
    child=$(gp_res "$id" my-chain physical_id)
    events=$(gp_events "$child")
    last_begin=$(gp_time "$events" "0|1|2" CREATE IN_PROGRESS last)
    first_end=$(gp_time "$events" "0|1|2" CREATE COMPLETE first)
    [ -n "$last_begin" ] && [ -n "$first_end" ] || fail "no create events of the members: $events"
    awk -v b="$last_begin" -v e="$first_end" 'BEGIN { exit !(b < e) }' ||
        fail "a member began only after another completed: not all at once ($events)"
    assert_eq 3 "$(status_json "$name" | jq '.outputs.refs | length')" "refs"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}

# Heat's ResourceChain.validate_nested_stack: the nested stack's resource
# types are looked up (get_class_to_instantiate), and a type that does not
# exist is Heat's "The Resource Type (...) could not be found." Refused
# before anything is stored, as any validation error. Pending: the check
# belongs to the template's validation (engine/hot/template_nested.c,
# beside check_group), the only place that sees the environment's mappings
# (a chain may list a registry alias).
test_group_policies_chain_unknown_type_is_refused_by_validation() {
    local name tpl out rc=0
    name=$(stack_name gp-chain-unknown)
    tpl=$(template_file chain-unknown <<'EOF'
heat_template_version: 2016-04-08
resources:
  my-chain:
    type: OS::Heat::ResourceChain
    properties:
      resources: [OS::Heat::None, OS::Heat::Nope]
EOF
)
    out=$(ctl validate "$tpl" 2>&1) || rc=$?
    assert_eq 2 "$rc" "validate's exit code ($out)"
    assert_match "The Resource Type \(OS::Heat::Nope\) could not be found\." "$out" "validate"
    rc=0
    out=$(ctl submit "$name" "$tpl" 2>&1) || rc=$?
    rm -f "$tpl"
    assert_eq 2 "$rc" "submit's exit code ($out)"
    assert_match "The Resource Type \(OS::Heat::Nope\) could not be found\." "$out" "submit"
    assert_eq 0 "$(stack_keys_of "$name")" "keys stored for the refused stack"
}

# ---------------------------------------------------------------- ResourceGroup

# A group of COUNT TestResource members, each taking 0.3 s, under POLICY.
gp_group_template() { # policy count
    template_file group <<EOF
heat_template_version: 2015-04-30
parameters:
  label: {type: string, default: v1}
resources:
  group:
    type: OS::Heat::ResourceGroup
    update_policy: $1
    properties:
      count: $2
      resource_def:
        type: OS::Heat::TestResource
        properties:
          value: {list_join: ['-', [{get_param: label}, '%index%']]}
          action_wait_secs: {create: 0.3, update: 0.3}
EOF
}

# batch_create {max_batch_size: 2, pause_time: 1}, count 5: Heat's handle_create
# runs _replace(0, 2, 1): nested updates to 2, 4 and 5 members (0 1 | 2 3 | 4),
# a 1 s pause between two of them, and the nested stack has the 5 members only.
test_group_policies_batch_create_pauses_are_timers_not_members() {
    local name tpl id child events end01 begin23 end23 begin4
    name=$(stack_name gp-batch)
    tpl=$(gp_group_template "{batch_create: {max_batch_size: 2, pause_time: 1}}" 5)
    ctl submit "$name" "$tpl" --wait --timeout 90 >/dev/null
    rm -f "$tpl"
    assert_eq CREATE_COMPLETE "$(status_json "$name" | jqr .status)" "the create"
    id=$(gp_id "$name")
    child=$(gp_res "$id" group physical_id)
    assert_eq '["0","1","2","3","4"]' "$(gp_members "$child")" "the nested stack's resources"
    events=$(gp_events "$child")
    assert_eq 0 "$(jq '[.[] | select(.resource | test("pause|rollout"))] | length' <<<"$events")" \
        "events of pauses or rollouts"
    end01=$(gp_time "$events" "0|1" CREATE COMPLETE last)
    begin23=$(gp_time "$events" "2|3" CREATE IN_PROGRESS first)
    end23=$(gp_time "$events" "2|3" CREATE COMPLETE last)
    begin4=$(gp_time "$events" "4" CREATE IN_PROGRESS first)
    [ "$(gp_gap_ms "$end01" "$begin23")" -ge 1000 ] || fail "batch 2 3 began too early: $events"
    [ "$(gp_gap_ms "$end23" "$begin4")" -ge 1000 ] || fail "batch 4 began too early: $events"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}

# rolling_update {max_batch_size: 4, min_in_service: 2, pause_time: 1} on 4
# members: Heat's _get_batches(4, 4, 4, 2) is (6, 4), (4, 2). The first
# nested update creates the temporary members 4 and 5 with the new
# definition and updates 3 and 2; after the pause the second updates 1 and
# 0 and deletes 4 and 5. The nested stack then lists 0..3 and nothing else.
test_group_policies_rolling_update_walks_heats_batches_with_temporary_members() {
    local name tpl id child before events t
    name=$(stack_name gp-rolling)
    tpl=$(gp_group_template "{rolling_update: {max_batch_size: 4, min_in_service: 2, pause_time: 1}}" 4)
    ctl submit "$name" "$tpl" --wait --timeout 60 >/dev/null
    id=$(gp_id "$name")
    child=$(gp_res "$id" group physical_id)
    before=$(gp_events "$child" | jq length)
    ctl update "$name" "$tpl" -P label=v2 --wait --timeout 90 >/dev/null
    rm -f "$tpl"
    assert_eq UPDATE_COMPLETE "$(status_json "$name" | jqr .status)" "the update"
    assert_eq '["0","1","2","3"]' "$(gp_members "$child")" "the nested stack's resources"
    events=$(gp_events "$child" | jq -c --argjson n "$before" '.[$n:]')
    assert_eq 0 "$(jq '[.[] | select(.resource | test("pause|rollout"))] | length' <<<"$events")" \
        "events of pauses or rollouts"
    # Batch 1: 4 and 5 created, 3 and 2 updated; batch 2: 1 and 0 updated, 4 and 5 deleted.
    # (The nested stack's own events, one update per batch, name the stack.)
    assert_eq 2 "$(jq '[.[] | select((.resource | test("^[0-9]+$") | not)
        and .action == "UPDATE" and .status == "COMPLETE")] | length' <<<"$events")" \
        "the nested stack's updates, one per batch"
    events=$(jq -c '[.[] | select(.resource | test("^[0-9]+$"))]' <<<"$events")
    assert_eq '["0","1","2","3"]' "$(jq -c '[.[] | select(.action == "UPDATE" and .status == "COMPLETE")
        | .resource] | sort' <<<"$events")" "the members updated"
    assert_eq '["4","5"]' "$(jq -c '[.[] | select(.action == "CREATE" and .status == "COMPLETE")
        | .resource] | sort' <<<"$events")" "the temporary members created"
    assert_eq '["4","5"]' "$(jq -c '[.[] | select(.action == "DELETE" and .status == "COMPLETE")
        | .resource] | sort' <<<"$events")" "the temporary members deleted"
    t=$(jq -r '[.[] | select((.resource | test("^(2|3|4|5)$")) and .status == "COMPLETE"
        and .action != "DELETE") | .time] | max' <<<"$events")
    [ "$(gp_gap_ms "$t" "$(gp_time "$events" "0|1" UPDATE IN_PROGRESS first)")" -ge 1000 ] ||
        fail "batch 1 0 began less than pause_time after batch 3 2: $events"
    [ "$(gp_gap_ms "$t" "$(gp_time "$events" "4|5" DELETE IN_PROGRESS first)")" -ge 1000 ] ||
        fail "the temporary members went before the pause: $events"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}
