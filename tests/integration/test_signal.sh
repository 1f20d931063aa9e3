# Signals (convergectl signal) and OS::Heat::WaitConditionHandle /
# OS::Heat::WaitCondition: released by `count` signals, failed by a FAILURE
# signal or a timeout with Heat's reasons, signals refused with exit 2 and
# Heat's messages, a signal id applied once, a signal durable while no
# engine runs.
# shellcheck shell=bash

SIG_PREFIX=${CONVERGE_PREFIX:-cv:}
SIG_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

sig_res_status() { # name resource
    ctl resources "$1" -o json | jq -r --arg r "$2" '.[] | select(.name == $r) | .status'
}

sig_res_status_is() { [ "$(sig_res_status "$1" "$2")" = "$3" ]; }

sig_stack_status_is() { [ "$(status_json "$1" | jqr .status)" = "$2" ]; }

# sig_submit NAME [-P k=v]...: the wait-condition stack, waiting for signals.
sig_submit() {
    local name=$1
    shift
    ctl submit "$name" "$DATA/stacks/wait_condition.yaml" "$@" >/dev/null
    cv_wait_until 30 "$name: wait_condition to wait" \
        sig_res_status_is "$name" wait_condition CREATE_IN_PROGRESS
}

sig_events() { ctl events "$1" -o json; }

# The time of the first event of RESOURCE with ACTION and STATUS, or null.
sig_event_time() { # events resource action status [nth]
    jq --arg r "$2" --arg a "$3" --arg s "$4" --argjson n "${5:-0}" \
        '[.[] | select(.resource == $r and .action == $a and .status == $s)][$n].time' <<<"$1"
}

sig_signal_events_are() { # name n
    [ "$(sig_events "$1" | jq '[.[] | select(.action == "SIGNAL")] | length')" -ge "$2" ]
}

sig_state_is() { # name resource signal-id state
    local id
    id=$(redis HGET "${SIG_PREFIX}stacks" "$1")
    [ "$(redis HGET "$SIG_PREFIX{$id}:signals:$2" "s:$3")" = "$4" ]
}

test_signal_wait_condition_completes_on_count_signals_at_once() {
    local name ev t_signal t_done s
    name=$(stack_name sig-count)
    sig_submit "$name" -P count=2
    ctl signal "$name" wait_handle >/dev/null
    ctl signal "$name" wait_handle --data '{"status": "SUCCESS", "id": "web", "data": "ready"}' \
        >/dev/null
    cv_wait_until 30 "$name to complete" sig_stack_status_is "$name" CREATE_COMPLETE
    s=$(status_json "$name")
    assert_eq '{"1": null, "web": "ready"}' "$(jqr .outputs.data <<<"$s")" "the data attribute"
    assert_match "^convergectl signal [0-9a-f]{16} wait_handle$" "$(jqr .outputs.curl_cli <<<"$s")" \
        "curl_cli"
    ev=$(sig_events "$name")
    assert_eq '"Signal: status:SUCCESS reason:Signal 2 received"' \
        "$(jq '[.[] | select(.action == "SIGNAL")][1].reason' <<<"$ev")" "the second SIGNAL event"
    assert_after "$ev" after wait_condition CREATE
    # The signal has the wait looked at at once, not on the observer's timer (up to 5 s).
    t_signal=$(sig_event_time "$ev" wait_handle SIGNAL COMPLETE 1)
    t_done=$(sig_event_time "$ev" wait_condition CREATE COMPLETE)
    awk -v a="$t_signal" -v b="$t_done" 'BEGIN { exit !(b >= a && b - a < 2.0) }' ||
        fail "wait_condition completed at $t_done, not promptly after the signal at $t_signal"
}

sig_waiting_signals() { # name: "received of wanted" of the wait condition, from status
    status_json "$1" | jq -r '.waiting.in_action[]? | select(.resource == "wait_condition")
        | "\(.waiting_on) \(.signals) of \(.signals_wanted)"'
}

sig_waiting_is() { [ "$(sig_waiting_signals "$1")" = "$2" ]; }

test_signal_status_says_how_many_signals_the_wait_has() {
    local name
    name=$(stack_name sig-status)
    sig_submit "$name" -P count=2
    cv_wait_until 30 "status to show the wait" sig_waiting_is "$name" "signal 0 of 2"
    ctl signal "$name" wait_handle --id one >/dev/null
    cv_wait_until 30 "the signal applied" sig_state_is "$name" wait_handle one applied
    assert_eq "signal 1 of 2" "$(sig_waiting_signals "$name")" "status after one signal"
    ctl signal "$name" wait_handle >/dev/null
    cv_wait_until 30 "$name to complete" sig_stack_status_is "$name" CREATE_COMPLETE
}

