# Prometheus metrics (docs/metrics.md): every process's /metrics is valid
# exposition text with the contract names; a real Prometheus scrapes the
# deployment and sees the series move as a stack converges; a bad
# --metrics-addr and a port in use are refused with exit 2; the cluster
# resource manager counts placements and agents count replica restarts.
# shellcheck shell=bash

# The deployment's metrics addresses (up.sh writes them to STATE/env).
metrics_targets() { tr ',' '\n' <<<"${CONVERGE_METRICS_TARGETS:?up.sh wrote no CONVERGE_METRICS_TARGETS}"; }

# What deploy/prometheus ships: promtool accepts the scrape config (with
# its rule file) and the alert rules, and the rules' unit tests
# (alerts_test.yml) show each alert firing when it should and not before.
test_metrics_shipped_config_and_alerts_pass_promtool() {
    local dir="$CV_REPO_ROOT/deploy/prometheus" out
    command -v promtool >/dev/null || fail "promtool is not installed (deploy/local/setup.sh)"
    out=$(cd "$dir" && promtool check config prometheus.yml 2>&1) ||
        fail "promtool check config prometheus.yml: $out"
    out=$(cd "$dir" && promtool check rules alerts.yml 2>&1) || fail "promtool check rules: $out"
    assert_match "4 rules found" "$out" "alert rules"
    out=$(cd "$dir" && promtool test rules alerts_test.yml 2>&1) ||
        fail "promtool test rules alerts_test.yml: $out"
}

test_metrics_every_process_serves_valid_text_with_the_contract_names() {
    local target text n=0
    command -v promtool >/dev/null || fail "promtool is not installed (deploy/local/setup.sh)"
    while read -r target; do
        text=$(curl -sf "http://$target/metrics") || fail "$target: GET /metrics failed"
        promtool check metrics <<<"$text" || fail "$target: promtool check metrics refuses the text"
        local role
        role=$(sed -n 's/^converge_worker_info{id="[^"]*",role="\([a-z]*\)"} 1$/\1/p' <<<"$text")
        [[ -n $role ]] || fail "$target: no converge_worker_info{id,role} 1"
        local names=(process_start_time_seconds process_resident_memory_bytes)
        case $role in
        engine | observer)
            names+=(converge_jobs_total converge_job_duration_seconds converge_hop_latency_seconds
                converge_jobs_in_flight converge_redis_roundtrip_seconds converge_leases_held
                converge_kafka_consumer_lag converge_fenced_writes_total converge_reaped_total
                converge_dead_letters_total converge_outages_total converge_placements_total) ;;&
        engine) names+=(converge_lease_takeovers_total) ;;
        observer) names+=(converge_moves_total converge_health_reports) ;;
        agent) names+=(converge_replica_restarts_total) ;;
        esac
        local name
        for name in "${names[@]}"; do
            grep -q "^# TYPE $name " <<<"$text" || fail "$target ($role): no family $name"
        done
        grep -q '^converge_jobs_total{kind="[a-z]*",outcome="[a-z_]*"} [0-9]*$' <<<"$text" ||
            [[ $role == agent ]] || fail "$target: converge_jobs_total has no {kind,outcome} series"
        n=$((n + 1))
    done < <(metrics_targets)
    ((n > 0)) || fail "no metrics targets"
}

test_metrics_address_is_in_the_liveness_record() {
    local addr
    addr=$(redis HGET "${CONVERGE_PREFIX:-cv:}worker:engine-1" metrics)
    assert_eq "${CONVERGE_METRICS_ENGINE_1:-}" "$addr" "engine-1's liveness record's metrics field"
    # (waited for: an earlier test may have just restarted engine-1)
    metrics_serves_engine_1() {
        curl -sf "http://$addr/metrics" | grep -q '^converge_worker_info{id="engine-1",role="engine"} 1$'
    }
    cv_wait_until 20 "engine-1's metrics at $addr" metrics_serves_engine_1 ||
        fail "the address of engine-1's liveness record serves no engine-1 metrics"
}

# prom_value QUERY: the value of the query's first sample, or nothing.
prom_value() {
    curl -sf "$PROM_URL/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // empty'
}
prom_above() { # QUERY THRESHOLD: the query's value is above THRESHOLD
    local v
    v=$(prom_value "$1")
    [[ -n $v ]] && awk -v v="$v" -v t="$2" 'BEGIN { exit !(v > t) }'
}

