# A Redis Cluster of 3 masters and 3 replicas (deploy/local/up.sh
# --redis-cluster, docs/redis-cluster.md): a deployment of its own, about
# 10 s to start, since the suite's Redis is a single one. Stacks spread over
# the masters; a master killed under a running stack fails over to its
# replica, the workers find the new master (MOVED, the slot map read again)
# and the stack completes, creating each resource once.
# shellcheck shell=bash

RC_DIR=""

# rc_cli ARGS...: redis-cli on the cluster through a node that answers (one
# may be the master just killed), following redirections.
rc_cli() {
    local k port
    for k in 1 2 3 4 5 6; do
        port=$(rc_node_port "$k")
        [ "$(redis-cli -p "$port" PING 2>/dev/null)" = PONG ] || continue
        # (a redirection to the master just killed is said on stderr: not a failure)
        redis-cli -c -p "$port" "$@" 2>/dev/null | sed '/^-> Redirected to slot/d'
        return
    done
    return 1
}

# rc_ctl ARGS...: convergectl with the cluster deployment's environment.
rc_ctl() { (source "$RC_DIR/env" && "$CONVERGECTL" "$@"); }

rc_node_port() { sed -n "s/^REDIS_CLUSTER_PORT_$1=//p" "$RC_DIR/ports"; }

rc_is_master() { redis-cli -p "$1" ROLE 2>/dev/null | head -1 | grep -qx master; }

# The node (1-6) that is the master of SLOT now.
rc_master_of() {
    local k port
    for k in 1 2 3 4 5 6; do
        port=$(rc_node_port "$k")
        rc_is_master "$port" || continue
        redis-cli -p "$port" CLUSTER NODES 2>/dev/null | grep myself | awk -v s="$1" '{
            for (i = 9; i <= NF; i++) { split($i, r, "-"); if (r[2] == "") r[2] = r[1]
                if (s >= r[1] + 0 && s <= r[2] + 0) found = 1 }
            exit !found }' && { echo "$k"; return 0; }
    done
    return 1
}

rc_status_is() { [ "$(rc_cli HGET "cv:{$1}:stack" status)" = "$2" ]; }
rc_done_at_least() { [ "$(rc_cli HGET "cv:{$1}:stack" done)" -ge "$2" ] 2>/dev/null; }

rc_up() {
    RC_DIR=$(mktemp -d /tmp/cv-rcluster-up.XXXXXX)
    "$CV_REPO_ROOT/deploy/local/up.sh" --build-dir "$(dirname "$CONVERGECTL")" --dir "$RC_DIR" \
        --no-build --engines 2 --observers 1 --insecure --redis-cluster >"$RC_DIR.up.log" 2>&1 ||
        fail "up.sh --redis-cluster: $(tail -5 "$RC_DIR.up.log")"
}

rc_down() {
    "$CV_REPO_ROOT/deploy/local/down.sh" --dir "$RC_DIR" >/dev/null 2>&1
    rm -rf "$RC_DIR" "$RC_DIR.up.log"
}

test_redis_cluster_stacks_spread_over_the_masters_and_survive_a_failover() {
    local i name id slot k masters=0 port tpl t_kill ledger
    trap rc_down EXIT
    rc_up
    # A stack's slot comes from its random id: stacks are submitted until
    # every master holds keys (6 at least; 24 leave a 1 in 5,000 chance
    # that one master drew none, which fails the test).
    for i in $(seq 1 24); do
        rc_ctl submit "$(stack_name "rc-$i")" "$DATA/stacks/chain.yaml" --wait --timeout 60 \
            >/dev/null || fail "stack rc-$i on the cluster"
        [ "$i" -ge 6 ] || continue
        masters=0
        for k in 1 2 3 4 5 6; do
            port=$(rc_node_port "$k")
            rc_is_master "$port" && [ "$(redis-cli -p "$port" DBSIZE)" -gt 0 ] && masters=$((masters + 1))
        done
        [ "$masters" -lt 3 ] || break
    done
    assert_eq 3 "$masters" "masters holding keys after $i stacks"
    # A master killed while a stack of 16 resources in a chain is under way.
    tpl=$(mktemp --suffix .yaml)
    res_chain_template 16 0.3 >"$tpl"
    name=$(stack_name rc-failover)
    rc_ctl submit "$name" "$tpl" >/dev/null
    rm -f "$tpl"
    id=$(rc_cli HGET cv:stacks "$name")
    slot=$(rc_cli CLUSTER KEYSLOT "{$id}")
    cv_wait_until 30 "the stack to be under way" rc_done_at_least "$id" 3
    k=$(rc_master_of "$slot") || fail "no master serves slot $slot"
    kill -KILL "$(cat "$RC_DIR/pids/redis-c$k.pid")"
    t_kill=$(cv_now_ms)
    cv_wait_until 60 "the stack to complete after its master was killed" \
        rc_status_is "$id" CREATE_COMPLETE
    echo "    master redis-c$k of slot $slot killed: stack complete $(($(cv_now_ms) - t_kill)) ms later"
    rc_master_of "$slot" >/dev/null || fail "slot $slot has no master after the failover"
    ledger=$(rc_cli HGETALL "cv:{$id}:ledger" | jq -Rn '[inputs] | [range(0; length; 2) as $i
        | {(.[$i]): (.[$i + 1] | tonumber)}] | add // {}')
    assert_eq 16 "$(jq length <<<"$ledger")" "resource versions created"
    assert_eq '[1]' "$(jq -c '[.[]] | unique' <<<"$ledger")" "creates per version"
    grep -q "cluster node 127.0.0.1:$(rc_node_port "$k")" "$RC_DIR"/log/engine-*.log ||
        fail "no engine saw its master go"
    # Stopped here too, not only by the EXIT trap (which removes the logs):
    # run with the sanitizers' build (tests/integration/sanitize.list), the
    # workers' reports are in their logs once they have exited.
    "$CV_REPO_ROOT/deploy/local/down.sh" --dir "$RC_DIR" >/dev/null 2>&1
    sanitizer_clean "$RC_DIR"
}
