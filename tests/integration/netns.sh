#!/usr/bin/env bash
# A network namespace for one worker, to cut it off from Redis or Kafka alone
# (asymmetric partitions). The services listen on 127.0.0.1 of the
# host and Kafka advertises 127.0.0.1:PORT, so a client in the namespace must
# reach exactly those addresses: inside, 127.0.0.1:PORT is sent (DNAT) to
# the host end of a veth pair, 10.200.N.1, and the host sends it on (DNAT) to
# 127.0.0.1:PORT from 127.0.0.1 (SNAT: Redis in protected mode serves only
# loopback clients); route_localnet lets loopback addresses cross the veth.
# A cut drops the packets of one service both ways inside the namespace, as a
# failed link or firewall would: no reset, the connections only stop
# answering; cut-redis-replies drops only what Redis sends back, so the
# requests still reach it and it answers into the void (one way of losing
# replies in flight). A cut replaces the one before it in one nftables
# transaction: no packet passes in between. Rules are nftables tables named after the namespace, so nothing
# else on the host is touched; teardown removes them all.
#
# usage: netns.sh setup NS         (needs CONVERGE_REDIS and CONVERGE_KAFKA)
#        netns.sh cut-redis NS | cut-kafka NS | cut-redis-replies NS
#        netns.sh heal NS | teardown NS
#        netns.sh exec NS CMD...  (runs CMD in the namespace)
# NS: a short name (at most 10 characters); CV_NETNS_NET (default 10.200.0)
# chooses the /30 used: its .1 is the host end, its .2 the namespace's.
# Needs root, `ip` and `nft` (package nftables).
set -euo pipefail

die() { echo "netns.sh: $*" >&2; exit 2; }

[ $# -ge 2 ] || die "usage: netns.sh setup|cut-redis|cut-kafka|cut-redis-replies|heal|teardown|exec NS [CMD...]"
cmd=$1 ns=$2
shift 2
[[ $ns =~ ^[a-z0-9-]{1,10}$ ]] || die "namespace name '$ns': 1-10 of a-z, 0-9, -"
net=${CV_NETNS_NET:-10.200.0}
host_if="cvh-$ns" ns_if="cvn-$ns" table="cvnetns_${ns//-/_}"
host_ip="$net.1" ns_ip="$net.2"

# The TCP ports of a service address list: "redis://h:p/0" or "h1:p1,h2:p2".
ports_of() {
    local s=${1#*://} p out=()
    s=${s%%/*}
    IFS=, read -ra hosts <<<"$s"
    for p in "${hosts[@]}"; do out+=("${p##*:}"); done
    (IFS=,; echo "${out[*]}")
}

in_ns() { ip netns exec "$ns" "$@"; }

setup() {
    : "${CONVERGE_REDIS:?}" "${CONVERGE_KAFKA:?}"
    command -v nft >/dev/null || die "nft not found (package nftables; deploy/local/setup.sh installs it)"
    local ports
    ports="$(ports_of "$CONVERGE_REDIS"),$(ports_of "$CONVERGE_KAFKA")"
    teardown 2>/dev/null || true
    ip netns add "$ns"
    ip link add "$host_if" type veth peer name "$ns_if"
    ip link set "$ns_if" netns "$ns"
    ip addr add "$host_ip/30" dev "$host_if"
    ip link set "$host_if" up
    sysctl -qw "net.ipv4.conf.$host_if.route_localnet=1"
    in_ns ip link set lo up
    in_ns ip addr add "$ns_ip/30" dev "$ns_if"
    in_ns ip link set "$ns_if" up
    in_ns sysctl -qw net.ipv4.conf.all.route_localnet=1 "net.ipv4.conf.$ns_if.route_localnet=1"
    in_ns nft -f - <<EOF
table ip cvnetns {
    chain out {
        type nat hook output priority -100;
        ip daddr 127.0.0.1 tcp dport { $ports } dnat to $host_ip
    }
    chain post {
        type nat hook postrouting priority 100;
        oifname "$ns_if" snat to $ns_ip
    }
}
EOF
    nft -f - <<EOF
table ip $table {
    chain pre {
        type nat hook prerouting priority -100;
        iifname "$host_if" ip daddr $host_ip tcp dport { $ports } dnat to 127.0.0.1
    }
    chain in {
        type nat hook input priority 100;
        iifname "$host_if" ip saddr $ns_ip snat to 127.0.0.1
    }
}
EOF
    echo "netns $ns: $ns_ip -> 127.0.0.1 ports $ports through $host_if"
}

# cut PORTS [replies]: drops the service's packets both ways inside the
# namespace (replies: only those coming in), in place of any earlier cut.
cut_ports() {
    local egress="ip daddr $host_ip tcp dport { $1 } drop"
    [ "${2:-}" != replies ] || egress=""
    in_ns nft -f - <<EOF
add table ip cvcut
delete table ip cvcut
table ip cvcut {
    chain out {
        type filter hook output priority 0;
        $egress
    }
    chain in {
        type filter hook input priority 0;
        ip saddr $host_ip tcp sport { $1 } drop
    }
}
EOF
}

heal() { in_ns nft delete table ip cvcut 2>/dev/null || true; }

teardown() {
    nft delete table ip "$table" 2>/dev/null || true
    ip link del "$host_if" 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
}

case $cmd in
setup) setup ;;
cut-redis) cut_ports "$(ports_of "${CONVERGE_REDIS:?}")" ;;
cut-kafka) cut_ports "$(ports_of "${CONVERGE_KAFKA:?}")" ;;
cut-redis-replies) cut_ports "$(ports_of "${CONVERGE_REDIS:?}")" replies ;;
heal) heal ;;
teardown) teardown ;;
exec) exec ip netns exec "$ns" "$@" ;;
*) die "unknown command '$cmd'" ;;
esac
