# A Redis Cluster with ACL users and TLS (deploy/local/up.sh --redis-cluster
# with --redis-acl and/or --redis-tls; docs/redis-cluster.md,
# docs/security.md): each test brings a deployment of its own (about 12 s to
# start, 1 engine, 1 observer, 1 broker), since the suite's Redis has
# neither. With ACLs every node has the same users and replicas
# authenticate to their masters; with TLS every node listens on TLS only and
# clients reach each node through its own stunnel port, the address map
# telling them which (CONVERGE_REDIS_ADDRESS_MAP).
# shellcheck shell=bash

RCS_LIB=$CV_REPO_ROOT/deploy/lib

# rcs_up DIR FLAGS...: a deployment in DIR with a cluster and FLAGS, stopped
# when the test's subshell exits.
rcs_up() {
    local dir=$1
    shift
    # shellcheck disable=SC2064 # dir is expanded now, on purpose
    trap "'$CV_REPO_ROOT/deploy/local/down.sh' --dir '$dir' >/dev/null 2>&1; rm -rf '$dir' '$dir.up.log'" EXIT
    "$CV_REPO_ROOT/deploy/local/up.sh" --build-dir "$(dirname "$CONVERGECTL")" --dir "$dir" \
        --no-build --engines 1 --observers 1 --brokers 1 --insecure --redis-cluster "$@" >"$dir.up.log" 2>&1 ||
        fail "up.sh --redis-cluster $*: $(tail -5 "$dir.up.log")"
}

# rcs_node DIR K ARGS...: redis-cli on node K (1-6) of DIR's cluster itself,
# on its TLS port if it has one, as the operator unless REDISCLI_AUTH and
# --user say otherwise (deploy/lib/redis_cluster.sh).
rcs_node() {
    (
        STATE=$1
        shift
        # shellcheck source=SCRIPTDIR/../../deploy/lib/state.sh
        source "$RCS_LIB/state.sh"
        # shellcheck source=SCRIPTDIR/../../deploy/lib/redis_cluster.sh
        source "$RCS_LIB/redis_cluster.sh"
        cv_state_load_ports
        cv_redis_node_cli "$@"
    )
}

# rcs_as DIR WHO K ARGS...: redis-cli on node K as converge-WHO.
rcs_as() {
    local dir=$1 who=$2 k=$3
    shift 3
    REDISCLI_AUTH=$(head -n1 "$dir/redis-$who.pass") rcs_node "$dir" "$k" --user "converge-$who" "$@"
}

# rcs_ctl DIR ARGS...: convergectl with DIR's client environment.
rcs_ctl() { (source "$1/env" && shift && "$CONVERGECTL" "$@"); }

rcs_port() { sed -n "s/^$2=//p" "$1/ports"; } # rcs_port DIR NAME

# The node (1-6) that is the master of SLOT in DIR's cluster now.
rcs_master_of() {
    local dir=$1 slot=$2 k
    for k in 1 2 3 4 5 6; do
        [ "$(rcs_node "$dir" "$k" ROLE 2>/dev/null | head -1)" = master ] || continue
        rcs_node "$dir" "$k" CLUSTER NODES 2>/dev/null | grep myself | awk -v s="$slot" '{
            for (i = 9; i <= NF; i++) { split($i, r, "-"); if (r[2] == "") r[2] = r[1]
                if (s >= r[1] + 0 && s <= r[2] + 0) found = 1 }
            exit !found }' && { echo "$k"; return 0; }
    done
    return 1
}

# True once every replica of DIR's cluster has its link to its master up.
rcs_replicas_linked() {
    local k linked=0
    for k in 1 2 3 4 5 6; do
        rcs_node "$1" "$k" INFO replication 2>/dev/null | grep -q '^master_link_status:up' &&
            linked=$((linked + 1))
    done
    [ "$linked" = 3 ]
}

# Every node's ACL LOG is empty: no command a Converge user sent was refused.
rcs_no_acl_refusals() {
    local k log
    for k in 1 2 3 4 5 6; do
        log=$(rcs_node "$1" "$k" ACL LOG)
        [ -z "$log" ] || fail "node $k refused commands: $(tr '\n' ' ' <<<"$log" | head -c 400)"
    done
}

# rcs_cli DIR ARGS...: a command on DIR's cluster through the first node that
# answers (one may have been killed), following redirections.
rcs_cli() {
    local dir=$1 k
    shift
    for k in 1 2 3 4 5 6; do
        [ "$(rcs_node "$dir" "$k" PING 2>/dev/null)" = PONG ] || continue
        rcs_node "$dir" "$k" -c "$@" 2>/dev/null | sed '/^-> Redirected to slot/d'
        return
    done
    return 1
}

