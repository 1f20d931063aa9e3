# Converge::Service: refused input names the property; a service's replicas
# run as real processes on a node agent, answer on their ports, show in the
# outputs, and are stopped by the stack's delete.
# shellcheck shell=bash

svc_agent_bin() { echo "$(dirname "$CONVERGECTL")/converge-agent"; }

# Starts an agent for node $1 (capacity MemoryMB=1024, property group=$3)
# in a directory of its own, with host ports from $4; its pid joins
# SVC_AGENT_PIDS, stopped by svc_stop_agents.
SVC_AGENT_PIDS=()
SVC_NODES=()
svc_start_agent() { # node dir group first-port
    local bin
    bin=$(svc_agent_bin)
    [ -x "$bin" ] || fail "no converge-agent next to $CONVERGECTL"
    "$bin" --name "$1" --capacity MemoryMB=1024 --property "group=$3" --dir "$2" \
        --ports "$4-$(($4 + 49))" >"$2.log" 2>&1 &
    SVC_AGENT_PIDS+=($!)
    SVC_NODES+=("$1")
    cv_wait_until 10 "node $1 up" svc_node_up "$1"
}

# Stops this test's agents and takes their nodes out of the cluster, so
# that later tests do not count them.
svc_stop_agents() {
    local pid node
    for pid in "${SVC_AGENT_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for node in "${SVC_NODES[@]}"; do
        redis hdel "${CONVERGE_PREFIX:-cv:}{cluster}:nodes" "$node" >/dev/null
    done
    return 0
}

svc_node_up() { [ "$(redis exists "${CONVERGE_PREFIX:-cv:}{cluster}:alive:$1")" = 1 ]; }

# The processes of a run's replicas: they serve the run's own directory.
svc_processes() { pgrep -f -- "http.server .* --directory $1\$" | wc -l; }

svc_template() { # group marker replicas metric [load] [greeting]
    cat <<EOF
heat_template_version: 2018-08-31
resources:
  web:
    type: Converge::Service
    properties:
      replicas: $3
      command: [python3, -m, http.server, "\${CONVERGE_PORT_HTTP}", --bind, 127.0.0.1, --directory, "$2"]
      ports: [http]
      health_check: {type: tcp, interval: 0.2, timeout: 1}
      env: {GREETING: "${6:-hello}"}
      metrics: [{name: $4, primary_load: ${5:-64}}]
      placement_constraints: "group == $1"
outputs:
  endpoints:
    value: {get_attr: [web, endpoints]}
EOF
}