test_metrics_prometheus_sees_the_series_move_as_a_stack_converges() {
    command -v prometheus >/dev/null || fail "prometheus is not installed (deploy/local/setup.sh)"
    local prom_data n
    prom_data=$(mktemp -d)
    # shellcheck disable=SC2064 # expanded now: the trap runs after this function returns
    trap "'$CV_REPO_ROOT/deploy/local/prometheus.sh' --dir '$STATE' --data '$prom_data' --stop >/dev/null; rm -rf '$prom_data'" EXIT
    PROM_URL=$("$CV_REPO_ROOT/deploy/local/prometheus.sh" --dir "$STATE" --data "$prom_data" --interval 1s) ||
        fail "deploy/local/prometheus.sh did not start Prometheus"
    n=$(metrics_targets | grep -c .)
    cv_wait_until 30 "Prometheus to scrape all $n targets up" prom_above 'count(up == 1)' $((n - 1)) ||
        fail "targets not up: $(curl -s "$PROM_URL/api/v1/query" --data-urlencode 'query=up' | jq -c '[.data.result[] | [.metric.instance, .value[1]]]')"
    assert_eq "$n" "$(prom_value 'count(up)')" "targets scraped"
    cv_wait_until 30 "a first scrape of the engines' jobs" prom_above 'count(converge_jobs_total{job="converge-engine"})' 0 ||
        fail "no converge_jobs_total from the engines"
    local jobs0 durations0
    jobs0=$(prom_value 'sum(converge_jobs_total{job="converge-engine",outcome="done"})')
    durations0=$(prom_value 'sum(converge_job_duration_seconds_count{job="converge-engine"})')
    ctl submit "$(stack_name metrics)" "$DATA/stacks/flat.yaml" --wait --timeout 60 >/dev/null
    cv_wait_until 30 "converge_jobs_total of the engines to grow past $jobs0" \
        prom_above 'sum(converge_jobs_total{job="converge-engine",outcome="done"})' "$jobs0" ||
        fail "converge_jobs_total did not move"
    cv_wait_until 30 "converge_job_duration_seconds_count to grow past $durations0" \
        prom_above 'sum(converge_job_duration_seconds_count{job="converge-engine"})' "$durations0" ||
        fail "converge_job_duration_seconds did not move"
    prom_above 'sum(converge_hop_latency_seconds_count{job="converge-engine",kind="check"})' 0 ||
        fail "no hop latency observed for check jobs"
    prom_above 'histogram_quantile(0.5, sum by (le) (converge_hop_latency_seconds_bucket))' -1 ||
        fail "converge_hop_latency_seconds has no buckets Prometheus can read"
    [[ -n $(prom_value 'sum(converge_leases_held)') ]] || fail "no converge_leases_held series"
    prom_above 'count(converge_redis_roundtrip_seconds_count > 0)' 0 || fail "no Redis round trip measured"
    # librdkafka's statistics come every 5 s; a partition has a lag once it has a committed offset
    cv_wait_until 30 "a converge_kafka_consumer_lag series" prom_above 'count(converge_kafka_consumer_lag)' 0 ||
        fail "no converge_kafka_consumer_lag series"
    assert_eq "$n" "$(prom_value 'count(converge_worker_info == 1)')" "converge_worker_info, one per process"
}

# metrics_sum NAME ADDRESS...: the sum of the unlabelled sample NAME over
# the /metrics of each ADDRESS (one that does not answer counts 0).
metrics_sum() {
    local name=$1 addr
    shift
    for addr; do curl -sf "http://$addr/metrics" || true; done |
        awk -v n="$name" '$1 == n { s += $2 } END { printf "%d\n", s }'
}
metrics_sum_above() { # THRESHOLD NAME ADDRESS...
    local threshold=$1
    shift
    (($(metrics_sum "$@") > threshold))
}

test_metrics_placements_and_replica_restarts_are_counted() {
    local p cl name workers=() agents=() node before
    p="met$(printf %04x $((RANDOM ^ RUN_ID % 65536)))-"
    cl=$(svc_cluster_file "$p")
    name=$(stack_name metrics-crash)
    # shellcheck disable=SC2064 # expanded now: the trap runs after this function returns
    trap "svc_agents_cleanup '$name'" EXIT
    svc_agents_start "$cl" "${p}N1" "${p}N2" "${p}N3"
    mapfile -t workers < <(metrics_targets)
    for node in "${p}N1" "${p}N2" "${p}N3"; do
        agents+=("$(redis HGET "$(ckey "node:$node")" metrics)")
        [[ ${agents[-1]} =~ ^127\.0\.0\.1:[1-9][0-9]*$ ]] ||
            fail "node $node's record names no metrics address: '${agents[-1]}'"
    done
    assert_eq 0 "$(metrics_sum converge_replica_restarts_total "${agents[@]}")" "restarts of new agents"
    before=$(metrics_sum converge_placements_total "${workers[@]}")
    # one replica whose process exits at once: placed, then restarted by its policy
    ctl submit "$name" "$DATA/services/crashloop.yaml" -P "constraint=$(svc_group_constraint "$p")" >/dev/null
    cv_wait_until 30 "converge_placements_total of the workers to grow past $before" \
        metrics_sum_above "$before" converge_placements_total "${workers[@]}" ||
        fail "no placement counted"
    cv_wait_until 30 "an agent to count a replica restart" \
        metrics_sum_above 0 converge_replica_restarts_total "${agents[@]}" ||
        fail "no replica restart counted"
}

test_metrics_a_bad_address_or_a_port_in_use_exits_2_naming_it() {
    local bin out rc
    bin=$(dirname "$CONVERGECTL")
    for prog in converge-engine converge-observer; do
        rc=0
        out=$("$bin/$prog" --metrics-addr 'nohost' 2>&1) || rc=$?
        assert_eq 2 "$rc" "$prog --metrics-addr nohost: exit status"
        assert_match '--metrics-addr "nohost"' "$out" "$prog names the option and the address"
    done
    local busy=${CONVERGE_METRICS_ENGINE_1:?no engine-1 metrics address}
    rc=0
    out=$(CONVERGE_METRICS_ADDR=$busy "$bin/converge-engine" --id metrics-probe 2>&1) || rc=$?
    assert_eq 2 "$rc" "converge-engine on a port in use ($busy): exit status"
    assert_match "--metrics-addr \"$busy\": .*in use" "$out" "the port in use is named"
    if [[ -x $bin/converge-agent ]]; then
        local dir
        dir=$(mktemp -d)
        rc=0
        out=$("$bin/converge-agent" --dir "$dir" --name metrics-probe --metrics-addr "$busy" 2>&1) || rc=$?
        rm -rf "$dir"
        assert_eq 2 "$rc" "converge-agent on a port in use: exit status"
        assert_match "--metrics-addr \"$busy\"" "$out" "the agent names the address"
    fi
}
