# OS::Heat::AutoScalingGroup and OS::Heat::ScalingPolicy: created with
# desired_capacity, resized by a stack update that changes it (members added,
# the oldest removed, as Heat's InstanceGroup.resize), a capacity outside [min_size, max_size] refused, a
# policy's signal scaling up (change_in_capacity) and down
# (percent_change_in_capacity) through an update traversal, a signal during
# the cooldown ignored with Heat's reason, a repeated signal id applied once,
# a changed member definition rolled out in batches with pauses between them
# (timing read from the group's nested stack's events).
# shellcheck shell=bash

ASG_TEMPLATE="$DATA/stacks/autoscaling.yaml"

asg_outputs() { status_json "$1" | jq -c .outputs; }

asg_size() { status_json "$1" | jqr .outputs.size; }

asg_size_is() { [ "$(asg_size "$1")" = "$2" ] && [ "$(status_json "$1" | jqr .status)" = "$3" ]; }

asg_members() { status_json "$1" | jq -c '.outputs.members | keys_unsorted'; }

# The reason of the last SIGNAL event of RESOURCE.
asg_signal_reason() { # name resource
    ctl events "$1" -o json |
        jq -r --arg r "$2" '[.[] | select(.resource == $r and .action == "SIGNAL")][-1].reason'
}

asg_signal_reason_is() { [ "$(asg_signal_reason "$1" "$2")" = "$3" ]; }

asg_submit() { # name [-P k=v]...
    local name=$1
    shift
    ctl submit "$name" "$ASG_TEMPLATE" "$@" --wait --timeout 60 >/dev/null
}

test_autoscaling_group_is_created_with_desired_capacity() {
    local name out
    name=$(stack_name asg-create)
    asg_submit "$name" -P desired=3 -P label=hello
    out=$(asg_outputs "$name")
    assert_eq 3 "$(jq .size <<<"$out")" "current_size"
    assert_eq '["hello","hello","hello"]' "$(jq -c .values <<<"$out")" "outputs_list value"
    assert_eq '{"0":"hello","1":"hello","2":"hello"}' "$(jq -c .by_name <<<"$out")" "outputs value"
    assert_eq 3 "$(jq '.refs | length' <<<"$out")" "refs"
    assert_eq "$(jq -c '.refs' <<<"$out")" "$(jq -c '[.members[]]' <<<"$out")" "refs_map"
    assert_match "^convergectl signal [0-9a-f]{16} scale_up$" "$(jqr .signal_url <<<"$out")" \
        "signal_url"
}

test_autoscaling_update_of_desired_capacity_adds_and_removes_the_oldest() {
    local name
    name=$(stack_name asg-resize)
    asg_submit "$name" -P desired=2
    ctl update "$name" "$ASG_TEMPLATE" -P desired=4 --wait --timeout 60 >/dev/null
    assert_eq 4 "$(asg_size "$name")" "size after growing"
    assert_eq '["0","1","2","3"]' "$(asg_members "$name")" "members after growing"
    ctl update "$name" "$ASG_TEMPLATE" -P desired=1 --wait --timeout 60 >/dev/null
    assert_eq 1 "$(asg_size "$name")" "size after shrinking"
    assert_eq '["3"]' "$(asg_members "$name")" "the newest member stays"
    # A removed name is never used again: the group grows with new ones.
    ctl update "$name" "$ASG_TEMPLATE" -P desired=2 --wait --timeout 60 >/dev/null
    assert_eq '["3","4"]' "$(asg_members "$name")" "members after growing again"
}

