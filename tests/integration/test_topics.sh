# convergectl topics: checks the deployment's Kafka topics (converge.check,
# converge.observe, converge.dead), a second --create changes nothing, a
# partition count other than the deployment's is named, and an unreachable
# broker is exit 3 within a bound. The deployment's topics are made by
# up.sh through `convergectl topics --create`.
# shellcheck shell=bash
# shellcheck disable=SC2016 # jq programs name their $arguments in single quotes

# Seconds since the epoch, with fractions, for the bound on an unreachable broker.
topics_now() { date +%s.%N; }

test_topics_check_lists_the_three_topics_with_leaders() {
    local out rc=0
    out=$(ctl topics -o json) || rc=$?
    assert_eq 0 "$rc" "exit status of the check"
    assert_eq "converge.check converge.observe converge.dead" \
        "$(jqr '[.[].topic] | join(" ")' <<<"$out")" "the topics, in order"
    assert_eq true "$(jq 'all(.[]; .exists and .leaders and (.created | not))' <<<"$out")" \
        "every topic exists, led, not created by a check"
    assert_eq 1 "$(jqr '.[2].partitions' <<<"$out")" "converge.dead has one partition"
    assert_eq true "$(jq 'all(.[]; .partitions >= 1 and .replication_factor >= 1)' <<<"$out")" \
        "counts"
    assert_match '^converge\.check +exists +partitions [0-9]+ +replication factor [0-9]+ +leaders yes$' \
        "$(ctl topics | head -n 1)" "text line"
}

test_topics_create_again_is_a_no_op() {
    local before out rc=0
    before=$(ctl topics -o json)
    out=$(ctl topics --create -o json) || rc=$?
    assert_eq 0 "$rc" "exit status of a second --create"
    assert_eq false "$(jq 'any(.[]; .created)' <<<"$out")" "nothing created"
    assert_eq "$(jq -c '[.[] | del(.created)]' <<<"$before")" \
        "$(jq -c '[.[] | del(.created)]' <<<"$out")" "the topics unchanged"
}

test_topics_another_partition_count_is_named() {
    local have want err rc=0
    have=$(ctl topics -o json | jqr '.[0].partitions')
    want=3
    [ "$have" != 3 ] || want=4
    err=$(ctl topics --partitions "$want" 2>&1 >/dev/null) || rc=$?
    assert_eq 4 "$rc" "exit status of --partitions $want against $have"
    assert_match "converge\.check has $have partitions, not $want; delete it to change the count" \
        "$err" "what differs"
    rc=0
    ctl topics --create --partitions "$want" >/dev/null 2>&1 || rc=$?
    assert_eq 4 "$rc" "exit status of --create --partitions $want against $have"
    assert_eq 0 "$(ctl topics --partitions "$have" >/dev/null; echo $?)" "the count it has"
}

test_topics_unreachable_kafka_is_exit_3_within_a_bound() {
    local start took err rc=0
    start=$(topics_now)
    err=$(ctl --kafka 127.0.0.1:1 topics 2>&1 >/dev/null) || rc=$?
    took=$(echo "$(topics_now) - $start" | bc)
    assert_eq 3 "$rc" "exit status with no broker"
    assert_match "cannot reach Kafka at 127\.0\.0\.1:1" "$err" "message"
    assert_eq 1 "$(echo "$took < 10" | bc)" "gave up within 10 s (took $took s)"
    rc=0
    CONVERGE_KAFKA=127.0.0.1:1 ctl topics --create >/dev/null 2>&1 || rc=$?
    assert_eq 3 "$rc" "exit status of --create with CONVERGE_KAFKA unreachable"
}
