# converge-agent on real processes (docs/services.md, "The node agent"): an
# agent with a private key prefix and directory runs what its assignment hash
# says, reports it, restarts it by its policy, re-adopts it after a kill -9
# of the agent, and stops it when unassigned. No engine is involved: the
# tests write the assignments by hand, as svc_commit.lua would.
# shellcheck shell=bash

AGENT_BIN=${CONVERGE_AGENT:-$(dirname "$CONVERGECTL")/converge-agent}

# agent_env NAME: sets AG_PREFIX, AG_DIR, AG_NODE, AG_PORTS for one test.
agent_env() {
    AG_PREFIX="t${RUN_ID}$1:"
    AG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/cv-agent-$1.XXXXXX")
    AG_NODE="node-$1"
    local lo=$((40000 + (RANDOM % 900) * 20))
    AG_PORTS="$lo-$((lo + 19))"
}

ak() { echo "${AG_PREFIX}{cluster}:$1"; } # a cluster key under the test's prefix

agent_start() {
    cv_spawn "$AG_DIR/agent.pid" "$AG_DIR/agent.log" "$AGENT_BIN" --redis "$CONVERGE_REDIS" \
        --prefix "$AG_PREFIX" --dir "$AG_DIR" --name "$AG_NODE" --fault-domain fd:/dc1/r1 \
        --upgrade-domain UD0 --capacity MemoryMB=1024 --ports "$AG_PORTS"
    AG_PID=$(cv_pid_read "$AG_DIR/agent.pid")
    disown -a # the tests kill agents: no job-control notices
}

alive_key_set() { [ -n "$(redis get "$(ak "alive:$AG_NODE")")" ]; }
agent_registered() { [ "$(redis hget "$(ak "node:$AG_NODE")" pid)" = "$AG_PID" ]; }

agent_kill() { # agent_kill SIGNAL
    kill "-$1" "$AG_PID" 2>/dev/null || true
    cv_wait_until 10 "agent $AG_PID to exit" cv_pid_gone "$AG_PID"
}