test_signal_failure_fails_the_wait_with_heats_reason() {
    local name s
    name=$(stack_name sig-fail)
    sig_submit "$name" -P count=3
    ctl signal "$name" wait_handle --data '{"status": "SUCCESS"}' >/dev/null
    ctl signal "$name" wait_handle --data '{"status": "FAILURE", "reason": "disk full"}' >/dev/null
    cv_wait_until 30 "$name to fail" sig_stack_status_is "$name" CREATE_FAILED
    s=$(status_json "$name")
    assert_eq "Resource CREATE failed: WaitConditionFailure: resources.wait_condition: disk full" \
        "$(jqr .reason <<<"$s")" "stack reason"
    assert_eq CREATE_FAILED "$(sig_res_status "$name" wait_condition)" "wait_condition"
    assert_eq INIT_COMPLETE "$(sig_res_status "$name" after)" "the resource after it"
}

test_signal_timeout_fails_the_wait_with_heats_reason() {
    local name rc=0 s
    name=$(stack_name sig-timeout)
    sig_submit "$name" -P count=2 -P timeout=3
    ctl signal "$name" wait_handle --data '{"reason": "first up"}' >/dev/null
    ctl watch "$name" --timeout 60 >/dev/null 2>&1 || rc=$?
    assert_eq CREATE_FAILED "$(status_json "$name" | jqr .status)" "status after the timeout"
    s=$(status_json "$name")
    assert_eq \
        "Resource CREATE failed: WaitConditionTimeout: resources.wait_condition: 1 of 2 received - first up" \
        "$(jqr .reason <<<"$s")" "stack reason"
    [ "$rc" != 0 ] || fail "watch of a failed stack exited 0"
}