rcs_acl_log_reset() {
    local k
    for k in 1 2 3 4 5 6; do rcs_node "$1" "$k" ACL LOG RESET >/dev/null; done
}

rcs_status_is() { [ "$(rcs_cli "$1" HGET "cv:{$2}:stack" status 2>/dev/null)" = "$3" ]; }
rcs_done_at_least() { [ "$(rcs_cli "$1" HGET "cv:{$2}:stack" "done")" -ge "$3" ] 2>/dev/null; }

rcs_stack_round_trip() { # DIR NAME: create and delete as the CLI user
    local out
    out=$(rcs_ctl "$1" submit "$2" "$DATA/stacks/chain.yaml" --wait --timeout 60 2>&1 &&
        rcs_ctl "$1" delete "$2" --wait --timeout 60 2>&1) || fail "create and delete of $2: $out"
    assert_match DELETE_COMPLETE "$out" "the end of $2"
}

test_redis_cluster_acl_stack_completes_and_each_user_is_held_to_its_rules() {
    local dir name rc=0 err p=${CONVERGE_PREFIX:-cv:} stacks who pw k
    dir=$(mktemp -d /tmp/cv-rcs-acl.XXXXXX)
    rcs_up "$dir" --redis-acl
    cv_wait_until 30 "every replica to authenticate to its master" rcs_replicas_linked "$dir"
    # A wrong password: exit 3 naming the user, nothing stored.
    echo not-the-password >"$dir/wrong.pass"
    name=$(stack_name rcs-wrong)
    stacks=$(rcs_cli "$dir" HLEN "${p}stacks")
    err=$(source "$dir/env" && CONVERGE_REDIS_PASSWORD_FILE=$dir/wrong.pass \
        "$CONVERGECTL" submit "$name" "$DATA/stacks/chain.yaml" 2>&1) || rc=$?
    assert_eq 3 "$rc" "exit code ($err)"
    assert_match "refused the credentials of user converge-cli: WRONGPASS" "$err" "error message"
    [[ $err != *not-the-password* ]] || fail "the password is in the message"
    assert_eq "$stacks" "$(rcs_cli "$dir" HLEN "${p}stacks")" "stack names after the refusal"
    rc=0
    CONVERGE_REDIS=$(sed -n 's/^export CONVERGE_REDIS=//p' "$dir/worker.env") \
        CONVERGE_REDIS_PASSWORD_FILE=$dir/wrong.pass \
        timeout 20 "$(dirname "$CONVERGECTL")/converge-engine" --id rcs-wrong >"$dir/wrong.log" 2>&1 ||
        rc=$?
    assert_eq 3 "$rc" "exit code of a worker with a wrong password"
    # The stack runs as converge-worker and converge-cli, every node refusing
    # nothing (the wrong passwords above are the log's only entries so far).
    rcs_acl_log_reset "$dir"
    rcs_stack_round_trip "$dir" "$(stack_name rcs-acl)"
    rcs_no_acl_refusals "$dir"
    # What the CLI user must not do, on a master and on a replica alike.
    for k in 1 4; do
        assert_match NOPERM "$(rcs_as "$dir" cli "$k" HSET "${p}worker:forged" state ready 2>&1)" \
            "node $k: a worker's liveness hash"
        assert_match NOPERM "$(rcs_as "$dir" cli "$k" SET "${p}reaper" forged 2>&1)" "node $k: the reaper lease"
        assert_match NOPERM "$(rcs_as "$dir" cli "$k" CLUSTER FAILOVER 2>&1)" "node $k: a failover"
        assert_match NOPERM "$(rcs_as "$dir" cli "$k" CLUSTER RESET 2>&1)" "node $k: a reset"
        assert_match NOPERM "$(rcs_as "$dir" worker "$k" CLUSTER FORGET x 2>&1)" "node $k: the worker forgets a node"
        assert_match NOPERM "$(rcs_as "$dir" cli "$k" KEYS '*' 2>&1)" "node $k: a command nobody uses"
        assert_match NOPERM "$(rcs_as "$dir" replica "$k" GET "${p}stacks" 2>&1)" "node $k: the replica user reads"
    done
    # Restarting a worker (service.sh) keeps its user.
    rcs_acl_log_reset "$dir"
    local restart
    restart=$("$CV_REPO_ROOT/deploy/local/service.sh" --dir "$dir" \
        --build-dir "$(dirname "$CONVERGECTL")" restart engine-1 2>&1) ||
        fail "service.sh restart engine-1: $(tail -n 5 <<<"$restart"; tail -n 5 "$dir/log/engine-1.log")"
    rcs_stack_round_trip "$dir" "$(stack_name rcs-acl2)"
    rcs_no_acl_refusals "$dir"
    for who in worker cli admin replica; do
        pw=$(head -n1 "$dir/redis-$who.pass")
        ! pgrep -af -- "$pw" >/dev/null || fail "the $who password is in ps output"
        ! grep -rqF -- "$pw" "$dir/log" || fail "the $who password is in a log"
    done
}