test_autoscaling_capacity_outside_the_bounds_is_refused() {
    local name tpl out rc=0
    name=$(stack_name asg-bounds)
    asg_submit "$name" -P desired=2
    tpl=$(mktemp --suffix=.yaml)
    # Literal values: template validation checks them before anything starts
    # (a value from a parameter is checked when the group is updated).
    sed -e 's/desired_capacity: {get_param: desired}/desired_capacity: 9/' \
        -e 's/min_size: {get_param: min}/min_size: 1/' \
        -e 's/max_size: {get_param: max}/max_size: 4/' "$ASG_TEMPLATE" >"$tpl"
    out=$(ctl update "$name" "$tpl" 2>&1) || rc=$?
    sed -e 's/min_size: {get_param: min}/min_size: 5/' \
        -e 's/max_size: {get_param: max}/max_size: 4/' "$ASG_TEMPLATE" >"$tpl"
    local out2 rc2=0
    out2=$(ctl update "$name" "$tpl" 2>&1) || rc2=$?
    rm -f "$tpl"
    [ "$rc" != 0 ] || fail "an update to desired_capacity 9 (max_size 4) was accepted"
    assert_match "DesiredCapacity must be between MinSize and MaxSize" "$out" "the refusal"
    [ "$rc2" != 0 ] || fail "an update to min_size 5 (max_size 4) was accepted"
    assert_match "MinSize can not be greater than MaxSize" "$out2" "the refusal"
    assert_eq CREATE_COMPLETE "$(status_json "$name" | jqr .status)" "the stack, untouched"
    assert_eq 2 "$(asg_size "$name")" "the size, untouched"
}

test_autoscaling_policy_signals_scale_up_then_down() {
    local name
    name=$(stack_name asg-policy)
    asg_submit "$name" -P desired=2
    ctl signal "$name" scale_up >/dev/null
    cv_wait_until 30 "the group to grow to 3" asg_size_is "$name" 3 UPDATE_COMPLETE
    assert_eq "resizing the group from 2 to 3 (change_in_capacity : 1, by scale_up)" \
        "$(asg_signal_reason "$name" asg)" "the group's SIGNAL event"
    assert_eq "No signal details provided" "$(asg_signal_reason "$name" scale_up)" \
        "the policy's SIGNAL event"
    ctl signal "$name" scale_up >/dev/null
    cv_wait_until 30 "the group to grow to 4" asg_size_is "$name" 4 UPDATE_COMPLETE
    # -50% of 4 is 2; at max_size 4 a further scale_up changes nothing.
    ctl signal "$name" scale_down >/dev/null
    cv_wait_until 30 "the group to shrink to 2" asg_size_is "$name" 2 UPDATE_COMPLETE
    assert_eq '["2","3"]' "$(asg_members "$name")" "the oldest removed first"
    ctl signal "$name" scale_down >/dev/null
    cv_wait_until 30 "the group to shrink to 1" asg_size_is "$name" 1 UPDATE_COMPLETE
    ctl signal "$name" scale_down >/dev/null
    cv_wait_until 30 "the signal at min_size to be taken" asg_signal_reason_is "$name" asg \
        "asg NOT performing scaling adjustment, as there is no change in capacity."
    assert_eq 1 "$(asg_size "$name")" "the size at min_size"
}

test_autoscaling_signal_in_cooldown_is_ignored() {
    local name
    name=$(stack_name asg-cooldown)
    asg_submit "$name" -P desired=1 -P cooldown=600
    ctl signal "$name" scale_up >/dev/null
    cv_wait_until 30 "the group to grow to 2" asg_size_is "$name" 2 UPDATE_COMPLETE
    ctl signal "$name" scale_up >/dev/null
    cv_wait_until 30 "the second signal to be ignored" asg_signal_reason_is "$name" asg \
        "The resource asg could not perform scaling action: due to cooldown, cooldown 600"
    assert_eq 2 "$(asg_size "$name")" "the size after the ignored signal"
    # The other policy has no cooldown of its own: the group's (600 s) is on.
    ctl signal "$name" scale_down >/dev/null
    cv_wait_until 30 "the third signal to be ignored" asg_signal_reason_is "$name" asg \
        "The resource asg could not perform scaling action: due to cooldown, cooldown 0"
    assert_eq 2 "$(asg_size "$name")" "the size after the second ignored signal"
}

