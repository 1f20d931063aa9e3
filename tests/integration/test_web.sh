# The web console's API (converge-web, docs/web.md): it answers what
# convergectl shows for the same stack and cluster, 404 for what does not
# exist, 400 for a bad parameter, requires its bearer token when it has
# one, and never writes to Redis (run as a Redis user allowed only reads).
# Each test starts its own converge-web on a free port (its PID killed when
# the test's subshell exits).
# shellcheck shell=bash

WEB_BIN="$(dirname "$CONVERGECTL")/converge-web"

# web_start [ARGS...]: starts converge-web on a free loopback port with the
# environment of the test deployment; sets WEB_URL and WEB_PID.
web_start() {
    WEB_DIR=$(mktemp -d /tmp/cv-web.XXXXXX)
    trap web_stop EXIT
    "$WEB_BIN" --listen 127.0.0.1:0 "$@" >"$WEB_DIR/out" 2>"$WEB_DIR/err" &
    WEB_PID=$!
    cv_wait_until 10 "converge-web to listen" grep -qs '^listening on ' "$WEB_DIR/out" ||
        { cat "$WEB_DIR/err" >&2; return 1; }
    WEB_URL="http://$(sed -n 's/^listening on //p' "$WEB_DIR/out")"
}

web_stop() {
    [[ -n ${WEB_PID:-} ]] && kill "$WEB_PID" 2>/dev/null && wait "$WEB_PID" 2>/dev/null
    [[ -n ${WEB_DIR:-} ]] && rm -rf "$WEB_DIR"
    return 0
}

# web_get PATH [CURL ARGS...]: WEB_CODE is the HTTP status, WEB_BODY the body.
web_get() {
    local path=$1
    shift
    WEB_CODE=$(curl -sS -o "$WEB_DIR/body" -w '%{http_code}' "$@" "$WEB_URL$path")
    WEB_BODY=$(cat "$WEB_DIR/body")
}

test_web_stack_api_answers_what_convergectl_shows() {
    web_start
    local name doc want
    name=$(stack_name web)
    ctl submit "$name" "$DATA/stacks/chain.yaml" --wait >/dev/null
    want=$(status_json "$name")
    web_get "/api/stacks/$name"
    doc=$WEB_BODY
    assert_eq 200 "$WEB_CODE" "status code"
    local f
    for f in name id status reason traversal total "done"; do
        assert_eq "$(jqr ".$f" <<<"$want")" "$(jqr ".$f" <<<"$doc")" "$f"
    done
    assert_eq "$(jq -cS .outputs <<<"$want")" "$(jq -cS .outputs <<<"$doc")" "outputs"
    assert_eq "$(jq -cS .resources <<<"$want")" "$(jq -cS .resources <<<"$doc")" "resource counts"
    assert_eq complete "$(jqr .state <<<"$doc")" "state"

    want=$(ctl resources "$name" -o json | jq -c '[.[] | {name, status, physical_id}] | sort_by(.name)')
    web_get "/api/stacks/$name/resources"
    doc=$(jq -c '[.resources[] | {name, status, physical_id}] | sort_by(.name)' <<<"$WEB_BODY")
    assert_eq "$want" "$doc" "resources"

    want=$(ctl events "$name" -o json | jq -c '[.[] | {resource, action, status}]')
    web_get "/api/stacks/$name/events"
    doc=$(jq -c '[.events[] | {resource, action, status}]' <<<"$WEB_BODY")
    assert_eq "$want" "$doc" "events"

    web_get "/api/stacks/$name/graph"
    doc=$WEB_BODY
    assert_eq '["a","b","c","d"]' "$(jq -c '[.nodes[].name]' <<<"$doc")" "graph nodes"
    assert_eq '["a>b","b>c","c>d"]' "$(jq -c '[.edges[] | "\(.from)>\(.to)"] | sort' <<<"$doc")" \
        "graph edges (chain.yaml: a -> b -> c -> d)"
    assert_eq '["complete"]' "$(jq -c '[.nodes[].state] | unique' <<<"$doc")" "graph states"

    web_get "/api/stacks?name=$name"
    doc=$WEB_BODY
    assert_eq "$name CREATE_COMPLETE" "$(jqr '.stacks[] | "\(.name) \(.status)"' <<<"$doc")" "list"
}

