# Functions by heat_template_version, as Heat's tables define them: a
# function the version lacks is plain data that reaches the stack's outputs
# and resources unchanged; Removed functions, a conditions section before
# 2016-10-14 and an unknown version are refused with Heat's words; yaql's
# operators run in a real stack.
# shellcheck shell=bash

hv_template() { # file version output-value
    printf 'heat_template_version: %s\nresources:\n  v:\n    type: OS::Heat::Value\n    properties:\n      value: %s\noutputs:\n  o:\n    value: {get_attr: [v, value]}\n' \
        "$2" "$3" >"$1"
}

test_list_concat_in_a_2016_04_08_stack_is_a_map() {
    local name dir s
    name=$(stack_name hv-data)
    dir=$(mktemp -d)
    hv_template "$dir/t.yaml" 2016-04-08 "{list_concat: [[a], [b]]}"
    ctl submit "$name" "$dir/t.yaml" --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq '{"list_concat":[["a"],["b"]]}' "$(jq -c .outputs.o <<<"$s")" "plain data passes through"
    rm -rf "$dir"
}

test_yaql_operators_run_in_a_stack() {
    local name dir s
    name=$(stack_name hv-yaql)
    dir=$(mktemp -d)
    hv_template "$dir/t.yaml" 2016-10-14 \
        "{yaql: {expression: '\$.data.where(\$ > 1).select(\$ * 10)', data: [1, 2, 3]}}"
    ctl submit "$name" "$dir/t.yaml" --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq '[20,30]' "$(jq -c .outputs.o <<<"$s")" "where, select and * as yaql runs them"
    rm -rf "$dir"
}

test_versions_refuse_what_heat_refuses() {
    local dir out
    dir=$(mktemp -d)
    hv_template "$dir/removed.yaml" 2014-10-16 "{'Fn::Join': [',', [a]]}"
    out=$(ctl validate "$dir/removed.yaml" 2>&1) && fail "Fn::Join accepted"
    assert_match "The template version is invalid: The function Fn::Join is not supported in this version of HOT\\." \
        "$out" "Removed"
    printf 'heat_template_version: 2016-04-08\nconditions: {}\n' >"$dir/cond.yaml"
    out=$(ctl validate "$dir/cond.yaml" 2>&1) && fail "conditions accepted"
    assert_match "The template section is invalid: conditions" "$out" "conditions before 2016-10-14"
    printf 'heat_template_version: 2019-01-01\n' >"$dir/version.yaml"
    out=$(ctl validate "$dir/version.yaml" 2>&1) && fail "2019-01-01 accepted"
    assert_match '"heat_template_version" should be one of: 2013-05-23, .*, wallaby' "$out" \
        "unknown version"
    rm -rf "$dir"
}
