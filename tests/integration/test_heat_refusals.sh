# What Heat's API refuses with a 400 is refused before anything is stored:
# Heat validates a stack with its parameters, evaluating every
# function whose arguments read only parameters, literals, conditions and
# files, and so does Converge. `convergectl validate`, `submit` and `update`
# exit 2 with Heat's words, naming where; no stack, no events, and on
# update the running stack untouched. A ResourceGroup of count 0 does not
# validate its member definition, as in Heat. Every problem is reported,
# an inverted range is named as such, a limit by the setting that changes it.
# shellcheck shell=bash

# hr_template: a temporary template file holding stdin; prints its path.
hr_template() {
    local tpl
    tpl=$(mktemp --suffix .yaml)
    cat >"$tpl"
    echo "$tpl"
}

# hr_refused KEY REGEX [ARGS...] < template: validate and submit (with ARGS,
# e.g. -P values) both exit 2 with a message matching REGEX, and Redis holds
# nothing of the stack.
hr_refused() {
    local key=$1 regex=$2 name tpl err rc=0
    shift 2
    name=$(stack_name "hr-$key")
    tpl=$(hr_template)
    err=$(ctl validate "$tpl" "$@" 2>&1 >/dev/null) || rc=$?
    assert_eq 2 "$rc" "validate's exit code ($err)" || { rm -f "$tpl"; return 1; }
    assert_match "$regex" "$err" "validate's message" || { rm -f "$tpl"; return 1; }
    rc=0
    err=$(ctl submit "$name" "$tpl" "$@" 2>&1 >/dev/null) || rc=$?
    rm -f "$tpl"
    assert_eq 2 "$rc" "submit's exit code ($err)"
    assert_match "$regex" "$err" "submit's message"
    assert_eq 0 "$(redis hexists "${CONVERGE_PREFIX:-cv:}stacks" "$name")" "name not stored"
    assert_eq 0 "$(stack_keys_of "$name")" "stack keys in Redis"
}

# hr_events NAME: how many events the stack has.
hr_events() { ctl events "$1" -o json | jq length; }

# A value computed by FUNCTION_CALL, with the parameters DECLS.
hr_value() { # decls expr
    printf '%s\n' "heat_template_version: 2018-08-31" "parameters:" "$1" "resources:" \
        "  r:" "    type: OS::Heat::Value" "    properties:" "      value: $2"
}

test_heat_refusals_repeat_of_unequal_lists_without_permutations() {
    hr_value "  a: {type: comma_delimited_list}
  b: {type: comma_delimited_list}" \
        "{repeat: {template: '%a%-%b%', for_each: {'%a%': {get_param: a}, '%b%': {get_param: b}}, permutations: false}}" |
        hr_refused repeat-len 'resources\.r\.properties\.value: For repeat, the length of for_each values should be equal if no nested loop\.' \
            -P a=x,y -P b=1,2,3
}

test_heat_refusals_repeat_permutations_not_boolean() {
    hr_value "  p: {type: boolean, default: false}" \
        "{repeat: {template: '%a%', for_each: {'%a%': [1, 2]}, permutations: {get_param: p}}}" |
        hr_refused repeat-perm 'resources\.r\.properties\.value: "permutations" should be boolean type for repeat function\.'
}

test_heat_refusals_str_split_index_out_of_range_or_of_the_wrong_type() {
    hr_value "  i: {type: number}" "{str_split: [',', 'a,b,c', {get_param: i}]}" |
        hr_refused split-range 'resources\.r\.properties\.value: Incorrect index to "str_split" should be between 0 and 2' \
            -P i=3
    hr_value "  i: {type: string}" "{str_split: [',', 'a,b,c', {get_param: i}]}" |
        hr_refused split-type 'resources\.r\.properties\.value: Incorrect index to "str_split" should be: "str_split" : \[ ",", "apples,pears", <index>\]' \
            -P i=first
}

test_heat_refusals_map_merge_and_map_replace_of_bad_arguments() {
    hr_value "  m: {type: json}" "{map_merge: [{a: 1}, {get_param: m}]}" |
        hr_refused merge "Items to merge must be maps\. \[1, 2\] is type <class 'list'> instead of a dict" \
            -P 'm=[1, 2]'
    hr_value "  m: {type: string, default: x}" "{map_replace: [{get_param: m}, {keys: {}}]}" |
        hr_refused replace-map 'to "map_replace", arguments must be a list of maps'
    hr_value "  k: {type: json}" "{map_replace: [{a: 1, b: 2}, {keys: {get_param: k}}]}" |
        hr_refused replace-keys 'key replacement b collides with a key in the input map' \
            -P 'k={"a": "b"}'
}