# Stops the agent and every replica process it started (by their state files).
agent_cleanup() {
    kill -9 "$AG_PID" 2>/dev/null || true
    local f pid
    for f in "$AG_DIR"/replicas/*.json; do
        [ -f "$f" ] || continue
        for pid in $(jq -r '.tasks[].pid' "$f"); do
            if [ "$pid" -gt 0 ]; then kill -9 "-$pid" 2>/dev/null || true; fi
        done
    done
    redis --scan --pattern "${AG_PREFIX}*" | while read -r k; do redis del "$k" >/dev/null; done
    # With a sanitizer build (CONVERGE_AGENT=build-asan/converge-agent): its findings.
    if grep -q "Sanitizer" "$AG_DIR/agent.log" 2>/dev/null; then
        echo "    agent log with sanitizer findings:" >&2
        grep -A20 "Sanitizer" "$AG_DIR/agent.log" >&2
    fi
    rm -rf "$AG_DIR"
}

# The replica spec of a Python HTTP server on its allocated port. Its health
# check gives the interpreter 3 s to answer: the test command runs other
# suites beside this one, and a restart the health check asks for on a
# loaded machine is not what these tests look at.
web_spec() { # rid name [restart policy JSON]
    jq -cn --arg rid "$1" --arg name "$2" --argjson rp "${3:-{\"policy\":\"Always\",\"interval\":0.2,\"backoff\":0.2,\"max_times\":5\}}" '{
        rid: $rid, svc: "sx.web.1", stack: "sx", stack_name: "demo", service: "web", index: 0,
        name: $name, role: "instance", stateful: false,
        tasks: [{name: "main", command: ["python3", "-m", "http.server", "${CONVERGE_PORT_HTTP}",
                 "--bind", "127.0.0.1"], env: {GREETING: "hello ${CONVERGE_NAME}"}}],
        ports: [{name: "http", port: 0}],
        volumes: [{name: "data", path: "data"}],
        health_check: {type: "http", port: "http", path: "/", interval: 0.2, timeout: 1, retries: 10,
                       grace_period: 1},
        restart_policy: $rp, kill_policy: {grace_period: 2}, load: {MemoryMB: 64},
        digest: "d1"}'
}

assign() { # rid spec
    redis hset "$(ak "assign:$AG_NODE")" "$1" "$2" >/dev/null
    redis publish "$(ak "notify:$AG_NODE")" changed >/dev/null
}

report_of() { redis hget "$(ak "report:$AG_NODE")" "$1"; }
report_field() { report_of "$1" | jq -r ".$2"; }
report_is() { [ "$(report_field "$1" state)" = "$2" ]; }
pid_runs() { [ -n "$1" ] && [ "$1" != 0 ] && ! cv_pid_gone "$1"; }
restarts_are() { [ "$(report_field "$1" restarts)" = "$2" ]; }
restarts_at_least() { [ "$(report_field "$1" restarts)" -ge "$2" ] 2>/dev/null; }
no_report() { [ -z "$(report_of "$1")" ]; }

test_agent_bad_node_description_exits_2_naming_the_field() {
    local out rc=0
    out=$("$AGENT_BIN" --redis "$CONVERGE_REDIS" --dir /tmp/cv-agent-never --name n1 \
        --capacity MemoryMB=lots 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit status of a bad capacity"
    assert_match "capacities\.MemoryMB: expected a non-negative integer" "$out" "message"
    rc=0
    out=$("$AGENT_BIN" --redis "$CONVERGE_REDIS" --dir /tmp/cv-agent-never \
        --cluster "$DATA/placement/cluster_bcs.json" --node nope 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit status of an unknown node"
    assert_match "nodes: no node named 'nope'" "$out" "message"
}

test_agent_registers_its_node_and_heartbeats() {
    agent_env reg
    trap agent_cleanup EXIT
    agent_start
    cv_wait_until 10 "the heartbeat" alive_key_set
    assert_eq fd:/dc1/r1 "$(redis hget "$(ak nodes)" "$AG_NODE" | jq -r .faultDomain)" "FD"
    assert_eq enabled "$(redis hget "$(ak "node:$AG_NODE")" admin)" "admin"
    assert_eq "$AG_PORTS" "$(redis hget "$(ak "node:$AG_NODE")" ports)" "ports"
    local ttl
    ttl=$(redis pttl "$(ak "alive:$AG_NODE")")
    if [ "$ttl" -le 0 ] || [ "$ttl" -gt 3000 ]; then fail "heartbeat TTL $ttl"; fi
    # An admin state set by convergectl node survives a restarted agent.
    redis hset "$(ak "node:$AG_NODE")" admin draining >/dev/null
    agent_kill TERM
    agent_start
    cv_wait_until 10 "the new agent's registration" agent_registered
    assert_eq draining "$(redis hget "$(ak "node:$AG_NODE")" admin)" "admin kept"
}

test_agent_runs_a_replica_and_readopts_it_after_kill_9() {
    agent_env adopt
    trap agent_cleanup EXIT
    agent_start
    local rid="sx.web.1/0/1" pid port
    assign "$rid" "$(web_spec "$rid" web-0.demo)"
    cv_wait_until 15 "the replica healthy" report_is "$rid" healthy
    pid=$(report_field "$rid" pid)
    port=$(report_field "$rid" ports.http)
    pid_runs "$pid" || fail "process $pid does not run"
    [[ $AG_PORTS == "$port"-* ]] || [ "$port" -ge "${AG_PORTS%-*}" ] || fail "port $port"
    tr '\0' '\n' <"/proc/$pid/environ" | grep -qx "CONVERGE_PORT_HTTP=$port" || fail "no port env"
    tr '\0' '\n' <"/proc/$pid/environ" | grep -qx "GREETING=hello web-0.demo" || fail "no \${VAR}"
    tr '\0' '\n' <"/proc/$pid/environ" | grep -qx "CONVERGE_NODE=$AG_NODE" || fail "no node env"
    [ -d "$AG_DIR/volumes/sx/web-0/data" ] || fail "no volume directory"
    curl -sf "http://127.0.0.1:$port/" >/dev/null || fail "nothing answers on $port"
    assert_eq 1 "$(redis hget "$(ak ledger)" "start:$rid")" "ledger start"

    agent_kill 9
    pid_runs "$pid" || fail "the replica died with its agent"
    agent_start
    cv_wait_until 10 "the new agent's registration" agent_registered
    cv_wait_until 10 "the replica re-adopted healthy" report_is "$rid" healthy
    assert_eq "$pid" "$(report_field "$rid" pid)" "the same process"
    pid_runs "$pid" || fail "the re-adopted process does not run"
    grep -q "re-adopted 1 process(es), pid $pid" "$AG_DIR/agent.log" || fail "not re-adopted"
    assert_eq "$port" "$(report_field "$rid" ports.http)" "the same port"
    assert_eq 1 "$(redis hget "$(ak ledger)" "start:$rid")" "no second start"
    assert_eq "" "$(redis hget "$(ak ledger)" "restart:$rid")" "no restart"
    assert_eq 1 "$(pgrep -fc "http.server $port")" "one process on the port"
}

test_agent_restarts_a_killed_replica_with_an_event() {
    agent_env restart
    trap agent_cleanup EXIT
    agent_start
    local rid="sx.web.1/0/2" pid events
    assign "$rid" "$(web_spec "$rid" web-0.demo)"
    cv_wait_until 15 "the replica healthy" report_is "$rid" healthy
    pid=$(report_field "$rid" pid)
    kill -9 "$pid"
    # The kill is restart 1. On a loaded machine the new process may answer
    # its health check late and be restarted again, which the policy allows:
    # the ledger has counted one restart at least.
    cv_wait_until 15 "the restart" restarts_at_least "$rid" 1
    cv_wait_until 15 "the restarted replica healthy" report_is "$rid" healthy
    [ "$(report_field "$rid" pid)" != "$pid" ] || fail "the same pid"
    [ "$(redis hget "$(ak ledger)" "restart:$rid")" -ge 1 ] 2>/dev/null ||
        fail "ledger restart: $(redis hget "$(ak ledger)" "restart:$rid")"
    events=$(redis xrange "${AG_PREFIX}{sx}:events" - +)
    assert_match "replica web-0.demo restarted \(signal 9\), restart 1 of 5" "$events" "event"
    assert_match "CHECK" "$events" "event action"
}

test_agent_unexecutable_command_fails_with_the_os_error() {
    agent_env exec
    trap agent_cleanup EXIT
    agent_start
    local rid="sx.bad.1/0/1" spec
    spec=$(jq -cn --arg rid "$rid" '{rid: $rid, stack: "sx", service: "bad", index: 0,
        name: "bad-0.demo", tasks: [{name: "main", command: ["/no/such/program"]}],
        restart_policy: {policy: "OnFailure", interval: 0.1, backoff: 0.1, max_times: 2}}')
    assign "$rid" "$spec"
    cv_wait_until 15 "the replica failed" report_is "$rid" failed
    assert_match "exec /no/such/program: No such file or directory" \
        "$(report_field "$rid" reason)" "reason"
    assert_eq true "$(report_field "$rid" gave_up)" "gave up"
    # Retrying cannot make it start on this node: no restart at all.
    assert_eq 0 "$(report_field "$rid" restarts)" "restarts counted"
    assert_match "cannot be executed on this node: the restart policy gave up at once" \
        "$(report_field "$rid" reason)" "why it gave up at once"
}

test_agent_stops_an_unassigned_replica_and_drops_its_report() {
    agent_env stop
    trap agent_cleanup EXIT
    agent_start
    local rid="sx.web.1/0/3" pid
    assign "$rid" "$(web_spec "$rid" web-0.demo)"
    cv_wait_until 15 "the replica healthy" report_is "$rid" healthy
    pid=$(report_field "$rid" pid)
    redis hdel "$(ak "assign:$AG_NODE")" "$rid" >/dev/null
    redis publish "$(ak "notify:$AG_NODE")" changed >/dev/null
    cv_wait_until 10 "the process stopped" cv_pid_gone "$pid"
    cv_wait_until 10 "its report removed" no_report "$rid"
    [ ! -e "$AG_DIR/replicas/sx.web.1+0+3.json" ] || fail "its state file remains"
}

# A TCP proxy to Redis that the test can cut: python3, one thread per direction.
proxy_start() { # proxy_start PORT
    local hostport=${CONVERGE_REDIS#redis://}
    hostport=${hostport%%/*}
    cv_spawn "$AG_DIR/proxy.pid" "$AG_DIR/proxy.log" python3 -c '
import socket, sys, threading
up = (sys.argv[2], int(sys.argv[3]))
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", int(sys.argv[1]))); srv.listen(64)
def pipe(a, b):
    try:
        while (d := a.recv(65536)):
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try: s.shutdown(socket.SHUT_RDWR)
        except OSError: pass
while True:
    c, _ = srv.accept(); u = socket.create_connection(up)
    threading.Thread(target=pipe, args=(c, u), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
' "$1" "${hostport%%:*}" "${hostport##*:}"
    disown -a
    cv_wait_until 10 "the proxy listening" cv_port_in_use "$1" 0A
}
proxy_stop() {
    local pid
    pid=$(cv_pid_read "$AG_DIR/proxy.pid") || return 0
    kill -9 "$pid" 2>/dev/null || true
    cv_wait_until 10 "the proxy to exit" cv_pid_gone "$pid"
}

healthy_with_new_pid() { # rid old-pid
    report_is "$1" healthy && [ "$(report_field "$1" pid)" != "$2" ] &&
        pid_runs "$(report_field "$1" pid)"
}

sleep_spec() { # rid name stateful
    jq -cn --arg rid "$1" --arg name "$2" --argjson st "$3" '{rid: $rid, stack: "sx",
        service: "db", index: 0, name: $name, stateful: $st,
        tasks: [{name: "main", command: ["sleep", "600"]}], kill_policy: {grace_period: 30}}'
}

test_agent_fence_kills_stateful_replicas_while_redis_is_away() {
    agent_env fence
    local proxy_port="" st="sx.db.1/0/1" sl="sx.web.1/0/9" st_pid sl_pid
    cv_pick_port proxy_port
    trap 'proxy_stop; agent_cleanup' EXIT
    proxy_start "$proxy_port"
    cv_spawn "$AG_DIR/agent.pid" "$AG_DIR/agent.log" "$AGENT_BIN" \
        --redis "redis://127.0.0.1:$proxy_port/${CONVERGE_REDIS##*/}" --prefix "$AG_PREFIX" \
        --dir "$AG_DIR" --name "$AG_NODE" --ports "$AG_PORTS" --fence-ms 1000 --heartbeat-ttl 800
    AG_PID=$(cv_pid_read "$AG_DIR/agent.pid")
    disown -a
    assign "$st" "$(sleep_spec "$st" db-0.demo true)"
    assign "$sl" "$(sleep_spec "$sl" web-9.demo false)"
    cv_wait_until 10 "the stateful replica healthy" report_is "$st" healthy
    cv_wait_until 10 "the stateless replica healthy" report_is "$sl" healthy
    st_pid=$(report_field "$st" pid)
    sl_pid=$(report_field "$sl" pid)
    proxy_stop
    # Killed within the fence time (1 s) plus a tick, not after the 30 s grace.
    cv_wait_until 5 "the stateful replica killed" cv_pid_gone "$st_pid"
    pid_runs "$sl_pid" || fail "the stateless replica was stopped too"
    proxy_start "$proxy_port"
    cv_wait_until 15 "the stateful replica back" healthy_with_new_pid "$st" "$st_pid"
    assert_eq 1 "$(redis hget "$(ak ledger)" "restart:$st")" "ledger restart after the fence"
    assert_eq "$sl_pid" "$(report_field "$sl" pid)" "the stateless one untouched"
}

