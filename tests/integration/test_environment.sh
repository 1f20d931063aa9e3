# Heat environments end to end: repeated --param-file merged in order as
# Heat merges -e files, parameter_defaults precedence, resource_registry
# mappings (type -> template file, type -> type, per resource), status
# showing the parameters, immutable parameters, restricted actions.
# shellcheck shell=bash

ENV_DATA="$DATA/stacks/env"

# env_file NAME TEXT -> the path of a new environment file holding TEXT
env_file() {
    local f
    f=$(mktemp --suffix "-$1.yaml")
    printf '%b' "$2" >"$f"
    echo "$f"
}

test_env_param_files_merge_in_order_with_heats_precedence() {
    local name e1 e2 s
    name=$(stack_name envmerge)
    e1=$(env_file e1 'parameters:\n  a: env1-a\n  b: env1-b\nparameter_defaults:\n  c: d1-c\n  tags: x\nparameter_merge_strategies:\n  tags: merge\n')
    e2=$(env_file e2 'parameters:\n  b: env2-b\nparameter_defaults:\n  c: d2-c\n  tags: y\nparameter_merge_strategies:\n  tags: merge\n')
    ctl submit "$name" "$ENV_DATA/params.yaml" --param-file "$e1" --param-file "$e2" \
        -P a=cli-a --wait --timeout 60 >/dev/null
    rm -f "$e1" "$e2"
    s=$(status_json "$name")
    # -P over parameters (later file wins) over parameter_defaults (later
    # file wins) over the template's default.
    assert_eq "cli-a,env2-b,d2-c" "$(jqr .outputs.abc <<<"$s")" "precedence"
    assert_eq "x+y" "$(jqr .outputs.tags <<<"$s")" "the merge strategy joins the lists"
}

test_env_conflicting_merge_strategy_is_refused() {
    local e1 e2 out rc=0
    e1=$(env_file e1 'parameters:\n  tags: x\n')
    e2=$(env_file e2 'parameters:\n  tags: y\nparameter_merge_strategies:\n  tags: merge\n')
    out=$(ctl validate "$ENV_DATA/params.yaml" -P a=1 --param-file "$e1" --param-file "$e2" 2>&1) ||
        rc=$?
    rm -f "$e1" "$e2"
    assert_eq 2 "$rc" "exit code"
    assert_match "Conflicting merge strategy 'merge' for parameter 'tags' in file" "$out" message
}

test_env_status_shows_parameters_with_hidden_ones_masked() {
    local name s
    name=$(stack_name envstatus)
    ctl submit "$name" "$ENV_DATA/params.yaml" -P a=shown --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq shown "$(jqr .parameters.a <<<"$s")" "a given value"
    assert_eq template-b "$(jqr .parameters.b <<<"$s")" "a default"
    assert_eq '******' "$(jqr .parameters.secret <<<"$s")" "a hidden parameter"
    [[ $s != *s3cret* ]] || fail "the hidden value appears in status"
}

