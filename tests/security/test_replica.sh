# shellcheck shell=bash
# Replicas that cannot take over the node (docs/security.md "Replicas: what a
# submitter can do on a node"): a hostile Converge::Service submitted as any
# user would run as root, read /etc/shadow, write into the agent's files and
# other replicas' directories, eat the node's memory and CPU, and ask for
# root, port 22, `workdir: /` or LD_PRELOAD. Each test starts its own agent
# (node rp<test>-<run>, property group=<the same>, so only the test's
# services go there) and attacks through it.
# Sourced by tests/security/run.sh after tests/integration/lib.sh.

RP_BIN=${CONVERGE_BUILD_DIR:-$(dirname "$CONVERGECTL")}
RP_PIDS=()
RP_NODES=()
RP_STACKS=()

# rp_agent_start NODE [ARGS...]: an agent for NODE in $STATE/rp/NODE, with
# the property group=NODE; waits for its heartbeat. Sets RP_DIR.
rp_agent_start() {
    local node=$1 lo
    shift
    RP_DIR=$STATE/rp/$node
    mkdir -p "$RP_DIR"
    lo=$((46000 + (RUN_ID % 40) * 100 + ${#RP_NODES[@]} * 20))
    (cv_spawn "$RP_DIR.pid" "$RP_DIR.log" "$RP_BIN/converge-agent" --name "$node" \
        --capacity MemoryMB=4096 --property "group=$node" --dir "$RP_DIR" \
        --ports "$lo-$((lo + 19))" --heartbeat-ttl 1000 "$@") || fail "agent $node did not start"
    RP_PIDS+=("$(cv_pid_read "$RP_DIR.pid")")
    RP_NODES+=("$node")
    cv_wait_until 20 "agent $node to register" svc_node_alive "$node" ||
        { cv_tail_log "$RP_DIR.log" 10; fail "agent $node is not up"; }
}

# For EXIT traps: deletes the stacks, stops the agents and every process of
# their replicas (by their state files), takes the nodes out of the cluster.
rp_cleanup() {
    set +e
    local name pid node f
    for name in "${RP_STACKS[@]}"; do ctl delete "$name" --wait --timeout 60 >/dev/null 2>&1; done
    for pid in "${RP_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    for node in "${RP_NODES[@]}"; do
        for f in "$STATE/rp/$node"/replicas/*.json; do
            [ -f "$f" ] || continue
            for pid in $(jq -r '.tasks[].pid' "$f" 2>/dev/null); do
                [ "$pid" -gt 0 ] 2>/dev/null && kill -9 "-$pid" 2>/dev/null
            done
        done
        redis hdel "$(ckey nodes)" "$node" >/dev/null
        redis del "$(ckey "node:$node")" "$(ckey "assign:$node")" "$(ckey "report:$node")" >/dev/null
    done
    rm -f /etc/cv-rp-pwned
    return 0
}

# rp_submit NAME TEMPLATE_TEXT [ARGS...]: submits without waiting (a refused
# replica never completes its resource).
rp_submit() {
    local name=$1 file
    file=$(mktemp --suffix .yaml)
    printf '%s\n' "$2" >"$file"
    shift 2
    RP_STACKS+=("$name")
    ctl submit "$name" "$file" "$@" >/dev/null || fail "submit $name"
    rm -f "$file"
}

# rp_replica STACK SERVICE -> its replica's JSON of `convergectl replicas -o json`.
rp_replica() { ctl replicas "$1" -o json 2>/dev/null | jq -c --arg s "$2" '.[] | select(.service == $s)'; }
rp_field() { rp_replica "$1" "$2" | jq -r ".$3 // empty"; }
rp_status_is() { [ "$(rp_field "$1" "$2" status)" = "$3" ]; }
rp_reason_matches() { [[ $(rp_field "$1" "$2" reason) =~ $3 ]]; }

rp_service() { # resource group properties(YAML flow map body)
    printf '  %s:\n    type: Converge::Service\n    properties: {placement_constraints: "group == %s", %s}\n' \
        "$1" "$2" "$3"
}

test_replica_runs_as_an_unprivileged_user_that_cannot_read_shadow_nor_write_outside_its_workdir() {
    trap rp_cleanup EXIT
    local node=rpu$RUN_ID name pid other
    name=$(stack_name rp-user)
    rp_agent_start "$node"
    other=$RP_DIR/work/other-0.$name
    # The attacker tries everything and writes down what happened, in the
    # one place it may write: its working directory.
    local script='id -u > uid; (cat /etc/shadow > /dev/null 2>&1 && echo read || echo denied) > shadow;
for t in "$AGENT_DIR/pwned" "$OTHER/pwned" /etc/cv-rp-pwned "$AGENT_DIR/replicas/pwned"; do
  (echo pwned > "$t") 2>/dev/null && echo "wrote $t" >> writes; done; touch writes; exec sleep 600'
    rp_submit "$name" "heat_template_version: 2018-08-31
resources:
$(rp_service other "$node" 'command: [sleep, "600"]')
$(rp_service attacker "$node" "command: [sh, -c, $(jq -Rn --arg s "$script" '$s')], env: {AGENT_DIR: \"$RP_DIR\", OTHER: \"$other\"}")"
    cv_wait_until 30 "the attacker healthy" rp_status_is "$name" attacker healthy
    cv_wait_until 30 "the other replica healthy" rp_status_is "$name" other healthy
    local wd=$RP_DIR/work/attacker-0.$name
    cv_wait_until 10 "the attacker's findings" test -f "$wd/writes"
    pid=$(rp_field "$name" attacker pid)
    [ "$(cat "$wd/uid")" != 0 ] || fail "the replica's id -u is 0" || return 1
    assert_match '^Uid:[[:space:]]+[1-9]' "$(grep '^Uid:' "/proc/$pid/status")" "its process's Uid"
    assert_match '^NoNewPrivs:[[:space:]]+1' "$(grep '^NoNewPrivs:' "/proc/$pid/status")" "no new privileges"
    assert_eq denied "$(cat "$wd/shadow")" "reading /etc/shadow"
    assert_eq "" "$(cat "$wd/writes")" "writes outside its workdir"
    [ ! -e "$RP_DIR/pwned" ] && [ ! -e "$other/pwned" ] && [ ! -e /etc/cv-rp-pwned ] ||
        fail "a file was written outside the workdir"
    # Its own session and process group.
    assert_eq "$pid $pid" "$(ps -o sid=,pgid= -p "$pid" | xargs)" "session and process group"
}

test_replica_memory_hog_is_killed_by_its_cgroup_limit_and_restarted() {
    trap rp_cleanup EXIT
    local node=rpm$RUN_ID name
    name=$(stack_name rp-mem)
    rp_agent_start "$node"
    local hog='import time
b = []
for _ in range(64):
    b.append(bytearray(4 << 20)); time.sleep(0.01)
time.sleep(600)'
    rp_submit "$name" "heat_template_version: 2018-08-31
resources:
$(rp_service hog "$node" "command: [python3, -c, $(jq -Rn --arg s "$hog" '$s')], resources: {memory_mb: 48}, restart_policy: {policy: Always, interval: 0.5, backoff: 0}")"
    cv_wait_until 60 "the hog restarted twice" \
        eval '[ "$(rp_field "$name" hog restarts)" -ge 2 ] 2>/dev/null'
    grep -q "signal 9, the kernel killed it at its memory limit of 48 MB" "$RP_DIR.log" ||
        fail "the agent's log does not say the cgroup killed it" || return 1
    ctl events "$name" 2>/dev/null | grep -q "restarted (signal 9, the kernel killed it at its memory limit" ||
        fail "no restart event naming the memory limit"
}

test_replica_cpu_bound_is_held_to_its_cpu_limit() {
    trap rp_cleanup EXIT
    local node=rpc$RUN_ID name pid t0 t1 used key
    name=$(stack_name rp-cpu)
    rp_agent_start "$node"
    rp_submit "$name" "heat_template_version: 2018-08-31
resources:
$(rp_service spin "$node" 'command: [sh, -c, "while :; do :; done"], resources: {cpu: 0.25}')"
    cv_wait_until 30 "the spinner healthy" rp_status_is "$name" spin healthy
    pid=$(rp_field "$name" spin pid)
    # Its quota: 25 ms of every 100 ms, in its own cgroup.
    key=$(sed -n 's#^[0-9]*:cpu:/##p' "/proc/$pid/cgroup")
    [ -n "$key" ] || fail "the replica is in no cpu cgroup: $(cat "/proc/$pid/cgroup")" || return 1
    assert_eq 25000 "$(cat "/sys/fs/cgroup/cpu/$key/cpu.cfs_quota_us")" "cfs quota"
    # And it is held to it: CPU time over 3 s of wall time.
    t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    sleep 3
    t1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    used=$(((t1 - t0) * 100 / $(getconf CLK_TCK) / 3)) # percent of one core
    echo "    the spinner used ${used}% of a core (limit 25%)"
    [ "$used" -le 35 ] || fail "a cpu: 0.25 replica used ${used}% of a core"
}

# The privileged properties, one service each.
rp_privileged_template() { # group
    echo "heat_template_version: 2018-08-31
resources:
$(rp_service asroot "$1" 'command: [sleep, "600"], user: root')
$(rp_service port22 "$1" 'command: [sleep, "600"], ports: [{name: ssh, port: 22}]')
$(rp_service rootdir "$1" 'command: [sleep, "600"], workdir: /')
$(rp_service preload "$1" 'command: [sleep, "600"], env: {LD_PRELOAD: /tmp/evil.so}')"
}

test_replica_privileged_properties_are_refused_with_the_rule_in_the_replica_status() {
    trap rp_cleanup EXIT
    local node=rpr$RUN_ID name
    name=$(stack_name rp-refused)
    rp_agent_start "$node"
    # validate warns (a courtesy: the agent decides).
    local file out
    file=$(mktemp --suffix .yaml)
    rp_privileged_template "$node" >"$file"
    out=$(ctl validate "$file" 2>&1)
    rm -f "$file"
    assert_match "resources.asroot.properties.user: root: runs only on nodes whose agent has --allow root" \
        "$out" "validate's warning of user: root"
    assert_match "resources.port22.properties.ports\[0\].port: host port 22 is below 1024" "$out" \
        "validate's warning of port 22"
    rp_submit "$name" "$(rp_privileged_template "$node")"
    cv_wait_until 30 "root refused" rp_status_is "$name" asroot failed
    assert_match "refused by the agent's policy: user root: .*--allow root" \
        "$(rp_field "$name" asroot reason)" "user: root"
    cv_wait_until 30 "port 22 refused" rp_status_is "$name" port22 failed
    assert_match "refused by the agent's policy: port ssh: host port 22 is below 1024: .*--allow low-ports" \
        "$(rp_field "$name" port22 reason)" "port 22"
    cv_wait_until 30 "workdir / refused" rp_status_is "$name" rootdir failed
    assert_match "refused by the agent's policy: task main: workdir / is outside .*--allow workdir" \
        "$(rp_field "$name" rootdir reason)" "workdir: /"
    cv_wait_until 30 "LD_PRELOAD refused" rp_status_is "$name" preload failed
    assert_match "refused by the agent's policy: .*env LD_PRELOAD: .*--allow env" \
        "$(rp_field "$name" preload reason)" "LD_PRELOAD"
    # A verdict, not a crash loop: no restart, no process.
    assert_eq 0 "$(rp_field "$name" preload restarts)" "restarts of a refused replica"
    assert_eq 0 "$(rp_field "$name" asroot pid)" "the refused replica's pid"
}

test_replica_privileged_properties_run_where_the_agent_allows_them() {
    trap rp_cleanup EXIT
    local node=rpa$RUN_ID name pid svc
    name=$(stack_name rp-allowed)
    rp_agent_start "$node" --allow root,low-ports,workdir,env
    rp_submit "$name" "$(rp_privileged_template "$node")"
    for svc in asroot port22 rootdir preload; do
        cv_wait_until 30 "$svc healthy" rp_status_is "$name" "$svc" healthy
    done
    pid=$(rp_field "$name" asroot pid)
    assert_match '^Uid:[[:space:]]+0[[:space:]]' "$(grep '^Uid:' "/proc/$pid/status")" "user: root runs as root"
    assert_eq / "$(readlink "/proc/$(rp_field "$name" rootdir pid)/cwd")" "workdir: /"
    assert_eq "root,low-ports,workdir,env" "$(ctl nodes -o json | jq -r --arg n "$node" \
        '.[] | select(.name == $n) | .agent.allow')" "the node's permissions"
}

test_replica_state_and_log_files_holding_its_environment_are_0600() {
    trap rp_cleanup EXIT
    local node=rpf$RUN_ID name f bad=""
    name=$(stack_name rp-files)
    rp_agent_start "$node"
    rp_submit "$name" "heat_template_version: 2018-08-31
resources:
$(rp_service sec "$node" 'command: [sh, -c, "echo $API_TOKEN; exec sleep 600"], env: {API_TOKEN: s3cr3t-token}')"
    cv_wait_until 30 "the replica healthy" rp_status_is "$name" sec healthy
    grep -rlq s3cr3t-token "$RP_DIR/replicas" || fail "no state file holds the environment" || return 1
    for f in "$RP_DIR"/replicas/* "$RP_DIR"/logs/*/*; do
        [ "$(stat -c %a "$f")" = 600 ] || bad+=" $f:$(stat -c %a "$f")"
    done
    for f in "$RP_DIR" "$RP_DIR/replicas" "$RP_DIR/logs"; do
        [ "$(stat -c %a "$f")" = 700 ] || bad+=" $f:$(stat -c %a "$f")"
    done
    assert_eq "" "$bad" "modes other than 0600 (files) and 0700 (directories)"
}

test_replica_nodes_json_shows_each_node_s_isolation() {
    trap rp_cleanup EXIT
    local node=rpi$RUN_ID want
    rp_agent_start "$node"
    want=cgroup-v1
    [ -f /sys/fs/cgroup/cgroup.controllers ] && want=cgroup-v2
    assert_eq "$want" "$(ctl nodes -o json | jq -r --arg n "$node" '.[] | select(.name == $n) | .isolation')" \
        "isolation of a root agent"
    assert_eq converge-replica "$(ctl nodes -o json | jq -r --arg n "$node" \
        '.[] | select(.name == $n) | .agent.replica_user')" "the replica user"
    rp_agent_start "${node}r" --isolation rlimits
    assert_eq rlimits "$(ctl nodes -o json | jq -r --arg n "${node}r" '.[] | select(.name == $n) | .isolation')" \
        "isolation of an agent with --isolation rlimits"
    assert_match "${node}r .* rlimits$" "$(ctl nodes | grep "^${node}r ")" "the table's ISOLATION column"
}