test_service_refusals_name_the_property() {
    local dir rc=0 err
    dir=$(mktemp -d)
    svc_template n1 m -1 MemoryMB >"$dir/neg.yaml"
    err=$(ctl validate "$dir/neg.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code"
    assert_match "resources.web.properties.replicas: -1 is out of range" "$err" message
    sed 's/type: tcp/type: udp/' "$dir/neg.yaml" | sed 's/replicas: -1/replicas: 1/' >"$dir/hc.yaml"
    rc=0
    err=$(ctl validate "$dir/hc.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code"
    assert_match 'health_check.type: "udp" is not an allowed value' "$err" message
    rm -rf "$dir"
}

# Two agents of group g<run> (one replica per node: a service's replicas
# never share one) and this test's directory in SVC_DIR, the marker of its
# processes in SVC_MARKER; all of it goes when the test ends.
svc_cluster() {
    SVC_DIR=$(mktemp -d)
    SVC_MARKER="$SVC_DIR/www"
    mkdir "$SVC_MARKER"
    # shellcheck disable=SC2064 # the paths are this test's: expanded now
    trap "svc_stop_agents; pkill -f -- 'http.server .* --directory $SVC_MARKER\$' || true; rm -rf '$SVC_DIR'" EXIT
    svc_start_agent "svca-$RUN_ID-$1" "$SVC_DIR/a" "g$RUN_ID$1" "$2"
    svc_start_agent "svcb-$RUN_ID-$1" "$SVC_DIR/b" "g$RUN_ID$1" "$(($2 + 50))"
}

svc_pids() { pgrep -f -- "http.server .* --directory $SVC_MARKER\$" | sort | tr '\n' ' '; }

test_service_update_scales_down_and_replaces_on_a_new_process() {
    local name before after
    name=$(stack_name svcup)
    svc_cluster up 33200
    svc_template "g${RUN_ID}up" "$SVC_MARKER" 2 MemoryMB >"$SVC_DIR/two.yaml"
    ctl submit "$name" "$SVC_DIR/two.yaml" --wait --timeout 60 >/dev/null
    assert_eq 2 "$(svc_processes "$SVC_MARKER")" "two processes"
    # Scale down: index 1 goes, index 0 keeps its process.
    before=$(svc_pids)
    svc_template "g${RUN_ID}up" "$SVC_MARKER" 1 MemoryMB >"$SVC_DIR/one.yaml"
    ctl update "$name" "$SVC_DIR/one.yaml" --wait --timeout 60 >/dev/null
    assert_eq UPDATE_COMPLETE "$(status_json "$name" | jqr .status)" status
    cv_wait_until 10 "one process" test "$(svc_processes "$SVC_MARKER")" = 1
    after=$(svc_pids)
    [[ " $before " == *" ${after% } "* ]] || fail "index 0 was restarted: $before -> $after"
    # A new environment is a new process: the replica is replaced.
    svc_template "g${RUN_ID}up" "$SVC_MARKER" 1 MemoryMB 64 bonjour >"$SVC_DIR/env.yaml"
    ctl update "$name" "$SVC_DIR/env.yaml" --wait --timeout 60 >/dev/null
    assert_eq UPDATE_COMPLETE "$(status_json "$name" | jqr .status)" status
    cv_wait_until 10 "the old process gone" test "$(svc_pids)" != "$after"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}

test_service_that_cannot_fit_fails_with_the_shortfall() {
    local name reason
    name=$(stack_name svcbig)
    svc_cluster big 33300
    svc_template "g${RUN_ID}big" "$SVC_MARKER" 2 MemoryMB 100000000 >"$SVC_DIR/big.yaml"
    ctl submit "$name" "$SVC_DIR/big.yaml" --wait --timeout 60 >/dev/null 2>&1 || true
    assert_eq CREATE_FAILED "$(status_json "$name" | jqr .status)" status
    reason=$(ctl resource-show "$name" web -o json | jqr .reason)
    assert_match "service web rejected" "$reason" reason
    assert_eq 0 "$(svc_processes "$SVC_MARKER")" "no process started"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}

test_service_runs_replicas_and_delete_stops_them() {
    local name group dir marker rc=0 err eps
    name=$(stack_name svc)
    group="g$RUN_ID"
    # Readable by the replicas' unprivileged user (their /tmp shows the host's),
    # and absolute: a replica runs in a working directory of its own.
    dir=$(mktemp -d) && chmod 755 "$dir"
    marker="$dir/www"
    mkdir "$marker"
    # shellcheck disable=SC2064 # the paths are this test's: expanded now
    trap "svc_stop_agents; pkill -f -- 'http.server .* --directory $marker\$' || true; rm -rf '$dir'" EXIT
    # Two nodes: one replica per node (a service's replicas never share one).
    svc_start_agent "svca-$RUN_ID" "$dir/a" "$group" 33100
    svc_start_agent "svcb-$RUN_ID" "$dir/b" "$group" 33150
    # A metric the cluster does not know is refused at submit, nothing stored.
    svc_template "$group" "$marker" 2 NoSuchMetric >"$dir/bad.yaml"
    err=$(ctl submit "$name" "$dir/bad.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "unknown metric exit code"
    assert_match 'metrics\[0\]\.name: unknown metric "NoSuchMetric"' "$err" message
    # Two replicas run, healthy, on their allocated ports.
    svc_template "$group" "$marker" 2 MemoryMB >"$dir/ok.yaml"
    ctl submit "$name" "$dir/ok.yaml" --wait --timeout 60 >/dev/null
    assert_eq CREATE_COMPLETE "$(status_json "$name" | jqr .status)" status
    assert_eq 2 "$(svc_processes "$marker")" "two processes"
    eps=$(ctl output-show "$name" endpoints -o json | jq -r '.output_value[]')
    assert_eq 2 "$(echo "$eps" | wc -l)" "two endpoints"
    local ep
    for ep in $eps; do
        curl -sf "http://$ep/" >/dev/null || fail "replica at $ep does not answer"
    done
    # The delete stops every process and frees the nodes.
    ctl delete "$name" --wait --timeout 60 >/dev/null
    assert_eq 0 "$(svc_processes "$marker")" "processes left after the delete"
    local node
    for node in "svca-$RUN_ID" "svcb-$RUN_ID"; do
        assert_eq 0 "$(redis hlen "${CONVERGE_PREFIX:-cv:}{cluster}:assign:$node")" \
            "replicas still assigned to $node"
    done
}

test_service_unknown_metric_is_refused_by_validate_against_a_cluster_file() {
    local dir rc=0 err
    dir=$(mktemp -d)
    svc_template g m 1 NoSuchMetric >"$dir/bad.yaml"
    echo '{"nodes": [{"name": "n1", "faultDomain": "fd:/a", "upgradeDomain": "UD0",
            "capacities": {"MemoryMB": 1024}}]}' >"$dir/cluster.json"
    err=$(ctl validate "$dir/bad.yaml" --cluster "$dir/cluster.json" 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code"
    assert_match 'resources.web.properties.metrics\[0\].name: unknown metric "NoSuchMetric"' \
        "$err" message
    svc_template g m 1 MemoryMB >"$dir/ok.yaml"
    ctl validate "$dir/ok.yaml" --cluster "$dir/cluster.json" >/dev/null ||
        fail "a known metric is refused"
    rm -rf "$dir"
}

test_service_bad_crm_setting_is_refused_by_validate_naming_it() {
    local dir rc=0 err
    dir=$(mktemp -d)
    svc_template g m 1 MemoryMB >"$dir/ok.yaml"
    echo '{"nodes": [{"name": "n1", "faultDomain": "fd:/a", "upgradeDomain": "UD0",
            "capacities": {"MemoryMB": 1024}}],
           "crm": {"MetricBalancingThresholds": {"MemoryMB": 0.5}}}' >"$dir/cluster.json"
    err=$(ctl validate "$dir/ok.yaml" --cluster "$dir/cluster.json" 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code"
    assert_match 'cluster.json: crm.MetricBalancingThresholds.MemoryMB: expected a balancing threshold of 1 or more' \
        "$err" message
    rm -rf "$dir"
}