test_env_immutable_parameter_refuses_a_change_before_anything_changes() {
    local name out rc=0 before
    name=$(stack_name envimmutable)
    ctl submit "$name" "$ENV_DATA/params.yaml" -P a=x --wait --timeout 60 >/dev/null
    before=$(jqr .traversal <<<"$(status_json "$name")")
    out=$(ctl update "$name" "$ENV_DATA/params.yaml" --existing -P zone=zone-2 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code"
    assert_match "The following parameters are immutable and may not be updated: zone" "$out" message
    assert_eq "$before" "$(jqr .traversal <<<"$(status_json "$name")")" "no traversal began"
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$(status_json "$name")")" "status kept"
}

test_env_registry_maps_types_to_a_template_file_and_to_types() {
    local name s r
    name=$(stack_name envregistry)
    ctl submit "$name" "$ENV_DATA/registry.yaml" --param-file "$ENV_DATA/registry_env.yaml" \
        --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$s")" status
    # My::Thing -> thing.yaml, whose `prefix` came from parameter_defaults.
    assert_eq "hello world!" "$(jqr .outputs.greeting <<<"$s")" "template-file mapping"
    assert_eq seven "$(jqr .outputs.val <<<"$s")" "type-to-type mapping"
    # Reported with the types the template wrote, as in Heat
    # (test_registry_types.sh); the per-resource mapping wins over the
    # global one: special is an OS::Heat::None, which has no attributes.
    r=$(ctl resources "$name" -o json)
    assert_eq My::Thing "$(jq -r '.[] | select(.name == "thing") | .type' <<<"$r")" thing
    assert_eq My::Special "$(jq -r '.[] | select(.name == "special") | .type' <<<"$r")" special
    assert_eq '{}' "$(jq -c '.[] | select(.name == "special") | .attributes' <<<"$r")" \
        "the per-resource mapping wins over the global one"
    assert_eq My::Value "$(jq -r '.[] | select(.name == "val") | .type' <<<"$r")" val
}

test_env_unmapped_type_is_refused() {
    local out rc=0
    out=$(ctl validate "$ENV_DATA/registry.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code"
    assert_match "My::Thing" "$out" "the unknown type is named"
}

test_env_restricted_update_fails_leaving_the_resource_untouched() {
    local name s r e
    name=$(stack_name envrestrictupd)
    ctl submit "$name" "$ENV_DATA/restricted.yaml" --param-file "$ENV_DATA/restricted_env.yaml" \
        --wait --timeout 60 >/dev/null
    r=$(ctl resources "$name" -o json | jq -c '.[] | select(.name == "v")')
    ctl update "$name" "$ENV_DATA/restricted.yaml" --existing -P value=two --wait --timeout 60 \
        >/dev/null || true
    s=$(status_json "$name")
    assert_eq UPDATE_FAILED "$(jqr .status <<<"$s")" status
    assert_eq "Resource UPDATE failed: ResourceActionRestricted: resources.v: update is restricted for resource." \
        "$(jqr .reason <<<"$s")" reason
    assert_eq "$r" "$(ctl resources "$name" -o json | jq -c '.[] | select(.name == "v")')" \
        "the resource's record is untouched"
    e=$(ctl events "$name" -o json)
    assert_eq 1 "$(jq '[.[] | select(.resource == "v" and .action == "UPDATE" and .status == "FAILED")] | length' <<<"$e")" \
        "one UPDATE FAILED event for v"
}

test_env_restricted_replace_fails_leaving_the_resource_untouched() {
    local name s r
    name=$(stack_name envrestrictrep)
    ctl submit "$name" "$ENV_DATA/restricted.yaml" --param-file "$ENV_DATA/restricted_env.yaml" \
        --wait --timeout 60 >/dev/null
    r=$(ctl resources "$name" -o json | jq -c '.[] | select(.name == "rand")')
    ctl update "$name" "$ENV_DATA/restricted.yaml" --existing -P length=12 --wait --timeout 60 \
        >/dev/null || true
    s=$(status_json "$name")
    assert_eq UPDATE_FAILED "$(jqr .status <<<"$s")" status
    assert_match "ResourceActionRestricted: resources.rand: replace is restricted for resource." \
        "$(jqr .reason <<<"$s")" reason
    assert_eq "$r" "$(ctl resources "$name" -o json | jq -c '.[] | select(.name == "rand")')" \
        "the random string is kept, not replaced"
    # An update that needs neither goes through.
    ctl update "$name" "$ENV_DATA/restricted.yaml" --existing -P length=8 --wait --timeout 60 \
        >/dev/null
}

test_env_group_members_take_the_registry_and_parameter_defaults() {
    local name
    name=$(stack_name envgroup)
    ctl submit "$name" "$ENV_DATA/group.yaml" --param-file "$ENV_DATA/group_env.yaml" \
        --wait --timeout 60 >/dev/null
    assert_eq '["hello srv-0","hello srv-1"]' "$(status_json "$name" | jq -c .outputs.greetings)" \
        "members of the mapped type, their prefix from parameter_defaults"
}

test_env_mapping_that_wraps_its_type_applies_once() {
    local name
    name=$(stack_name envwrap)
    ctl submit "$name" "$ENV_DATA/wrapped.yaml" --param-file "$ENV_DATA/wrap_env.yaml" \
        --wait --timeout 60 >/dev/null
    assert_eq "wrapped hello" "$(status_json "$name" | jqr .outputs.out)" \
        "the nested stack's OS::Heat::Value is the built-in type"
}

# Heat's child environment is part of a nested stack's definition: an update
# that changes only the environment (a parameter default the nested template
# reads) updates the existing nested stack, whose value follows.
test_env_later_file_sets_a_default_of_a_nested_template() {
    local name
    name=$(stack_name envlater)
    ctl submit "$name" "$ENV_DATA/registry.yaml" --param-file "$ENV_DATA/registry_env.yaml" \
        --param-file "$ENV_DATA/defaults_bye.yaml" --wait --timeout 60 >/dev/null
    assert_eq "bye world!" "$(jqr .outputs.greeting <<<"$(status_json "$name")")" \
        "the second file's default for thing.yaml's parameter"
}

test_env_update_of_parameter_defaults_only_updates_the_nested_stack() {
    local name s
    name=$(stack_name envnested)
    ctl submit "$name" "$ENV_DATA/registry.yaml" --param-file "$ENV_DATA/registry_env.yaml" \
        --wait --timeout 60 >/dev/null
    assert_eq "hello world!" "$(jqr .outputs.greeting <<<"$(status_json "$name")")" "before"
    # The same registry, `prefix: bye` in parameter_defaults.
    ctl update "$name" "$ENV_DATA/registry.yaml" --param-file "$ENV_DATA/registry_env_bye.yaml" \
        --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq "bye world!" "$(jqr .outputs.greeting <<<"$s")" "the nested stack took the new default"
    # An update that changes nothing leaves the nested stack alone.
    ctl update "$name" --existing --wait --timeout 60 >/dev/null
    assert_eq 1 "$(ctl events "$name" -o json | jq '[.[] | select(.resource == "thing"
        and .action == "UPDATE" and .status == "COMPLETE")] | length')" \
        "only the environment's change updated the nested stack"
}