guard_pid() { cut -d' ' -f1 "$AG_DIR/fence.guard" 2>/dev/null; }
guard_runs() { pid_runs "$(guard_pid)"; }

# An agent gone (kill -9) cannot fence: its fence guard kills the stateful
# replicas once the agent showed no life for the fence time, leaves the
# stateless ones, and exits with nothing left to guard.
test_agent_fence_guard_kills_stateful_replicas_of_a_dead_agent() {
    agent_env guard
    local st="sx.db.1/0/1" sl="sx.web.1/0/9" st_pid sl_pid gpid
    trap 'agent_cleanup' EXIT
    cv_spawn "$AG_DIR/agent.pid" "$AG_DIR/agent.log" "$AGENT_BIN" --redis "$CONVERGE_REDIS" \
        --prefix "$AG_PREFIX" --dir "$AG_DIR" --name "$AG_NODE" --ports "$AG_PORTS" \
        --fence-ms 1500 --heartbeat-ttl 800
    AG_PID=$(cv_pid_read "$AG_DIR/agent.pid")
    disown -a
    assign "$st" "$(sleep_spec "$st" db-0.demo true)"
    assign "$sl" "$(sleep_spec "$sl" web-9.demo false)"
    cv_wait_until 10 "the stateful replica healthy" report_is "$st" healthy
    cv_wait_until 10 "the stateless replica healthy" report_is "$sl" healthy
    st_pid=$(report_field "$st" pid)
    sl_pid=$(report_field "$sl" pid)
    cv_wait_until 5 "the fence guard running" guard_runs
    gpid=$(guard_pid)
    agent_kill 9
    pid_runs "$st_pid" || fail "the stateful replica died with its agent"
    cv_wait_until 10 "the stateful replica fenced by the guard" cv_pid_gone "$st_pid"
    pid_runs "$sl_pid" || fail "the guard stopped the stateless replica too"
    cv_wait_until 5 "the guard gone with nothing left to guard" cv_pid_gone "$gpid"
    grep -q "killed 1 stateful replica" "$AG_DIR/fence-guard.log" ||
        fail "the guard's log does not say what it did"
}