test_autoscaling_policy_signal_is_durable_and_applied_once() {
    local name id
    name=$(stack_name asg-once)
    asg_submit "$name" -P desired=1
    ctl signal "$name" scale_up --id same >/dev/null
    ctl signal "$name" scale_up --id same >/dev/null
    cv_wait_until 30 "the group to grow to 2" asg_size_is "$name" 2 UPDATE_COMPLETE
    id=$(redis HGET "${CONVERGE_PREFIX:-cv:}stacks" "$name")
    # One passed-on signal for the one id, applied.
    assert_eq 1 "$(redis HKEYS "${CONVERGE_PREFIX:-cv:}{$id}:signals:asg" | grep -c '^s:')" \
        "signals the group received"
    assert_eq 2 "$(asg_size "$name")" "the size after the repeated id"
}

# The time of the event of RESOURCE with ACTION and STATUS, or null.
asg_event_time() { # events resource action status
    jq --arg r "$2" --arg a "$3" --arg s "$4" \
        '[.[] | select(.resource == $r and .action == $a and .status == $s)][-1].time' <<<"$1"
}

test_autoscaling_rolling_update_replaces_in_batches_with_pauses() {
    local name child ev t0 t1 t2
    name=$(stack_name asg-rolling)
    asg_submit "$name" -P desired=3 -P pause=2
    ctl update "$name" "$ASG_TEMPLATE" -P desired=3 -P pause=2 -P label=v2 --wait \
        --timeout 60 >/dev/null
    assert_eq '["v2","v2","v2"]' "$(status_json "$name" | jq -c .outputs.values)" \
        "every member has the new definition"
    child=$(ctl resources "$name" -o json | jqr '.[] | select(.name == "asg") | .physical_id')
    ev=$(ctl events "$child" -o json)
    t0=$(asg_event_time "$ev" 0 UPDATE COMPLETE)
    t1=$(asg_event_time "$ev" 1 UPDATE IN_PROGRESS)
    t2=$(asg_event_time "$ev" 2 UPDATE IN_PROGRESS)
    # One member at a time (max_batch_size 1), 2 s apart (pause_time 2).
    awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 2.0) }' ||
        fail "member 1 began at $t1, not 2 s after member 0 completed at $t0"
    awk -v a="$(asg_event_time "$ev" 1 UPDATE COMPLETE)" -v b="$t2" \
        'BEGIN { exit !(b - a >= 2.0) }' || fail "member 2 began at $t2, too soon after member 1"
    # A converge afterwards changes nothing in the group.
    ctl converge "$name" --wait --timeout 60 >/dev/null
    [ "$(ctl events "$child" -o json | jq length)" = "$(jq length <<<"$ev")" ] ||
        fail "a converge after the rollout acted in the group's nested stack"
}

test_autoscaling_member_definition_is_validated_as_a_resource() {
    local tpl out rc=0
    tpl=$(mktemp --suffix=.yaml)
    sed -e 's/type: OS::Heat::Value/type: OS::Nova::Server/' "$ASG_TEMPLATE" >"$tpl"
    out=$(ctl validate "$tpl" 2>&1) || rc=$?
    rm -f "$tpl"
    assert_eq 2 "$rc" "validate's exit code"
    assert_match "resources.asg.properties.resource: The Resource Type \(OS::Nova::Server\) could not be found." "$out" "the refusal"
}

asg_service() { # action name: an engine of the deployment stopped or started
    "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/deploy/local/service.sh" --dir "$STATE" \
        --build-dir "$(dirname "$CONVERGECTL")" "$1" "$2" >/dev/null 2>&1
}

test_autoscaling_policy_signal_sent_while_no_engine_runs_scales_once_one_starts() {
    local name engines e id
    name=$(stack_name asg-durable)
    asg_submit "$name" -P desired=1
    engines=$(find "$STATE/pids" -name 'engine-*.pid' -exec basename {} .pid \; | sort)
    for e in $engines; do asg_service stop "$e" || fail "could not stop $e"; done
    # shellcheck disable=SC2064 # the engines are known now
    trap "for e in $engines; do asg_service start \$e; done" EXIT
    ctl signal "$name" scale_up --id durable >/dev/null
    id=$(redis HGET "${CONVERGE_PREFIX:-cv:}stacks" "$name")
    assert_eq pending "$(redis HGET "${CONVERGE_PREFIX:-cv:}{$id}:signals:scale_up" s:durable)" \
        "the policy's signal before an engine runs"
    for e in $engines; do asg_service start "$e" || fail "could not start $e"; done
    trap - EXIT
    cv_wait_until 60 "the group to grow to 2" asg_size_is "$name" 2 UPDATE_COMPLETE
    assert_eq applied "$(redis HGET "${CONVERGE_PREFIX:-cv:}{$id}:signals:scale_up" s:durable)" \
        "the policy's signal"
    assert_eq 2 "$(asg_size "$name")" "the size, scaled once"
}

