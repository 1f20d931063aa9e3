# convergectl's read-side verbs: list (filters, nested stacks hidden or
# shown), output-show, template-show, resource-show, nested stacks reached by
# their parent resource's physical id, why a stack in progress waits, and the
# exit codes for what does not exist.
# shellcheck shell=bash
# shellcheck disable=SC2016 # jq programs name their $arguments in single quotes

CLI_DATA="$DATA/stacks/cli"
CLI_P=${CONVERGE_PREFIX:-cv:}

# The rows of `list -o json` whose names start with this run's prefix for TAG.
cli_list() { # TAG [list options...]
    local tag=$1
    shift
    ctl list --name "$(stack_name "$tag")*" -o json "$@"
}

# The JSON of `status -o json` of NAME_OR_ID, with --stalled-after ARGS.
cli_waiting() { ctl status "$1" -o json "${@:2}" | jq -c .waiting; }

# True once the in_action entry of RESOURCE in NAME's status waits on KIND.
cli_waits_on() { # NAME RESOURCE KIND
    [ "$(cli_waiting "$1" | jqr --arg r "$2" '.in_action[]? | select(.resource == $r)
        | .waiting_on')" = "$3" ]
}

cli_stalled() { [ "$(ctl status "$1" -o json --stalled-after 0 | jqr .stalled)" = true ]; }

test_cli_list_shows_every_stack_with_status_progress_and_age() {
    local ok bad rows
    ok=$(stack_name cli-lista-ok)
    bad=$(stack_name cli-lista-bad)
    ctl submit "$ok" "$DATA/stacks/chain.yaml" --wait --timeout 60 >/dev/null
    ctl submit "$bad" "$DATA/stacks/fail.yaml" --wait --timeout 60 >/dev/null || true
    rows=$(cli_list cli-lista)
    assert_eq 2 "$(jq length <<<"$rows")" "both stacks listed"
    assert_eq "$bad $ok" "$(jqr '[.[].name] | join(" ")' <<<"$rows")" "listed by name"
    assert_eq CREATE_COMPLETE "$(jqr --arg n "$ok" '.[] | select(.name == $n) | .status' <<<"$rows")" \
        "status of the complete one"
    assert_eq CREATE_FAILED "$(jqr --arg n "$bad" '.[] | select(.name == $n) | .status' <<<"$rows")" \
        "status of the failed one"
    assert_eq true "$(jq --arg n "$ok" '.[] | select(.name == $n) | .done == .total and .total > 0' \
        <<<"$rows")" "progress: every node done"
    assert_eq true "$(jq 'all(.[]; .age >= 0 and .age < 600 and .depth == 0)' <<<"$rows")" "age"
    assert_match "^$ok +[0-9a-f]{16} +CREATE_COMPLETE +[0-9]+/[0-9]+ +[0-9.]+[smhd]" \
        "$(ctl list --name "$ok" | tail -n 1)" "text row"
}

test_cli_list_filters_by_status_and_name() {
    local ok bad
    ok=$(stack_name cli-listf-ok)
    bad=$(stack_name cli-listf-bad)
    ctl submit "$ok" "$DATA/stacks/chain.yaml" --wait --timeout 60 >/dev/null
    ctl submit "$bad" "$DATA/stacks/fail.yaml" --wait --timeout 60 >/dev/null || true
    assert_eq "$ok" "$(cli_list cli-listf --status CREATE_COMPLETE | jqr '[.[].name] | join(" ")')" \
        "--status CREATE_COMPLETE"
    assert_eq "$bad" "$(cli_list cli-listf --status failed | jqr '[.[].name] | join(" ")')" \
        "--status failed (a state, any case)"
    assert_eq 2 "$(cli_list cli-listf --status CREATE_FAILED,CREATE_COMPLETE | jq length)" \
        "--status as a comma list"
    assert_eq 2 "$(cli_list cli-listf --status CREATE_FAILED --status COMPLETE | jq length)" \
        "--status repeated"
    assert_eq 0 "$(cli_list cli-listf --status IN_PROGRESS | jq length)" "none in progress"
    assert_eq "$ok" "$(ctl list --name "$ok" -o json | jqr '[.[].name] | join(" ")')" \
        "--name without wildcards is the whole name"
}

test_cli_list_refuses_an_unknown_status() {
    local rc=0 err
    err=$(ctl list --status CRAETE_COMPLETE 2>&1 >/dev/null) || rc=$?
    assert_eq 2 "$rc" "exit code"
    assert_match "'CRAETE_COMPLETE' is not a stack status" "$err" "message names the word"
}

test_cli_list_hides_nested_stacks_unless_asked() {
    local name id rows
    name=$(stack_name cli-listn)
    ctl submit "$name" "$DATA/stacks/nested/app.yaml" --wait --timeout 60 >/dev/null
    id=$(status_json "$name" | jqr .id)
    assert_eq "$name" "$(cli_list cli-listn | jqr '[.[].name] | join(" ")')" "nested stack hidden"
    rows=$(cli_list cli-listn --nested)
    assert_eq 2 "$(jq length <<<"$rows")" "--nested shows the child"
    assert_eq "$name" "$(jqr '.[0].name' <<<"$rows")" "the parent first"
    assert_eq "$id web 1" "$(jqr '.[1] | "\(.parent) \(.parent_resource) \(.depth)"' <<<"$rows")" \
        "the child under its parent, naming it"
    assert_eq "$(ctl resources "$name" -o json | jqr '.[] | select(.name == "web") | .nested_stack_id')" \
        "$(jqr '.[1].id' <<<"$rows")" "the child is the web resource's nested stack"
}

test_cli_output_show_one_output_or_all() {
    local name out rc=0 err
    name=$(stack_name cli-outs)
    ctl submit "$name" "$CLI_DATA/waiting.yaml" -P wait=0 --wait --timeout 60 >/dev/null
    out=$(ctl output-show "$name" slow_value -o json)
    assert_eq slow "$(jqr .output_value <<<"$out")" "value"
    assert_eq slow_value "$(jqr .output_key <<<"$out")" "key"
    assert_eq "The slow resource's value." "$(jqr .description <<<"$out")" "description"
    assert_eq "No description given" "$(ctl output-show "$name" inner_value -o json | jqr .description)" \
        "Heat's text for an output without a description"
    out=$(ctl output-show "$name" --all -o json)
    assert_eq "slow_value=slow inner_value=member" \
        "$(jqr '[.[] | "\(.output_key)=\(.output_value)"] | join(" ")' <<<"$out")" "--all, in order"
    assert_match "output_value: +slow" "$(ctl output-show "$name" slow_value)" "text"
    err=$(ctl output-show "$name" nope 2>&1 >/dev/null) || rc=$?
    assert_eq 2 "$rc" "unknown output: exit code"
    assert_match "Specified output key nope not found." "$err" "unknown output: Heat's message"
    rc=0
    err=$(ctl output-show "$name" 2>&1 >/dev/null) || rc=$?
    assert_eq 2 "$rc" "neither output nor --all"
    assert_match "Either <OUTPUT NAME> or --all must be specified." "$err" "Heat's message"
    rc=0
    ctl output-show "$name" slow_value --all >/dev/null 2>&1 || rc=$?
    assert_eq 2 "$rc" "both an output and --all"
}

test_cli_template_show_prints_the_stored_template_which_submits_again() {
    local name again tpl file
    name=$(stack_name cli-tpl)
    ctl submit "$name" "$DATA/stacks/chain.yaml" --wait --timeout 60 >/dev/null
    tpl=$(ctl template-show "$name")
    assert_eq '["a","b","c","d"]' "$(jq -c '.resources | keys' <<<"$tpl")" "resources"
    assert_eq "$(redis hget "$CLI_P{$(status_json "$name" | jqr .id)}:def" template | jq -S .)" \
        "$(jq -S . <<<"$tpl")" "what is stored"
    assert_eq "$tpl" "$(ctl template-show "$name" -o json)" "-o json: the same document"
    again=$(stack_name cli-tpl-again)
    file=$(mktemp --suffix .json)
    printf '%s\n' "$tpl" >"$file"
    ctl submit "$again" "$file" --wait --timeout 60 >/dev/null
    rm -f "$file"
    assert_eq CREATE_COMPLETE "$(status_json "$again" | jqr .status)" "the printed template submits"
}

test_cli_resource_show_gives_properties_attributes_and_data() {
    local name doc rc=0 err
    name=$(stack_name cli-rshow)
    ctl submit "$name" "$CLI_DATA/waiting.yaml" -P wait=0 --wait --timeout 60 >/dev/null
    doc=$(ctl resource-show "$name" slow -o json)
    assert_eq "OS::Heat::TestResource CREATE_COMPLETE" "$(jqr '"\(.type) \(.status)"' <<<"$doc")" \
        "type and status"
    assert_eq slow "$(jqr .properties.value <<<"$doc")" "resolved properties"
    assert_eq 0 "$(jqr .properties.wait_secs <<<"$doc")" "a resolved parameter"
    assert_eq slow "$(jqr .attributes.output <<<"$doc")" "attributes"
    assert_eq false "$(jqr .data.fail <<<"$doc")" "type-private data"
    assert_eq "$(redis hget "$CLI_P{$(jqr .stack_id <<<"$doc")}:res:slow" physical_id)" \
        "$(jqr .physical_id <<<"$doc")" "physical id"
    assert_eq null "$(jqr .nested_stack_id <<<"$doc")" "no nested stack"
    assert_eq '["after"]' "$(jq -c .required_by <<<"$doc")" "required by"
    assert_eq '["inner","slow"]' "$(ctl resource-show "$name" after -o json | jq -c '.depends_on | sort')" \
        "depends on"
    assert_match "properties:" "$(ctl resource-show "$name" slow)" "text"
    err=$(ctl resource-show "$name" nope 2>&1 >/dev/null) || rc=$?
    assert_eq 2 "$rc" "unknown resource: exit code"
    assert_match "The Resource \(nope\) could not be found in Stack $name\." "$err" "Heat's message"
}

test_cli_nested_stacks_are_reachable_by_their_physical_id() {
    local name child doc
    name=$(stack_name cli-reach)
    ctl submit "$name" "$CLI_DATA/waiting.yaml" -P wait=0 --wait --timeout 60 >/dev/null
    child=$(ctl resources "$name" -o json | jqr '.[] | select(.name == "inner") | .nested_stack_id')
    assert_match '^[0-9a-f]{16}$' "$child" "nested_stack_id of a template resource"
    assert_eq "$child" "$(ctl resources "$name" -o json | jqr '.[] | select(.name == "inner") | .physical_id')" \
        "it is the resource's physical id"
    assert_eq null "$(ctl resources "$name" -o json | jqr '.[] | select(.name == "slow") | .nested_stack_id')" \
        "a plain resource has none"
    doc=$(status_json "$child")
    assert_eq "CREATE_COMPLETE $child inner" "$(jqr '"\(.status) \(.id) \(.parent_resource)"' <<<"$doc")" \
        "status by id"
    assert_eq slow "$(ctl resources "$child" -o json | jqr '.[].name')" "resources by id"
    assert_match "slow +CREATE_COMPLETE" "$(ctl events "$child")" "events by id"
    assert_eq member "$(ctl output-show "$child" value -o json | jqr .output_value)" "output-show by id"
    assert_eq member "$(ctl resource-show "$child" slow -o json | jqr .attributes.output)" \
        "resource-show by id"
    assert_eq "$child" "$(ctl resource-show "$name" inner -o json | jqr .nested_stack_id)" \
        "resource-show names the nested stack"
}

test_cli_group_members_are_reachable_by_their_physical_id() {
    local name group members m0
    name=$(stack_name cli-grp)
    ctl submit "$name" "$CLI_DATA/group.yaml" --wait --timeout 60 >/dev/null
    group=$(ctl resources "$name" -o json | jqr '.[] | select(.name == "group") | .nested_stack_id')
    assert_match '^[0-9a-f]{16}$' "$group" "the group's nested stack"
    members=$(ctl resources "$group" -o json)
    assert_eq "0 1" "$(jqr '[.[].name] | join(" ")' <<<"$members")" "members by the group's id"
    m0=$(jqr '.[] | select(.name == "0") | .nested_stack_id' <<<"$members")
    assert_match '^[0-9a-f]{16}$' "$m0" "a member that is a template resource has its nested stack"
    assert_eq "CREATE_COMPLETE 0" "$(status_json "$m0" | jqr '"\(.status) \(.parent_resource)"')" \
        "the member's stack by id"
    assert_eq member "$(ctl output-show "$m0" value -o json | jqr .output_value)" "its output"
    assert_eq 4 "$(cli_list cli-grp --nested | jq length)" "--nested lists every level"
}

test_cli_status_says_what_a_stack_in_progress_waits_on() {
    local name w slow inner child text
    name=$(stack_name cli-why)
    ctl submit "$name" "$CLI_DATA/waiting.yaml" -P wait=20 >/dev/null
    cv_wait_until 30 "slow to wait on its type" cli_waits_on "$name" slow type
    cv_wait_until 30 "inner to wait on its nested stack" cli_waits_on "$name" inner child_stack
    w=$(cli_waiting "$name")
    assert_eq acting "$(jqr .phase <<<"$w")" "phase"
    slow=$(jq -c '.in_action[] | select(.resource == "slow")' <<<"$w")
    assert_eq "CREATE OS::Heat::TestResource 20" "$(jqr '"\(.action) \(.type) \(.wait)"' <<<"$slow")" \
        "the action, its type and its wait"
    assert_eq true "$(jq '.left > 0 and .left <= 20 and .for >= 0 and (.left + .for - 20 | fabs) < 1' \
        <<<"$slow")" "time left and time spent add up to the wait"
    assert_match "the observer waits for OS::Heat::TestResource: its CREATE takes 20s" \
        "$(jqr .reason <<<"$slow")" "reason"
    inner=$(jq -c '.in_action[] | select(.resource == "inner")' <<<"$w")
    child=$(jqr .child.id <<<"$inner")
    assert_eq CREATE_IN_PROGRESS "$(jqr .child.status <<<"$inner")" "the child stack's status"
    assert_match "waits for nested stack $name-inner-[0-9a-f]+ \($child\): CREATE_IN_PROGRESS" \
        "$(jqr .reason <<<"$inner")" "the child stack named"
    assert_eq 1 "$(jqr .blocked <<<"$w")" "after waits for both"
    assert_eq false "$(ctl status "$name" -o json | jqr .stalled)" "observers keep it moving"
    # The child says what it waits on too.
    cv_wait_until 30 "the child's slow to wait on its type" cli_waits_on "$child" slow type
    text=$(ctl status "$name")
    assert_match "slow +CREATE for [0-9.]+s: the observer waits for OS::Heat::TestResource: its CREATE takes 20s \([0-9.]+s left\)" \
        "$text" "text: the resource, how long and why"
    assert_match "blocked: +1 waiting for others" "$text" "text: blocked"
    cv_wait_until 10 "a stall past --stalled-after 0" cli_stalled "$name"
    assert_match "status: +CREATE_IN_PROGRESS \(stalled: no progress for" \
        "$(ctl status "$name" --stalled-after 0)" "text: stalled"
}

# The exit code of convergectl ARGS..., its output dropped.
cli_rc() { local rc=0; ctl "$@" >/dev/null 2>&1 || rc=$?; echo "$rc"; }

test_cli_read_verbs_exit_2_for_what_does_not_exist() {
    local absent stack
    absent=$(stack_name cli-absent)
    for stack in "$absent" 0123456789abcdef; do
        assert_eq 2 "$(cli_rc status "$stack")" "status of $stack"
        assert_eq 2 "$(cli_rc resources "$stack")" "resources of $stack"
        assert_eq 2 "$(cli_rc events "$stack")" "events of $stack"
        assert_eq 2 "$(cli_rc template-show "$stack")" "template-show of $stack"
        assert_eq 2 "$(cli_rc output-show "$stack" --all)" "output-show of $stack"
        assert_eq 2 "$(cli_rc resource-show "$stack" x)" "resource-show of $stack"
    done
    assert_eq 2 "$(cli_rc status)" "status without a stack"
    assert_eq 2 "$(cli_rc resource-show "$absent")" "resource-show without a resource"
    assert_eq 2 "$(cli_rc list --bogus)" "an unknown option"
}

# SIGSTOP / SIGCONT to every engine of the deployment.
cli_engines_signal() { # SIG
    local f
    for f in "$STATE"/pids/engine-*.pid; do kill "-$1" "$(cat "$f")" 2>/dev/null || true; done
}

cli_complete() { [ "$(status_json "$1" | jqr .status)" = CREATE_COMPLETE ]; }

test_cli_status_says_a_traversal_waits_for_its_expansion() {
    local name w
    name=$(stack_name cli-expand)
    cli_engines_signal STOP
    trap 'cli_engines_signal CONT' EXIT
    ctl submit "$name" "$DATA/stacks/chain.yaml" >/dev/null
    w=$(cli_waiting "$name")
    assert_eq expanding "$(jqr .phase <<<"$w")" "no engine expanded it"
    assert_match "STACK job" "$(jqr .reason <<<"$w")" "reason"
    assert_eq 0 "$(jq '.in_action + .ready | length' <<<"$w")" "nothing acted on"
    assert_match "waiting: +the traversal's graph is not written yet" "$(ctl status "$name")" "text"
    cli_engines_signal CONT
    trap - EXIT
    cv_wait_until 60 "the stack to complete once the engines run" cli_complete "$name"
    assert_eq null "$(cli_waiting "$name")" "a settled stack waits on nothing"
}

# The reason `status` gives for RESOURCE of NAME matches REGEX.
cli_reason_matches() { # NAME RESOURCE REGEX
    [[ $(cli_waiting "$1" | jqr --arg r "$2" '.in_action[]? | select(.resource == $r) | .reason') =~ $3 ]]
}

test_cli_status_names_an_older_traversals_action_an_update_lets_end() {
    local name
    name=$(stack_name cli-older)
    ctl submit "$name" "$CLI_DATA/waiting.yaml" -P wait=20 >/dev/null
    cv_wait_until 30 "slow to wait on its type" cli_waits_on "$name" slow type
    ctl update "$name" --existing -P wait=1 >/dev/null
    cv_wait_until 30 "slow's reason to name the create of traversal 1" cli_reason_matches "$name" \
        slow "its CREATE takes 20s .* an action of traversal 1, which this traversal lets end"
    assert_eq UPDATE_IN_PROGRESS "$(status_json "$name" | jqr .status)" "the update waits"
}

cli_ready_has() { # NAME RESOURCE
    cli_waiting "$1" | jq -e --arg r "$2" 'any(.ready[]?; .resource == $r)' >/dev/null
}

test_cli_status_lists_a_resource_ready_that_no_engine_took() {
    local name
    name=$(stack_name cli-ready)
    ctl submit "$name" "$DATA/stacks/wait.yaml" >/dev/null
    cv_wait_until 30 "slow to wait on its type" cli_waits_on "$name" slow type
    cli_engines_signal STOP
    trap 'cli_engines_signal CONT' EXIT
    # The observer completes slow and publishes after_slow's CHECK job: no
    # engine runs to take it.
    cv_wait_until 30 "after_slow to be ready" cli_ready_has "$name" after_slow
    assert_match "no worker holds its lease" "$(cli_waiting "$name" | jqr '.ready[] |
        select(.resource == "after_slow") | .reason')" "reason"
    assert_match "ready: +.*after_slow" "$(ctl status "$name")" "text"
    cli_engines_signal CONT
    trap - EXIT
    cv_wait_until 60 "the stack to complete once the engines run" cli_complete "$name"
}

test_cli_status_names_the_worker_whose_lease_is_held() {
    local name id e
    name=$(stack_name cli-lease)
    ctl submit "$name" "$CLI_DATA/waiting.yaml" -P wait=20 >/dev/null
    cv_wait_until 30 "slow to wait on its type" cli_waits_on "$name" slow type
    id=$(status_json "$name" | jqr .id)
    # A lease as engines take them (<worker id>@<incarnation>:<n>), on the
    # resource that waits for the others: an action of it is under way as far
    # as Redis says. Status shows the worker id, without the incarnation.
    redis set "$CLI_P{$id}:lease:after" "engine-test-7@5f3c0a1b2c3d4-1f2e:42" PX 10000 >/dev/null
    e=$(cli_waiting "$name" | jq -c '.in_action[] | select(.resource == "after")')
    assert_eq "lease engine-test-7" "$(jqr '"\(.waiting_on) \(.worker)"' <<<"$e")" "the lease holder"
    assert_eq true "$(jq '.lease_ttl > 0 and .lease_ttl <= 10' <<<"$e")" "the lease's time left"
    assert_match "under the lease of worker engine-test-7" "$(jqr .reason <<<"$e")" "reason"
    redis del "$CLI_P{$id}:lease:after" >/dev/null
}
