#!/usr/bin/env bash
# check.sh — the invariants of a stack at the end of a chaos phase; also
# sourced by tests/chaos/run.sh (chaos_check). Prints one line per finding
# ("VIOLATION: ..." or "note: ...") and exits 1 when there is a violation.
#
#   tests/chaos/check.sh --dir STATE --stack ID --phase create|update|delete
#        --deps FILE [--changes FILE] [--before DUMP] [--expect STATUS]
#        [--ledger required|optional|auto] [--build-dir DIR] [--save DUMP]
#        [--from-traversal T]
#
# --deps and --changes are the files tests/chaos/gen.sh writes; --before is
# the dump saved (--save) at the end of the create phase, so that an update
# can be checked against it. The stack is read in one round trip by dump.lua
# (records, index, counts, ledger, leases, the traversal's events).
# What is checked (check.jq): the expected terminal status, progress done ==
# total; no resource missing or extra (records, index) and each settled, no
# replaced version left; status counts == records; the ledger: every version
# created at most once, each current and replaced version exactly once, none
# deleted twice, none created and then neither current nor deleted, and after
# a delete as many deletes as creates; an update changed what it had to and
# nothing else; events in dependency order (a child's first IN_PROGRESS after
# each parent's first COMPLETE; on delete reversed; a replaced version
# deleted after its successor was created).
# --ledger auto (default): required when the workers' binary mentions the
# ledger (the scripts are embedded in it), otherwise only noted as missing.
# On a Redis Cluster (STATE/ports lists its nodes) the stack is read from its
# slot's master.

CHAOS_HERE=${CHAOS_HERE:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}

# chaos_redis_ports STATE: the ports of STATE's Redis, one a line: REDIS_PORT,
# or on a Redis Cluster (up.sh --redis-cluster) the port of every node.
chaos_redis_ports() {
    awk -F= '$1 ~ /^REDIS_CLUSTER_PORT_[0-9]+$/ { n++; print $2 } $1 == "REDIS_PORT" { one = $2 }
        END { if (!n) print one }' "$1/ports"
}

# chaos_redis_on PORT... -- ARGS...: redis-cli (10 s at most) on the Redis of
# PORT; given more ports, a Redis Cluster: through the first node that
# answers (one may be a master just killed), following redirections (-c),
# so that a command with a key reaches the master of its slot now. A
# command whose master is down prints nothing and fails, and so does one
# Redis answers with a cluster error (CLUSTERDOWN during a failover, which
# redis-cli prints and exits 0 on: read as a status it would look settled).
# A script reaches its slot's master only by naming a key (a keyless one
# runs on whichever node answered).
CHAOS_REDIS_AUTH=${CHAOS_REDIS_AUTH:-}

# chaos_redis_auth STATE: the operator's Redis password of STATE, "" when its
# Redis has no ACL users (up.sh --insecure).
chaos_redis_auth() {
    [[ -f $1/redis.acl && -s $1/redis-admin.pass ]] && head -n1 "$1/redis-admin.pass"
    return 0
}

# chaos_rcli ARGS...: redis-cli, 10 s at most, with the operator's password
# when there is one (through the environment, never the command line).
chaos_rcli() {
    if [[ -n $CHAOS_REDIS_AUTH ]]; then
        REDISCLI_AUTH=$CHAOS_REDIS_AUTH timeout 10 redis-cli "$@"
    else
        timeout 10 redis-cli "$@"
    fi
}