test_web_events_page_on_after_the_last_id() {
    web_start
    local name first rest
    name=$(stack_name webev)
    ctl submit "$name" "$DATA/stacks/chain.yaml" --wait >/dev/null
    web_get "/api/stacks/$name/events"
    first=$(jqr '.events[0].id' <<<"$WEB_BODY")
    web_get "/api/stacks/$name/events?after=$first"
    rest=$(jq '.events | length' <<<"$WEB_BODY")
    assert_eq "$(($(ctl events "$name" -o json | jq length) - 1))" "$rest" "events after the first"
}

# web_nodes_match: the API's nodes are `convergectl nodes -o json`'s (names,
# domains, up or down, replica counts); WEB_WANT and WEB_DOC hold both.
web_nodes_match() {
    WEB_WANT=$(ctl nodes -o json | jq -c '[.[] | {name, fault_domain, upgrade_domain, status, replicas}]')
    web_get /api/cluster
    [[ $WEB_CODE == 200 ]] || return 1
    WEB_DOC=$(jq -c '[.nodes[] | {name, fault_domain, upgrade_domain,
        status: (if .status == "down" then "down" else "up" end), replicas: (.replicas | length)}]' \
        <<<"$WEB_BODY")
    [[ $WEB_WANT == "$WEB_DOC" ]]
}

test_web_cluster_api_answers_what_convergectl_nodes_shows() {
    web_start
    # Two reads of a cluster that may be moving (an earlier test's replicas
    # going away): they must agree once, within the deadline.
    cv_wait_until 15 "the API's nodes to be convergectl's" web_nodes_match ||
        assert_eq "$WEB_WANT" "$WEB_DOC" "nodes (code $WEB_CODE)"
    [[ $WEB_WANT != "[]" ]] || fail "the deployment has no nodes to compare"
}

test_web_unknown_names_are_404_and_bad_parameters_400() {
    web_start
    local body
    web_get "/api/stacks/$(stack_name nosuch)"
    body=$WEB_BODY
    assert_eq 404 "$WEB_CODE" "unknown stack"
    assert_match "not found" "$(jqr .error <<<"$body")" "error"
    web_get "/api/stacks/$(stack_name nosuch)/graph"
    assert_eq 404 "$WEB_CODE" "graph of an unknown stack"
    web_get "/api/services/$(stack_name nosuch)/web"
    assert_eq 404 "$WEB_CODE" "service of an unknown stack"
    web_get /api/nope
    assert_eq 404 "$WEB_CODE" "unknown API call"
    web_get "/api/stacks/bad%20name"
    body=$WEB_BODY
    assert_eq 400 "$WEB_CODE" "bad stack name"
    assert_match "bad stack name" "$(jqr .error <<<"$body")" "error"
    web_get "/api/stacks?status=SLEEPING"
    assert_eq 400 "$WEB_CODE" "bad status filter"
    local name
    name=$(stack_name web400)
    ctl submit "$name" "$DATA/stacks/chain.yaml" --wait >/dev/null
    web_get "/api/stacks/$name/events?after=yesterday"
    assert_eq 400 "$WEB_CODE" "bad after"
}

test_web_token_is_required_when_set() {
    local tokdir
    tokdir=$(mktemp -d /tmp/cv-webtok.XXXXXX)
    echo "tok-$RUN_ID" >"$tokdir/token"
    web_start --token-file "$tokdir/token"
    rm -rf "$tokdir"
    web_get /api/stacks
    assert_eq 401 "$WEB_CODE" "no token"
    web_get /
    assert_eq 401 "$WEB_CODE" "the page without the token"
    web_get /api/stacks -H "Authorization: Bearer wrong"
    assert_eq 401 "$WEB_CODE" "wrong token"
    web_get /api/stacks -H "Authorization: Bearer tok-$RUN_ID"
    assert_eq 200 "$WEB_CODE" "bearer token"
    web_get "/?token=tok-$RUN_ID"
    assert_eq 200 "$WEB_CODE" "the page with ?token="
}

