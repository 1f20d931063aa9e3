# Integration tests of the workers' and agent's log options (sourced by
# run.sh): --log-format json makes every line of a real worker's stderr one
# JSON object with the documented keys; --log-level filters; bad values
# exit 2 naming the option.
# shellcheck shell=bash

LOGS_PREFIX=${CONVERGE_PREFIX:-cv:}
LOGS_BIN=$(dirname "$CONVERGECTL")

logs_worker_ready() { [ "$(redis HGET "${LOGS_PREFIX}worker:$1" state)" = ready ]; }

# logs_check_json LOG PROCESS ID: every line of LOG is a JSON object with
# exactly the keys time, level, process, id, msg (in that order), of
# PROCESS and ID, with a known level and a UTC millisecond time.
logs_check_json() {
    local log=$1 process=$2 id=$3 n=0 line
    while IFS= read -r line; do
        n=$((n + 1))
        jq -e --arg p "$process" --arg id "$id" '
            type == "object"
            and (keys_unsorted == ["time", "level", "process", "id", "msg"])
            and .process == $p and .id == $id
            and (.level | IN("debug", "info", "warn", "error"))
            and (.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$"))
            and (.msg | type == "string")' <<<"$line" >/dev/null ||
            fail "line $n of $log is not a log record of $process $id: $line" || return 1
    done <"$log"
    [ "$n" -gt 0 ] || fail "$log is empty"
}

# logs_engine ID LOG ARGS...: an engine of this test's own, stderr to LOG;
# its pid in LOGS_PID.
logs_engine() {
    local id=$1 log=$2
    shift 2
    redis DEL "${LOGS_PREFIX}worker:$id" >/dev/null
    "$LOGS_BIN/converge-engine" --id "$id" "$@" >/dev/null 2>"$log" &
    LOGS_PID=$!
}

# Stops the engine (SIGTERM) and waits for it to exit 0.
logs_stop() {
    kill -TERM "$LOGS_PID"
    local rc=0
    wait "$LOGS_PID" || rc=$?
    redis DEL "${LOGS_PREFIX}worker:$1" >/dev/null
    assert_eq 0 "$rc" "the engine's exit status after SIGTERM"
}

test_logs_engine_json_lines_parse_and_have_the_keys() {
    local id log
    id="logs-json-$RUN_ID" log=$(mktemp)
    logs_engine "$id" "$log" --log-format json --log-level debug
    cv_wait_until 30 "$id to be ready" logs_worker_ready "$id"
    ctl submit "$(stack_name logs-json)" "$DATA/stacks/chain.yaml" --wait >/dev/null
    logs_stop "$id"
    logs_check_json "$log" engine "$id"
    jq -e -s 'map(select(.level == "info" and (.msg | startswith("engine started: ")))) | length == 1' \
        "$log" >/dev/null || fail "no info record 'engine started: ...' in $log"
    jq -e -s 'map(select(.level == "debug")) | length > 0' "$log" >/dev/null ||
        fail "--log-level debug: no debug record in $log"
    rm -f "$log"
}

test_logs_level_warn_leaves_out_info_and_debug() {
    local id log
    id="logs-warn-$RUN_ID" log=$(mktemp)
    logs_engine "$id" "$log" --log-format json --verbose --log-level warn
    cv_wait_until 30 "$id to be ready" logs_worker_ready "$id"
    logs_stop "$id"
    if [ -s "$log" ]; then
        logs_check_json "$log" engine "$id"
        jq -e -s 'all(.level | IN("warn", "error"))' "$log" >/dev/null ||
            fail "--log-level warn let through: $(jq -c 'select(.level != "warn" and .level != "error")' "$log" | head -3)"
    fi
    rm -f "$log"
}

test_logs_environment_sets_the_format() {
    local id log
    id="logs-env-$RUN_ID" log=$(mktemp)
    CONVERGE_LOG_FORMAT=json logs_engine "$id" "$log"
    cv_wait_until 30 "$id to be ready" logs_worker_ready "$id"
    logs_stop "$id"
    logs_check_json "$log" engine "$id"
    rm -f "$log"
}

# A simulated node under a key prefix of its own, so that the cluster of
# the other tests never sees it.
test_logs_agent_json_lines_parse_and_have_the_keys() {
    local prefix log pid rc=0
    prefix="tlogs$RUN_ID:" log=$(mktemp)
    "$LOGS_BIN/converge-agent" --simulate 1 --nodes-prefix logs- --prefix "$prefix" \
        --log-format json >/dev/null 2>"$log" &
    pid=$!
    cv_wait_until 20 "the simulated node to be alive" logs_key_exists "${prefix}{cluster}:alive:logs-0"
    kill -TERM "$pid"
    wait "$pid" || rc=$?
    redis --scan --pattern "${prefix}*" | while IFS= read -r k; do redis DEL "$k" >/dev/null; done
    assert_eq 0 "$rc" "the agent's exit status after SIGTERM"
    logs_check_json "$log" agent agent-sim
    rm -f "$log"
}

logs_key_exists() { [ "$(redis EXISTS "$1")" = 1 ]; }

test_logs_bad_values_exit_2_naming_the_option() {
    local out rc
    rc=0 && out=$("$LOGS_BIN/converge-engine" --log-format xml 2>&1) || rc=$?
    assert_eq 2 "$rc" "engine --log-format xml: exit status"
    assert_match '--log-format "xml": expected text or json' "$out" "engine --log-format xml"
    rc=0 && out=$("$LOGS_BIN/converge-observer" --log-level loud 2>&1) || rc=$?
    assert_eq 2 "$rc" "observer --log-level loud: exit status"
    assert_match '--log-level "loud": expected debug, info, warn or error' "$out" \
        "observer --log-level loud"
    rc=0 && out=$(CONVERGE_LOG_LEVEL=chatty "$LOGS_BIN/converge-observer" 2>&1) || rc=$?
    assert_eq 2 "$rc" "observer CONVERGE_LOG_LEVEL=chatty: exit status"
    assert_match 'CONVERGE_LOG_LEVEL "chatty"' "$out" "observer CONVERGE_LOG_LEVEL=chatty"
    rc=0 && out=$("$LOGS_BIN/converge-agent" --simulate 1 --log-format yaml 2>&1) || rc=$?
    assert_eq 2 "$rc" "agent --log-format yaml: exit status"
    assert_match '--log-format "yaml": expected text or json' "$out" "agent --log-format yaml"
    rc=0 && out=$("$LOGS_BIN/converge-web" --log-level noisy 2>&1) || rc=$?
    assert_eq 2 "$rc" "web --log-level noisy: exit status"
    assert_match '--log-level "noisy": expected debug, info, warn or error' "$out" \
        "web --log-level noisy"
}

# The console logs JSON lines too (process "web").
test_logs_web_console_writes_json_lines() {
    local dir pid line
    dir=$(mktemp -d)
    "$LOGS_BIN/converge-web" --listen 127.0.0.1:0 --log-format json >"$dir/out" 2>"$dir/err" &
    pid=$!
    cv_wait_until 10 "converge-web to log that it serves" grep -qs serving "$dir/err"
    kill "$pid" && wait "$pid" 2>/dev/null || true
    while IFS= read -r line; do
        assert_eq '["id","level","msg","process","time"]' "$(jq -c 'keys' <<<"$line")" "keys of: $line"
        assert_eq web "$(jq -r .process <<<"$line")" "process of: $line"
    done <"$dir/err"
    grep -q '"msg":"signal 15: stopping"' "$dir/err" || fail "no JSON line for the stop: $(cat "$dir/err")"
    rm -rf "$dir"
}