test_redis_cluster_tls_stack_completes_through_the_sidecars_with_the_plain_ports_closed() {
    local dir k tls plain
    dir=$(mktemp -d /tmp/cv-rcs-tls.XXXXXX)
    rcs_up "$dir" --redis-tls
    rcs_stack_round_trip "$dir" "$(stack_name rcs-tls)"
    for k in 1 2 3 4 5 6; do
        tls=$(rcs_port "$dir" "REDIS_CLUSTER_TLS_PORT_$k")
        plain=$(rcs_port "$dir" "REDIS_CLUSTER_PORT_$k")
        [ -n "$tls" ] || fail "no TLS port for node $k"
        assert_eq "port 0" "$(rcs_node "$dir" "$k" CONFIG GET port | tr '\n' ' ' | sed 's/ $//')" \
            "node $k's plain port"
        assert_eq yes "$(rcs_node "$dir" "$k" CONFIG GET tls-cluster | tail -1)" "node $k's bus on TLS"
        [[ $(redis-cli -p "$tls" PING 2>&1) != PONG ]] || fail "node $k answers plain text on its TLS port"
        assert_eq PONG "$(redis-cli -p "$plain" PING)" "node $k through its sidecar port"
    done
    cv_wait_until 30 "every replica to replicate over TLS" rcs_replicas_linked "$dir"
    grep -q "Certificate accepted" "$dir/log/stunnel.log" ||
        fail "stunnel did not verify a certificate: $(tail -3 "$dir/log/stunnel.log")"
}

# Both at once, and a master killed under a running stack: its replica,
# promoted, is found at its announced TLS port and reached through its sidecar.
test_redis_cluster_tls_and_acl_survive_a_failover() {
    local dir name id slot k tpl t_kill ledger
    dir=$(mktemp -d /tmp/cv-rcs-both.XXXXXX)
    rcs_up "$dir" --redis-tls --redis-acl
    cv_wait_until 30 "every replica to authenticate to its master" rcs_replicas_linked "$dir"
    tpl=$(mktemp --suffix .yaml)
    res_chain_template 12 0.3 >"$tpl"
    name=$(stack_name rcs-failover)
    rcs_ctl "$dir" submit "$name" "$tpl" >/dev/null || fail "submit $name"
    rm -f "$tpl"
    id=$(rcs_cli "$dir" HGET cv:stacks "$name")
    slot=$(rcs_cli "$dir" CLUSTER KEYSLOT "{$id}")
    cv_wait_until 30 "the stack to be under way" rcs_done_at_least "$dir" "$id" 3
    k=$(rcs_master_of "$dir" "$slot") || fail "no master serves slot $slot"
    kill -KILL "$(cat "$dir/pids/redis-c$k.pid")"
    t_kill=$(cv_now_ms)
    cv_wait_until 60 "the stack to complete after its master was killed" \
        rcs_status_is "$dir" "$id" CREATE_COMPLETE
    echo "    TLS+ACL: master redis-c$k of slot $slot killed: stack complete $(($(cv_now_ms) - t_kill)) ms later"
    ledger=$(rcs_cli "$dir" HGETALL "cv:{$id}:ledger" | jq -Rn '[inputs] | [range(0; length; 2) as $i | {(.[$i]): (.[$i + 1] | tonumber)}] | add // {}')
    assert_eq 12 "$(jq length <<<"$ledger")" "resource versions created"
    assert_eq '[1]' "$(jq -c '[.[]] | unique' <<<"$ledger")" "creates per version"
    rcs_no_acl_refusals_alive "$dir" "$k"
    # Stopped here too, not only by the EXIT trap (which removes the logs):
    # run with the sanitizers' build (tests/integration/sanitize.list), the
    # workers' reports are in their logs once they have exited.
    "$CV_REPO_ROOT/deploy/local/down.sh" --dir "$dir" >/dev/null 2>&1
    sanitizer_clean "$dir"
}

# As rcs_no_acl_refusals, leaving out the node K that was killed.
rcs_no_acl_refusals_alive() {
    local n log
    for n in 1 2 3 4 5 6; do
        [ "$n" = "$2" ] && continue
        log=$(rcs_node "$1" "$n" ACL LOG)
        [ -z "$log" ] || fail "node $n refused commands: $(tr '\n' ' ' <<<"$log" | head -c 400)"
    done
}
