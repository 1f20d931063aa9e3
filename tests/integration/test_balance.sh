# The worked examples of balancing per node type in Service Fabric's
# balancing docs (Cluster Resource Manager, "Balancing your cluster"), on
# the live cluster resource manager (docs/crm.md "Balance"): nodes of node
# types of this run registered by hand (as converge-agent writes them),
# services of one replica each placed on them by the manager, their loads
# reported ({cluster}:load:<svc>, as `convergectl report-load` writes them),
# the thresholds set with `convergectl crm settings`. The manager's status
# says which node types are out of balance, and only replicas of those move.
# The metric, node types, nodes and services are this run's own; everything
# is removed at the end, the settings too.
# shellcheck shell=bash

BL_PREFIX=${CONVERGE_PREFIX:-cv:}

bl_key() { echo "${BL_PREFIX}{cluster}:$1"; }

# bl_node RUN NODE TYPE: alive, enabled, in a fault and upgrade domain of its
# own (so no domain rule holds a replica where it is).
bl_node() {
    redis HSET "$(bl_key nodes)" "$2" \
        "{\"name\":\"$2\",\"type\":\"$3\",\"faultDomain\":\"fd:/$2\",\"upgradeDomain\":\"$2\",\"properties\":{\"run\":\"$1\"},\"capacities\":{\"$1\":100000}}" >/dev/null
    redis SET "$(bl_key "alive:$2")" x >/dev/null
    redis HSET "$(bl_key "node:$2")" admin enabled fence_ms 1000 >/dev/null
}

