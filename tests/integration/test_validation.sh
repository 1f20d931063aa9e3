# Every validation error through the CLI: exit 2, a message naming the place
# and the rule, and nothing stored in Redis.
# shellcheck shell=bash

# expect_invalid NAME REGEX < template : submit must fail with exit 2, the
# message must match REGEX, and Redis must hold no trace of the stack.
expect_invalid() {
    local name tpl err rc=0
    name=$(stack_name "$1")
    tpl=$(mktemp --suffix .yaml)
    cat >"$tpl"
    err=$(ctl submit "$name" "$tpl" 2>&1 >/dev/null) || rc=$?
    rm -f "$tpl"
    assert_eq 2 "$rc" "exit code ($err)"
    assert_match "$2" "$err" "error message"
    assert_eq 0 "$(redis hexists "${CONVERGE_PREFIX:-cv:}stacks" "$name")" "name not stored"
    assert_eq 0 "$(stack_keys_of "$name")" "stack keys in Redis"
}

test_yaml_syntax_error_names_the_line() {
    expect_invalid syntax ':[0-9]+:[0-9]+:' <<'T'
heat_template_version: 2018-08-31
resources:
  a:
    type: OS::Heat::None
   bad: [unclosed
T
}

test_unknown_resource_type_is_refused() {
    expect_invalid type 'resources\.a: The Resource Type \(OS::Nova::Nope\) could not be found\.' <<'T'
heat_template_version: 2018-08-31
resources:
  a: {type: OS::Nova::Nope}
T
}

test_reference_to_unknown_resource_is_refused() {
    expect_invalid ref 'resources\.a\.properties\.value: The specified reference "ghost" \(in a\.Properties\.value\) is incorrect\.' <<'T'
heat_template_version: 2018-08-31
resources:
  a:
    type: OS::Heat::TestResource
    properties:
      value: {get_resource: ghost}
T
}

test_reference_to_unknown_parameter_is_refused() {
    expect_invalid param 'resources\.a\.properties\.value: The Parameter \(nosuch\) was not provided\.' <<'T'
heat_template_version: 2018-08-31
resources:
  a:
    type: OS::Heat::TestResource
    properties:
      value: {get_param: nosuch}
T
}

test_dependency_cycle_is_named() {
    expect_invalid cycle 'Circular Dependency Found: \{a: \{b\}, b: \{a\}\}' <<'T'
heat_template_version: 2018-08-31
resources:
  a: {type: OS::Heat::None, depends_on: b}
  b: {type: OS::Heat::None, depends_on: a}
T
}

test_missing_required_property_is_refused() {
    expect_invalid required 'resources\.v\.properties\.value.*required' <<'T'
heat_template_version: 2018-08-31
resources:
  v: {type: OS::Heat::Value}
T
}

test_wrong_property_type_is_refused() {
    expect_invalid ptype 'resources\.r\.properties\.length.*expected' <<'T'
heat_template_version: 2018-08-31
resources:
  r:
    type: OS::Heat::RandomString
    properties: {length: many}
T
}

test_parameter_constraint_violation_is_refused() {
    expect_invalid constraint 'size.*(range|between|outside)' <<'T'
heat_template_version: 2018-08-31
parameters:
  size:
    type: number
    default: 99
    constraints:
      - range: {min: 1, max: 10}
resources: {}
T
}

test_bad_intrinsic_arguments_are_refused() {
    expect_invalid intrinsic 'resources\.a\.properties\.value: Argument to "get_attr" must be a list' <<'T'
heat_template_version: 2018-08-31
resources:
  b: {type: OS::Heat::None}
  a:
    type: OS::Heat::TestResource
    properties:
      value: {get_attr: b}
T
}

test_unknown_attribute_of_known_type_is_refused() {
    expect_invalid attr 'resources\.a\.properties\.value: The Referenced Attribute \(b nosuch\) is incorrect\.' <<'T'
heat_template_version: 2018-08-31
resources:
  b: {type: OS::Heat::RandomString}
  a:
    type: OS::Heat::TestResource
    properties:
      value: {get_attr: [b, nosuch]}
T
}

test_unreachable_redis_exits_3_and_names_it() {
    local err rc=0
    err=$(ctl --redis redis://127.0.0.1:1/0 submit "$(stack_name noredis)" \
        "$DATA/stacks/flat.yaml" 2>&1) || rc=$?
    assert_eq 3 "$rc" "exit code"
    assert_match 'Redis.*127\.0\.0\.1:1' "$err" message
}

test_unreachable_kafka_exits_3_and_stores_nothing() {
    local name err rc=0
    name=$(stack_name nokafka)
    err=$(ctl --kafka 127.0.0.1:1 submit "$name" "$DATA/stacks/flat.yaml" 2>&1) || rc=$?
    assert_eq 3 "$rc" "exit code"
    assert_match 'Kafka.*127\.0\.0\.1:1' "$err" message
    assert_eq 0 "$(redis hexists "${CONVERGE_PREFIX:-cv:}stacks" "$name")" "name not stored"
    assert_eq 0 "$(stack_keys_of "$name")" "stack keys in Redis"
}

test_status_of_unknown_stack_is_an_error() {
    local rc=0
    ctl status "$(stack_name nobody)" >/dev/null 2>&1 || rc=$?
    assert_eq 2 "$rc" "exit code"
}

test_input_limits_are_enforced_with_their_names() {
    local rc=0 err big
    big=$(mktemp --suffix .yaml)
    head -c 1100000 /dev/zero | tr '\0' 'a' >"$big"
    err=$(ctl validate "$big" 2>&1) || rc=$?
    rm -f "$big"
    assert_eq 2 "$rc" "template size: exit code"
    assert_match 'template size 1100000 bytes exceeds the limit of 1048576 \(CONVERGE_MAX_TEMPLATE_BYTES, or the workers'"'"' --max-template-bytes\)' "$err" message
    rc=0
    err=$(CONVERGE_MAX_RESOURCES=2 ctl submit "$(stack_name lim)" "$DATA/stacks/diamond.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "resource count: exit code"
    assert_match 'number of resources 4 exceeds the limit of 2' "$err" message
    rc=0
    err=$(CONVERGE_MAX_NESTING_DEPTH=1 ctl validate "$DATA/stacks/nested/deep.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "nesting depth: exit code"
    assert_match 'deeper than 1 levels' "$err" message
}
