# Redis credentials and least privilege (docs/security.md): a refused
# password is a clear error and writes nothing, the CLI user cannot write
# what only workers write, passwords never reach ps or the logs, and a whole
# stack runs with the two ACL users. The suite's deployment has no ACL, so
# these tests bring their own: a private redis-server with the ACL file of
# up.sh --redis-acl (deploy/lib/redis_acl.sh), or a whole deployment.
# shellcheck shell=bash
# shellcheck source=SCRIPTDIR/../../deploy/lib/redis_acl.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/redis_acl.sh"

RAUTH_BIN=$(dirname "$CONVERGECTL")

# Starts a private Redis with the deployment's ACL users in a new directory
# RAUTH_DIR on port RAUTH_PORT; stopped when the test's subshell exits.
rauth_start() {
    RAUTH_DIR=$(mktemp -d /tmp/cv-rauth.XXXXXX)
    RAUTH_PORT=""
    cv_pick_port RAUTH_PORT
    cv_redis_acl_setup "${CONVERGE_PREFIX:-cv:}" "$RAUTH_DIR"
    trap rauth_stop EXIT
    redis-server --port "$RAUTH_PORT" --bind 127.0.0.1 --dir "$RAUTH_DIR" --save "" \
        --aclfile "$RAUTH_DIR/redis.acl" --daemonize yes --pidfile "$RAUTH_DIR/redis.pid" \
        --logfile "$RAUTH_DIR/redis.log" >/dev/null
    cv_wait_until 10 "the private Redis to answer" rauth_admin_is PONG PING
}

rauth_stop() {
    [[ -f $RAUTH_DIR/redis.pid ]] && kill "$(cat "$RAUTH_DIR/redis.pid")" 2>/dev/null
    rm -rf "$RAUTH_DIR"
}

# rauth_as USER CMD... : redis-cli as converge-USER (or admin: default).
rauth_as() {
    local who=$1 user=()
    shift
    [[ $who == admin ]] || user=(--user "converge-$who")
    REDISCLI_AUTH=$(head -n1 "$RAUTH_DIR/redis-$who.pass") redis-cli -p "$RAUTH_PORT" \
        "${user[@]}" "$@"
}
rauth_admin() { rauth_as admin "$@"; }
rauth_admin_is() { # EXPECTED CMD...
    local want=$1
    shift
    [[ $(rauth_admin "$@" 2>/dev/null) == "$want" ]]
}

test_redis_auth_wrong_password_exits_3_naming_the_user_and_writes_nothing() {
    rauth_start
    local err rc=0
    echo not-the-password >"$RAUTH_DIR/wrong.pass"
    err=$(CONVERGE_REDIS=redis://converge-cli@127.0.0.1:$RAUTH_PORT/0 \
        CONVERGE_REDIS_PASSWORD_FILE=$RAUTH_DIR/wrong.pass \
        ctl submit "$(stack_name rauth)" "$DATA/stacks/chain.yaml" 2>&1) || rc=$?
    assert_eq 3 "$rc" "exit code ($err)"
    assert_match "Redis at 127.0.0.1:$RAUTH_PORT refused the credentials of user converge-cli: WRONGPASS" \
        "$err" "error message"
    assert_eq 0 "$(rauth_admin DBSIZE)" "keys written"
    [[ $err != *not-the-password* ]] || fail "the password is in the message"
}

test_redis_auth_password_in_the_url_is_redacted_in_errors() {
    rauth_start
    local err rc=0
    err=$(CONVERGE_REDIS="redis://converge-cli:s3cr%2Fet@127.0.0.1:$RAUTH_PORT/x" ctl list 2>&1) ||
        rc=$?
    assert_eq 2 "$rc" "exit code of a bad URL ($err)"
    assert_match "redis://converge-cli:\*\*\*@127.0.0.1:$RAUTH_PORT/x" "$err" "redacted URL"
    rc=0
    err=$(CONVERGE_REDIS="redis://converge-cli:s3cr%2Fet@127.0.0.1:$RAUTH_PORT/0" ctl list 2>&1) ||
        rc=$?
    assert_eq 3 "$rc" "exit code of a wrong password ($err)"
    [[ $err != *s3cr* ]] || fail "the password is in the message: $err"
}