test_autoscaling_policy_without_its_group_refuses_the_signal() {
    local name tpl
    name=$(stack_name asg-nogroup)
    tpl=$(mktemp --suffix=.yaml)
    cat >"$tpl" <<'YAML'
heat_template_version: 2015-04-30
resources:
  up:
    type: OS::Heat::ScalingPolicy
    properties:
      auto_scaling_group_id: nosuchgroup
      adjustment_type: change_in_capacity
      scaling_adjustment: 1
YAML
    ctl submit "$name" "$tpl" --wait --timeout 60 >/dev/null
    rm -f "$tpl"
    ctl signal "$name" up >/dev/null
    cv_wait_until 30 "the signal to be refused" asg_signal_reason_is "$name" up \
        'Alarm up could not find scaling group named "nosuchgroup"'
    assert_eq SIGNAL_FAILED "$(ctl events "$name" -o json |
        jq -r '[.[] | select(.resource == "up" and .action == "SIGNAL")][-1] |
            "\(.action)_\(.status)"')" "the policy's SIGNAL event"
}

# Heat's own functional tests (heat_integrationtests/functional/
# test_heat_autoscaling.py), on their templates.
ASG_HEAT="$DATA/stacks/autoscaling_heat"

asg_heat_outputs_agree() { # name: all_values and resource.<i>.value name the same members
    local out
    out=$(asg_outputs "$1")
    assert_eq 3 "$(jq '.all_values | length' <<<"$out")" "all_values"
    assert_eq "$(jq -c '.all_values' <<<"$out")" "$(jq -c '[.value_0, .value_1, .value_2]' <<<"$out")" \
        "resource.<i>.value"
}

test_autoscaling_heat_scale_up_honors_max_size() {
    local name num
    name=$(stack_name asg-heat-max)
    ctl submit "$name" "$ASG_HEAT/group.yaml" --wait --timeout 60 >/dev/null
    asg_heat_outputs_agree "$name"
    for num in 4 5 5; do
        ctl signal "$name" scale_up_policy >/dev/null
        cv_wait_until 30 "the group at $num" asg_heat_size_is "$name" "$num"
    done
    cv_wait_until 30 "the signal at max_size to be taken" asg_signal_reason_is "$name" \
        random_group \
        "random_group NOT performing scaling adjustment, as there is no change in capacity."
}

asg_heat_size_is() { [ "$(status_json "$1" | jq -c '[.status, .outputs.asg_size]')" = "[\"UPDATE_COMPLETE\",$2]" ]; }

test_autoscaling_heat_cooldown_after_create_ignores_a_signal() {
    local name tpl
    name=$(stack_name asg-heat-cool)
    tpl=$(mktemp --suffix=.yaml)
    sed -e 's/cooldown: 0/cooldown: 60/' "$ASG_HEAT/group.yaml" >"$tpl"
    ctl submit "$name" "$tpl" --wait --timeout 60 >/dev/null
    rm -f "$tpl"
    ctl signal "$name" scale_up_policy >/dev/null
    cv_wait_until 30 "the signal to be ignored" asg_signal_reason_is "$name" random_group \
        "The resource random_group could not perform scaling action: due to cooldown, cooldown 60"
    assert_eq 3 "$(status_json "$name" | jqr .outputs.asg_size)" "the size in the cooldown"
}

test_autoscaling_heat_group_of_template_members_exposes_their_outputs() {
    local name
    name=$(stack_name asg-heat-nested)
    ctl submit "$name" "$ASG_HEAT/group_nested.yaml" --wait --timeout 60 >/dev/null
    asg_heat_outputs_agree "$name"
}
