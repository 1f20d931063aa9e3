# shellcheck shell=bash
# convergectl topics against the deployment's Kafka (docs/kafka.md): up.sh
# created the topics with it; checking and creating again change nothing.

test_topics_check_finds_the_five_topics_led() {
    local out rc=0
    out=$(ctl topics -o json) || rc=$?
    assert_eq 0 "$rc" "exit code"
    assert_eq "converge.check converge.observe converge.check.express converge.observe.express converge.dead" \
        "$(jq -r '[.[].topic] | join(" ")' <<<"$out")" "topics"
    assert_eq true "$(jq 'all(.[]; .exists and .leaders and (.created | not))' <<<"$out")" \
        "every topic exists, led, none created by a check"
    assert_eq 1 "$(jq '.[] | select(.topic == "converge.dead") | .partitions' <<<"$out")" \
        "converge.dead partitions"
    assert_eq true "$(jq '[.[] | select(.topic != "converge.dead") | .partitions] | (unique | length) == 1 and .[0] > 1' <<<"$out")" \
        "the job topics have one partition count"
}

test_topics_create_again_creates_nothing_and_succeeds() {
    local out rc=0
    out=$(ctl topics --create -o json) || rc=$?
    assert_eq 0 "$rc" "exit code"
    assert_eq 0 "$(jq '[.[] | select(.created)] | length' <<<"$out")" "topics created"
}

test_topics_another_partition_count_is_named_with_exit_4() {
    local have want err rc=0
    have=$(ctl topics -o json | jq '.[0].partitions')
    want=$((have + 1))
    err=$(ctl topics --partitions "$want" 2>&1 >/dev/null) || rc=$?
    assert_eq 4 "$rc" "exit code"
    assert_match "converge.check has $have partition\(s\), not $want" "$err" message
    # --create does not change an existing topic either
    rc=0
    ctl topics --create --partitions "$want" >/dev/null 2>&1 || rc=$?
    assert_eq 4 "$rc" "exit code of --create"
    assert_eq "$have" "$(ctl topics -o json | jq '.[0].partitions')" "partitions after --create"
}

test_topics_unreachable_kafka_exits_3() {
    local err rc=0
    err=$(timeout 30 "$CONVERGECTL" --kafka 127.0.0.1:1 topics 2>&1) || rc=$?
    assert_eq 3 "$rc" "exit code"
    assert_match 'cannot reach Kafka at 127\.0\.0\.1:1' "$err" message
}

test_topics_bad_arguments_are_usage_errors() {
    local err rc=0
    err=$(ctl topics --partitions 0 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code for --partitions 0"
    assert_match 'expected a number from 1' "$err" message
    rc=0
    err=$(ctl topics --replication-factor 1 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code for a replication factor without --create"
    rc=0
    err=$(ctl topics --create --replication-factor 9 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code for more replicas than brokers"
    assert_match 'has [0-9]+ broker' "$err" message
}