# The node the service's index 0 is placed on.
svc_node_of_0() { # svc
    redis hget "${CONVERGE_PREFIX:-cv:}{cluster}:svc:$1" placement |
        jq -r '.[] | select(.index == 0) | .node'
}

svc_moved_off() { [ "$(svc_node_of_0 "$1")" != "$2" ]; } # svc node

# Whether the cluster loop saw node $1 down more than $2 seconds ago (by
# the Redis clock, which the loop uses).
svc_down_for() { # node seconds
    local since now
    since=$(redis get "${CONVERGE_PREFIX:-cv:}{cluster}:down:$1")
    [ -n "$since" ] || return 1
    now=$(redis time | head -1)
    awk -v s="$since" -v n="$now" -v d="$2" 'BEGIN { exit !(n - s > d) }'
}

test_service_no_converge_drift_waits_for_converge() {
    local name svc node
    name=$(stack_name svcdrift)
    svc_cluster drift 33400
    svc_template "g${RUN_ID}drift" "$SVC_MARKER" 1 MemoryMB >"$SVC_DIR/one.yaml"
    ctl submit "$name" "$SVC_DIR/one.yaml" --no-converge-drift --wait --timeout 60 >/dev/null
    assert_eq 0 "$(redis hget "${CONVERGE_PREFIX:-cv:}{$(status_json "$name" | jqr .id)}:stack" \
        converge_drift)" "the stack's converge_drift"
    svc=$(ctl resource-show "$name" web -o json | jqr .physical_id)
    node=$(svc_node_of_0 "$svc")
    # Its node is lost for good: past the grace period (5 s) and two more
    # passes of the loop, the replica is still where it was.
    local i
    for i in "${!SVC_NODES[@]}"; do
        [ "${SVC_NODES[$i]}" = "$node" ] && kill "${SVC_AGENT_PIDS[$i]}"
    done
    cv_wait_until 30 "node $node down past the grace period" svc_down_for "$node" 7
    assert_eq "$node" "$(svc_node_of_0 "$svc")" "index 0 moved although drift is not converged"
    # converge asks for one pass: the replica moves to the other node.
    ctl converge "$name" --wait --timeout 60 >/dev/null
    cv_wait_until 15 "index 0 placed again" svc_moved_off "$svc" "$node"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}

svc_gone() { [ "$(redis sismember "${CONVERGE_PREFIX:-cv:}{cluster}:services" "$1")" = 0 ]; }
svc_no_process() { [ "$(svc_processes "$1")" = 0 ]; }

# A service whose stack no longer exists (as when an engine wrote its spec
# and died before recording the action, and its job was superseded) is an
# orphan: the cluster loop deletes its replicas and the service.
test_service_orphan_is_deleted_by_the_cluster_loop() {
    local name svc
    name=$(stack_name svcorphan)
    svc_cluster orphan 33500
    svc_template "g${RUN_ID}orphan" "$SVC_MARKER" 2 MemoryMB >"$SVC_DIR/two.yaml"
    ctl submit "$name" "$SVC_DIR/two.yaml" --wait --timeout 60 >/dev/null
    assert_eq 2 "$(svc_processes "$SVC_MARKER")" "two processes"
    svc=$(ctl resource-show "$name" web -o json | jqr .physical_id)
    redis hset "${CONVERGE_PREFIX:-cv:}{cluster}:svc:$svc" stack "gone$RUN_ID" >/dev/null
    cv_wait_until 15 "the orphan's processes stopped" svc_no_process "$SVC_MARKER"
    cv_wait_until 15 "the orphan removed" svc_gone "$svc"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}
