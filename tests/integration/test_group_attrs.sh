# get_attr paths into a group's attributes and members, as Heat's
# get_attribute of OS::Heat::ResourceGroup, ResourceChain and
# AutoScalingGroup reads them: a path after a member attribute
# applies to each member's value; resource.N with a path is member N's
# attribute; attributes / outputs need an attribute; refs takes a path,
# refs_map and removed_rsrc_list do not; a member that is not there is null
# (ResourceGroup's resource.N.attr) or an error (an output Heat shows without
# a value); removed_rsrc_list is Heat's sorted list, and a removal policy at
# create skips the names it lists. Validation refuses a member attribute the
# members do not have wherever Heat's nested validation sees it.
# shellcheck shell=bash

test_group_attrs_resource_group_paths_resolve_as_in_heat() {
    local name tpl out
    name=$(stack_name ga-rg)
    tpl=$(template_file rg <<'EOF'
heat_template_version: 2018-08-31
resources:
  g:
    type: OS::Heat::ResourceGroup
    properties:
      count: 3
      removal_policies: [{resource_list: ['1', '10']}]
      resource_def:
        type: OS::Heat::TestResource
        properties:
          value: "%index%abc"
outputs:
  names: {value: {get_attr: [g, output]}}
  first_chars: {value: {get_attr: [g, output, 0]}}
  member_path: {value: {get_attr: [g, resource.2, output, 1]}}
  member_dotted_path: {value: {get_attr: [g, resource.3.output, 2]}}
  member_ref: {value: {get_attr: [g, resource.2]}}
  refs: {value: {get_attr: [g, refs]}}
  refs_first: {value: {get_attr: [g, refs, 0]}}
  refs_map_with_path: {value: {get_attr: [g, refs_map, '0']}}
  by_name: {value: {get_attr: [g, attributes, output]}}
  by_name_path: {value: {get_attr: [g, attributes, output, 0]}}
  attributes_alone: {value: {get_attr: [g, attributes]}}
  removed: {value: {get_attr: [g, removed_rsrc_list]}}
  removed_with_path: {value: {get_attr: [g, removed_rsrc_list, 0]}}
  gone_member_attr: {value: {get_attr: [g, resource.1.output]}}
  gone_member_ref: {value: {get_attr: [g, resource.1]}}
EOF
)
    ctl submit "$name" "$tpl" --wait --timeout 60 >/dev/null
    rm -f "$tpl"
    out=$(status_json "$name")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$out")" status
    assert_eq '["0abc","2abc","3abc"]' "$(jq -c .outputs.names <<<"$out")" \
        "a removal policy at create skips the names it lists"
    assert_eq '["0","2","3"]' "$(jq -c .outputs.first_chars <<<"$out")" \
        "[g, attr, 0] is each member's attr[0]"
    assert_eq a "$(jqr .outputs.member_path <<<"$out")" "[g, resource.2, output, 1]"
    assert_eq b "$(jqr .outputs.member_dotted_path <<<"$out")" "[g, resource.3.output, 2]"
    assert_eq "$(jqr '.outputs.refs[1]' <<<"$out")" "$(jqr .outputs.member_ref <<<"$out")" \
        "[g, resource.2] is the member's reference id"
    assert_eq "$(jqr '.outputs.refs[0]' <<<"$out")" "$(jqr .outputs.refs_first <<<"$out")" \
        "[g, refs, 0]"
    assert_eq '["0","2","3"]' "$(jq -c '.outputs.refs_map_with_path | keys' <<<"$out")" \
        "[g, refs_map, '0'] is the whole map"
    assert_eq '{"0":"0abc","2":"2abc","3":"3abc"}' "$(jq -c -S .outputs.by_name <<<"$out")" \
        "[g, attributes, output]"
    assert_eq '{"0":"0","2":"2","3":"3"}' "$(jq -c -S .outputs.by_name_path <<<"$out")" \
        "[g, attributes, output, 0] applies the path to each member"
    assert_eq null "$(jq -c .outputs.attributes_alone <<<"$out")" "[g, attributes] alone has no value"
    assert_eq '["1","10"]' "$(jq -c .outputs.removed <<<"$out")" "removed_rsrc_list"
    assert_eq '["1","10"]' "$(jq -c .outputs.removed_with_path <<<"$out")" \
        "removed_rsrc_list is whole whatever follows"
    assert_eq null "$(jq -c .outputs.gone_member_attr <<<"$out")" "a removed member's attribute"
    assert_eq null "$(jq -c .outputs.gone_member_ref <<<"$out")" \
        "a removed member's reference is an error: no value"
    assert_eq 3abc "$(ctl output-show "$name" names -o json | jqr '.output_value[2]')" \
        "output-show gives the same values"
    assert_eq '[]' "$(ctl resources "$name" -o json |
        jq -c '[.[] | select(.name == "g") | .attributes | keys[] | select(startswith("\u0001"))]')" \
        "the engine's own mark is not shown among the attributes"
}

