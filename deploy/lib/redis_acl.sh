# shellcheck shell=bash
# redis_acl.sh — the Redis users of a deployment started with --redis-acl
# (sourced by deploy/local/up.sh; docs/security.md explains every rule).
#
# converge-worker: engines, observers and node agents; every key and channel
# under the prefix, only the commands they send (their scripts' inner calls
# included, since Redis 7 checks those against the caller's ACL too).
# converge-cli: convergectl; reads every key under the prefix but writes only
# the stack names, the index of deleted stacks (purge), the stacks' keys and
# the cluster's keys — not the workers' liveness hashes, the reaper's lease
# or the set of active stacks.
# default: the operator (up.sh, redis-cli), every command, its own password.
# On a Redis Cluster (up.sh --redis-cluster --redis-acl) the clients also send
# what the cluster client sends, and a fourth user, converge-replica, is what
# every replica authenticates to its master as (masteruser, masterauth).
# Passwords are random, kept in STATE/redis-{worker,cli,admin[,replica]}.pass
# (0600), and only their SHA-256 is written to the ACL file.

# Commands both kinds of client send: the connection and the scripts, and
# what the scripts call inside (proto/lua/*.lua).
CV_REDIS_ACL_COMMON="+auth +select +ping +evalsha +eval +script|load
 +del +exists +get +hdel +hexists +hget +hgetall +hincrby +hkeys +hlen +hmget +hscan +hset
 +hsetnx +pexpire +pttl +publish +rename +sadd +scard +set +sismember +srem +time +unlink +xadd"
# What only the workers and agents send themselves (liveness, reaper, agents).
CV_REDIS_ACL_WORKER="+expire +hvals +smembers +sscan +subscribe +zadd +zrangebyscore +zrem"
# What only convergectl sends (transactions, events, the watch loop).
CV_REDIS_ACL_CLI="+hvals +scan +smembers +type +multi +exec +watch +xrange +xread +zrangebyscore +zrem"

# What the cluster client sends (proto/io/cv_redis.c, cv_redis_sync.c): the
# slot map and ASK's ASKING, for both; INFO replication and WAIT, for the
# CLI's wait for a replica before it acknowledges (docs/redis-cluster.md).
CV_REDIS_ACL_CLUSTER="+cluster|slots +asking"
CV_REDIS_ACL_CLUSTER_CLI="+info +wait"
# What a replica sends its master: the handshake and the replication stream.
CV_REDIS_ACL_REPLICA="+auth +ping +replconf +psync +sync"

# Makes FILE hold a new random password (0600) unless it holds one already.
cv_redis_acl_secret() {
    [[ -s $1 ]] && return 0
    (umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$1" && echo >>"$1")
}

cv_redis_acl_hash() {
    printf '%s' "$(head -n1 "$1")" | sha256sum | cut -d' ' -f1
}

# Writes the ACL file for prefix P to stdout; the passwords come from
# STATE_DIR/redis-{worker,cli,admin}.pass, and with a third argument
# "cluster" the cluster's commands and converge-replica (redis-replica.pass).
# shellcheck disable=SC2086 # the command lists are split into words on purpose
cv_redis_acl_rules() {
    local p=$1 dir=$2 cluster="" cluster_cli=""
    [[ ${3:-} != cluster ]] || cluster=$CV_REDIS_ACL_CLUSTER cluster_cli=$CV_REDIS_ACL_CLUSTER_CLI
    echo "user default on #$(cv_redis_acl_hash "$dir/redis-admin.pass") ~* &* +@all"
    echo "user converge-worker on #$(cv_redis_acl_hash "$dir/redis-worker.pass")" \
        "resetkeys ~$p* resetchannels &$p* -@all" $CV_REDIS_ACL_COMMON $CV_REDIS_ACL_WORKER $cluster
    echo "user converge-cli on #$(cv_redis_acl_hash "$dir/redis-cli.pass")" \
        "resetkeys %R~$p* ~${p}stacks ~${p}deleted ~$p{* resetchannels &$p{cluster}:notify:* -@all" \
        $CV_REDIS_ACL_COMMON $CV_REDIS_ACL_CLI $cluster $cluster_cli
    [[ -z $cluster ]] ||
        echo "user converge-replica on #$(cv_redis_acl_hash "$dir/redis-replica.pass")" \
            "resetkeys resetchannels -@all" $CV_REDIS_ACL_REPLICA
}

# Makes the passwords and STATE/redis.acl for prefix P in STATE_DIR; with a
# third argument "cluster", those of a Redis Cluster (cv_redis_acl_rules).
cv_redis_acl_setup() {
    local p=$1 dir=$2 who whos=(admin worker cli)
    [[ ${3:-} != cluster ]] || whos+=(replica)
    for who in "${whos[@]}"; do cv_redis_acl_secret "$dir/redis-$who.pass"; done
    (umask 077 && cv_redis_acl_rules "$p" "$dir" "${3:-}" >"$dir/redis.acl")
}
