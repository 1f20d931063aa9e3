# Kafka credentials and topic ACLs (docs/security.md): a refused password
# is a clear error that writes nothing, a principal without an ACL can
# neither submit a job through convergectl nor forge one with kcat, the CLI
# principal holds only what convergectl needs, and a whole stack runs over
# SASL_SSL with the worker and CLI users, no password in logs, ps or status
# keys. The suite's deployment has plain-text Kafka, so these tests share a
# deployment of their own (up.sh --kafka-sasl, about 10 s to come up),
# started by the first test that needs it and stopped when run.sh exits.
# shellcheck shell=bash
# shellcheck source=SCRIPTDIR/../../deploy/lib/kafka.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/kafka.sh" # and kafka_sasl.sh

KAUTH_BIN=$(dirname "$CONVERGECTL")
KAUTH_DIR=/tmp/cv-kauth-$$ # $$: run.sh's, the same in every test's subshell

kauth_down() {
    [[ -d $KAUTH_DIR ]] || return 0
    "$CV_REPO_ROOT/deploy/local/down.sh" --dir "$KAUTH_DIR" >/dev/null 2>&1
    rm -rf "$KAUTH_DIR" "$KAUTH_DIR.up.log"
}
# Chained to run.sh's own EXIT trap, if it has one (expanded now, on purpose).
# shellcheck disable=SC2064
trap "$(trap -p EXIT | sed "s/^trap -- '\(.*\)' EXIT$/\1;/")kauth_down" EXIT

# The shared --kafka-sasl deployment; a second call finds it up.
kauth_up() {
    [[ -f $KAUTH_DIR/env ]] && return 0
    "$CV_REPO_ROOT/deploy/local/up.sh" --build-dir "$KAUTH_BIN" --dir "$KAUTH_DIR" --no-build \
        --engines 1 --observers 1 --insecure --kafka-sasl >"$KAUTH_DIR.up.log" 2>&1 ||
        fail "up.sh --kafka-sasl: $(tail -5 "$KAUTH_DIR.up.log")"
}

# kauth_redis CMD...: redis-cli against the deployment's Redis.
kauth_redis() {
    redis-cli -p "$(sed -n 's/^REDIS_PORT=//p' "$KAUTH_DIR/ports")" "$@"
}

# kauth_ctl WHO PASSFILE ARGS...: convergectl as converge-WHO with the
# password of PASSFILE.
kauth_ctl() {
    local who=$1 pass=$2 STATE=$KAUTH_DIR
    shift 2
    (
        # shellcheck disable=SC1091
        source "$KAUTH_DIR/env"
        CONVERGE_KAFKA_OPTS=$(cv_kafka_sasl_client_opts "$who") CONVERGE_KAFKA_PASSWORD_FILE=$pass \
            "$CONVERGECTL" "$@"
    )
}

# kauth_kcat WHO ARGS...: kcat as converge-WHO (its settings file, 0600).
kauth_kcat() {
    local who=$1 STATE=$KAUTH_DIR conf=$KAUTH_DIR/kcat-$1.conf
    shift
    (
        umask 077
        tr ',' '\n' <<<"$(cv_kafka_sasl_client_opts "$who")" >"$conf"
        echo "sasl.password=$(cv_kafka_sasl_pass "$who")" >>"$conf"
    )
    timeout 20 kcat -b "$(sed -n 's/^export CONVERGE_KAFKA=//p' "$KAUTH_DIR/env")" -F "$conf" "$@"
}

# The keys of every message in converge.check and its express twin (where
# convergectl's jobs go), one a line (read as admin).
kauth_check_keys() {
    local t
    for t in converge.check converge.check.express; do
        kauth_kcat admin -C -t "$t" -o beginning -e -q -f '%k\n' 2>/dev/null
    done
}