test_group_attrs_removed_list_after_scale_down_is_sorted() {
    local name tpl out
    name=$(stack_name ga-rm)
    tpl=$(template_file rm <<'EOF'
heat_template_version: 2018-08-31
parameters:
  count: {type: number, default: 12}
  remove: {type: comma_delimited_list, default: []}
resources:
  g:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: count}
      removal_policies: [{resource_list: {get_param: remove}}]
      resource_def: {type: OS::Heat::None}
outputs:
  removed: {value: {get_attr: [g, removed_rsrc_list]}}
  refs_map: {value: {get_attr: [g, refs_map]}}
EOF
)
    ctl submit "$name" "$tpl" --wait --timeout 90 >/dev/null
    ctl update "$name" --existing -P count=9 -P remove=9,10,2 --wait --timeout 90 >/dev/null
    rm -f "$tpl"
    out=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$out")" status
    assert_eq '["10","2","9"]' "$(jq -c .outputs.removed <<<"$out")" \
        "Heat's removed names, sorted as text"
    assert_eq '["0","1","11","3","4","5","6","7","8"]' \
        "$(jq -c '.outputs.refs_map | keys' <<<"$out")" "refs_map after the scale-down"
}

test_group_attrs_chain_and_autoscaling_paths_resolve_as_in_heat() {
    local name tpl out
    name=$(stack_name ga-ca)
    tpl=$(template_file ca <<'EOF'
heat_template_version: 2018-08-31
resources:
  c:
    type: OS::Heat::ResourceChain
    properties:
      resources: [OS::Heat::TestResource, OS::Heat::TestResource]
      resource_properties: {value: xyz}
  asg:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 2
      max_size: 3
      resource:
        type: OS::Heat::TestResource
        properties: {value: pq}
outputs:
  chain_each: {value: {get_attr: [c, output, 1]}}
  chain_member: {value: {get_attr: [c, resource.1, output, 2]}}
  chain_by_name: {value: {get_attr: [c, attributes, output, 0]}}
  chain_gone: {value: {get_attr: [c, resource.5.output]}}
  asg_list: {value: {get_attr: [asg, outputs_list, output, 1]}}
  asg_map: {value: {get_attr: [asg, outputs, output]}}
  asg_member: {value: {get_attr: [asg, resource.1.output, 0]}}
  asg_member_ref: {value: {get_attr: [asg, resource.0]}}
  asg_refs: {value: {get_attr: [asg, refs]}}
  asg_refs_path: {value: {get_attr: [asg, refs, 0]}}
  asg_out_of_range: {value: {get_attr: [asg, resource.2.output]}}
  asg_outputs_alone: {value: {get_attr: [asg, outputs]}}
EOF
)
    ctl submit "$name" "$tpl" --wait --timeout 60 >/dev/null
    rm -f "$tpl"
    out=$(status_json "$name")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$out")" status
    assert_eq '["y","y"]' "$(jq -c .outputs.chain_each <<<"$out")" "[c, output, 1]"
    assert_eq z "$(jqr .outputs.chain_member <<<"$out")" "[c, resource.1, output, 2]"
    assert_eq '{"0":"x","1":"x"}' "$(jq -c -S .outputs.chain_by_name <<<"$out")" \
        "[c, attributes, output, 0]"
    assert_eq null "$(jq -c .outputs.chain_gone <<<"$out")" "a chain member that is not there"
    assert_eq '["q","q"]' "$(jq -c .outputs.asg_list <<<"$out")" "[asg, outputs_list, output, 1]"
    assert_eq '["pq","pq"]' "$(jq -c '[.outputs.asg_map[]]' <<<"$out")" "[asg, outputs, output]"
    assert_eq p "$(jqr .outputs.asg_member <<<"$out")" "[asg, resource.1.output, 0]"
    assert_eq "$(jqr '.outputs.asg_refs[0]' <<<"$out")" "$(jqr .outputs.asg_member_ref <<<"$out")" \
        "[asg, resource.0] is the oldest member's reference id"
    assert_eq "$(jq -c .outputs.asg_refs <<<"$out")" "$(jq -c .outputs.asg_refs_path <<<"$out")" \
        "an AutoScalingGroup's refs is whole whatever follows"
    assert_eq null "$(jq -c .outputs.asg_out_of_range <<<"$out")" "a member index out of range"
    assert_eq null "$(jq -c .outputs.asg_outputs_alone <<<"$out")" "outputs needs an attribute"
}

test_group_attrs_validation_refuses_what_heat_nested_validation_refuses() {
    local tpl out rc=0
    tpl=$(template_file val <<'EOF'
heat_template_version: 2018-08-31
resources:
  g:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def: {type: OS::Heat::TestResource}
outputs:
  o: {value: {get_attr: [g, resource.0, nope]}}
EOF
)
    out=$(ctl validate "$tpl" 2>&1) || rc=$?
    assert_eq 2 "$rc" "validate's exit code"
    assert_match 'outputs.o.value: The Referenced Attribute \(0 nope\) is incorrect.' "$out" \
        "the member attribute the members lack"
    sed -i 's/\[g, resource.0, nope\]/[g, attributes, nope]/' "$tpl"
    rc=0
    out=$(ctl validate "$tpl" 2>&1) || rc=$?
    assert_eq 2 "$rc" "[g, attributes, nope] is refused"
    sed -i 's/\[g, attributes, nope\]/[g, attributes]/' "$tpl"
    rc=0
    out=$(ctl validate "$tpl" 2>&1) || rc=$?
    assert_eq 0 "$rc" "[g, attributes] is accepted (an error only when resolved): $out"
    sed -i 's/\[g, attributes\]/[g, resource.0, output, 0]/' "$tpl"
    rc=0
    out=$(ctl validate "$tpl" 2>&1) || rc=$?
    rm -f "$tpl"
    assert_eq 0 "$rc" "[g, resource.0, output, 0] is accepted: $out"
}
