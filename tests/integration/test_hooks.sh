# Hooks (Heat's breakpoints): a resource that the environment's registry
# stops with pre-create / pre-update / pre-delete pauses before that action,
# with Heat's events, shows in status, and goes on once `hook-clear` clears
# the hook; a clear of a hook that is not set is refused.
# shellcheck shell=bash

HOOK_DATA="$DATA/stacks/env"

# waiting_on NAME RESOURCE HOOK: status lists RESOURCE paused on HOOK
waiting_on() {
    status_json "$1" | jq -e --arg r "$2" --arg h "$3" \
        'any(.waiting_hooks[]; .resource == $r and .hook == $h)' >/dev/null
}

# has_event NAME RESOURCE REASON
has_event() {
    ctl events "$1" -o json | jq -e --arg r "$2" --arg m "$3" \
        'any(.[]; .resource == $r and .reason == $m)' >/dev/null
}

stack_status_is() { [ "$(jqr .status <<<"$(status_json "$1")")" = "$2" ]; }

# gone_clearing_hooks NAME: the stack is gone; else clears the hooks it
# waits on (its delete may meet pre-delete) and says not yet
gone_clearing_hooks() {
    local r
    ctl status "$1" >/dev/null 2>&1 || return 0
    for r in $(status_json "$1" | jq -r '.waiting_hooks[].resource'); do
        ctl hook-clear "$1" "$r" >/dev/null 2>&1 || true
    done
    return 1
}

# hook_cleanup NAME (an EXIT trap): a test that failed must not leave a
# stack paused for ever, whose paused nodes' jobs the reaper keeps
# publishing under the other tests' feet.
hook_cleanup() {
    ctl delete "$1" >/dev/null 2>&1 || true
    cv_wait_until 30 "$1 to be deleted" gone_clearing_hooks "$1" || true
}

# hook_guard NAME: hook_cleanup NAME when the test ends, however it ends
# (each test runs in a subshell of its own)
hook_guard() {
    HOOK_STACK=$1
    trap 'hook_cleanup "$HOOK_STACK"' EXIT
}

test_hook_pre_create_pauses_until_cleared_with_heats_events() {
    local name e
    name=$(stack_name hookcreate)
    hook_guard "$name"
    ctl submit "$name" "$HOOK_DATA/hooks.yaml" --param-file "$HOOK_DATA/hooks_env.yaml" >/dev/null
    cv_wait_until 30 "first to pause on pre-create" waiting_on "$name" first pre-create
    has_event "$name" first "CREATE paused until Hook pre-create is cleared" ||
        fail "no pause event"
    e=$(ctl events "$name" -o json)
    assert_eq 0 "$(jq '[.[] | select(.resource == "first" and .action == "CREATE")] | length' <<<"$e")" \
        "first not created while paused"
    assert_eq INIT_COMPLETE "$(jq -r '.[] | select(.resource == "first") | .action + "_" + .status' <<<"$e")" \
        "the pause event names the resource's state before its create"
    assert_eq CREATE_IN_PROGRESS "$(jqr .status <<<"$(status_json "$name")")" "stack waits"
    ctl hook-clear "$name" first >/dev/null
    cv_wait_until 30 "the stack to complete" stack_status_is "$name" CREATE_COMPLETE
    e=$(ctl events "$name" -o json)
    has_event "$name" first "Hook pre-create is cleared" || fail "no clear event"
    # Heat's order: paused, cleared, then the create.
    [ "$(jq '[.[] | .reason] | index("Hook pre-create is cleared")' <<<"$e")" -lt \
        "$(event_index "$e" first CREATE IN_PROGRESS)" ] || fail "created before the clear"
    assert_eq "[]" "$(status_json "$name" | jq -c .waiting_hooks)" "nothing waits any more"
}

