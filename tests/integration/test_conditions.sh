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

# not_found_as_unknown WHAT CMD...: CMD, naming the resource `extra` (its
# condition false), exits 2 with the message CMD gives for a name the
# template never had
not_found_as_unknown() {
    local what=$1 out unknown rc=0
    shift
    out=$(ctl "$@" 2>&1) || rc=$?
    assert_eq 2 "$rc" "$what of a resource whose condition is false: exit code"
    unknown=$(ctl "${@/extra/nosuch}" 2>&1) || true
    assert_eq "${unknown//nosuch/extra}" "$out" "$what: the answer for an unknown resource"
}

# A resource that its condition leaves out is no resource of the stack (as
# in Heat): every command naming it answers as for an unknown resource.
test_resource_whose_condition_is_false_is_not_found() {
    local name
    name=$(stack_name cond-notfound)
    ctl submit "$name" "$C/guarded.yaml" --wait --timeout 60 >/dev/null
    ctl resource-show "$name" base >/dev/null || fail "base is a resource"
    not_found_as_unknown resource-show resource-show "$name" extra
    not_found_as_unknown signal signal "$name" extra
    not_found_as_unknown "observe --resource" observe "$name" --resource extra
    not_found_as_unknown "converge --resource" converge "$name" --resource extra
    assert_match "could not be found in Stack" "$(ctl resource-show "$name" extra 2>&1)" message
}
