# Creating stacks: outputs exact, dependency order proven from the events.
# shellcheck shell=bash

test_flat_stack_of_every_type_completes_with_its_outputs() {
    local name s
    name=$(stack_name flat)
    ctl submit "$name" "$DATA/stacks/flat.yaml" --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq "Stack CREATE completed successfully" "$(jqr .reason <<<"$s")" reason
    assert_eq hello "$(jqr .outputs.test_output <<<"$s")" "TestResource output"
    assert_match '^[A-Za-z0-9]{12}$' "$(jqr .outputs.random_length <<<"$s")" "RandomString value"
    assert_eq 42 "$(jqr .outputs.value <<<"$s")" "Value value"
    assert_eq 4 "$(jqr '.resources.CREATE_COMPLETE' <<<"$s")" "resources complete"
}

test_chain_passes_attributes_down_and_creates_in_order() {
    local name s ev res
    name=$(stack_name chain)
    ctl submit "$name" "$DATA/stacks/chain.yaml" -P greeting=yo --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq "yo-b+c" "$(jqr .outputs.final <<<"$s")" "final output"
    res=$(ctl resources "$name" -o json)
    assert_eq "$(jqr '.[] | select(.name == "a") | .physical_id' <<<"$res")" \
        "$(jqr .outputs.a_ref <<<"$s")" "get_resource gives the physical id"
    ev=$(ctl events "$name" -o json)
    assert_after "$ev" b a CREATE
    assert_after "$ev" c b CREATE
    assert_after "$ev" d c CREATE
}

test_diamond_child_starts_only_after_both_parents() {
    local name s ev top
    name=$(stack_name diamond)
    ctl submit "$name" "$DATA/stacks/diamond.yaml" --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$s")" status
    top=$(jqr .outputs.top <<<"$s")
    assert_match '^[A-Za-z0-9]{8}$' "$top" "top value"
    assert_eq "$top,right" "$(jqr .outputs.bottom <<<"$s")" "bottom joins both parents"
    ev=$(ctl events "$name" -o json)
    assert_after "$ev" left top CREATE
    assert_after "$ev" right top CREATE
    assert_after "$ev" bottom left CREATE
    assert_after "$ev" bottom right CREATE
}

test_fanout_sink_waits_for_every_leaf() {
    local name tpl ev i
    name=$(stack_name fanout)
    tpl=$(mktemp --suffix .yaml)
    "$DATA/../bench/gen_stack.sh" fanout 30 >"$tpl"
    ctl submit "$name" "$tpl" --wait --timeout 60 >/dev/null
    rm -f "$tpl"
    assert_eq CREATE_COMPLETE "$(status_json "$name" | jqr .status)" status
    assert_eq 32 "$(status_json "$name" | jqr .resources.CREATE_COMPLETE)" "all created"
    ev=$(ctl events "$name" -o json)
    for i in $(seq 0 29); do
        assert_after "$ev" "r$i" root CREATE
        assert_after "$ev" sink "r$i" CREATE
    done
}

test_every_event_names_its_traversal_and_worker() {
    local name ev
    name=$(stack_name evfields)
    ctl submit "$name" "$DATA/stacks/flat.yaml" --wait --timeout 60 >/dev/null
    ev=$(ctl events "$name" -o json)
    assert_eq 0 "$(jq '[.[] | select(.traversal != 1)] | length' <<<"$ev")" "traversal 1"
    assert_eq 0 "$(jq '[.[] | select(.worker == "")] | length' <<<"$ev")" "worker named"
    assert_eq 0 "$(jq '[.[] | select((.time | type) != "number")] | length' <<<"$ev")" "time"
    # Stack IN_PROGRESS + COMPLETE, and IN_PROGRESS + COMPLETE per resource.
    assert_eq 10 "$(jq length <<<"$ev")" "event count"
}

test_stack_of_2000_resources_completes() {
    local name tpl s
    name=$(stack_name big)
    tpl=$(mktemp --suffix .yaml)
    "$DATA/../bench/gen_stack.sh" mixed 2200 >"$tpl"
    ctl submit "$name" "$tpl" --wait --timeout 300 >/dev/null
    rm -f "$tpl"
    s=$(status_json "$name")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq 2200 "$(jqr .resources.CREATE_COMPLETE <<<"$s")" "resources complete"
    assert_eq 2200 "$(jqr .done <<<"$s")" "nodes done"
}

test_pseudo_parameters_name_the_stack() {
    local name s id
    name=$(stack_name pseudo)
    ctl submit "$name" "$DATA/stacks/pseudo.yaml" --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    id=$(jqr .id <<<"$s")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq "$name/$id" "$(jqr .outputs.label <<<"$s")" "OS::stack_name and OS::stack_id"
    assert_eq "$name" "$(jqr .outputs.name <<<"$s")" "in outputs too"
}

test_parameter_defaults_apply_only_to_declared_parameters() {
    local name env rc=0
    name=$(stack_name envdefaults)
    env=$(mktemp --suffix .yaml)
    printf 'parameter_defaults:\n  greeting: hey\n  used_by_another_template: 1\n' >"$env"
    ctl submit "$name" "$DATA/stacks/chain.yaml" --param-file "$env" --wait --timeout 60 >/dev/null
    assert_eq "hey-b+c" "$(status_json "$name" | jqr .outputs.final)" "declared default applied"
    printf 'parameters:\n  used_by_another_template: 1\n' >"$env"
    ctl validate "$DATA/stacks/chain.yaml" --param-file "$env" >/dev/null 2>&1 || rc=$?
    rm -f "$env"
    assert_eq 2 "$rc" "an undeclared name under parameters: is still an error"
}
