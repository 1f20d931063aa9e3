# shellcheck shell=bash
#
# kafka.sh — the local Kafka brokers: Apache Kafka 4.1 in KRaft combined mode
# (each broker is also a controller of the metadata quorum; no ZooKeeper),
# one or three of them on loopback. Shared by up.sh (start), service.sh
# (restart one broker) and the chaos suite. Sourced after common.sh and
# state.sh, never run.
#
# Broker K (0-based) is the process named kafka (K = 0) or kafka-K, with
# node.id K, its client port KAFKA_PORT_K (KAFKA_PORT = KAFKA_PORT_0), its
# controller port KAFKA_CTRL_PORT_K, its configuration STATE/NAME.properties
# and its data STATE/NAME-data/. KAFKA_BROKERS is their number. With
# --kafka-sasl, clients speak SASL_SSL with SCRAM and topic ACLs apply
# (kafka_sasl.sh).

# shellcheck source=SCRIPTDIR/kafka_sasl.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka_sasl.sh"

# cv_kafka_name K: the process name of broker K.
cv_kafka_name() { if (($1 == 0)); then echo kafka; else echo "kafka-$1"; fi; }

# cv_kafka_names: every broker's process name.
cv_kafka_names() {
    local k
    for ((k = 0; k < ${KAFKA_BROKERS:-1}; k++)); do cv_kafka_name "$k"; done
}

# cv_kafka_port K / cv_kafka_ctrl_port K: broker K's ports.
cv_kafka_port() { local v=KAFKA_PORT_$1 && echo "${!v:-}"; }
cv_kafka_ctrl_port() { local v=KAFKA_CTRL_PORT_$1 && echo "${!v:-}"; }

# cv_kafka_bootstrap: every broker's address, as clients take it.
cv_kafka_bootstrap() {
    local k list=""
    for ((k = 0; k < ${KAFKA_BROKERS:-1}; k++)); do
        list+="${list:+,}127.0.0.1:$(cv_kafka_port "$k")"
    done
    echo "$list"
}

# Metadata for all topics, as JSON, from any broker. Never ask for named
# topics: with auto-creation on, asking for a missing topic creates it.
# The settings are STATE's alone: a KCAT_CONFIG the caller exports (the
# integration helpers' for their deployment) must not reach another's brokers.
cv_kafka_metadata() {
    local admin=()
    if cv_kafka_sasl_on; then admin=(-F "$STATE/kafka-sasl/admin.conf"); fi
    env -u KCAT_CONFIG timeout 10 kcat -L -J -m 2 -b "$(cv_kafka_bootstrap)" "${admin[@]}" 2>/dev/null
}

# cv_kafka_port_open K: broker K accepts connections.
cv_kafka_port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$(cv_kafka_port "$1")") 2>/dev/null; }

# True once every broker is in the cluster's metadata.
cv_kafka_brokers_listed() {
    cv_kafka_port_open 0 || return 1
    cv_kafka_metadata | jq -e --argjson n "${KAFKA_BROKERS:-1}" \
        '[.brokers[].id] | length == $n' >/dev/null 2>&1
}

# cv_kafka_write_config K PARTITIONS: broker K's server.properties.
# Replication follows the broker count: with three brokers every topic has
# three replicas and an acknowledged message (acks=all) is on two at least
# (min.insync.replicas 2), so losing one broker loses nothing.
cv_kafka_write_config() {
    local k=$1 partitions=$2 n=${KAFKA_BROKERS:-1} voters="" i rf isr
    for ((i = 0; i < n; i++)); do
        voters+="${voters:+,}$i@127.0.0.1:$(cv_kafka_ctrl_port "$i")"
    done
    rf=$((n >= 3 ? 3 : n)) isr=$((n >= 3 ? 2 : 1))
    local name
    name=$(cv_kafka_name "$k")
    # group.min.session.timeout.ms: workers may ask for a session of 1 s, so
    # that a dead worker's partitions move within a second or two (the
    # production default of 6 s trades that for tolerance of long GC or
    # network pauses: docs/kafka.md). group.initial.rebalance.delay.ms 0: the
    # first worker of a group starts at once instead of waiting 3 s for others.
    # broker.session.timeout.ms: the controllers fence a broker that sent no
    # heartbeat for 2 s (default 9 s) and move its partitions' leadership,
    # so a killed broker's partitions are led again within about 2 s.
    # With SASL the file holds the admin's password: 0600.
    (umask 077 && cv_kafka_listeners "$k" >"$STATE/$name.properties")
    cat >>"$STATE/$name.properties" <<EOF
process.roles=broker,controller
node.id=$k
controller.quorum.voters=$voters
log.dirs=$STATE/$name-data
num.partitions=$partitions
default.replication.factor=$rf
min.insync.replicas=$isr
offsets.topic.replication.factor=$rf
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$isr
auto.create.topics.enable=true
delete.topic.enable=true
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=500
group.max.session.timeout.ms=30000
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=2000
log.cleaner.dedupe.buffer.size=33554432
EOF
}

# cv_kafka_listeners K: broker K's listeners: plain text, or SASL_SSL.
cv_kafka_listeners() {
    if cv_kafka_sasl_on; then
        cv_kafka_sasl_properties "$1"
        return
    fi
    cat <<EOF
listeners=PLAINTEXT://127.0.0.1:$(cv_kafka_port "$1"),CONTROLLER://127.0.0.1:$(cv_kafka_ctrl_port "$1")
advertised.listeners=PLAINTEXT://127.0.0.1:$(cv_kafka_port "$1")
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
EOF
}

# cv_kafka_java: the java binary (JAVA_HOME's when set).
cv_kafka_java() { if [[ -n ${JAVA_HOME:-} ]]; then echo "$JAVA_HOME/bin/java"; else echo java; fi; }

# cv_kafka_format CLUSTER_ID K: formats broker K's empty data directory.
# Short-lived JVM: its output goes to STATE/log/NAME-format.log. With SASL
# the SCRAM users are added to the first metadata (KIP-900) from an argfile,
# so that no password is on a command line.
cv_kafka_format() {
    local name scram=()
    name=$(cv_kafka_name "$2")
    if cv_kafka_sasl_on; then scram=("@$STATE/kafka-sasl/format.args"); fi
    "$(cv_kafka_java)" -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
        -cp "$CV_KAFKA_HOME/libs/*" kafka.tools.StorageTool format \
        -t "$1" -c "$STATE/$name.properties" "${scram[@]}" >"$STATE/log/$name-format.log" 2>&1
}

# cv_kafka_spawn K: starts broker K on its formatted data.
cv_kafka_spawn() {
    local name
    name=$(cv_kafka_name "$1")
    cv_spawn "$STATE/pids/$name.pid" "$STATE/log/$name.log" \
        "$(cv_kafka_java)" -Xmx512m -Xms512m -XX:+UseSerialGC -Djava.awt.headless=true \
        -cp "$CV_KAFKA_HOME/libs/*" kafka.Kafka "$STATE/$name.properties"
}

# A new cluster id: 16 random bytes, base64url without padding (Kafka's Uuid).
# Never one that starts with '-', which the storage tool would read as an
# option (one format in 64 failed so); Kafka's own Uuid.randomUuid skips them too.
cv_kafka_cluster_id() {
    local id=-
    while [[ $id == -* ]]; do
        id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
    done
    echo "$id"
}
