# shellcheck shell=bash
# kafka_sasl.sh — Kafka with SASL/SCRAM over TLS and topic ACLs, for a
# deployment started with up.sh --kafka-sasl (docs/security.md). Sourced by
# kafka.sh, never run.
#
# Everything lives in STATE/kafka-sasl/ (0700), made at set-up:
#   ca.crt ca.key          a local CA (openssl)
#   broker.pem             the brokers' key and certificate for 127.0.0.1 (PEM keystore)
#   {admin,worker,cli,guest}.pass   the SCRAM passwords (0600, kept across runs)
#   admin.conf             librdkafka/kcat settings of the admin (0600)
#   format.args            StorageTool's arguments with the SCRAM users (0600): read by
#                          java as an @argfile, so no password is on a command line
#   acl.rules              the ACLs (converge-kafka-acl's input)
# Users: converge-admin (super user: the brokers themselves, up.sh, the
# operator), converge-worker (engines and observers), converge-cli
# (convergectl), converge-guest (no ACL at all: what an unauthorised client
# can do, for the tests). The mode is on while STATE/kafka-sasl/admin.conf
# exists; up.sh decides it when the brokers start.

CV_KAFKA_SASL_USERS="admin worker cli guest"

# The SASL mechanism Converge's clients use: SCRAM-SHA-512, unless the
# librdkafka they are built with is older than 2.6.1. Those (Debian 12 has
# 2.0.2) send a SCRAM client-final nonce that Kafka 4 rejects as invalid
# credentials (librdkafka#4895), so they use PLAIN, which the brokers also
# accept over the same TLS listener, for the same users and passwords.
cv_kafka_sasl_mechanism() {
    local v
    v=$(pkg-config --modversion rdkafka 2>/dev/null) || v=0
    if [[ $(printf '%s\n' "$v" 2.6.1 | sort -V | head -n1) == 2.6.1 ]]; then
        echo SCRAM-SHA-512
    else
        echo PLAIN
    fi
}

cv_kafka_sasl_dir() { echo "$STATE/kafka-sasl"; }

# True when this deployment's brokers run with SASL (decided at their start).
cv_kafka_sasl_on() { [[ -f $STATE/kafka-sasl/admin.conf ]]; }

