# Asymmetric partitions (docs/architecture.md "Cut off from one
# service"): an engine in a network namespace of its own (netns.sh) is cut
# off from Redis only, then from Kafka only, in the middle of a stack. It
# must step aside — hand its jobs back, leave its partitions to the others,
# write no lease — so that the stack completes on the other engines; and it
# must come back once the network heals.
# shellcheck shell=bash

PART_NETNS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/netns.sh"
PART_PREFIX=${CONVERGE_PREFIX:-cv:}
# A namespace and a /30 of this run's own: namespaces and veths are the
# whole machine's, and another run's setup tears down one of the same name.
PART_NS="cvp$((RUN_ID % 1000000))"
PART_NET="10.200.$((RUN_ID % 250 + 2))" # not the chaos suite's 10.200.1
PART_ID=engine-cut

part_net() { CV_NETNS_NET=$PART_NET "$PART_NETNS" "$1" "$PART_NS"; }

# Network namespaces need root, `ip` and `nft`: without them the test cannot
# run, and says so loudly rather than passing quietly.
part_can_run() {
    if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v nft >/dev/null; then
        echo "    SKIPPED LOUDLY: asymmetric partitions need root, ip and nft (nftables);" \
            "this run does NOT test them" >&2
        return 1
    fi
}

# part_start LOG: engine-cut in its namespace, with the deployment's
# environment; its pid goes to PART_PID.
part_start() {
    redis DEL "${PART_PREFIX}worker:$PART_ID" >/dev/null
    part_net setup >/dev/null
    "$PART_NETNS" exec "$PART_NS" "$(dirname "$CONVERGECTL")/converge-engine" --id "$PART_ID" \
        --isolation-ms 5000 --verbose >>"$1" 2>&1 &
    PART_PID=$!
}

part_cleanup() {
    if [ -n "${PART_PID:-}" ]; then
        kill -TERM "$PART_PID" 2>/dev/null || true
        wait "$PART_PID" 2>/dev/null || true
    fi
    part_net teardown
}

part_field() { redis HGET "${PART_PREFIX}worker:$PART_ID" "$1"; }
part_state_is() { [ "$(part_field state)" = "$1" ]; }

# part_log_since LOG LINE PATTERN: PATTERN is in LOG after its first LINE lines.
part_log_since() { tail -n "+$(($2 + 1))" "$1" | grep -q "$3"; }

# part_has_partitions LOG LINE: the latest assignment after LINE gave some.
part_has_partitions() {
    local last
    last=$(tail -n "+$(($2 + 1))" "$1" | grep -o 'assigned [0-9]* partitions' | tail -1)
    [[ $last =~ assigned\ [1-9] ]] && part_state_is ready
}

# The leases engine-cut holds now, as "key value" lines.
part_cut_leases() {
    local key value
    while read -r key; do
        [ -n "$key" ] || continue
        value=$(redis GET "$key")
        [[ $value == "$PART_ID@"* ]] && echo "$key $value"
    done < <(redis --scan --pattern "${PART_PREFIX}{*}:lease:*")
    return 0
}
part_no_cut_lease() { [ -z "$(part_cut_leases)" ]; }

# part_done_watching ID SEEN: the stack is complete; meanwhile any lease of
# engine-cut is appended to file SEEN.
part_done_watching() {
    part_cut_leases >>"$2"
    [ "$(redis HGET "$PART_PREFIX{$1}:stack" status)" = CREATE_COMPLETE ]
}

part_done_at_least() { [ "$(redis HGET "$PART_PREFIX{$1}:stack" "done")" -ge "$2" ] 2>/dev/null; }

# A fan of N TestResources, each create taking SECS: long enough that the
# engines hold leases when the cut comes.
part_template() {
    local i
    echo "heat_template_version: 2018-08-31"
    echo "resources:"
    for ((i = 0; i < $1; i++)); do
        echo "  p$i: {type: OS::Heat::TestResource, properties: {value: v$i, \
action_wait_secs: {create: $2}}}"
    done
}

# part_scenario SERVICE: the whole test for a cut from SERVICE (redis|kafka).
part_scenario() {
    local service=$1 name tpl id log line held t_cut t_aside t_done t_heal seen ledger
    part_can_run || return 0
    name=$(stack_name "part-$service") log=$(mktemp) tpl=$(mktemp --suffix .yaml) seen=$(mktemp)
    # shellcheck disable=SC2064 # the files are known now
    trap "part_cleanup; rm -f '$log' '$tpl' '$seen'" EXIT
    part_start "$log"
    cv_wait_until 60 "$PART_ID to be ready with partitions" part_has_partitions "$log" 0
    part_template 150 3 >"$tpl"
    ctl submit "$name" "$tpl" >/dev/null
    id=$(redis HGET "${PART_PREFIX}stacks" "$name")
    cv_wait_until 30 "$PART_ID to act on the stack" part_log_since "$log" 0 "job CHECK: stack $id"
    line=$(wc -l <"$log")
    held=$(part_cut_leases | wc -l)
    t_cut=$(cv_now_ms)
    part_net "cut-$service"
    echo "    $service cut with $held leases held by $PART_ID"
    cv_wait_until 30 "$PART_ID to step aside" part_log_since "$log" "$line" "stepping aside"
    t_aside=$(cv_now_ms)
    echo "    $service cut: $PART_ID stepped aside $((t_aside - t_cut)) ms after the cut"
    grep -q "cut off from ${service^}" "$log" || fail "the warning names another service: \
$(grep 'stepping aside' "$log")"
    if [ "$service" = kafka ]; then
        # Redis still answers: the liveness record says why it stands aside.
        cv_wait_until 10 "the liveness record to say isolated" part_state_is isolated
        assert_eq kafka "$(part_field isolated_from)" "isolated_from"
    fi
    # Leases taken before the step aside run out within --lease-ms (5 s);
    # from then on, none of engine-cut's may appear.
    cv_wait_until 15 "the leases of $PART_ID to run out" part_no_cut_lease
    cv_wait_until 120 "the stack to complete on the other engines" part_done_watching "$id" "$seen"
    t_done=$(cv_now_ms)
    echo "    stack complete $((t_done - t_cut)) ms after the cut"
    [ ! -s "$seen" ] || fail "$PART_ID wrote leases after it stepped aside: $(sort -u "$seen")"
    ledger=$(redis HGETALL "$PART_PREFIX{$id}:ledger" | paste - - | awk '{print $2}' | sort -u)
    assert_eq 1 "$ledger" "creates per resource version"
    # Healed, it comes back and gets partitions again.
    line=$(wc -l <"$log")
    t_heal=$(cv_now_ms)
    part_net heal
    cv_wait_until 60 "$PART_ID to rejoin" part_log_since "$log" "$line" "rejoining"
    cv_wait_until 60 "$PART_ID to have partitions again" part_has_partitions "$log" "$line"
    echo "    rejoined with partitions $(($(cv_now_ms) - t_heal)) ms after the heal"
    [ ! -s "$seen" ] || fail "$PART_ID wrote leases after it stepped aside"
    kill -0 "$PART_PID" || fail "$PART_ID is gone: $(tail -3 "$log")"
}

test_partition_cut_from_redis_steps_aside_and_rejoins() { part_scenario redis; }

test_partition_cut_from_kafka_steps_aside_and_rejoins() { part_scenario kafka; }