test_heat_refusals_str_replace_strict_and_vstrict() {
    hr_value "  t: {type: string}" "{str_replace_strict: {template: {get_param: t}, params: {\$who: x}}}" |
        hr_refused strict 'The following params were not found in the template: \$who' -P t=hello
    hr_value "  w: {type: string, default: ''}" \
        "{str_replace_vstrict: {template: 'hi \$who', params: {\$who: {get_param: w}}}}" |
        hr_refused vstrict 'str_replace_vstrict has an undefined or empty value for param \$who, must be a defined non-empty value'
}

test_heat_refusals_make_url_with_a_bad_port_or_scheme() {
    local decls="  port: {type: number, default: 80}
  scheme: {type: string, default: http}"
    local expr="{make_url: {scheme: {get_param: scheme}, host: example.com, port: {get_param: port}}}"
    hr_value "$decls" "$expr" |
        hr_refused url-port 'Invalid URL port 99999, must be in range 1-65535' -P port=99999
    hr_value "$decls" "$expr" |
        hr_refused url-scheme "URL \"scheme\" should not contain ':'" -P scheme=http:
}

test_heat_refusals_group_member_properties_from_parameters() {
    hr_refused member 'resources\.g\.properties\.resource_def\.properties\.length: expected integer' \
        -P len=many <<'T'
heat_template_version: 2018-08-31
parameters:
  len: {type: string}
resources:
  g:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def:
        type: OS::Heat::RandomString
        properties: {length: {get_param: len}}
T
}

test_heat_refusals_group_of_count_0_skips_its_members_until_raised() {
    local name tpl err rc=0 events
    name=$(stack_name hr-count0)
    tpl=$(hr_template <<'T'
heat_template_version: 2018-08-31
parameters:
  n: {type: number, default: 0}
resources:
  g:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: n}
      resource_def:
        type: OS::Heat::RandomString
        properties: {length: many}
outputs:
  refs: {value: {get_attr: [g, refs]}}
T
)
    ctl submit "$name" "$tpl" --wait --timeout 60 >/dev/null ||
        { rm -f "$tpl"; fail "a group of count 0 with a bad member definition was refused"; return 1; }
    assert_eq CREATE_COMPLETE "$(status_json "$name" | jqr .status)" "the empty group's stack"
    assert_eq '[]' "$(status_json "$name" | jq -c .outputs.refs)" "the group's members"
    events=$(hr_events "$name")
    err=$(ctl update "$name" "$tpl" -P n=1 2>&1 >/dev/null) || rc=$?
    rm -f "$tpl"
    assert_eq 2 "$rc" "update's exit code ($err)"
    assert_match 'resources\.g\.properties\.resource_def\.properties\.length: expected integer' \
        "$err" "update's message"
    assert_eq CREATE_COMPLETE "$(status_json "$name" | jqr .status)" "the stack, untouched"
    assert_eq "$events" "$(hr_events "$name")" "events after the refused update"
}

test_heat_refusals_autoscaling_update_outside_the_bounds_leaves_the_group() {
    local name err rc=0 events
    name=$(stack_name hr-asg)
    ctl submit "$name" "$DATA/stacks/autoscaling.yaml" -P desired=2 --wait --timeout 60 >/dev/null
    events=$(hr_events "$name")
    err=$(ctl update "$name" "$DATA/stacks/autoscaling.yaml" -P desired=9 2>&1 >/dev/null) || rc=$?
    assert_eq 2 "$rc" "update's exit code ($err)"
    assert_match 'resources\.asg\.properties: DesiredCapacity must be between MinSize and MaxSize' \
        "$err" "update's message"
    rc=0
    err=$(ctl update "$name" "$DATA/stacks/autoscaling.yaml" -P min=5 2>&1 >/dev/null) || rc=$?
    assert_eq 2 "$rc" "update's exit code ($err)"
    assert_match 'resources\.asg\.properties: MinSize can not be greater than MaxSize' "$err" \
        "update's message"
    assert_eq CREATE_COMPLETE "$(status_json "$name" | jqr .status)" "the stack, untouched"
    assert_eq 2 "$(status_json "$name" | jqr .outputs.size)" "the group's size, untouched"
    assert_eq "$events" "$(hr_events "$name")" "events after the refused updates"
}