chaos_redis_on() {
    local ports=() port out rc
    while (($#)) && [[ $1 != -- ]]; do ports+=("$1"); shift; done
    shift
    if ((${#ports[@]} == 1)); then
        chaos_rcli -h 127.0.0.1 -p "${ports[0]}" "$@"
        return
    fi
    for port in "${ports[@]}"; do
        out=$(chaos_rcli -c -h 127.0.0.1 -p "$port" "$@" 2>&1)
        rc=$?
        # Refused by the node asked: the next one. Refused by the master it
        # was redirected to: that master is down, so is every answer.
        if [[ $out == "Could not connect to Redis at 127.0.0.1:$port:"* ]]; then continue; fi
        if [[ $out == "Could not connect to Redis at"* ]]; then return 1; fi
        [[ $out =~ ^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN|LOADING|MOVED|ASK)\  ]] && return 1
        [[ -z $out ]] || printf '%s\n' "$out"
        return $rc
    done
    return 1
}

# chaos_redis STATE ARGS...: redis-cli on STATE's Redis (chaos_redis_on).
chaos_redis() {
    local state=$1 ports CHAOS_REDIS_AUTH
    shift
    CHAOS_REDIS_AUTH=$(chaos_redis_auth "$state")
    mapfile -t ports < <(chaos_redis_ports "$state")
    chaos_redis_on "${ports[@]}" -- "$@"
}

# chaos_dump STATE ID [TRAVERSAL]: the stack as JSON (dump.lua). The script
# names the stack's key, so that on a Redis Cluster it runs on the master of
# the stack's slot; the stack's name (cv:stacks, in another slot) is then
# read by a command of its own.
chaos_dump() {
    local state=$1 id=$2 trav=${3:-} prefix=${CONVERGE_PREFIX:-cv:} ports dump name mapped
    mapfile -t ports < <(chaos_redis_ports "$state")
    if ((${#ports[@]} == 1)); then
        chaos_redis_on "${ports[@]}" -- --eval "$CHAOS_HERE/dump.lua" "$prefix{$id}:stack" , "$prefix" "$id" "$trav"
        return
    fi
    dump=$(chaos_redis_on "${ports[@]}" -- --eval "$CHAOS_HERE/dump.lua" "$prefix{$id}:stack" , \
        "$prefix" "$id" "$trav" cluster) || return 1
    [[ $dump == "{"* ]] || { printf '%s\n' "$dump" >&2; return 1; }
    name=$(chaos_redis_on "${ports[@]}" -- hget "$prefix{$id}:stack" name) || return 1
    mapped=$(chaos_redis_on "${ports[@]}" -- hget "${prefix}stacks" "$name") || return 1
    jq -c --arg m "$mapped" '.name_mapped = $m' <<<"$dump"
}

# chaos_wait_unnamed STATE ID: waits (30 s at most) until the name of the
# deleted stack ID no longer maps to it. The worker that completes a delete
# frees the name right after (another slot than the stack's keys: not in the
# same script); killed in between, the reaper frees it at its next pass
# (docs/architecture.md). The check then judges what is left.
chaos_wait_unnamed() {
    local name deadline=$((SECONDS + 30))
    name=$(chaos_redis "$1" hget "${CONVERGE_PREFIX:-cv:}{$2}:stack" name 2>/dev/null)
    [[ -n $name ]] || return 0
    while ((SECONDS < deadline)) &&
        [[ $(chaos_redis "$1" hget "${CONVERGE_PREFIX:-cv:}stacks" "$name" 2>/dev/null) == "$2" ]]; do
        sleep 0.2
    done
}

# chaos_ledger_mode BUILD_DIR: required when the engine knows the ledger.
chaos_ledger_mode() {
    if grep -q ':ledger\|ledger' "$1/converge-engine" 2>/dev/null; then echo required; else echo optional; fi
}

# chaos_check STATE ID PHASE DEPS CHANGES BEFORE EXPECT LEDGER [SAVE] [FROM_TRAVERSAL]
# Prints the findings; returns 1 if any is a violation. The events judged are
# those of FROM_TRAVERSAL (default: the stack's current one) and later.
chaos_check() {
    local state=$1 id=$2 phase=$3 deps=$4 changes=$5 before=$6 expect=$7 ledger=$8 save=${9:-}
    local trav=${10:-} dump out
    [[ -n $trav ]] || trav=$(chaos_redis "$state" hget "${CONVERGE_PREFIX:-cv:}{$id}:stack" traversal 2>/dev/null)
    [[ $expect != DELETE_COMPLETE ]] || chaos_wait_unnamed "$state" "$id"
    if ! dump=$(chaos_dump "$state" "$id" "$trav") || [[ -z $dump ]]; then
        echo "VIOLATION: cannot read stack $id from Redis"
        return 1
    fi
    [[ -n $save ]] && printf '%s\n' "$dump" >"$save"
    [[ -n $changes && -f $changes ]] || changes=/dev/null
    [[ -n $before && -f $before ]] || before=/dev/null
    if ! out=$(jq -r --arg phase "$phase" --arg expect "$expect" --arg ledger_mode "$ledger" \
        --slurpfile deps "$deps" --slurpfile changes "$changes" --slurpfile before "$before" \
        -f "$CHAOS_HERE/check.jq" <<<"$dump" 2>&1); then
        echo "VIOLATION: the checker failed: $out"
        return 1
    fi
    [[ -z $out ]] || printf '%s\n' "$out"
    [[ $out != *VIOLATION:* ]]
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    set -uo pipefail
    state="" id="" phase="" deps="" changes="" before="" expect="" ledger=auto build="" save="" from=""
    while (($#)); do
        case $1 in
        --dir) state=$2 ;;
        --stack) id=$2 ;;
        --phase) phase=$2 ;;
        --deps) deps=$2 ;;
        --changes) changes=$2 ;;
        --before) before=$2 ;;
        --expect) expect=$2 ;;
        --ledger) ledger=$2 ;;
        --build-dir) build=$2 ;;
        --save) save=$2 ;;
        --from-traversal) from=$2 ;;
        -h | --help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
        esac
        shift 2 || { echo "$1 needs a value" >&2; exit 2; }
    done
    [[ -n $state && -n $id && -n $phase && -n $deps ]] || { echo "--dir, --stack, --phase and --deps are required" >&2; exit 2; }
    if [[ -z $expect ]]; then
        case $phase in create) expect=CREATE_COMPLETE ;; update) expect=UPDATE_COMPLETE ;; *) expect=DELETE_COMPLETE ;; esac
    fi
    [[ $ledger != auto ]] || ledger=$(chaos_ledger_mode "${build:-$CHAOS_HERE/../../build}")
    chaos_check "$state" "$id" "$phase" "$deps" "$changes" "$before" "$expect" "$ledger" "$save" "$from"
fi
