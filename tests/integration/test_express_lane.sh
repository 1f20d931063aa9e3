# The express lane (docs/performance.md "Fairness"): the jobs of a small
# stack ride converge.check.express and converge.observe.express, which the
# workers take ahead of the other topics; a traversal of more than 200 nodes
# publishes its jobs in the bulk lane (converge.check), its STACK job aside,
# the jobs of several nodes to a message.
# shellcheck shell=bash

# lane_keys TOPIC ID: the keys of the messages of stack ID in TOPIC, one a line.
lane_keys() {
    timeout 30 kcat -C -b "$CONVERGE_KAFKA" -t "$1" -o beginning -e -q -f '%k\n' 2>/dev/null |
        grep -E "^$2(/|$)" || true
}

# lane_count TOPIC ID N: true once TOPIC holds N messages of stack ID (kcat
# reads the end of a topic a moment after the broker acknowledged it).
lane_count() {
    [ "$(lane_keys "$1" "$2" | wc -l)" -eq "$3" ]
}

test_express_lane_carries_a_small_stacks_jobs() {
    local name id
    name=$(stack_name express-small)
    ctl submit "$name" "$DATA/stacks/chain.yaml" --wait >/dev/null || fail "submit failed"
    id=$(ctl status "$name" -o json | jq -r .id)
    # A STACK job and a CHECK job for each of the four resources.
    cv_wait_until 30 "5 jobs of $id in converge.check.express" \
        lane_count converge.check.express "$id" 5 ||
        fail "converge.check.express holds $(lane_keys converge.check.express "$id" | wc -l) jobs of the stack, not 5"
    assert_eq 1 "$(lane_keys converge.check.express "$id" | grep -cx "$id")" "its STACK job"
    assert_eq 0 "$(lane_keys converge.check "$id" | wc -l)" "its jobs in converge.check"
    assert_eq 0 "$(lane_keys converge.observe "$id" | wc -l)" "its jobs in converge.observe"
    ctl delete "$name" --wait >/dev/null
}

test_express_lane_leaves_a_traversal_of_more_than_200_nodes_to_the_bulk_lane() {
    local name id tpl
    name=$(stack_name express-big)
    tpl=$(mktemp --suffix .yaml)
    "$DATA/../bench/gen_stack.sh" flat 201 >"$tpl"
    ctl submit "$name" "$tpl" --wait >/dev/null || fail "submit failed"
    rm -f "$tpl"
    id=$(ctl status "$name" -o json | jq -r .id)
    assert_eq 201 "$(ctl status "$name" -o json | jq .resources.CREATE_COMPLETE)" "resources created"
    # The 201 root jobs spread over 16 messages of 13 (docs/kafka.md).
    cv_wait_until 30 "16 messages of $id in converge.check" lane_count converge.check "$id" 16 ||
        fail "converge.check holds $(lane_keys converge.check "$id" | wc -l) messages of the stack, not 16"
    # Only the submit's STACK job took the express lane.
    assert_eq "$id" "$(lane_keys converge.check.express "$id")" "its jobs in converge.check.express"
    ctl delete "$name" --wait >/dev/null
}

test_express_lane_dead_letters_poison_and_carries_on() {
    local before new name
    before=$(ctl dead -o json | jq length)
    printf 'not msgpack on the express lane\n' | kcat -P -b "$CONVERGE_KAFKA" -t converge.check.express
    express_dead() { new=$(ctl dead -o json | jq length); [ "$new" -gt "$before" ]; }
    cv_wait_until 30 "a new dead letter" express_dead || fail "the poison message was not dead-lettered"
    name=$(stack_name express-after)
    ctl submit "$name" "$DATA/stacks/chain.yaml" --wait >/dev/null ||
        fail "a stack after the poison did not complete"
    ctl delete "$name" --wait >/dev/null
}
