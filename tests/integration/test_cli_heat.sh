# convergectl's rough edges a new user hits: why a --wait failed (the failed
# resources and their reasons, secrets masked), nested stacks named as `list
# --nested` prints them (and refused by the verbs that change a stack,
# naming its top stack), OS::Heat::Stack children listed, submit
# --disable-rollback, status's parameters as Heat's stack show gives them,
# and limit errors naming a setting a user can change.
# shellcheck shell=bash
# shellcheck disable=SC2016 # jq programs name their $arguments in single quotes

# A directory for the templates a test writes; the caller removes it.
heat_dir() { mktemp -d /tmp/cv-cli-heat.XXXXXX; }

# The rows of `list --nested -o json` of the stacks of this run's TAG.
heat_rows() { ctl list --name "$(stack_name "$1")*" --nested -o json; }

# The name `list --nested` prints for the nested stack below NAME, of the
# parent's resource RESOURCE.
heat_child_name() { # TAG RESOURCE
    heat_rows "$1" | jqr --arg r "$2" '.[] | select(.depth > 0 and .parent_resource == $r) | .name'
}

test_cli_heat_wait_names_the_failed_resource_and_its_reason() {
    local name out rc=0
    name=$(stack_name heat-fail)
    out=$(ctl submit "$name" "$DATA/stacks/fail.yaml" --wait --timeout 60 2>&1) || rc=$?
    assert_eq 1 "$rc" "submit --wait of a failing stack"
    assert_match "failed resources:" "$out" "the failures are listed"
    assert_match "broken +CREATE_FAILED: .*Test Resource failed" "$out" \
        "the failed resource, its action and its reason"
    [[ $out != *"    ok "* && $out != *"    child "* ]] ||
        fail "only the resource that failed is listed: $out"
}

test_cli_heat_wait_names_the_failure_inside_a_nested_stack() {
    local name out rc=0
    name=$(stack_name heat-nfail)
    out=$(ctl submit "$name" "$DATA/stacks/nested/broken.yaml" --wait --timeout 60 2>&1) || rc=$?
    assert_eq 1 "$rc" "submit --wait of a stack whose nested stack fails"
    assert_match "    inner +CREATE_FAILED: " "$out" "the nested-stack resource"
    assert_match "    inner/bad +CREATE_FAILED: .*Test Resource failed" "$out" \
        "the resource that failed inside it, by its path"
}

test_cli_heat_wait_names_the_failure_a_rollback_undid() {
    local name out rc=0
    name=$(stack_name heat-rb)
    out=$(ctl submit "$name" "$DATA/stacks/fail.yaml" --enable-rollback --wait --timeout 90 2>&1) ||
        rc=$?
    assert_eq 1 "$rc" "submit --wait of a failing stack rolled back"
    assert_match "ROLLBACK_COMPLETE" "$out" "the create was rolled back"
    assert_match "did not take effect" "$out" "the rollback is said"
    assert_match "broken +CREATE_FAILED: .*Test Resource failed" "$out" \
        "the failure the rollback undid, though its resource is deleted"
}

test_cli_heat_update_wait_names_the_failed_resource() {
    local name out rc=0
    name=$(stack_name heat-upd)
    ctl submit "$name" "$DATA/stacks/chain.yaml" --wait --timeout 60 >/dev/null
    out=$(ctl update "$name" "$DATA/stacks/fail.yaml" --wait --timeout 60 2>&1) || rc=$?
    assert_eq 1 "$rc" "update --wait to a failing template"
    assert_match "UPDATE_FAILED" "$out" "the update failed"
    assert_match "broken +CREATE_FAILED: .*Test Resource failed" "$out" \
        "the resource the update failed to create"
}

