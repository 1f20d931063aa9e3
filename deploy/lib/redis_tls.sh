# shellcheck shell=bash
# redis_tls.sh — Redis over TLS for a deployment started with --redis-tls
# (sourced by deploy/local/up.sh; docs/security.md). Debian's hiredis 0.14
# cannot speak TLS, so a client-side stunnel is the sidecar: it listens in
# plain text on loopback (REDIS_PORT, the port every client is given) and
# connects with TLS, verifying the server's certificate against the local
# CA, to Redis, which listens only on its TLS port (REDIS_TLS_PORT; its plain
# port is 0). Certificates are made at set-up with openssl in STATE/tls/.

# Makes a CA and a server certificate for 127.0.0.1 in DIR, unless there.
cv_redis_tls_certs() {
    cv_tls_certs "$1" redis "Converge local CA" "IP:127.0.0.1" serverAuth ||
        cv_die "openssl could not make the certificates: $1/openssl.log"
}

# The redis-server arguments of a TLS-only Redis on TLS_PORT, certificates in DIR.
cv_redis_tls_server_args() {
    local tls_port=$1 dir=$2
    printf '%s\n' --port 0 --tls-port "$tls_port" --tls-cert-file "$dir/redis.crt" \
        --tls-key-file "$dir/redis.key" --tls-ca-cert-file "$dir/ca.crt" --tls-auth-clients no
}

# Writes STATE/stunnel.conf: plain PLAIN_PORT -> TLS TLS_PORT, verified.
cv_redis_tls_stunnel_conf() {
    local state=$1 plain_port=$2 tls_port=$3
    cat >"$state/stunnel.conf" <<CONF
; The client side of Redis's TLS, written by deploy/local/up.sh --redis-tls.
pid = $state/pids/stunnel.pid
output = $state/log/stunnel.log
foreground = no
[redis]
client = yes
accept = 127.0.0.1:$plain_port
connect = 127.0.0.1:$tls_port
CAfile = $state/tls/ca.crt
verifyChain = yes
checkIP = 127.0.0.1
CONF
}
