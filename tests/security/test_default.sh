# shellcheck shell=bash
# Secure by default (docs/security.md "Secure by default"): what up.sh starts
# without flags refuses clients without credentials, programs that connect
# without credentials say so, and the console refuses an open listen and
# keeps answering while a client holds idle connections.
# Sourced by tests/security/run.sh after tests/integration/lib.sh.

DEF_BIN=${CONVERGE_BUILD_DIR:-$(dirname "$CONVERGECTL")}

# def_redis_port: the deployment's Redis port (STATE/ports).
def_redis_port() { sed -n 's/^REDIS_PORT=//p' "$STATE/ports"; }

test_default_redis_refuses_a_client_without_password() {
    local port out
    port=$(def_redis_port)
    [[ -n $port ]] || fail "no REDIS_PORT in $STATE/ports" || return 1
    out=$(env -u REDISCLI_AUTH timeout 5 redis-cli -p "$port" PING 2>&1)
    assert_match NOAUTH "$out" "redis-cli PING without a password"
    out=$(env -u REDISCLI_AUTH timeout 5 redis-cli -p "$port" HGETALL "${CONVERGE_PREFIX:-cv:}stacks" 2>&1)
    assert_match NOAUTH "$out" "reading the stack names without a password"
    ! grep -q nopass "$STATE/redis.acl" || fail "$STATE/redis.acl has a user with nopass"
}

test_default_kafka_refuses_a_plaintext_client() {
    local out rc=0
    # The operator's settings (admin.conf) do list the topics: the broker is up.
    timeout 20 kcat -F "$STATE/kafka-sasl/admin.conf" -b "$CONVERGE_KAFKA" -L -J -m 10 2>/dev/null |
        jq -e '[.topics[].topic] | index("converge.check") != null' >/dev/null ||
        fail "kcat with $STATE/kafka-sasl/admin.conf could not list converge.check" || return 1
    # PLAINTEXT, as a client without credentials speaks: no metadata.
    out=$(env -u KCAT_CONFIG HOME=/nonexistent timeout 20 kcat -b "$CONVERGE_KAFKA" -L -J -m 5 2>&1) || rc=$?
    [[ $rc != 0 ]] || fail "a PLAINTEXT kcat metadata request succeeded: $out" || return 1
    ! grep -q '"converge.check"' <<<"$out" || fail "a PLAINTEXT client listed the topics"
    rc=0
    out=$(echo forged | env -u KCAT_CONFIG HOME=/nonexistent timeout 20 \
        kcat -P -b "$CONVERGE_KAFKA" -t converge.check -X message.timeout.ms=5000 2>&1) || rc=$?
    [[ $rc != 0 ]] || fail "a PLAINTEXT kcat produced to converge.check: $out"
}

test_default_convergectl_from_state_env_works() {
    local name out
    name=$(stack_name def-env)
    (
        # shellcheck disable=SC1091
        source "$STATE/env"
        [[ $CONVERGE_REDIS == *converge-cli@* ]] || fail "STATE/env's Redis user: $CONVERGE_REDIS" || exit 1
        [[ $CONVERGE_KAFKA_OPTS == *sasl.username=converge-cli* ]] ||
            fail "STATE/env's Kafka settings: $CONVERGE_KAFKA_OPTS" || exit 1
        "$CONVERGECTL" submit "$name" "$DATA/stacks/chain.yaml" --wait --timeout 60 >/dev/null ||
            fail "convergectl submit as STATE/env's client failed" || exit 1
        out=$("$CONVERGECTL" status "$name" -o json | jq -r .status)
        assert_eq CREATE_COMPLETE "$out" "the stack's status" || exit 1
        "$CONVERGECTL" delete "$name" --wait --timeout 60 >/dev/null ||
            fail "convergectl delete as STATE/env's client failed"
    )
}

# An open Redis of the test's own (no password), in DEF_DIR.
def_open_redis() {
    DEF_DIR=$(mktemp -d /tmp/cv-sec-default.XXXXXX)
    DEF_REDIS_PORT=""
    cv_pick_port DEF_REDIS_PORT
    redis-server --port "$DEF_REDIS_PORT" --bind 127.0.0.1 --dir "$DEF_DIR" --save "" \
        --appendonly no --daemonize yes --pidfile "$DEF_DIR/redis.pid" \
        --logfile "$DEF_DIR/redis.log" >/dev/null || fail "redis-server did not start" || return 1
    cv_wait_until 10 "the open Redis to answer" def_open_redis_up
}