test_kafka_auth_wrong_password_exits_3_naming_the_user_and_writes_nothing() {
    kauth_up
    local name err rc=0 before
    name=$(stack_name kauth-wrong)
    before=$(kauth_check_keys | wc -l)
    echo not-the-password >"$KAUTH_DIR/wrong.pass"
    err=$(kauth_ctl cli "$KAUTH_DIR/wrong.pass" submit "$name" "$DATA/stacks/chain.yaml" 2>&1) ||
        rc=$?
    assert_eq 3 "$rc" "exit code ($err)"
    assert_match "Kafka at 127.0.0.1:[0-9]+ refused the credentials of user converge-cli: .*SASL authentication error" \
        "$err" "error message"
    [[ $err != *not-the-password* ]] || fail "the password is in the message"
    assert_eq "" "$(kauth_redis HGET "${CONVERGE_PREFIX:-cv:}stacks" "$name")" "the stack's name stored"
    assert_eq "$before" "$(kauth_check_keys | wc -l)" "messages in converge.check"
}

# A worker given a wrong Kafka password: configuration, not an outage.
test_kafka_auth_worker_with_a_wrong_password_exits_3_at_start() {
    kauth_up
    local out rc=0
    echo not-the-password >"$KAUTH_DIR/wrong.pass"
    out=$(
        # shellcheck disable=SC1091
        source "$KAUTH_DIR/env"
        STATE=$KAUTH_DIR
        CONVERGE_KAFKA_OPTS=$(cv_kafka_sasl_client_opts worker) \
            CONVERGE_KAFKA_PASSWORD_FILE=$KAUTH_DIR/wrong.pass \
            timeout 30 "$KAUTH_BIN/converge-engine" --id kauth-wrong 2>&1
    ) || rc=$?
    assert_eq 3 "$rc" "exit code ($(tail -3 <<<"$out"))"
    assert_match "Kafka refused our credentials" "$out" "what the worker says"
    [[ $out != *not-the-password* ]] || fail "the password is in the log"
}

test_kafka_auth_principal_without_acl_cannot_submit_a_job() {
    kauth_up
    local name err rc=0
    name=$(stack_name kauth-guest)
    err=$(kauth_ctl guest "$KAUTH_DIR/kafka-sasl/guest.pass" submit "$name" \
        "$DATA/stacks/chain.yaml" 2>&1) || rc=$?
    assert_eq 3 "$rc" "exit code ($err)"
    assert_match "authorization failed" "$err" "the broker's refusal"
    assert_match "stack $name was not created; nothing of it is left stored" "$err" "the undo"
    assert_eq "" "$(kauth_redis HGET "${CONVERGE_PREFIX:-cv:}stacks" "$name")" "the stack's name stored"
}

test_kafka_auth_forged_job_from_an_unauthorised_principal_is_refused_by_the_broker() {
    kauth_up
    local key out rc=0
    key=forged-$RUN_ID
    # Any bytes will do: the broker refuses before a worker could read them.
    out=$(echo "forged stack job" | kauth_kcat guest -P -t converge.check -k "$key" 2>&1) || rc=$?
    [[ $rc != 0 ]] || fail "kcat as converge-guest exited 0: $out"
    assert_match "Topic authorization failed" "$out" "the broker's refusal"
    assert_eq 0 "$(kauth_check_keys | grep -cxF -- "$key")" "forged messages in converge.check"
    out=$(echo "forged observe job" | kauth_kcat guest -P -t converge.observe -k "$key" 2>&1) || true
    assert_match "Topic authorization failed" "$out" "converge.observe"
}