test_signal_to_what_does_not_exist_exits_2() {
    local name out rc
    name=$(stack_name sig-unknown)
    sig_submit "$name"
    rc=0; out=$(ctl signal "$name" nothere 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code for an unknown resource"
    assert_eq "convergectl: The Resource (nothere) could not be found in Stack $name." "$out" message
    rc=0; out=$(ctl signal "$name" after 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code for a resource not created yet"
    assert_eq "convergectl: The Resource (after) is not available." "$out" message
    rc=0; out=$(ctl signal "$(stack_name sig-no-such-stack)" wait_handle 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code for an unknown stack"
    assert_match "The Stack \(.*sig-no-such-stack\) could not be found\." "$out" message
    rc=0; out=$(ctl signal "$name" wait_handle --data '{"status": "DONE"}' 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code for data the handle refuses"
    assert_eq "convergectl: ValueError: resources.wait_handle: Metadata format invalid" "$out" \
        message
    ctl signal "$name" wait_handle >/dev/null
    ctl signal "$name" wait_handle >/dev/null
    cv_wait_until 30 "$name to complete" sig_stack_status_is "$name" CREATE_COMPLETE
    assert_eq 2 "$(sig_events "$name" | jq '[.[] | select(.action == "SIGNAL")] | length')" \
        "SIGNAL events: the refused signals left none"
}

test_signal_to_a_type_without_signals_exits_2() {
    local name out rc
    name=$(stack_name sig-nosignal)
    sig_submit "$name" -P count=1
    rc=0; out=$(ctl signal "$name" wait_condition 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code for a WaitCondition"
    assert_eq "convergectl: resources.wait_condition: signal is not supported for resource." \
        "$out" message
    ctl signal "$name" wait_handle >/dev/null
    cv_wait_until 30 "$name to complete" sig_stack_status_is "$name" CREATE_COMPLETE
    rc=0; out=$(ctl signal "$name" after --data '{"x": 1}' 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code for an OS::Heat::Value"
    assert_eq "convergectl: resources.after: signal is not supported for resource." "$out" message
    rc=0; out=$(ctl signal "$name" after --data '{"unset_hook": "pre-create"}' 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code for a hook's clear (hooks are not built yet)"
    assert_eq "convergectl: resources.after: clearing a hook by a signal is not supported yet" \
        "$out" message
}

test_signal_duplicate_id_is_applied_once() {
    local name out ev t_third t_done
    name=$(stack_name sig-dup)
    sig_submit "$name" -P count=2
    ctl signal "$name" wait_handle --id first --data '{"id": "a"}' >/dev/null
    out=$(ctl signal "$name" wait_handle --id first --data '{"id": "a"}')
    assert_match "^signal first to wait_handle of stack .* was accepted before" "$out" \
        "the second send of signal 'first'"
    # Heat's own rule too: another signal with the data id "a" replaces the first.
    ctl signal "$name" wait_handle --id second --data '{"id": "a", "data": "again"}' >/dev/null
    cv_wait_until 30 "both signals applied" sig_state_is "$name" wait_handle second applied
    sig_state_is "$name" wait_handle first applied || fail "signal 'first' not applied"
    ctl signal "$name" wait_handle --id third --data '{"id": "b"}' >/dev/null
    cv_wait_until 30 "$name to complete" sig_stack_status_is "$name" CREATE_COMPLETE
    ev=$(sig_events "$name")
    assert_eq 3 "$(jq '[.[] | select(.action == "SIGNAL")] | length' <<<"$ev")" "SIGNAL events"
    t_third=$(sig_event_time "$ev" wait_handle SIGNAL COMPLETE 2)
    t_done=$(sig_event_time "$ev" wait_condition CREATE COMPLETE)
    awk -v a="$t_third" -v b="$t_done" 'BEGIN { exit !(b >= a) }' ||
        fail "wait_condition completed at $t_done, before the third signal at $t_third"
    assert_eq '{"a": "again", "b": null}' "$(status_json "$name" | jqr .outputs.data)" data
}

# An update arriving while the wait condition waits lets its create finish
# (Heat's retrigger: the new traversal watches it), and a signal ends the
# wait at once for that watching traversal too, which then checks the node
# again: the new count updates the wait in place, which waits for one more.
test_signal_ends_a_wait_an_update_is_watching() {
    local name ev t_signal t_done
    name=$(stack_name sig-update)
    sig_submit "$name" -P count=1
    ctl update "$name" --existing -P count=2 -P label=updated >/dev/null
    cv_wait_until 30 "$name to be updating" sig_stack_status_is "$name" UPDATE_IN_PROGRESS
    assert_eq CREATE_IN_PROGRESS "$(sig_res_status "$name" wait_condition)" "the wait, still waiting"
    ctl signal "$name" wait_handle >/dev/null
    cv_wait_until 30 "the wait to be updated to count 2" \
        sig_res_status_is "$name" wait_condition UPDATE_IN_PROGRESS
    ev=$(sig_events "$name")
    t_signal=$(sig_event_time "$ev" wait_handle SIGNAL COMPLETE)
    t_done=$(sig_event_time "$ev" wait_condition CREATE COMPLETE)
    awk -v a="$t_signal" -v b="$t_done" 'BEGIN { exit !(b >= a && b - a < 2.0) }' ||
        fail "wait_condition completed at $t_done, not promptly after the signal at $t_signal"
    assert_eq UPDATE_IN_PROGRESS "$(status_json "$name" | jqr .status)" "the stack, one signal short"
    ctl signal "$name" wait_handle >/dev/null
    cv_wait_until 30 "$name to be updated" sig_stack_status_is "$name" UPDATE_COMPLETE
    assert_eq UPDATE_COMPLETE "$(sig_res_status "$name" wait_condition)" "the wait"
    assert_eq updated "$(ctl resources "$name" -o json |
        jq -r '.[] | select(.name == "after") | .attributes.value')" "the resource after it"
}

# The engines of the deployment, stopped and started again by the test.
sig_engines() { find "$STATE/pids" -name 'engine-*.pid' -exec basename {} .pid \; | sort; }

sig_service() { # action name
    "$SIG_ROOT/deploy/local/service.sh" --dir "$STATE" --build-dir "$(dirname "$CONVERGECTL")" \
        "$1" "$2" >/dev/null 2>&1
}

test_signal_sent_while_no_engine_runs_is_applied_once_one_starts() {
    local name engines e id out
    name=$(stack_name sig-durable)
    sig_submit "$name" -P count=1
    engines=$(sig_engines)
    for e in $engines; do sig_service stop "$e" || fail "could not stop $e"; done
    # shellcheck disable=SC2064 # the engines are known now
    trap "for e in $engines; do '$SIG_ROOT/deploy/local/service.sh' --dir '$STATE' \
        --build-dir '$(dirname "$CONVERGECTL")' start \$e >/dev/null 2>&1; done" EXIT
    out=$(ctl signal "$name" wait_handle --id durable)
    assert_match "^signal durable sent" "$out" "the signal is accepted with no engine"
    sig_state_is "$name" wait_handle durable pending || fail "the signal is not stored pending"
    assert_eq CREATE_IN_PROGRESS "$(sig_res_status "$name" wait_condition)" "wait before the start"
    for e in $engines; do sig_service start "$e" || fail "could not start $e"; done
    trap - EXIT
    cv_wait_until 60 "$name to complete" sig_stack_status_is "$name" CREATE_COMPLETE
    sig_state_is "$name" wait_handle durable applied || fail "the signal is not applied"
    id=$(redis HGET "${SIG_PREFIX}stacks" "$name")
    assert_eq 1 "$(redis HGET "$SIG_PREFIX{$id}:res:wait_handle" data | jq '.signals | length')" \
        "signals the handle kept"
}
