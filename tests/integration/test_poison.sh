# Poison messages: dead-lettered with their reason, and the workers carry on.
# shellcheck shell=bash

# kcat_produce TOPIC: one Kafka message per line of stdin.
kcat_produce() {
    kcat -P -b "$CONVERGE_KAFKA" -t "$1"
}

# dead_entries_since BEFORE_JSON: the entries of `ctl dead -o json` that
# were not in BEFORE_JSON (by partition and offset).
dead_entries_since() {
    ctl dead -o json | jq --argjson before "$1" \
        '($before | map("\(.partition):\(.offset)")) as $seen
         | [.[] | select(("\(.partition):\(.offset)") as $k | $seen | index($k) | not)]'
}

# poison_dead_at_least BEFORE_JSON N: true once N entries are new since
# BEFORE_JSON; sets the caller's `new` (those entries) and `count` (how many).
poison_dead_at_least() {
    new=$(dead_entries_since "$1")
    count=$(jq length <<<"$new")
    [ "$count" -ge "$2" ]
}

test_malformed_poison_messages_are_dead_lettered_and_workers_carry_on() {
    local before new count name originals
    before=$(ctl dead -o json)
    # Not msgpack, a string instead of a map, a map with an unknown version,
    # a byte msgpack never uses: four to the engines, one to the observers.
    printf 'not msgpack\n\xa5hello\n\x81\xa1v\x07\n\xc1\n' | kcat_produce converge.check
    printf 'not msgpack either\n' | kcat_produce converge.observe

    cv_wait_until 30 "5 new dead letters" poison_dead_at_least "$before" 5 ||
        fail "only $count of 5 messages dead-lettered in 30 s"
    assert_eq 5 "$count" "new dead letters"
    assert_eq 4 "$(jq '[.[] | select(.reason | startswith("engine: "))] | length' <<<"$new")" \
        "dead-lettered by the engines"
    assert_eq 1 "$(jq '[.[] | select(.reason | startswith("observer: "))] | length' <<<"$new")" \
        "dead-lettered by the observer"
    while IFS= read -r reason; do
        assert_match '^(engine|observer): .*(msgpack|trailing bytes|not a map|version)' \
            "$reason" "dead-letter reason"
    done < <(jq -r '.[].reason' <<<"$new")
    originals=$(jq -r '.[] | select(.original_len == 11) | .original_base64' <<<"$new" | base64 -d)
    assert_eq "not msgpack" "$originals" "the original bytes are kept"

    name=$(stack_name poison)
    ctl submit "$name" "$DATA/stacks/flat.yaml" --wait --timeout 60 >/dev/null
    assert_eq CREATE_COMPLETE "$(status_json "$name" | jqr .status)" "status after the poison"
}

test_poison_list_dead_help_exits_zero() {
    local out
    out=$(ctl dead --help)
    assert_match '^usage: convergectl dead' "$out" "dead --help"
}
