# Conditions and if (decided from the parameters when a traversal begins)
# and get_file (the CLI uploads the file): a condition that flips on update
# creates or deletes what it guards through the ordinary update.
# shellcheck shell=bash

C="$DATA/stacks/conditions"

resource_names() { ctl resources "$1" -o json | jq -c '[.[].name] | sort'; }

test_condition_false_leaves_the_resource_out() {
    local name s
    name=$(stack_name cond-off)
    ctl submit "$name" "$C/guarded.yaml" --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq '["base"]' "$(resource_names "$name")" "resources"
    assert_eq null "$(jqr .outputs.extra_value <<<"$s")" "a disabled output is null"
    assert_eq testing "$(jqr .outputs.mode <<<"$s")" "if took the false branch"
}

test_condition_flipping_on_update_creates_then_deletes_the_resource() {
    local name s ev
    name=$(stack_name cond-flip)
    ctl submit "$name" "$C/guarded.yaml" --wait --timeout 60 >/dev/null
    ctl update "$name" "$C/guarded.yaml" -P env=prod --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq '["base","extra"]' "$(resource_names "$name")" "resources once the condition holds"
    assert_eq extra-base "$(jqr .outputs.extra_value <<<"$s")" "the output follows the resource"
    assert_eq production "$(jqr .outputs.mode <<<"$s")" "if took the true branch"
    ev=$(ctl events "$name" -o json)
    assert_eq "IN_PROGRESS COMPLETE" \
        "$(jq -r '[.[] | select(.resource == "extra" and .action == "CREATE") | .status] | join(" ")' <<<"$ev")" \
        "extra created by the update"
    ctl update "$name" "$C/guarded.yaml" -P env=test --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq '["base"]' "$(resource_names "$name")" "resources once the condition fails"
    assert_eq null "$(jqr .outputs.extra_value <<<"$s")" "the output is null again"
    ev=$(ctl events "$name" -o json)
    assert_eq "IN_PROGRESS COMPLETE" \
        "$(jq -r '[.[] | select(.resource == "extra" and .action == "DELETE") | .status] | join(" ")' <<<"$ev")" \
        "extra deleted by the update"
}

test_get_file_uploads_the_file_next_to_the_template() {
    local name
    name=$(stack_name get-file)
    ctl submit "$name" "$C/guarded.yaml" --wait --timeout 60 >/dev/null
    assert_eq "$(cat "$C/files/hello.sh")" "$(status_json "$name" | jqr .outputs.script)" \
        "the output is the file's text"
}

test_get_file_of_a_missing_file_is_refused_at_submit() {
    local name tpl err rc=0
    name=$(stack_name get-file-missing)
    tpl=$(mktemp --suffix .yaml)
    printf 'heat_template_version: 2018-08-31\noutputs:\n  o: {value: {get_file: no-such-file.sh}}\n' >"$tpl"
    err=$(ctl submit "$name" "$tpl" 2>&1 >/dev/null) || rc=$?
    rm -f "$tpl"
    assert_eq 2 "$rc" "exit code ($err)"
    assert_match 'cannot read get_file file "no-such-file.sh"' "$err" "error message"
}

test_condition_referring_to_an_unknown_condition_is_refused_at_submit() {
    local name tpl err rc=0
    name=$(stack_name cond-unknown)
    tpl=$(mktemp --suffix .yaml)
    printf 'heat_template_version: 2016-10-14\nresources:\n  r: {type: OS::Heat::None, condition: nope}\n' >"$tpl"
    err=$(ctl submit "$name" "$tpl" 2>&1 >/dev/null) || rc=$?
    rm -f "$tpl"
    assert_eq 2 "$rc" "exit code ($err)"
    assert_match 'resources\.r\.condition: Invalid condition "nope"' "$err" "error message"
}

test_resource_facade_reads_the_parent_resource() {
    local name s
    name=$(stack_name facade)
    ctl submit "$name" "$C/facade.yaml" --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq CREATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq web "$(jqr .outputs.role <<<"$s")" "the parent's metadata, resolved"
    assert_eq Retain "$(jqr .outputs.policy <<<"$s")" "the parent's deletion_policy"
    assert_eq 2 "$(jqr .outputs.batch <<<"$s")" "the parent's update_policy"
    ctl update "$name" "$C/facade.yaml" -P role=db --wait --timeout 60 >/dev/null
    s=$(status_json "$name")
    assert_eq UPDATE_COMPLETE "$(jqr .status <<<"$s")" status
    assert_eq db "$(jqr .outputs.role <<<"$s")" "a changed facade updates the child"
}