test_agent_failed_health_check_restarts_the_replica() {
    agent_env health
    trap agent_cleanup EXIT
    agent_start
    local rid="sx.chk.1/0/1" spec pid vol
    spec=$(jq -cn --arg rid "$rid" '{rid: $rid, stack: "sx", service: "chk", index: 0,
        name: "chk-0.demo", tasks: [{name: "main", command: ["sleep", "600"]}],
        volumes: [{name: "flag"}],
        health_check: {type: "command", command: ["sh", "-c", "test -f ${CONVERGE_VOLUME_FLAG}/ok"],
                       interval: 0.2, timeout: 1, retries: 2, grace_period: 0},
        restart_policy: {policy: "OnFailure", interval: 0.2, backoff: 0, max_times: 3}}')
    vol="$AG_DIR/volumes/sx/chk-0/flag"
    mkdir -p "$vol" && touch "$vol/ok"
    assign "$rid" "$spec"
    cv_wait_until 10 "the replica healthy" report_is "$rid" healthy
    pid=$(report_field "$rid" pid)
    rm "$vol/ok"
    cv_wait_until 10 "the process stopped" cv_pid_gone "$pid"
    touch "$vol/ok"
    cv_wait_until 10 "the replica healthy again" healthy_with_new_pid "$rid" "$pid"
    assert_eq 1 "$(report_field "$rid" restarts)" "restarts"
    assert_match "restarted \(health check failed: command sh: exit 1\), restart 1 of 3" \
        "$(redis xrange "${AG_PREFIX}{sx}:events" - +)" "event"
}