test_cli_heat_wait_masks_secrets_in_the_failures() {
    # A hidden value of the wrong type is refused at submit (Heat validates
    # properties with the parameters): the refusal quotes it masked.
    local name dir out rc=0 secret
    name=$(stack_name heat-secret)
    dir=$(heat_dir)
    secret="bad-${RUN_ID}-Qx"
    printf '%s\n' "heat_template_version: 2018-08-31" "parameters:" \
        "  n: {type: string, hidden: true}" "resources:" "  r:" \
        "    type: OS::Heat::RandomString" "    properties:" "      length: {get_param: n}" \
        >"$dir/t.yaml"
    printf 'parameters:\n  n: "%s"\n' "$secret" >"$dir/e.yaml"
    out=$(ctl submit "$name" "$dir/t.yaml" --param-file "$dir/e.yaml" --wait --timeout 60 2>&1) ||
        rc=$?
    assert_eq 2 "$rc" "the refusal's exit status"
    assert_match 'resources.r.properties.length: expected integer, got "\*\*\*\*\*\*"' "$out" \
        "the refusal, its value masked"
    [[ $out != *"$secret"* ]] || fail "the secret appears in submit's refusal: $out"
    # A RandomString's value (a secret only the engine knows) of the wrong
    # type: the resource fails with a reason quoting it, which --wait masks
    # as every reader does.
    printf '%s\n' "heat_template_version: 2018-08-31" "resources:" "  rand:" \
        "    type: OS::Heat::RandomString" "    properties: {length: 16}" "  r:" \
        "    type: OS::Heat::RandomString" "    properties:" \
        "      length: {get_attr: [rand, value]}" >"$dir/t.yaml"
    rc=0
    out=$(ctl submit "$name" "$dir/t.yaml" --wait --timeout 60 2>&1) || rc=$?
    rm -rf "$dir"
    assert_eq 1 "$rc" "the stack fails"
    assert_match 'r +CREATE_FAILED: .*got "\*\*\*\*\*\*"' "$out" "the failure, its value masked"
    secret=$(ctl resource-show "$name" rand --show-secrets -o json | jqr .attributes.value)
    [[ ${#secret} == 16 ]] || fail "the RandomString's value: '$secret'"
    [[ $out != *"$secret"* ]] || fail "the secret appears in submit --wait's output: $out"
}

test_cli_heat_nested_stack_is_named_as_list_prints_it() {
    local name child id out
    name=$(stack_name heat-nname)
    ctl submit "$name" "$DATA/stacks/nested/app.yaml" --wait --timeout 60 >/dev/null
    child=$(heat_child_name heat-nname web)
    id=$(heat_rows heat-nname | jqr '.[] | select(.depth > 0) | .id')
    assert_match "^$name-web-[0-9a-f]{12}$" "$child" "the nested stack's listed name"
    assert_eq "$id" "$(status_json "$child" | jqr .id)" "status by the nested name"
    assert_eq "disk vm" "$(ctl resources "$child" -o json | jqr '[.[].name] | sort | join(" ")')" \
        "resources by the nested name"
    assert_match "^vm-web-" "$(ctl output-show "$child" address -o json | jqr .output_value)" \
        "output-show by the nested name"
    ctl events "$child" -o json | jq -e 'length > 0' >/dev/null || fail "events by the nested name"
    ctl template-show "$child" >/dev/null || fail "template-show by the nested name"
    out=$(ctl watch "$child" --timeout 10) || fail "watch by the nested name"
    assert_match "CREATE_COMPLETE" "$out" "watch's final line"
}

test_cli_heat_nested_stack_two_levels_down_is_named_too() {
    local name tier leaf
    name=$(stack_name heat-ndeep)
    ctl submit "$name" "$DATA/stacks/nested/deep.yaml" --wait --timeout 60 >/dev/null
    tier=$(heat_rows heat-ndeep | jqr '.[] | select(.depth == 1) | .name')
    leaf=$(heat_rows heat-ndeep | jqr '.[] | select(.depth == 2) | .name' | head -n 1)
    [ -n "$leaf" ] || fail "no stack two levels down: $(heat_rows heat-ndeep)"
    assert_eq "$(heat_rows heat-ndeep | jqr --arg n "$leaf" '.[] | select(.name == $n) | .id')" \
        "$(status_json "$leaf" | jqr .id)" "status of the stack two levels down by name"
    assert_eq "$tier" "$(status_json "$tier" | jqr .name)" "the middle stack by name"
}

test_cli_heat_verbs_that_change_a_nested_stack_name_its_top_stack() {
    local name child id err rc=0
    name=$(stack_name heat-ndel)
    ctl submit "$name" "$DATA/stacks/nested/app.yaml" --wait --timeout 60 >/dev/null
    child=$(heat_child_name heat-ndel web)
    id=$(status_json "$child" | jqr .id)
    err=$(ctl delete "$child" 2>&1 >/dev/null) || rc=$?
    assert_eq 2 "$rc" "delete of a nested stack"
    assert_match "convergectl delete $name\$" "$err" "the top stack to delete"
    rc=0
    err=$(ctl delete "$id" 2>&1 >/dev/null) || rc=$?
    assert_eq 2 "$rc" "delete of a nested stack by id"
    assert_match "convergectl delete $name\$" "$err" "the top stack to delete (by id)"
    rc=0
    err=$(ctl update "$child" --existing 2>&1 >/dev/null) || rc=$?
    assert_eq 2 "$rc" "update of a nested stack"
    assert_match "convergectl update $name\$" "$err" "the top stack to update"
    assert_eq CREATE_COMPLETE "$(status_json "$child" | jqr .status)" "the nested stack untouched"
    assert_eq CREATE_COMPLETE "$(status_json "$name" | jqr .status)" "the top stack untouched"
}

test_cli_heat_list_nested_shows_os_heat_stack_children() {
    local name rows
    name=$(stack_name heat-hstack)
    ctl submit "$name" "$DATA/stacks/types/heat_stack.yaml" --wait --timeout 60 >/dev/null
    rows=$(heat_rows heat-hstack)
    assert_eq 2 "$(jq length <<<"$rows")" "the stack and its OS::Heat::Stack child"
    assert_eq "inner 1" "$(jqr '.[1] | "\(.parent_resource) \(.depth)"' <<<"$rows")" \
        "the child under its parent's resource"
    assert_eq "$(status_json "$name" | jqr .outputs.name)" "$(jqr '.[1].name' <<<"$rows")" \
        "listed by the name its stack_name attribute gives"
}

test_cli_heat_submit_disable_rollback_as_update_takes_it() {
    local name out rc=0
    name=$(stack_name heat-norb)
    ctl submit "$name" "$DATA/stacks/fail.yaml" --disable-rollback --wait --timeout 60 \
        >/dev/null 2>&1 || rc=$?
    assert_eq 1 "$rc" "the create fails"
    assert_eq "CREATE_FAILED false" "$(status_json "$name" | jqr '"\(.status) \(.rollback)"')" \
        "left CREATE_FAILED, rollback disabled"
    name=$(stack_name heat-norb2)
    rc=0
    out=$(ctl submit "$name" "$DATA/stacks/chain.yaml" --enable-rollback --disable-rollback 2>&1) ||
        rc=$?
    assert_eq 2 "$rc" "both flags"
    assert_match "contradict each other" "$out" "update's words"
    assert_eq 0 "$(stack_keys_of "$name")" "nothing stored"
}

test_cli_heat_status_parameters_are_text_as_heat_stack_show_gives_them() {
    local name dir p
    name=$(stack_name heat-params)
    dir=$(heat_dir)
    cat >"$dir/p.yaml" <<'YAML'
heat_template_version: 2018-08-31
parameters:
  word: {type: string}
  size: {type: number}
  ratio: {type: number, default: 2.50}
  big: {type: number, default: 1e16}
  on: {type: boolean}
  zones: {type: comma_delimited_list}
  meta: {type: json}
  secret: {type: string, hidden: true}
resources:
  r: {type: OS::Heat::None}
YAML
    ctl submit "$name" "$dir/p.yaml" -P word=hello -P size=42 -P on=yes -P zones=az1,az2 \
        -P 'meta={"k": [1, 2], "s": "x"}' -P secret=pw --wait --timeout 60 >/dev/null
    rm -rf "$dir"
    p=$(status_json "$name" | jq -c .parameters)
    assert_eq hello "$(jqr .word <<<"$p")" "a string"
    assert_eq '"42"' "$(jq -c .size <<<"$p")" "a number, as text"
    assert_eq '"2.5"' "$(jq -c .ratio <<<"$p")" "a real, as Python writes it"
    assert_eq '"1e+16"' "$(jq -c .big <<<"$p")" "a large real, as Python writes it"
    assert_eq '"True"' "$(jq -c .on <<<"$p")" "a boolean, as Python's str writes it"
    assert_eq '"az1,az2"' "$(jq -c .zones <<<"$p")" "a comma_delimited_list, joined with ','"
    assert_eq '{"k": [1, 2], "s": "x"}' "$(jqr .meta <<<"$p")" "json, as json.dumps writes it"
    assert_eq '******' "$(jqr .secret <<<"$p")" "a hidden one"
    assert_eq "$name" "$(jqr '."OS::stack_name"' <<<"$p")" "Heat's pseudo parameters too"
    assert_eq "$(status_json "$name" | jqr .id)" "$(jqr '."OS::stack_id"' <<<"$p")" "OS::stack_id"
    assert_eq pw "$(ctl status "$name" -o json --show-secrets | jqr .parameters.secret)" \
        "--show-secrets shows the hidden one"
}

test_cli_heat_a_limit_error_names_what_a_user_can_set() {
    local name out rc=0
    name=$(stack_name heat-limit)
    out=$(CONVERGE_MAX_RESOURCES=1 ctl submit "$name" "$DATA/stacks/chain.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "submit over a lowered limit"
    assert_match "exceeds the limit of 1 \(CONVERGE_MAX_RESOURCES, or the workers' --max-resources\)" \
        "$out" "the environment variable and the workers' option"
    [[ $out != *"(--max-resources"* ]] || fail "a --max-resources option of convergectl: $out"
    assert_eq 0 "$(stack_keys_of "$name")" "nothing stored"
    rc=0
    out=$(CONVERGE_MAX_RESOURCES=1 ctl validate "$DATA/stacks/chain.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "validate over a lowered limit"
    assert_match "\(CONVERGE_MAX_RESOURCES, or the workers' --max-resources\)" "$out" \
        "validate's message"
    rc=0
    out=$(CONVERGE_MAX_NESTING_DEPTH=1 ctl validate "$DATA/stacks/nested/deep.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "validate of a template nested too deep"
    assert_match "deeper than 1 levels \(the limit\), set by CONVERGE_MAX_NESTING_DEPTH, or the workers' --max-nesting-depth" \
        "$out" "the nesting depth's settings"
}

test_cli_heat_a_client_of_state_env_lists_failures_and_finds_nested_names() {
    # As STATE/env's client (Redis user converge-cli in a secured
    # deployment), not the operator the suite plays: what --wait and the
    # nested names read is what that user may read.
    local name out rc=0 child
    name=$(stack_name heat-client)
    out=$(
        # shellcheck disable=SC1091
        source "$STATE/env"
        "$CONVERGECTL" submit "$name" "$DATA/stacks/nested/broken.yaml" --wait --timeout 60 2>&1
    ) || rc=$?
    assert_eq 1 "$rc" "submit --wait of a failing stack as STATE/env's client"
    assert_match "    inner/bad +CREATE_FAILED: .*Test Resource failed" "$out" \
        "the failures, read as STATE/env's client"
    child=$(heat_child_name heat-client inner)
    out=$(
        # shellcheck disable=SC1091
        source "$STATE/env"
        "$CONVERGECTL" status "$child" -o json
    ) || fail "status by the nested name as STATE/env's client"
    assert_eq CREATE_FAILED "$(jqr .status <<<"$out")" "the nested stack's status"
}