def_open_redis_up() { [[ $(redis-cli -p "$DEF_REDIS_PORT" PING 2>/dev/null) == PONG ]]; }

def_cleanup() {
    local pid f
    set +e
    for f in "$DEF_DIR"/*.pid; do
        [[ -f $f ]] || continue
        pid=$(cat "$f") && kill -KILL "$pid" 2>/dev/null
    done
    rm -rf "$DEF_DIR"
}

# def_logged FILE TEXT: FILE holds TEXT.
def_logged() { grep -qF -- "$2" "$1" 2>/dev/null; }

test_default_programs_without_credentials_warn_at_start() {
    def_open_redis || return 1
    trap def_cleanup EXIT
    local url=redis://127.0.0.1:$DEF_REDIS_PORT/0 name
    # Every credential of the suite's environment dropped: the program connects as anyone would.
    local bare=(env -u CONVERGE_REDIS_PASSWORD_FILE -u CONVERGE_KAFKA_PASSWORD_FILE
        CONVERGE_REDIS="$url" CONVERGE_KAFKA=127.0.0.1:1 CONVERGE_KAFKA_OPTS=
        CONVERGE_PREFIX="cvdef$RUN_ID:")
    ("${bare[@]}" "$DEF_BIN/converge-engine" --id "def-$RUN_ID" --metrics-addr 127.0.0.1:0 \
        >/dev/null 2>"$DEF_DIR/engine.log" &
        echo $! >"$DEF_DIR/engine.pid")
    ("${bare[@]}" "$DEF_BIN/converge-agent" --simulate 1 --nodes-prefix "def$RUN_ID-" \
        --metrics-addr 127.0.0.1:0 >/dev/null 2>"$DEF_DIR/agent.log" &
        echo $! >"$DEF_DIR/agent.pid")
    ("${bare[@]}" "$DEF_BIN/converge-web" --listen 127.0.0.1:0 \
        >/dev/null 2>"$DEF_DIR/web.log" &
        echo $! >"$DEF_DIR/web.pid")
    cv_wait_until 15 "the engine's warning" def_logged "$DEF_DIR/engine.log" \
        "connecting without credentials to Redis at $url (no password) and Kafka at 127.0.0.1:1 (no SASL)" ||
        { cat "$DEF_DIR/engine.log" >&2; fail "converge-engine did not warn"; return 1; }
    cv_wait_until 15 "the agent's warning" def_logged "$DEF_DIR/agent.log" \
        "connecting without credentials to Redis at $url (no password)" ||
        { cat "$DEF_DIR/agent.log" >&2; fail "converge-agent did not warn"; return 1; }
    cv_wait_until 15 "the console's warning" def_logged "$DEF_DIR/web.log" \
        "connecting without credentials to Redis at $url (no password)" ||
        { cat "$DEF_DIR/web.log" >&2; fail "converge-web did not warn"; return 1; }
    [[ $(grep -c "without credentials" "$DEF_DIR/engine.log") == 1 ]] ||
        fail "the engine warned more than once"
    # The deployment's own programs have credentials: no warning.
    for name in engine-1 observer-1; do
        ! grep -q "without credentials" "$STATE/log/$name.log" ||
            fail "$name of the secured deployment warned about credentials"
    done
}

test_default_web_refuses_an_open_listen_without_token() {
    local out rc=0 dir
    out=$(timeout 10 "$DEF_BIN/converge-web" --listen 0.0.0.0:0 2>&1) || rc=$?
    assert_eq 2 "$rc" "converge-web --listen 0.0.0.0:0 without a token: exit status" || return 1
    assert_match "0\.0\.0\.0:0" "$out" "the refusal names the address" || return 1
    assert_match "--token-file" "$out" "the refusal names the remedy" || return 1
    rc=0
    out=$(timeout 10 "$DEF_BIN/converge-web" --listen :0 2>&1) || rc=$?
    assert_eq 2 "$rc" "converge-web --listen :0 (every address) without a token: exit status" || return 1
    dir=$(mktemp -d /tmp/cv-sec-web.XXXXXX)
    DEF_DIR=$dir
    trap def_cleanup EXIT
    ("$DEF_BIN/converge-web" --listen 0.0.0.0:0 --insecure >"$dir/out" 2>"$dir/err" &
        echo $! >"$dir/web.pid")
    cv_wait_until 15 "converge-web --insecure to listen" def_logged "$dir/out" "listening on 0.0.0.0:" ||
        { cat "$dir/err" >&2; fail "converge-web --listen 0.0.0.0:0 --insecure did not start"; return 1; }
    def_logged "$dir/err" "without a token (--insecure)" || fail "no warning for an open console"
}

# def_flood PORT N: opens N connections from 127.0.0.2 that send nothing,
# then asks for the page from 127.0.0.1 and from 127.0.0.2 itself, and
# waits (at most 15 s) for the server to close the idle ones; prints JSON.
def_flood() {
    python3 - "$1" "$2" <<'EOF'
import json, socket, subprocess, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
idle = []
for _ in range(n):
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port))
    except OSError:
        pass
    idle.append(s)
time.sleep(0.5)  # the server has accepted what the kernel queued
def ask(src):
    t = time.time()
    code = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--interface", src,
                           "--max-time", "3", "http://127.0.0.1:%d/" % port],
                          capture_output=True, text=True).stdout
    return {"code": code, "seconds": round(time.time() - t, 3)}
other, same = ask("127.0.0.1"), ask("127.0.0.2")
t0, still = time.time(), set(range(n))
for s in idle:
    s.setblocking(False)
while still and time.time() - t0 < 15:
    for i in list(still):
        try:
            if idle[i].recv(4096) == b"":
                still.discard(i)
        except BlockingIOError:
            pass
        except OSError:
            still.discard(i)
    time.sleep(0.2)
print(json.dumps({"other": other, "same": same, "still_open": len(still),
                  "closed_after": round(time.time() - t0, 1)}))
EOF
}

test_default_web_idle_connections_do_not_starve_others() {
    local dir port out
    dir=$(mktemp -d /tmp/cv-sec-web.XXXXXX)
    DEF_DIR=$dir
    trap def_cleanup EXIT
    ("$DEF_BIN/converge-web" --listen 127.0.0.1:0 >"$dir/out" 2>"$dir/err" &
        echo $! >"$dir/web.pid")
    cv_wait_until 15 "converge-web to listen" def_logged "$dir/out" "listening on" ||
        { cat "$dir/err" >&2; fail "converge-web did not start"; return 1; }
    port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$dir/out")
    out=$(def_flood "$port" 300)
    echo "    300 idle connections from 127.0.0.2: $out" >&2
    assert_eq 200 "$(jq -r .other.code <<<"$out")" "another client's request during the flood" || return 1
    jq -e '.other.seconds < 2' <<<"$out" >/dev/null || fail "another client waited: $out" || return 1
    assert_eq 200 "$(jq -r .same.code <<<"$out")" "a request from the flooding address itself" || return 1
    assert_eq 0 "$(jq -r .still_open <<<"$out")" "idle connections still open after the header deadline" ||
        return 1
    kill -0 "$(cat "$dir/web.pid")" || fail "converge-web died under the flood"
}

test_default_web_malformed_query_is_400() {
    local name q code
    name=$(stack_name def-query)
    ctl submit "$name" "$DATA/stacks/chain.yaml" --wait --timeout 60 >/dev/null
    for q in "/api/stacks/$name/events?after=18446744073709551615-18446744073709551615" \
        "/api/stacks/$name/events?after=99999999999999999999-0" \
        "/api/stacks?status=%ZZ" "/api/stacks/$name/events?after=%00"; do
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$CONVERGE_WEB_URL$q")
        assert_eq 400 "$code" "GET $q" || return 1
    done
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$CONVERGE_WEB_URL/api/stacks/$name/events?after=0-0")
    assert_eq 200 "$code" "GET events?after=0-0"
    ctl delete "$name" --wait --timeout 60 >/dev/null
}
