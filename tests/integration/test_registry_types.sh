# A resource whose type the environment's resource_registry maps (an alias,
# a template file, a per-resource mapping) is reported with the type its
# template wrote, as Heat's Resource.type(): in `resources`, `resource-show`,
# events and the console. A mapping change that changes the implementation
# replaces the resource; one that keeps it (another alias of the same type,
# another template file: Heat's one TemplateResource class) updates it in
# place. Heat's heat_integrationtests/functional/test_create_update.py
# (test_stack_update_alias_type, test_stack_update_alias_changes,
# test_stack_update_provider_type) is the specification.
# shellcheck shell=bash

REGTYPES_DATA="$DATA/stacks/regtypes"

# regtypes_field NAME RESOURCE FIELD: FIELD of RESOURCE's current row in
# `resources -o json`.
regtypes_field() {
    ctl resources "$1" -o json |
        jq -r --arg r "$2" --arg f "$3" '.[] | select(.name == $r and (.replaced | not)) | .[$f]'
}

# regtypes_event_types NAME RESOURCE: the distinct types RESOURCE's events name.
regtypes_event_types() {
    ctl events "$1" -o json | jq -c --arg r "$2" '[.[] | select(.resource == $r) | .type] | unique'
}

# regtypes_random_value NAME: the value of resource r, a RandomString.
regtypes_random_value() {
    ctl resources "$1" -o json --show-secrets | jqr '.[] | select(.name == "r") | .attributes.value'
}

test_registry_types_are_reported_as_the_template_wrote_them() {
    local name r
    name=$(stack_name regtypes)
    ctl submit "$name" "$REGTYPES_DATA/types.yaml" --param-file "$REGTYPES_DATA/types_env.yaml" \
        --wait --timeout 60 >/dev/null
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$(status_json "$name")")" status
    assert_eq "hello world!" "$(jqr .outputs.greeting <<<"$(status_json "$name")")" \
        "the template file mapped to runs"
    r=$(ctl resources "$name" -o json | jq -c '[.[] | {name, type}] | sort_by(.name)')
    assert_eq '[{"name":"alias","type":"My::Alias"},{"name":"special","type":"My::Special"},{"name":"thing","type":"My::Thing"}]' \
        "$r" "resources -o json: an alias, a per-resource mapping, a template file"
    assert_eq My::Alias "$(ctl resource-show "$name" alias -o json | jqr .type)" "resource-show alias"
    assert_eq My::Thing "$(ctl resource-show "$name" thing -o json | jqr .type)" "resource-show thing"
    assert_eq My::Special "$(ctl resource-show "$name" special -o json | jqr .type)" \
        "resource-show special"
    assert_eq '["My::Alias"]' "$(regtypes_event_types "$name" alias)" "alias's events"
    assert_eq '["My::Thing"]' "$(regtypes_event_types "$name" thing)" "thing's events"
    assert_eq '["My::Special"]' "$(regtypes_event_types "$name" special)" "special's events"
    assert_eq '["OS::Heat::Stack"]' "$(regtypes_event_types "$name" "$name")" \
        "the stack's own events, as Heat names them"
    # The nested stack's own resources are of the types its template wrote.
    assert_eq OS::Heat::Value "$(ctl resources "$(regtypes_field "$name" thing physical_id)" -o json |
        jqr '.[] | select(.name == "r") | .type')" "the nested stack's resource"
}

test_registry_types_are_shown_by_the_console() {
    web_start
    local name
    name=$(stack_name regtypes-web)
    ctl submit "$name" "$REGTYPES_DATA/types.yaml" --param-file "$REGTYPES_DATA/types_env.yaml" \
        --wait --timeout 60 >/dev/null
    web_get "/api/stacks/$name/resources"
    assert_eq 200 "$WEB_CODE" "status code"
    assert_eq '["My::Alias","My::Special","My::Thing"]' \
        "$(jq -c '[.resources[].type] | sort' <<<"$WEB_BODY")" "resources"
    web_get "/api/stacks/$name/graph"
    assert_eq '["My::Alias","My::Special","My::Thing"]' \
        "$(jq -c '[.nodes[].type] | sort' <<<"$WEB_BODY")" "graph nodes"
    web_get "/api/stacks/$name/events"
    assert_eq '["My::Thing"]' \
        "$(jq -c '[.events[] | select(.resource == "thing") | .type] | unique' <<<"$WEB_BODY")" \
        "events"
}

