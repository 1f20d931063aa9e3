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

CHAOS_HERE=${CHAOS_HERE:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}

# chaos_dump STATE ID [TRAVERSAL]: the stack as JSON (dump.lua).
chaos_dump() {
    local state=$1 id=$2 trav=${3:-} port
    port=$(sed -n 's/^REDIS_PORT=//p' "$state/ports")
    timeout 60 redis-cli -h 127.0.0.1 -p "$port" --eval "$CHAOS_HERE/dump.lua" , \
        "${CONVERGE_PREFIX:-cv:}" "$id" "$trav"
}

# chaos_wait_unnamed STATE ID: waits (30 s at most) until the name of the
# deleted stack ID no longer maps to it. The worker that completes a delete
# frees the name right after (another slot than the stack's keys: not in the
# same script); killed in between, the reaper frees it at its next pass
# (docs/architecture.md). The check then judges what is left.
chaos_wait_unnamed() {
    local port name deadline=$((SECONDS + 30))
    port=$(sed -n 's/^REDIS_PORT=//p' "$1/ports")
    name=$(redis-cli -h 127.0.0.1 -p "$port" hget "${CONVERGE_PREFIX:-cv:}{$2}:stack" name 2>/dev/null)
    [[ -n $name ]] || return 0
    while ((SECONDS < deadline)) &&
        [[ $(redis-cli -h 127.0.0.1 -p "$port" hget "${CONVERGE_PREFIX:-cv:}stacks" "$name" 2>/dev/null) == "$2" ]]; do
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
    [[ -n $trav ]] || trav=$(redis-cli -h 127.0.0.1 -p "$(sed -n 's/^REDIS_PORT=//p' "$state/ports")" \
        hget "${CONVERGE_PREFIX:-cv:}{$id}:stack" traversal 2>/dev/null)
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
        -h | --help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