test_kafka_auth_cli_principal_holds_only_what_convergectl_needs() {
    kauth_up
    local out
    # It must not take the workers' jobs, nor dead-letter, nor make topics.
    out=$(kauth_kcat cli -C -t converge.check -o beginning -e -q 2>&1) || true
    assert_match "Topic authorization failed" "$out" "consuming converge.check"
    out=$(echo x | kauth_kcat cli -P -t converge.dead 2>&1) || true
    assert_match "Topic authorization failed" "$out" "producing to converge.dead"
    # The brokers create a topic a producer names (auto-creation is on),
    # but only for a principal allowed to create it.
    out=$(echo x | kauth_kcat cli -P -t "converge.kauth-$RUN_ID" 2>&1) || true
    kauth_kcat admin -L -J 2>/dev/null | jq -e --arg t "converge.kauth-$RUN_ID" \
        'all(.topics[]; .topic != $t)' >/dev/null || fail "the CLI created a topic: $out"
    # What it needs: describing the topics, reading converge.dead.
    kauth_ctl cli "$KAUTH_DIR/kafka-sasl/cli.pass" topics >/dev/null 2>&1 ||
        fail "convergectl topics as converge-cli: $(kauth_ctl cli "$KAUTH_DIR/kafka-sasl/cli.pass" topics 2>&1)"
    kauth_ctl cli "$KAUTH_DIR/kafka-sasl/cli.pass" dead >/dev/null 2>&1 ||
        fail "convergectl dead as converge-cli: $(kauth_ctl cli "$KAUTH_DIR/kafka-sasl/cli.pass" dead 2>&1)"
}

# A Java client (Kafka's own ConfigCommand, on the deployment's jars) logs in
# with SCRAM-SHA-512, which librdkafka before 2.6.1 cannot do with Kafka 4.
test_kafka_auth_brokers_authenticate_the_scram_users() {
    kauth_up
    local props=$KAUTH_DIR/scram-admin.properties out
    (
        umask 077
        printf '%s\n' security.protocol=SASL_SSL sasl.mechanism=SCRAM-SHA-512 \
            "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"converge-admin\" password=\"$(head -n1 "$KAUTH_DIR/kafka-sasl/admin.pass")\";" \
            ssl.truststore.type=PEM "ssl.truststore.location=$KAUTH_DIR/kafka-sasl/ca.crt" >"$props"
    )
    out=$(timeout 60 "$(cv_kafka_java)" -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
        -cp "$CV_KAFKA_HOME/libs/*" kafka.admin.ConfigCommand \
        --bootstrap-server "$(sed -n 's/^export CONVERGE_KAFKA=//p' "$KAUTH_DIR/env")" \
        --command-config "$props" --describe --entity-type users 2>&1) ||
        fail "ConfigCommand over SCRAM: $(tail -3 <<<"$out")"
    local who
    for who in admin worker cli guest; do
        assert_match "user-principal 'converge-$who' are SCRAM-SHA-512" "$out" "converge-$who"
    done
}

test_kafka_auth_stack_completes_over_sasl_ssl_and_no_password_leaks() {
    kauth_up
    local name out who pw p=${CONVERGE_PREFIX:-cv:}
    name=$(stack_name kauth-ok)
    out=$(kauth_ctl cli "$KAUTH_DIR/kafka-sasl/cli.pass" submit "$name" "$DATA/stacks/chain.yaml" \
        --wait --timeout 60 2>&1) || fail "create as converge-cli: $out"
    assert_match CREATE_COMPLETE "$out" "the create's end"
    out=$(kauth_ctl cli "$KAUTH_DIR/kafka-sasl/cli.pass" delete "$name" --wait --timeout 60 2>&1) ||
        fail "delete as converge-cli: $out"
    assert_match DELETE_COMPLETE "$out" "the delete's end"
    for who in admin worker cli guest; do
        pw=$(head -n1 "$KAUTH_DIR/kafka-sasl/$who.pass")
        ! pgrep -af -- "$pw" >/dev/null || fail "the $who password is in ps output"
        ! grep -rqF -- "$pw" "$KAUTH_DIR/log" "$KAUTH_DIR/env" "$KAUTH_DIR/worker.env" ||
            fail "the $who password is in a log or an env file"
        ! kauth_redis HGETALL "${p}worker:engine-1" | grep -qF -- "$pw" ||
            fail "the $who password is in a worker's status hash"
    done
}