# Makes FILE hold a new random password (0600) unless it holds one already.
cv_kafka_sasl_secret() {
    [[ -s $1 ]] && return 0
    (umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$1" && echo >>"$1")
}

cv_kafka_sasl_pass() { head -n1 "$STATE/kafka-sasl/$1.pass"; }

# A CA and the brokers' certificate for 127.0.0.1, unless there; the key is
# PKCS#8 PEM, which Kafka reads as a PEM keystore (ssl.keystore.type=PEM).
cv_kafka_sasl_certs() {
    local dir=$1
    [[ -s $dir/broker.pem && -s $dir/ca.crt ]] && return 0
    if ! cv_tls_certs "$dir" broker "Converge local Kafka CA" \
        "IP:127.0.0.1,DNS:127.0.0.1,DNS:localhost" serverAuth,clientAuth; then
        cv_die "openssl could not make the Kafka certificates: $dir/openssl.log"
    fi
    # one PEM holding the key then the certificate: Kafka's PEM keystore
    (umask 077 && cat "$dir/broker.key" "$dir/broker.crt" >"$dir/broker.pem")
    rm -f "$dir/broker.key"
}

# The librdkafka settings of converge-USER without its password (that comes
# from CONVERGE_KAFKA_PASSWORD_FILE=STATE/kafka-sasl/USER.pass): what
# CONVERGE_KAFKA_OPTS holds, comma-separated.
cv_kafka_sasl_client_opts() {
    echo "security.protocol=SASL_SSL,sasl.mechanisms=$(cv_kafka_sasl_mechanism),sasl.username=converge-$1,ssl.ca.location=$STATE/kafka-sasl/ca.crt"
}

# The ACLs, one per line (deploy/tools/converge_kafka_acl.c reads them).
# converge-worker: consumes converge.check/observe in its groups and their
# express twins in the -express groups, produces to every topic. converge-cli: produces jobs
# (submit, delete, signal, hooks: converge.check[.express]; mark, observe:
# converge.observe[.express]), reads
# converge.dead (`convergectl dead`, assigned partitions under a throwaway
# convergectl-* group) and describes the topics (`convergectl topics`).
# Nobody but the admin creates, deletes or alters topics or ACLs.
cv_kafka_sasl_acl_rules() {
    local t op
    for t in converge.check converge.observe converge.check.express converge.observe.express; do
        for op in read write describe; do echo "User:converge-worker topic literal $t $op"; done
        for op in write describe; do echo "User:converge-cli topic literal $t $op"; done
    done
    for op in write describe; do echo "User:converge-worker topic literal converge.dead $op"; done
    for op in read describe; do echo "User:converge-cli topic literal converge.dead $op"; done
    local g
    for g in converge-engine converge-observer converge-engine-express converge-observer-express; do
        echo "User:converge-worker group literal $g read"
    done
    echo "User:converge-cli group prefixed convergectl- read"
    # Kafka 3+ grants an idempotent producer's InitProducerId on Write to
    # any topic; granted explicitly for brokers that still ask for it.
    echo "User:converge-worker cluster literal kafka-cluster idempotent_write"
    echo "User:converge-cli cluster literal kafka-cluster idempotent_write"
}

# Makes the certificates, the passwords, admin.conf, format.args and
# acl.rules; turns the mode on.
cv_kafka_sasl_setup() {
    local dir who
    dir=$(cv_kafka_sasl_dir)
    mkdir -p "$dir" && chmod 0700 "$dir"
    cv_kafka_sasl_certs "$dir"
    for who in $CV_KAFKA_SASL_USERS; do cv_kafka_sasl_secret "$dir/$who.pass"; done
    (
        umask 077
        tr ',' '\n' <<<"$(cv_kafka_sasl_client_opts admin)" >"$dir/admin.conf.tmp"
        echo "sasl.password=$(cv_kafka_sasl_pass admin)" >>"$dir/admin.conf.tmp"
        for who in $CV_KAFKA_SASL_USERS; do
            printf '%s\n' --add-scram "SCRAM-SHA-512=[name=converge-$who,password=$(cv_kafka_sasl_pass "$who")]"
        done >"$dir/format.args"
        cv_kafka_sasl_acl_rules >"$dir/acl.rules"
        mv -f "$dir/admin.conf.tmp" "$dir/admin.conf"
    )
}

# Turns the mode off (the certificates and passwords are kept).
cv_kafka_sasl_off() { rm -f "$STATE/kafka-sasl/admin.conf" "$STATE/kafka-sasl/format.args"; }

# The broker settings of SASL mode for broker K (kafka.sh writes the rest).
# Clients and the brokers among themselves: SASL_SSL; SCRAM-SHA-512 (the
# users made at format time, salted in the metadata log; the brokers as
# converge-admin) and PLAIN (the same users in the listener's JAAS line, for
# clients whose librdkafka cannot do SCRAM with Kafka 4). The controller
# listener: SASL_SSL with PLAIN, its one user in the JAAS line, since SCRAM
# credentials live in the metadata log the controllers serve and cannot
# authenticate them. The StandardAuthorizer allows nothing but what an ACL
# grants, except to the super user.
cv_kafka_sasl_properties() {
    local k=$1 dir pw who plain_users=""
    dir=$(cv_kafka_sasl_dir)
    pw=$(cv_kafka_sasl_pass admin)
    for who in $CV_KAFKA_SASL_USERS; do
        plain_users+=" user_converge-$who=\"$(cv_kafka_sasl_pass "$who")\""
    done
    cat <<EOF
listeners=SASL_SSL://127.0.0.1:$(cv_kafka_port "$k"),CONTROLLER://127.0.0.1:$(cv_kafka_ctrl_port "$k")
advertised.listeners=SASL_SSL://127.0.0.1:$(cv_kafka_port "$k")
controller.listener.names=CONTROLLER
inter.broker.listener.name=SASL_SSL
listener.security.protocol.map=SASL_SSL:SASL_SSL,CONTROLLER:SASL_SSL
sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN
sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="converge-admin" password="$pw";
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required$plain_users;
sasl.mechanism.controller.protocol=PLAIN
listener.name.controller.sasl.enabled.mechanisms=PLAIN
listener.name.controller.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="converge-admin" password="$pw" user_converge-admin="$pw";
ssl.keystore.type=PEM
ssl.keystore.location=$dir/broker.pem
ssl.truststore.type=PEM
ssl.truststore.location=$dir/ca.crt
ssl.client.auth=none
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:converge-admin
allow.everyone.if.no.acl.found=false
EOF
}

# Runs CMD... as converge-USER: the settings in CONVERGE_KAFKA_OPTS, the
# password by file.
cv_kafka_sasl_as() {
    local who=$1
    shift
    CONVERGE_KAFKA_OPTS=$(cv_kafka_sasl_client_opts "$who") \
        CONVERGE_KAFKA_PASSWORD_FILE=$STATE/kafka-sasl/$who.pass "$@"
}

# Grants the ACLs of acl.rules with BUILD_DIR's converge-kafka-acl.
cv_kafka_sasl_grant() {
    local build_dir=$1
    [[ -x $build_dir/converge-kafka-acl ]] ||
        cv_die "$build_dir/converge-kafka-acl does not exist: it grants the Kafka ACLs; build it first"
    CONVERGE_KAFKA=$(cv_kafka_bootstrap) cv_kafka_sasl_as admin \
        "$build_dir/converge-kafka-acl" <"$STATE/kafka-sasl/acl.rules"
}
