# Helpers for the integration tests (sourced). Tests talk to real Redis and
# Kafka started by deploy/local/up.sh, through convergectl and redis-cli.
# Every wait for a condition goes through cv_wait_until SECONDS WHAT CMD...
# (deploy/lib/common.sh): it polls CMD until it succeeds and returns 1, saying
# what it waited for, once SECONDS have passed.
# shellcheck shell=bash

: "${CONVERGECTL:?CONVERGECTL must point at the convergectl binary}"
: "${STATE:?STATE must name the up.sh state dir}"
# shellcheck disable=SC2034 # read by common.sh
CV_TAG=integration
# shellcheck source=SCRIPTDIR/../../deploy/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/common.sh"
# shellcheck disable=SC1091
source "$STATE/env"
# shellcheck disable=SC2034 # used by the test files sourced after this one
DATA="$(cd "$(dirname "${BASH_SOURCE[0]}")/../data" && pwd)"
RUN_ID=${RUN_ID:-$(date +%s)$$}

ctl() { "$CONVERGECTL" "$@"; }

redis() { # redis-cli against the test Redis
    local hostport=${CONVERGE_REDIS#redis://}; hostport=${hostport%%/*}
    redis-cli -h "${hostport%%:*}" -p "${hostport##*:}" "$@"
}

# A stack name unique to this run, so tests never see each other's stacks.
stack_name() { echo "t${RUN_ID}-$1"; }

fail() { echo "    FAIL: $*" >&2; return 1; }

assert_eq() { # expected actual what
    [ "$1" = "$2" ] || fail "$3: expected '$1', got '$2'"
}

assert_match() { # regex actual what
    [[ $2 =~ $1 ]] || fail "$3: '$2' does not match /$1/"
}

# status_json NAME -> the JSON of `convergectl status -o json`
status_json() { ctl status "$1" -o json; }

jqr() { jq -r "$@"; }

# index_of EVENTS_JSON RESOURCE ACTION STATUS -> position in the event list (-1 if absent)
event_index() {
    jq --arg r "$2" --arg a "$3" --arg s "$4" \
        '[.[] | select(.resource == $r and .action == $a and .status == $s)] as $m
         | if ($m | length) == 0 then -1 else (index($m[0])) end' <<<"$1"
}

# Proves dependency order from the events: for every (child parent) pair,
# the child's ACTION IN_PROGRESS comes after the parent's ACTION COMPLETE.
assert_after() { # events child parent action
    local c p
    c=$(event_index "$1" "$2" "$4" IN_PROGRESS)
    p=$(event_index "$1" "$3" "$4" COMPLETE)
    [ "$c" -ge 0 ] || fail "no $4 IN_PROGRESS event for $2"
    [ "$p" -ge 0 ] || fail "no $4 COMPLETE event for $3"
    [ "$c" -gt "$p" ] || fail "$2 $4 started (event $c) before $3 completed (event $p)"
}

# stack_keys_of NAME -> how many keys belong to stacks called NAME (by the
# `name` of their stack hash): what a refused submit must not leave. Unlike a
# count of all keys, it does not move with other stacks still at work.
stack_keys_of() {
    local keys id n=0 key name
    keys=$(redis --scan --pattern "${CONVERGE_PREFIX:-cv:}{*}:stack")
    [ -n "$keys" ] || { echo 0; return; }
    # One redis-cli for all the HGETs: a run leaves hundreds of stacks.
    while read -r key name; do
        [ "$name" = "$1" ] || continue
        id=${key#*\{}; id=${id%%\}*}
        n=$((n + $(redis --scan --pattern "${CONVERGE_PREFIX:-cv:}{$id}*" | wc -l)))
    done < <(paste -d' ' <(echo "$keys") <(sed 's/.*/HGET "&" name/' <<<"$keys" | redis))
    echo "$n"
}