# Heat's PATCH update (`stack update --existing -e env`): the new environment
# merges over the stored one; a parameter the user gave keeps its value, one
# that parameter_defaults filled takes the new default, on the top stack and
# in every nested stack, and what reads it updates in place.
test_env_patch_update_with_parameter_defaults_reaches_top_and_nested_stacks() {
    local name s v_id thing_id
    name=$(stack_name envpatch)
    ctl submit "$name" "$ENV_DATA/patch.yaml" --param-file "$ENV_DATA/registry_env.yaml" \
        -P suffix=kept --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq "hello kept" "$(jqr .outputs.v <<<"$s")" "before: the top stack's default"
    assert_eq "hello world!" "$(jqr .outputs.greeting <<<"$s")" "before: the nested stack's"
    v_id=$(ctl resource-show "$name" v -o json | jqr .physical_id)
    thing_id=$(ctl resource-show "$name" thing -o json | jqr .physical_id)
    ctl update "$name" --existing --param-file "$ENV_DATA/defaults_bye.yaml" \
        --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq "bye kept" "$(jqr .outputs.v <<<"$s")" \
        "the top stack took the new default and kept the value given"
    assert_eq "bye world!" "$(jqr .outputs.greeting <<<"$s")" "the nested stack took it too"
    assert_eq "$v_id" "$(ctl resource-show "$name" v -o json | jqr .physical_id)" \
        "v updated in place"
    assert_eq "$thing_id" "$(ctl resource-show "$name" thing -o json | jqr .physical_id)" \
        "the nested stack updated in place"
    # A value given in the PATCH is kept by the next one.
    ctl update "$name" --existing -P prefix=given --wait --timeout 60 >/dev/null
    ctl update "$name" --existing --param-file "$ENV_DATA/registry_env.yaml" \
        --wait --timeout 60 >/dev/null
    assert_eq "given kept" "$(jqr .outputs.v <<<"$(status_json "$name")")" \
        "a value given wins over parameter_defaults"
}