test_hook_clear_of_a_hook_not_set_is_refused() {
    local name out rc=0
    name=$(stack_name hookrefuse)
    hook_guard "$name"
    ctl submit "$name" "$HOOK_DATA/hooks.yaml" --param-file "$HOOK_DATA/hooks_env.yaml" >/dev/null
    cv_wait_until 30 "first to pause on pre-create" waiting_on "$name" first pre-create
    out=$(ctl hook-clear "$name" first --hook pre-update 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code"
    assert_match 'The "pre-update" hook is not defined on resource "first"' "$out" message
    rc=0
    out=$(ctl hook-clear "$name" second --hook pre-create 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code for a resource not waiting"
    waiting_on "$name" first pre-create || fail "the refused clear changed the pause"
    ctl hook-clear "$name" first --hook pre-create >/dev/null
    cv_wait_until 30 "the stack to complete" stack_status_is "$name" CREATE_COMPLETE
    rc=0
    ctl hook-clear "$name" first --hook pre-create >/dev/null 2>&1 || rc=$?
    assert_eq 2 "$rc" "a second clear of the same hook is refused"
}

test_hook_wildcard_pre_update_and_pre_delete_pause_the_resource() {
    local name
    name=$(stack_name hookupdate)
    hook_guard "$name"
    ctl submit "$name" "$HOOK_DATA/hooks.yaml" --param-file "$HOOK_DATA/hooks_env.yaml" >/dev/null
    cv_wait_until 30 "first to pause on pre-create" waiting_on "$name" first pre-create
    ctl hook-clear "$name" first >/dev/null
    cv_wait_until 30 "the create to complete" stack_status_is "$name" CREATE_COMPLETE
    ctl update "$name" "$HOOK_DATA/hooks.yaml" --existing -P value=two >/dev/null
    cv_wait_until 30 "second (*ond) to pause on pre-update" waiting_on "$name" second pre-update
    has_event "$name" second "UPDATE paused until Hook pre-update is cleared" ||
        fail "no pause event"
    assert_eq one "$(status_json "$name" | jqr .outputs.second)" "not updated while paused"
    ctl hook-clear "$name" second --hook pre-update >/dev/null
    cv_wait_until 30 "the update to complete" stack_status_is "$name" UPDATE_COMPLETE
    assert_eq two "$(status_json "$name" | jqr .outputs.second)" "updated after the clear"
    ctl delete "$name" >/dev/null
    cv_wait_until 30 "second to pause on pre-delete" waiting_on "$name" second pre-delete
    has_event "$name" second "DELETE paused until Hook pre-delete is cleared" ||
        fail "no pause event"
    ctl hook-clear "$name" second >/dev/null
    cv_wait_until 30 "the stack to be deleted" \
        bash -c "! '$CONVERGECTL' status '$name' >/dev/null 2>&1"
}

test_hook_on_a_nested_resource_is_cleared_by_its_path() {
    local name
    name=$(stack_name hooknested)
    hook_guard "$name"
    ctl submit "$name" "$HOOK_DATA/hooks_nested.yaml" \
        --param-file "$HOOK_DATA/hooks_nested_env.yaml" >/dev/null
    cv_wait_until 30 "thing/r to pause on pre-create" waiting_on "$name" thing/r pre-create
    ctl hook-clear "$name" thing/r >/dev/null
    cv_wait_until 30 "the stack to complete" stack_status_is "$name" CREATE_COMPLETE
    assert_eq "hi nested!" "$(status_json "$name" | jqr .outputs.greeting)" output
}

test_hook_on_a_group_member_by_path_pauses_that_member_only() {
    local name env
    name=$(stack_name hookgroup)
    hook_guard "$name"
    env=$(mktemp --suffix -hooks.yaml)
    printf 'resource_registry:\n  resources:\n    group:\n      "1":\n        hooks: pre-create\n' >"$env"
    ctl submit "$name" "$HOOK_DATA/group.yaml" --param-file "$HOOK_DATA/group_env.yaml" \
        --param-file "$env" >/dev/null
    rm -f "$env"
    cv_wait_until 30 "member 1 to pause on pre-create" waiting_on "$name" group/1 pre-create
    assert_eq 1 "$(status_json "$name" | jq '.waiting_hooks | length')" "member 0 does not wait"
    ctl hook-clear "$name" group/1 --hook pre-create >/dev/null
    cv_wait_until 30 "the stack to complete" stack_status_is "$name" CREATE_COMPLETE
    assert_eq '["hello srv-0","hello srv-1"]' "$(status_json "$name" | jq -c .outputs.greetings)" \
        outputs
}

# clear_when NAME RESOURCE HOOK: waits for the pause, then clears it
clear_when() {
    cv_wait_until 30 "$2 to pause on $3" waiting_on "$1" "$2" "$3"
    ctl hook-clear "$1" "$2" --hook "$3" >/dev/null
}

test_hook_replacement_pauses_on_update_create_then_the_old_versions_delete() {
    local name e before
    name=$(stack_name hookreplace)
    hook_guard "$name"
    ctl submit "$name" "$HOOK_DATA/hooks_replace.yaml" \
        --param-file "$HOOK_DATA/hooks_replace_env.yaml" >/dev/null
    clear_when "$name" rand pre-create
    cv_wait_until 30 "the create to complete" stack_status_is "$name" CREATE_COMPLETE
    before=$(ctl resources "$name" -o json | jq -r '.[] | select(.name == "rand") | .physical_id')
    ctl update "$name" "$HOOK_DATA/hooks_replace.yaml" --existing -P length=12 >/dev/null
    clear_when "$name" rand pre-update
    clear_when "$name" rand pre-create
    clear_when "$name" rand pre-delete
    cv_wait_until 30 "the update to complete" stack_status_is "$name" UPDATE_COMPLETE
    e=$(ctl events "$name" -o json)
    # Heat's order: the update pauses, the replacement's create pauses, the
    # old version's delete pauses, each action only after its clear.
    local got
    got=$(jq -r '[.[] | select(.resource == "rand")
                 | .action + "_" + .status + " " + .reason]
                 | .[(index("CREATE_COMPLETE UPDATE paused until Hook pre-update is cleared")):]
                 | join("; ")' <<<"$e")
    assert_eq "CREATE_COMPLETE UPDATE paused until Hook pre-update is cleared; CREATE_COMPLETE Hook pre-update is cleared; UPDATE_IN_PROGRESS state changed; UPDATE_COMPLETE The Resource rand requires replacement.; INIT_COMPLETE CREATE paused until Hook pre-create is cleared; INIT_COMPLETE Hook pre-create is cleared; CREATE_IN_PROGRESS state changed; CREATE_COMPLETE state changed; CREATE_COMPLETE DELETE paused until Hook pre-delete is cleared; CREATE_COMPLETE Hook pre-delete is cleared; DELETE_IN_PROGRESS state changed; DELETE_COMPLETE state changed" \
        "$got" "events of the replacement"
    assert_eq 1 "$(jq --arg p "$before" '[.[] | select(.resource == "rand" and .action == "DELETE" and .status == "COMPLETE" and .physical_id == $p)] | length' <<<"$e")" \
        "the old version was deleted after the clear"
}

test_hook_cleared_by_a_signal_with_unset_hook() {
    local name out rc=0
    name=$(stack_name hooksignal)
    hook_guard "$name"
    ctl submit "$name" "$HOOK_DATA/hooks.yaml" --param-file "$HOOK_DATA/hooks_env.yaml" >/dev/null
    cv_wait_until 30 "first to pause on pre-create" waiting_on "$name" first pre-create
    out=$(ctl signal "$name" first --data '{"unset_hook": "pre-update"}' 2>&1) || rc=$?
    assert_eq 2 "$rc" "a signal clearing a hook not set is refused"
    assert_match 'The "pre-update" hook is not defined on resource "first"' "$out" message
    rc=0
    out=$(ctl signal "$name" first --data '{"unset_hook": "pre-sleep"}' 2>&1) || rc=$?
    assert_eq 2 "$rc" "an invalid hook type is refused"
    assert_match 'Invalid hook type "pre-sleep" for resource "first"' "$out" message
    ctl signal "$name" first --data '{"unset_hook": "pre-create"}' >/dev/null
    cv_wait_until 30 "the stack to complete" stack_status_is "$name" CREATE_COMPLETE
    has_event "$name" first "Hook pre-create is cleared" || fail "no clear event"
}

HOOK_PREFIX=${CONVERGE_PREFIX:-cv:}

# stack_field ID FIELD: a field of the stack's hash
stack_field() { redis HGET "$HOOK_PREFIX{$1}:stack" "$2"; }

# field_moved ID FIELD OLD: the field is no longer OLD
field_moved() { [ "$(stack_field "$1" "$2")" != "$3" ]; }

# A resource paused on a hook is not stalled: once the stall threshold
# (10 s) has passed, the reaper looked at the stack (its `progress` moved)
# and re-queued nothing — no CHECK job that would take the resource's lease
# only to find it waiting again; the stack is not marked reaped.
test_hook_paused_resource_is_left_alone_by_the_reaper() {
    local name id progress
    name=$(stack_name hookreap)
    hook_guard "$name"
    ctl submit "$name" "$HOOK_DATA/hooks.yaml" --param-file "$HOOK_DATA/hooks_env.yaml" >/dev/null
    cv_wait_until 30 "first to pause on pre-create" waiting_on "$name" first pre-create
    id=$(jqr .id <<<"$(status_json "$name")")
    progress=$(stack_field "$id" progress)
    cv_wait_until 40 "the reaper to look at the paused stack" field_moved "$id" progress "$progress"
    assert_eq "" "$(stack_field "$id" reaped)" "nothing re-queued for a resource paused on a hook"
    waiting_on "$name" first pre-create || fail "first no longer paused"
    assert_eq false "$(jqr .stalled <<<"$(status_json "$name")")" "a paused stack is not stalled"
    ctl hook-clear "$name" first >/dev/null
    cv_wait_until 30 "the stack to complete" stack_status_is "$name" CREATE_COMPLETE
}

# The reaper stays the safety net of a clear: a hook cleared (as
# hook_clear.lua records it) whose CHECK job was lost is re-queued, and the
# resource acts.
test_hook_cleared_whose_job_was_lost_is_requeued_by_the_reaper() {
    local name id entry
    name=$(stack_name hooklost)
    hook_guard "$name"
    ctl submit "$name" "$HOOK_DATA/hooks.yaml" --param-file "$HOOK_DATA/hooks_env.yaml" >/dev/null
    cv_wait_until 30 "first to pause on pre-create" waiting_on "$name" first pre-create
    id=$(jqr .id <<<"$(status_json "$name")")
    entry=$(redis HGET "$HOOK_PREFIX{$id}:hooks" first)
    redis HSET "$HOOK_PREFIX{$id}:hooks" first \
        "$(jq -c 'del(.waiting) | .cleared = ["pre-create"]' <<<"$entry")" >/dev/null
    cv_wait_until 40 "the reaper to complete the stack" stack_status_is "$name" CREATE_COMPLETE
    [ -n "$(stack_field "$id" reaped)" ] || fail "the stack does not say it was reaped"
}