test_web_bad_options_exit_2_naming_them() {
    local err rc=0
    err=$("$WEB_BIN" --listen nowhere 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code"
    assert_match "--listen nowhere" "$err" "message"
    rc=0
    err=$("$WEB_BIN" --token-file /nonexistent/token 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code"
    assert_match "/nonexistent/token" "$err" "message"
    rc=0
    err=$("$WEB_BIN" --bogus 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit code"
    "$WEB_BIN" --help | grep -q -- --token-file || fail "--help names --token-file"
}

# web_connected_to PORT: a connection to 127.0.0.1:PORT is established.
web_connected_to() { ss -Htn state established "( dport = :$1 )" | grep -q .; }

# A Redis that does not answer holds only the reads (web_reads.h): pages
# and other requests are still served at once. The "Redis" here is a
# listener that accepts connections and never replies.
test_web_pages_are_served_while_redis_does_not_answer() {
    local hole_out hole_pid port t0 code
    hole_out=$(mktemp)
    # (stderr closed: the runner's pipe must not wait for this process)
    python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1], flush=True)
held = []
while True: held.append(s.accept())' >"$hole_out" 2>/dev/null &
    hole_pid=$!
    cv_wait_until 10 "the silent listener to start" test -s "$hole_out"
    port=$(head -1 "$hole_out")
    web_start --redis "redis://127.0.0.1:$port/0"
    curl -sS -o /dev/null --max-time 30 "$WEB_URL/api/stacks" &
    local api_pid=$!
    cv_wait_until 10 "the console to hold a connection to the silent Redis" \
        web_connected_to "$port"
    t0=$(cv_now_ms)
    code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 "$WEB_URL/")
    assert_eq 200 "$code" "the console page while Redis is silent"
    echo "    page served in $(($(cv_now_ms) - t0)) ms while a read waits on Redis"
    kill "$hole_pid"
    wait "$hole_pid" 2>/dev/null || true
    wait "$api_pid" 2>/dev/null || true
    rm -f "$hole_out"
}

# The Redis servers of the deployment: its seeds (every node of a cluster).
web_redis_servers() {
    local hosts=${CONVERGE_REDIS#*://}
    hosts=${hosts#*@}
    hosts=${hosts%%/*}
    tr ',' '\n' <<<"$hosts"
}

test_web_never_writes_to_redis() {
    local user="cv-web-ro-$RUN_ID" pass server name
    pass="pw-$RANDOM$RANDOM"
    name=$(stack_name webro)
    ctl submit "$name" "$DATA/stacks/chain.yaml" --wait >/dev/null
    # A user allowed to read every key and nothing else (no write command,
    # no script, no admin command; a Redis Cluster's slot map); the console
    # then runs as that user.
    while read -r server; do
        redis_admin_cli -h "${server%:*}" -p "${server##*:}" ACL SETUSER "$user" on ">$pass" '~*' \
            resetchannels -@all +@read +@connection '+cluster|slots' '+cluster|shards' >/dev/null
        redis_admin_cli -h "${server%:*}" -p "${server##*:}" ACL LOG RESET >/dev/null
    done < <(web_redis_servers)
    local dir
    dir=$(mktemp -d /tmp/cv-webro.XXXXXX)
    echo "$pass" >"$dir/pass"
    local scheme=${CONVERGE_REDIS%%://*} hosts=${CONVERGE_REDIS#*://}
    hosts=${hosts#*@}
    CONVERGE_REDIS="$scheme://$user@$hosts" CONVERGE_REDIS_PASSWORD_FILE="$dir/pass" web_start
    local path
    for path in /api/stacks "/api/stacks/$name" "/api/stacks/$name/graph" \
        "/api/stacks/$name/resources" "/api/stacks/$name/events" /api/cluster; do
        web_get "$path"
        assert_eq 200 "$WEB_CODE" "GET $path as a read-only Redis user"
    done
    timeout 2 curl -sN -o "$WEB_DIR/stream" "$WEB_URL/api/stacks/$name/stream" || true
    grep -q '^event: graph' "$WEB_DIR/stream" || fail "the stream sent no graph event"
    local denied=0
    while read -r server; do
        denied=$((denied + $(redis_admin_cli -h "${server%:*}" -p "${server##*:}" ACL LOG 100 |
            grep -c -x -- "$user" || true)))
        redis_admin_cli -h "${server%:*}" -p "${server##*:}" ACL DELUSER "$user" >/dev/null
    done < <(web_redis_servers)
    rm -rf "$dir"
    assert_eq 0 "$denied" "commands Redis refused to the read-only console user"
}