# bl_service RUN SVC TYPE: one replica on a node of TYPE, declaring load 1 of
# the run's metric (named after the run), owned by a stack record.
bl_service() {
    local spec stack="$1-stack" res=${2##*.}
    spec=$(printf '{"name":"%s","serviceType":"s","replicas":1,"placementConstraints":"run == %s && NodeType == %s","metrics":[{"name":"%s","primaryLoad":1}],"process":{"tasks":[{"name":"main","command":["sleep","600"]}],"restart_policy":{"policy":"Always"},"digest":"d1"}}' \
        "$res" "$1" "$3" "$1")
    redis HSET "$(bl_key "svc:$2")" spec "$spec" state active gen 0 stack "$stack" \
        stack_name demo resource "$res" >/dev/null
    redis HSET "${BL_PREFIX}{$stack}:stack" status CREATE_COMPLETE >/dev/null
    redis HSET "${BL_PREFIX}{$stack}:res:$res" physical_id "$2" >/dev/null
    redis SADD "$(bl_key services)" "$2" >/dev/null
}

bl_cleanup() { # run
    local run=$1 n s
    ctl crm settings --clear >/dev/null || true
    for s in $(redis SMEMBERS "$(bl_key services)" | grep "^$run\\."); do
        redis DEL "$(bl_key "svc:$s")" "$(bl_key "load:$s")" >/dev/null
        redis SREM "$(bl_key services)" "$s" >/dev/null
        redis HDEL "$(bl_key health)" "System.PLB:$s" >/dev/null
    done
    for n in $(redis HKEYS "$(bl_key nodes)" | grep "^$run-"); do
        redis HDEL "$(bl_key nodes)" "$n" >/dev/null
        redis DEL "$(bl_key "alive:$n")" "$(bl_key "node:$n")" "$(bl_key "assign:$n")" \
            "$(bl_key "down:$n")" "$(bl_key "report:$n")" >/dev/null
        redis HDEL "$(bl_key health)" "System.FM:$n|State" >/dev/null
    done
    for n in $(redis KEYS "${BL_PREFIX}{$run-stack}:*"); do redis DEL "$n" >/dev/null; done
}

bl_node_of() { redis HGET "$(bl_key "svc:$1")" placement | jq -r '.[0].node // empty'; }

bl_all_placed() { # svc...
    local s
    for s; do [ -n "$(bl_node_of "$s")" ] || return 1; done
}

# bl_load RUN NODE TOTAL SVC...: the services placed on NODE share TOTAL
# (the first one takes what does not divide).
bl_load() {
    local run=$1 node=$2 total=$3 s on=() each first
    shift 3
    for s; do [ "$(bl_node_of "$s")" = "$node" ] && on+=("$s"); done
    [ ${#on[@]} -gt 0 ] || fail "no replica placed on $node"
    each=$((total / ${#on[@]}))
    first=$((total - each * (${#on[@]} - 1)))
    for s in "${on[@]}"; do
        redis HSET "$(bl_key "load:$s")" 0 "{\"$run\": $first, \"time\": 1}" >/dev/null
        first=$each
    done
}

# The status's imbalance entry of node type $1 (of the run's metric $2).
bl_entry() {
    redis HGET "$(bl_key crm:status)" imbalance |
        jq -c --arg t "$1" --arg m "$2" '[.[]? | select(.nodeType == $t and .metric == $m)][0] // empty'
}

# Whether the status has entries for every node type given, as judged
# with the run's settings (the thresholds they set).
bl_judged() { # metric type:threshold...
    local m=$1 t e
    shift
    for t; do
        e=$(bl_entry "${t%%:*}" "$m")
        [ -n "$e" ] && [ "$(jq -r .threshold <<<"$e")" = "${t#*:}" ] || return 1
    done
}

# Services of $@ the manager asked to move: a move in their record, or a
# handover under way (on these agentless nodes the new replica never runs,
# so a handover lasts until moveHandoverSeconds, longer than the test).
bl_moved() {
    local s
    for s; do
        if [ -n "$(redis HGET "$(bl_key "svc:$s")" moves)" ] ||
            redis HGET "$(bl_key "svc:$s")" placement | grep -q '"from"'; then
            echo "$s"
        fi
    done
}

bl_some_moved() { [ -n "$(bl_moved "$@")" ]; }

bl_none_moving() { [ -z "$(bl_moved "$@")" ]; }

# bl_setup RUN DIR TYPE:NODES:SERVICES...: nodes "<run>-<type><i>" of node
# type "<run><type>", services "<run>.<type>s<i>", one replica each,
# placed. Balancing is kept off the run's node types meanwhile (a threshold
# no layout reaches), so the replicas stay where the loads are set next.
bl_setup() {
    local run=$1 dir=$2 spec type nodes svcs i all=() calm=""
    shift 2
    for spec; do
        calm+="${calm:+, }\"$run${spec%%:*}\": {\"MetricBalancingThresholdsPerNodeType\": {\"$run\": 1000000}}"
    done
    bl_settings "$dir/calm.json" "{\"SeparateBalancingStrategyPerNodeType\": true, \"nodeTypes\": {$calm}}"
    for spec; do
        IFS=: read -r type nodes svcs <<<"$spec"
        for ((i = 1; i <= nodes; i++)); do bl_node "$run" "$run-$type$i" "$run$type"; done
        for ((i = 1; i <= svcs; i++)); do
            bl_service "$run" "$run.${type}s$i" "$run$type"
            all+=("$run.${type}s$i")
        done
    done
    cv_wait_until 30 "every replica placed" bl_all_placed "${all[@]}"
    cv_wait_until 30 "no replica moving" bl_none_moving "${all[@]}"
}

bl_services() { redis SMEMBERS "$(bl_key services)" | grep "^$1\\.$2s" | sort; }

# The test's MinLoadBalancingInterval (s). The status holds the last
# balancing pass's judgement only, and the pass that judges a node type
# out of balance moves a replica, so the next pass judges another layout:
# passes this far apart leave the test the time to read the first one's,
# however slow the machine (at 1 s, a busy machine's reader saw the second).
BL_INTERVAL=10

bl_settings() { # file json
    echo "$2" >"$1"
    ctl crm settings "$1" >/dev/null || fail "crm settings refused $2"
}

# Per node type, example 2: A (max 600, min 100) against
# balancing threshold 5 and activity threshold 700: its most loaded node is
# below the activity threshold, not balanced; B (900 / 100 = 9) against 10
# and 200: balanced; C (600 / 300 = 2) against 2 and 300: out of balance.
# Only replicas of node type C move.
test_balance_seed_per_node_type_example_2_moves_only_node_type_c() {
    local run="bl${RUN_ID}" dir
    dir=$(mktemp -d)
    trap 'bl_cleanup '"$run"'; rm -rf '"$dir" EXIT
    bl_setup "$run" "$dir" A:2:6 B:2:6 C:2:6
    local a b c
    mapfile -t a < <(bl_services "$run" A)
    mapfile -t b < <(bl_services "$run" B)
    mapfile -t c < <(bl_services "$run" C)
    bl_load "$run" "$run-A1" 600 "${a[@]}"
    bl_load "$run" "$run-A2" 100 "${a[@]}"
    bl_load "$run" "$run-B1" 900 "${b[@]}"
    bl_load "$run" "$run-B2" 100 "${b[@]}"
    bl_load "$run" "$run-C1" 600 "${c[@]}"
    bl_load "$run" "$run-C2" 300 "${c[@]}"
    bl_settings "$dir/s.json" "{\"SeparateBalancingStrategyPerNodeType\": true, \"MinLoadBalancingInterval\": $BL_INTERVAL,
        \"nodeTypes\": {
          \"${run}A\": {\"MetricBalancingThresholdsPerNodeType\": {\"$run\": 5}, \"MetricActivityThresholdsPerNodeType\": {\"$run\": 700}},
          \"${run}B\": {\"MetricBalancingThresholdsPerNodeType\": {\"$run\": 10}, \"MetricActivityThresholdsPerNodeType\": {\"$run\": 200}},
          \"${run}C\": {\"MetricBalancingThresholdsPerNodeType\": {\"$run\": 2}, \"MetricActivityThresholdsPerNodeType\": {\"$run\": 300}}}}"
    cv_wait_until $((BL_INTERVAL + 20)) "a balancing pass with the run's thresholds" \
        bl_judged "$run" "${run}A:5" "${run}B:10" "${run}C:2"
    local ea eb ec
    ea=$(bl_entry "${run}A" "$run") eb=$(bl_entry "${run}B" "$run") ec=$(bl_entry "${run}C" "$run")
    assert_eq "600 100 false" "$(jq -r '"\(.max) \(.min) \(.imbalanced)"' <<<"$ea")" "node type A: $ea"
    assert_eq "900 100 false" "$(jq -r '"\(.max) \(.min) \(.imbalanced)"' <<<"$eb")" "node type B: $eb"
    assert_eq "600 300 true" "$(jq -r '"\(.max) \(.min) \(.imbalanced)"' <<<"$ec")" "node type C: $ec"
    cv_wait_until 20 "a replica of node type C moved by balancing" bl_some_moved "${c[@]}"
    assert_eq "" "$(bl_moved "${a[@]}" "${b[@]}")" "replicas of node types A and B moved"
}

# Per node type, example 1 (its conclusion's figures: the setup
# gives node type B threshold 1.2 and loads 700 / 500, the conclusion "ratio
# 1.2, threshold 1.4"): A (300 / 100 = 3) against 2.5 and activity 50: out of
# balance; B (600 / 500 = 1.2) against 1.4 and 400: balanced. Only replicas
# of node type A move.
test_balance_seed_per_node_type_example_1_moves_only_node_type_a() {
    local run="bm${RUN_ID}" dir
    dir=$(mktemp -d)
    trap 'bl_cleanup '"$run"'; rm -rf '"$dir" EXIT
    bl_setup "$run" "$dir" A:2:6 B:2:6
    local a b
    mapfile -t a < <(bl_services "$run" A)
    mapfile -t b < <(bl_services "$run" B)
    bl_load "$run" "$run-A1" 300 "${a[@]}"
    bl_load "$run" "$run-A2" 100 "${a[@]}"
    bl_load "$run" "$run-B1" 600 "${b[@]}"
    bl_load "$run" "$run-B2" 500 "${b[@]}"
    bl_settings "$dir/s.json" "{\"SeparateBalancingStrategyPerNodeType\": true, \"MinLoadBalancingInterval\": $BL_INTERVAL,
        \"nodeTypes\": {
          \"${run}A\": {\"MetricBalancingThresholdsPerNodeType\": {\"$run\": 2.5}, \"MetricActivityThresholdsPerNodeType\": {\"$run\": 50}},
          \"${run}B\": {\"MetricBalancingThresholdsPerNodeType\": {\"$run\": 1.4}, \"MetricActivityThresholdsPerNodeType\": {\"$run\": 400}}}}"
    cv_wait_until $((BL_INTERVAL + 20)) "a balancing pass with the run's thresholds" \
        bl_judged "$run" "${run}A:2.5" "${run}B:1.4"
    local ea eb
    ea=$(bl_entry "${run}A" "$run") eb=$(bl_entry "${run}B" "$run")
    assert_eq "300 100 true" "$(jq -r '"\(.max) \(.min) \(.imbalanced)"' <<<"$ea")" "node type A: $ea"
    assert_eq "600 500 false" "$(jq -r '"\(.max) \(.min) \(.imbalanced)"' <<<"$eb")" "node type B: $eb"
    cv_wait_until 20 "a replica of node type A moved by balancing" bl_some_moved "${a[@]}"
    assert_eq "" "$(bl_moved "${b[@]}")" "replicas of node type B moved"
}

test_balance_crm_settings_stores_shows_clears_and_refuses_a_bad_setting() {
    local dir rc=0 err
    dir=$(mktemp -d)
    trap 'ctl crm settings --clear >/dev/null || true; rm -rf '"$dir" EXIT
    echo '{"MinLoadBalancingInterval": 7}' >"$dir/ok.json"
    ctl crm settings "$dir/ok.json" >/dev/null
    assert_eq 7 "$(redis GET "$(bl_key crm:settings)" | jq .MinLoadBalancingInterval)" "stored"
    assert_eq 7 "$(ctl crm settings -o json | jq .MinLoadBalancingInterval)" "shown"
    echo '{"MetricBalancingThresholds": {"CPU": 0.5}}' >"$dir/bad.json"
    err=$(ctl crm settings "$dir/bad.json" 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code"
    assert_match 'bad.json: crm.MetricBalancingThresholds.CPU: expected a balancing threshold of 1 or more' \
        "$err" message
    assert_eq 7 "$(redis GET "$(bl_key crm:settings)" | jq .MinLoadBalancingInterval)" \
        "the stored settings after a refused file"
    rc=0
    ctl crm settings "$dir/ok.json" --clear >/dev/null 2>&1 || rc=$?
    assert_eq 2 "$rc" "exit code of FILE with --clear"
    ctl crm settings --clear >/dev/null
    assert_eq 0 "$(redis EXISTS "$(bl_key crm:settings)")" "settings left after --clear"
}
