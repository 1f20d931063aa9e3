# Converge::Service: refused input names the property; a service's replicas
# run as real processes on a node agent, answer on their ports, show in the
# outputs, and are stopped by the stack's delete.
# shellcheck shell=bash

svc_agent_bin() { echo "$(dirname "$CONVERGECTL")/converge-agent"; }

# Starts one agent for node $1 (capacity MemoryMB=1024) in a directory of
# its own; its pid in SVC_AGENT_PID, stopped by svc_stop_agent.
svc_start_agent() { # node dir
    local bin
    bin=$(svc_agent_bin)
    [ -x "$bin" ] || fail "no converge-agent next to $CONVERGECTL"
    "$bin" --name "$1" --type svc-test --capacity MemoryMB=1024 --dir "$2" \
        --ports 33100-33199 >"$2.log" 2>&1 &
    SVC_AGENT_PID=$!
    cv_wait_until 10 "node $1 up" svc_node_up "$1"
}

svc_stop_agent() {
    [ -n "${SVC_AGENT_PID:-}" ] && kill "$SVC_AGENT_PID" 2>/dev/null
    return 0
}

svc_node_up() { [ "$(redis exists "${CONVERGE_PREFIX:-cv:}{cluster}:alive:$1")" = 1 ]; }

# The processes of a run's replicas: their argv[0] is svc-<marker>.
svc_processes() { pgrep -f -- "^svc-$1 " | wc -l; }
svc_no_processes() { [ "$(svc_processes "$1")" = 0 ]; }

svc_template() { # node marker replicas metric
    cat <<EOF
heat_template_version: 2018-08-31
resources:
  web:
    type: Converge::Service
    properties:
      replicas: $3
      command: [bash, -c, 'exec -a svc-$2 python3 -m http.server "\$CONVERGE_PORT_HTTP" --bind 127.0.0.1']
      workdir: /tmp
      ports: [http]
      health_check: {type: tcp, interval: 0.2, timeout: 1}
      metrics: [{name: $4, primary_load: 64}]
      placement_constraints: "NodeName == $1"
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

test_service_runs_replicas_and_delete_stops_them() {
    local name node dir marker rc=0 err eps
    name=$(stack_name svc)
    node="svcn-$RUN_ID"
    marker="$RUN_ID"
    dir=$(mktemp -d)
    trap 'svc_stop_agent; pkill -f -- "^svc-$marker " 2>/dev/null; rm -rf "$dir"' EXIT
    svc_start_agent "$node" "$dir/agent"
    # A metric the cluster does not know is refused at submit, nothing stored.
    svc_template "$node" "$marker" 2 NoSuchMetric >"$dir/bad.yaml"
    err=$(ctl submit "$name" "$dir/bad.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "unknown metric exit code"
    assert_match 'metrics\[0\]\.name: unknown metric "NoSuchMetric"' "$err" message
    # Two replicas run, healthy, on their allocated ports.
    svc_template "$node" "$marker" 2 MemoryMB >"$dir/ok.yaml"
    ctl submit "$name" "$dir/ok.yaml" --wait --timeout 60 >/dev/null
    assert_eq CREATE_COMPLETE "$(status_json "$name" | jqr .status)" status
    eps=$(ctl output-show "$name" endpoints -o json | jq -r '.output_value[]')
    assert_eq 2 "$(echo "$eps" | wc -l)" "two endpoints"
    local ep
    for ep in $eps; do
        curl -sf "http://$ep/" >/dev/null || fail "replica at $ep does not answer"
    done
    # The delete stops every process and the service leaves the cluster.
    ctl delete "$name" --wait --timeout 60 >/dev/null
    cv_wait_until 10 "replicas stopped" svc_no_processes "$marker"
    local svc_keys
    svc_keys=$(redis --scan --pattern "${CONVERGE_PREFIX:-cv:}{cluster}:assign:$node" | wc -l)
    [ "$svc_keys" = 0 ] || [ "$(redis hlen "${CONVERGE_PREFIX:-cv:}{cluster}:assign:$node")" = 0 ] ||
        fail "replicas still assigned to $node"
}
