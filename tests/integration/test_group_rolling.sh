# OS::Heat::ResourceGroup's update_policy rolling_update: a changed
# resource_def reaches the members max_batch_size at a time, highest names
# first, a batch beginning pause_time after the one before it completed
# (timing read from the group's nested stack's events); a no-op update
# afterwards acts on nothing.
# shellcheck shell=bash

ROLLING_TEMPLATE="$DATA/stacks/types/group_rolling.yaml"
RP=${CONVERGE_PREFIX:-cv:}

# "ms resource action status" of stack ID's events, oldest first.
rolling_events() { event_lines "$1"; }

# The first ms of EVENTS' member in BATCH ("2|3") at STATUS, or the last with "last".
rolling_ms() { # events batch status [last]
    awk -v re="^($2)\$" -v s="$3" -v last="${4:-}" \
        '$2 ~ re && $4 == s { t = $1; if (!last) { print t; exit } } END { if (last) print t }' \
        <<<"$1"
}

test_group_rolling_update_rolls_out_in_batches_with_a_pause() {
    local name id child events before after
    name=$(stack_name group-rolling)
    ctl submit "$name" "$ROLLING_TEMPLATE" --wait --timeout 60 >/dev/null
    id=$(status_json "$name" | jqr .id)
    child=$(redis hget "$RP{$id}:res:group" physical_id)
    before=$(rolling_events "$child" | wc -l)
    ctl update "$name" "$ROLLING_TEMPLATE" -P label=v2 --wait --timeout 60 >/dev/null
    assert_eq UPDATE_COMPLETE "$(status_json "$name" | jqr .status)" "the update"
    assert_eq '["v2-0","v2-1","v2-2","v2-3"]' "$(status_json "$name" | jq -c .outputs.values)" \
        "every member has the new definition"
    # The members' events of the update only (those of the create come first).
    events=$(rolling_events "$child" | tail -n +$((before + 1)) | grep -E '^[0-9]+ [0-3] ')
    # Never more than max_batch_size (2) members in action at once, and 2 at some time.
    awk '$4 == "IN_PROGRESS" { n++; if (n > max) max = n } $4 == "COMPLETE" { n-- }
         END { exit !(max == 2) }' <<<"$events" ||
        fail "members in action at once were not at most 2: $events"
    # Highest names first: 3,2 | 1,0, batch 2 beginning 1 s (pause_time) after batch 1.
    local done32 begin10
    done32=$(rolling_ms "$events" "3|2" COMPLETE last)
    begin10=$(rolling_ms "$events" "1|0" IN_PROGRESS)
    if [ -z "$done32" ] || [ -z "$begin10" ]; then
        fail "no update events of the members: $events"
    fi
    [ "$(rolling_ms "$events" "1|0" COMPLETE)" -gt "$done32" ] || fail "batch 1,0 ended first"
    [ $((begin10 - done32)) -ge 1000 ] ||
        fail "batch 1,0 began $((begin10 - done32)) ms after batch 3,2 completed"
    # A no-op update touches nothing: no event in the group's nested stack.
    after=$(redis xlen "$RP{$child}:events")
    ctl update "$name" "$ROLLING_TEMPLATE" -P label=v2 --wait --timeout 60 >/dev/null
    assert_eq UPDATE_COMPLETE "$(status_json "$name" | jqr .status)" "the no-op update"
    assert_eq "$after" "$(redis xlen "$RP{$child}:events")" "events of the nested stack"
    assert_eq UPDATE_COMPLETE "$(redis hget "$RP{$id}:res:group" status)" "the group's status"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}

test_group_rolling_update_refuses_pauses_beyond_the_timeout() {
    local name tpl
    name=$(stack_name group-rolling-timeout)
    tpl=$(mktemp --suffix=.yaml)
    sed -e 's/pause_time: 1}/pause_time: 4000}/' "$ROLLING_TEMPLATE" >"$tpl"
    ctl submit "$name" "$tpl" --wait --timeout 60 >/dev/null
    ctl update "$name" "$tpl" -P label=v2 --wait --timeout 60 >/dev/null 2>&1 || true
    rm -f "$tpl"
    assert_eq UPDATE_FAILED "$(status_json "$name" | jqr .status)" "the update"
    assert_match "The current update policy will result in stack update timeout." \
        "$(ctl events "$name" -o json | jq -r '[.[] | select(.resource == "group")][-1].reason')" \
        "the group's reason"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}