test_heat_refusals_every_problem_is_reported_each_naming_where() {
    local tpl err rc=0
    tpl=$(hr_template <<'T'
heat_template_version: 2018-08-31
parameters:
  i: {type: number, default: 7}
resources:
  a: {type: OS::No::Such}
  b:
    type: OS::Heat::RandomString
    properties: {length: many}
  c:
    type: OS::Heat::Value
    properties: {value: {str_split: [',', 'x,y', {get_param: i}]}}
outputs:
  o: {value: {get_resource: ghost}}
T
)
    err=$(ctl validate "$tpl" 2>&1 >/dev/null) || rc=$?
    rm -f "$tpl"
    assert_eq 2 "$rc" "validate's exit code ($err)"
    assert_match 'resources\.a: The Resource Type \(OS::No::Such\) could not be found\.' "$err" "a"
    assert_match 'resources\.b\.properties\.length: expected integer' "$err" "b"
    assert_match 'resources\.c\.properties\.value: Incorrect index to "str_split" should be between 0 and 1' \
        "$err" "c"
    assert_match 'outputs\.o\.value: The specified reference "ghost" \(in unknown\) is incorrect\.' \
        "$err" "o"
    assert_eq 4 "$(grep -c '\.yaml: ' <<<"$err")" "one line per problem"
}

test_heat_refusals_inverted_range_is_named() {
    hr_refused range 'parameters\.size\.constraints\[0\]: range: inverted range: min 10 is greater than max 1, so no value can satisfy it' <<'T'
heat_template_version: 2018-08-31
parameters:
  size:
    type: number
    default: 5
    constraints:
      - range: {min: 10, max: 1}
resources: {}
T
}

test_heat_refusals_limit_names_the_setting_a_user_can_change() {
    local err rc=0
    err=$(CONVERGE_MAX_RESOURCES=2 ctl submit "$(stack_name hr-limit)" \
        "$DATA/stacks/diamond.yaml" 2>&1 >/dev/null) || rc=$?
    assert_eq 2 "$rc" "submit's exit code ($err)"
    assert_match "number of resources 4 exceeds the limit of 2 \(CONVERGE_MAX_RESOURCES, or the workers' --max-resources\)" \
        "$err" "the limit's names"
    [[ $err != *"(--max-resources"* ]] || fail "the message offers convergectl an option it lacks: $err"
}

# A client that does not validate (modelled by rewriting the stored
# parameters behind convergectl's back): the engine validates the stack the
# same way when it expands a traversal, and fails it with the same words
# before any resource is touched.
test_heat_refusals_engine_fails_a_lax_clients_stack_before_expanding() {
    local name tpl id key params r_events rc=0
    name=$(stack_name hr-lax)
    tpl=$(hr_value "  a: {type: comma_delimited_list}
  b: {type: comma_delimited_list}" \
        "{repeat: {template: '%a%-%b%', for_each: {'%a%': {get_param: a}, '%b%': {get_param: b}}, permutations: false}}" |
        hr_template)
    ctl submit "$name" "$tpl" -P a=x,y -P b=1,2 --wait --timeout 60 >/dev/null ||
        { rm -f "$tpl"; fail "the valid stack was not created"; return 1; }
    rm -f "$tpl"
    id=$(status_json "$name" | jqr .id)
    key="${CONVERGE_PREFIX:-cv:}{$id}:def"
    params=$(redis HGET "$key" params)
    params=$(jq -c '.b = (if (.b | type) == "array" then ["1", "2", "3"] else "1,2,3" end)' \
        <<<"$params") || fail "the stored parameters are not JSON: $params" || return 1
    redis HSET "$key" params "$params" >/dev/null
    r_events=$(ctl events "$name" -o json | jq '[.[] | select(.resource == "r")] | length')
    ctl converge "$name" --wait --timeout 60 >/dev/null 2>&1 || rc=$?
    assert_eq 1 "$rc" "converge's exit code"
    assert_match '^UPDATE_FAILED$' "$(status_json "$name" | jqr .status)" "the stack's status"
    assert_match 'resources\.r\.properties\.value: For repeat, the length of for_each values should be equal if no nested loop\.' \
        "$(status_json "$name" | jqr .reason)" "the stack's reason"
    assert_eq "$r_events" "$(ctl events "$name" -o json | jq '[.[] | select(.resource == "r")] | length')" \
        "events of the resource"
}