# Heat's test_stack_update_alias_changes: the alias now maps to another type.
test_registry_types_mapping_to_another_type_replaces() {
    local name before after
    name=$(stack_name regtypes-replace)
    ctl submit "$name" "$REGTYPES_DATA/one.yaml" --param-file "$REGTYPES_DATA/one_none_env.yaml" \
        --wait --timeout 60 >/dev/null
    before=$(regtypes_field "$name" r physical_id)
    assert_eq My::Thing "$(regtypes_field "$name" r type)" "type before"
    ctl update "$name" "$REGTYPES_DATA/one.yaml" --param-file "$REGTYPES_DATA/one_test_env.yaml" \
        --wait --timeout 60 >/dev/null
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$(status_json "$name")")" status
    after=$(regtypes_field "$name" r physical_id)
    [[ -n $after && $after != "$before" ]] ||
        fail "the resource was not replaced (physical id $before, then $after)"
    assert_eq My::Thing "$(regtypes_field "$name" r type)" "type after"
    assert_eq My::Thing "$(ctl resource-show "$name" r -o json | jqr .type)" "resource-show after"
    # The replacement's create and the replaced version's delete, both named
    # by the type the template wrote.
    assert_eq '["My::Thing"]' "$(regtypes_event_types "$name" r)" "events"
    ctl events "$name" -o json | jq -e --arg p "$before" \
        'any(.[]; .resource == "r" and .physical_id == $p and .action == "DELETE" and .status == "COMPLETE")' \
        >/dev/null || fail "the replaced version $before was not deleted"
}

# The same real type through another mapping, and a property that allows
# updates: the resource is updated, not replaced.
test_registry_types_mapping_that_keeps_the_real_type_updates_in_place() {
    local name before
    name=$(stack_name regtypes-inplace)
    ctl submit "$name" "$REGTYPES_DATA/one.yaml" --param-file "$REGTYPES_DATA/one_test_env.yaml" \
        --wait --timeout 60 >/dev/null
    before=$(regtypes_field "$name" r physical_id)
    ctl update "$name" "$REGTYPES_DATA/one.yaml" --param-file "$REGTYPES_DATA/one_chain_env.yaml" \
        -P value=two --wait --timeout 60 >/dev/null
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$(status_json "$name")")" status
    assert_eq "$before" "$(regtypes_field "$name" r physical_id)" "physical id kept"
    assert_eq UPDATE_COMPLETE "$(regtypes_field "$name" r status)" "updated in place"
    assert_eq My::Thing "$(regtypes_field "$name" r type)" type
}

# Heat's test_stack_update_alias_type: the template writes another alias of
# the same type; the resource is kept (a RandomString keeps its value) and
# reports the new name.
test_registry_types_another_alias_of_the_same_type_keeps_the_resource() {
    local name before value
    name=$(stack_name regtypes-alias)
    ctl submit "$name" "$REGTYPES_DATA/alias.yaml" --param-file "$REGTYPES_DATA/alias_env.yaml" \
        --wait --timeout 60 >/dev/null
    before=$(regtypes_field "$name" r physical_id)
    value=$(regtypes_random_value "$name")
    [[ -n $value && $value != null ]] || fail "no value: $value"
    assert_eq My::RandomA "$(regtypes_field "$name" r type)" "type before"
    ctl update "$name" "$REGTYPES_DATA/alias_b.yaml" --param-file "$REGTYPES_DATA/alias_env.yaml" \
        --wait --timeout 60 >/dev/null
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$(status_json "$name")")" status
    assert_eq "$before" "$(regtypes_field "$name" r physical_id)" "physical id kept"
    assert_eq "$value" "$(regtypes_random_value "$name")" "the value kept"
    assert_eq My::RandomB "$(regtypes_field "$name" r type)" "type after"
}

# Heat: every template file is one class (TemplateResource): a mapping to
# another file updates the nested stack with it, in place.
test_registry_types_another_template_file_updates_the_nested_stack_in_place() {
    local name before
    name=$(stack_name regtypes-file)
    ctl submit "$name" "$REGTYPES_DATA/types.yaml" --param-file "$REGTYPES_DATA/types_env.yaml" \
        --wait --timeout 60 >/dev/null
    before=$(regtypes_field "$name" thing physical_id)
    ctl update "$name" "$REGTYPES_DATA/types.yaml" \
        --param-file "$REGTYPES_DATA/other_thing_env.yaml" --wait --timeout 60 >/dev/null
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$(status_json "$name")")" status
    assert_eq "goodbye world!" "$(jqr .outputs.greeting <<<"$(status_json "$name")")" \
        "the other template runs"
    assert_eq "$before" "$(regtypes_field "$name" thing physical_id)" "the nested stack kept"
    assert_eq '["extra","r"]' "$(ctl resources "$before" -o json | jq -c '[.[].name] | sort')" \
        "the nested stack's resources are the other template's"
    assert_eq My::Thing "$(regtypes_field "$name" thing type)" type
}