test_agent_simulated_nodes_register_and_report_healthy_replicas() {
    agent_env sim
    trap agent_cleanup EXIT
    cv_spawn "$AG_DIR/agent.pid" "$AG_DIR/agent.log" "$AGENT_BIN" --redis "$CONVERGE_REDIS" \
        --prefix "$AG_PREFIX" --simulate 4 --nodes-prefix "sim$RUN_ID-" --capacity MemoryMB=100
    AG_PID=$(cv_pid_read "$AG_DIR/agent.pid")
    disown -a
    local i rid
    for i in 0 1 2 3; do
        AG_NODE="sim$RUN_ID-$i"
        cv_wait_until 10 "node $AG_NODE up" alive_key_set
    done
    assert_eq "" "$(redis hget "$(ak nodes)" "sim$RUN_ID-4")" "no fifth node"
    assert_eq "fd:/fd0 ud1" "$(redis hget "$(ak nodes)" "sim$RUN_ID-3" | jq -r '"\(.faultDomain) \(.upgradeDomain)"')" \
        "node 3's domains"
    for i in 0 1 2 3; do
        AG_NODE="sim$RUN_ID-$i"
        rid="sx.sim.1/$i/1"
        assign "$rid" "$(jq -cn --arg rid "$rid" --argjson i "$i" '{rid: $rid, stack: "sx",
            service: "sim", index: $i, name: "sim-\($i).demo", load: {MemoryMB: 10},
            tasks: [{name: "main", command: ["never-run"]}]}')"
    done
    for i in 0 1 2 3; do
        AG_NODE="sim$RUN_ID-$i"
        cv_wait_until 10 "replica $i healthy" report_is "sx.sim.1/$i/1" healthy
        assert_eq 1 "$(redis hget "$(ak ledger)" "start:sx.sim.1/$i/1")" "ledger of $i"
    done
    AG_NODE="sim$RUN_ID-2"
    cv_wait_until 10 "node 2's load" node_load_is '{"MemoryMB":10}'
}

node_load_is() { [ "$(redis hget "$(ak "node:$AG_NODE")" load)" = "$1" ]; }
