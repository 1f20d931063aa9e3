# shellcheck shell=bash
# redis_tls.sh — Redis over TLS for a deployment started with --redis-tls
# (sourced by deploy/local/up.sh; docs/security.md). Debian's hiredis 0.14
# cannot speak TLS, so a client-side stunnel is the sidecar: it listens in
# plain text on loopback (REDIS_PORT, the port every client is given) and
# connects with TLS, verifying the server's certificate against the local
# CA, to Redis, which listens only on its TLS port (REDIS_TLS_PORT; its plain
# port is 0). Certificates are made at set-up with openssl in STATE/tls/.
# A Redis Cluster (--redis-cluster --redis-tls) has one such pair of ports
# per node, one stunnel serving them all, and TLS on its cluster bus and
# replication too (deploy/lib/redis_cluster.sh).

# Makes a CA and a certificate for 127.0.0.1 in DIR, unless there. It is a
# client certificate too: the nodes of a cluster present it to each other
# on the cluster bus, where Redis always asks for one. One made before it
# was (server only) is made again.
cv_redis_tls_certs() {
    local dir=$1
    if [[ -s $dir/redis.crt ]] && ! openssl x509 -in "$dir/redis.crt" -noout -ext extendedKeyUsage \
        2>/dev/null | grep -q 'Client Authentication'; then
        rm -f "$dir/redis.crt" "$dir/ca.crt"
    fi
    cv_tls_certs "$dir" redis "Converge local CA" "IP:127.0.0.1" serverAuth,clientAuth ||
        cv_die "openssl could not make the certificates: $dir/openssl.log"
}

# The redis-server arguments of a TLS-only Redis on TLS_PORT, certificates in DIR.
cv_redis_tls_server_args() {
    local tls_port=$1 dir=$2
    printf '%s\n' --port 0 --tls-port "$tls_port" --tls-cert-file "$dir/redis.crt" \
        --tls-key-file "$dir/redis.key" --tls-ca-cert-file "$dir/ca.crt" --tls-auth-clients no
}

# Writes STATE/stunnel.conf: plain PLAIN_PORT -> TLS TLS_PORT, verified, for
# each pair of ports given.
cv_redis_tls_stunnel_conf() {
    local state=$1 plain_port tls_port
    shift
    {
        cat <<CONF
; The client side of Redis's TLS, written by deploy/local/up.sh --redis-tls.
pid = $state/pids/stunnel.pid
output = $state/log/stunnel.log
foreground = no
CONF
        while (($# >= 2)); do
            plain_port=$1 tls_port=$2
            shift 2
            cat <<CONF
[redis-$tls_port]
client = yes
accept = 127.0.0.1:$plain_port
connect = 127.0.0.1:$tls_port
CAfile = $state/tls/ca.crt
verifyChain = yes
checkIP = 127.0.0.1
CONF
        done
    } >"$state/stunnel.conf"
}