test_redis_auth_worker_with_a_wrong_password_exits_at_start() {
    rauth_start
    local rc=0
    echo not-the-password >"$RAUTH_DIR/wrong.pass"
    CONVERGE_REDIS=redis://converge-worker@127.0.0.1:$RAUTH_PORT/0 \
        CONVERGE_REDIS_PASSWORD_FILE=$RAUTH_DIR/wrong.pass \
        timeout 20 "$RAUTH_BIN/converge-engine" --id rauth-engine >"$RAUTH_DIR/engine.log" 2>&1 ||
        rc=$?
    [[ $rc != 0 && $rc != 124 ]] || fail "the engine exited with $rc"
    grep -q "refused the credentials of user converge-worker: WRONGPASS" "$RAUTH_DIR/engine.log" ||
        fail "no refusal in the log: $(tail -3 "$RAUTH_DIR/engine.log")"
    ! grep -q not-the-password "$RAUTH_DIR/engine.log" || fail "the password is in the log"
    assert_eq 0 "$(rauth_admin DBSIZE)" "keys written"
}

test_redis_auth_cli_user_cannot_write_what_only_workers_write() {
    rauth_start
    local p=${CONVERGE_PREFIX:-cv:}
    assert_match NOPERM "$(rauth_as cli HSET "${p}worker:forged" state ready 2>&1)" \
        "a worker's liveness hash"
    assert_match NOPERM "$(rauth_as cli SET "${p}reaper" forged NX PX 10000 2>&1)" "the reaper lease"
    assert_match NOPERM "$(rauth_as cli EXPIRE "${p}stacks" 10 2>&1)" "a worker-only command"
    assert_match NOPERM "$(rauth_as cli KEYS '*' 2>&1)" "a command nobody uses"
    assert_eq 0 "$(rauth_admin DBSIZE)" "keys written"
    assert_eq 1 "$(rauth_as worker HSET "${p}worker:w" state ready)" "the worker user writes it"
    assert_eq 0 "$(rauth_as cli HLEN "${p}stacks")" "the CLI user reads"
}

# A deployment of its own (its own Redis and Kafka ports), about 10 s.
test_redis_auth_stack_completes_with_the_acl_users() {
    local dir name out
    dir=$(mktemp -d /tmp/cv-rauth-up.XXXXXX)
    # shellcheck disable=SC2064 # dir is local: expanded now, on purpose
    trap "deploy_down '$dir'" EXIT
    "$CV_REPO_ROOT/deploy/local/up.sh" --build-dir "$RAUTH_BIN" --dir "$dir" --no-build \
        --engines 1 --observers 1 --insecure --redis-acl >"$dir.up.log" 2>&1 ||
        fail "up.sh --redis-acl: $(tail -5 "$dir.up.log")"
    name=$(stack_name rauth-acl)
    out=$(bash -c "source '$dir/env' && '$CONVERGECTL' submit '$name' '$DATA/stacks/chain.yaml' \
        --wait --timeout 60 && '$CONVERGECTL' delete '$name' --wait --timeout 60" 2>&1) ||
        fail "create and delete as converge-cli: $out"
    assert_match DELETE_COMPLETE "$out" "the stack's end"
    RAUTH_DIR=$dir RAUTH_PORT=$(sed -n 's|.*@127.0.0.1:\([0-9]*\)/.*|\1|p' "$dir/env")
    assert_eq "" "$(rauth_admin ACL LOG)" "commands the ACL refused"
    local who pw
    for who in worker cli admin; do
        pw=$(head -n1 "$dir/redis-$who.pass")
        ! pgrep -af -- "$pw" >/dev/null || fail "the $who password is in ps output"
        ! grep -rqF -- "$pw" "$dir/log" || fail "the $who password is in a log"
    done
}

deploy_down() {
    "$CV_REPO_ROOT/deploy/local/down.sh" --dir "$1" >/dev/null 2>&1
    rm -rf "$1" "$1.up.log"
}
