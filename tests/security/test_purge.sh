# shellcheck shell=bash
# Nothing kept forever (docs/security.md "Nothing kept forever"): a user who
# creates and deletes stacks all day, fails updates and writes events must
# not fill Redis. Deleted stacks are purged (convergectl purge, and the
# engines' reaper after --deleted-retention-s), the keys of ended and
# superseded traversals are swept, event streams are bounded; and a purge
# never touches a stack that lives, was created again or is in progress.
# Sourced by tests/security/run.sh after tests/integration/lib.sh.

PURGE_P=${CONVERGE_PREFIX:-cv:}
PURGE_BIN=${CONVERGE_BUILD_DIR:-$(dirname "$CONVERGECTL")}

purge_id() { ctl status "$1" -o json | jq -r .id; }
# purge_keys_of ID: every key of the stack ID, one a line.
purge_keys_of() { redis --scan --pattern "${PURGE_P}{$1}*"; }
purge_no_key_of() { [ -z "$(purge_keys_of "$1")" ]; }
# purge_traversal_keys ID: the keys of the stack's traversals (and its gc set).
purge_traversal_keys() {
    purge_keys_of "$1" | grep -E '\}:(rdef|graph|done|publishing|sp|gc)(:|$)' || true
}
purge_no_traversal_key() { [ -z "$(purge_traversal_keys "$1")" ]; }
purge_dbsize_at_most() { [ "$(redis DBSIZE)" -le "$1" ]; }
purge_settled() { [[ $(ctl status "$1" -o json | jq -r .status) != *_IN_PROGRESS ]]; }
purge_expanded() { [ -n "$(redis HGET "${PURGE_P}{$1}:stack" expanded)" ]; }
# purge_swept ID T: no rdef, graph or done key of traversal T of stack ID.
purge_swept() { ! purge_keys_of "$1" | grep -qE ":(graph|rdef|done):$2\$"; }
purge_unnoted() { [ -z "$(redis ZSCORE "${PURGE_P}deleted" "$1")" ]; }

# purge_engines ARGS...: both engines restarted with ARGS (none: as up.sh
# started them); the reaper runs on one of them, whichever holds its lease.
purge_engines() {
    local e
    for e in engine-1 engine-2; do
        deploy/local/service.sh --dir "$STATE" --build-dir "$PURGE_BIN" restart "$e" -- "$@" \
            >/dev/null || fail "could not restart $e" || return 1
    done
}

test_purge_deleted_stacks_leave_no_key() {
    local base name ids=() id i out
    base=$(redis DBSIZE)
    for i in $(seq 1 20); do
        name=$(stack_name purge-cycle-$i)
        ctl submit "$name" "$DATA/stacks/flat.yaml" --wait --timeout 60 >/dev/null
        ids+=("$(purge_id "$name")")
        ctl delete "$name" --wait --timeout 60 >/dev/null
    done
    for id in "${ids[@]}"; do
        [ -n "$(purge_keys_of "$id")" ] || fail "stack $id had no key left before the purge" || return 1
    done
    out=$(ctl purge --older-than 0s)
    for id in "${ids[@]}"; do
        assert_match "purged stack t${RUN_ID}-purge-cycle-[0-9]+ \($id\)" "$out" "purge output" || return 1
        purge_no_key_of "$id" || fail "keys of the purged stack $id remain: $(purge_keys_of "$id")" ||
            return 1
    done
    # The reaper forgets the settled stacks (cv:active), the purge empties
    # cv:deleted: Redis is back to the keys it had before the cycles.
    cv_wait_until 20 "Redis to hold no more keys than the $base before the cycles" \
        purge_dbsize_at_most "$base" || fail "$(redis DBSIZE) keys, $base before" || return 1
    out=$(ctl purge --older-than 0s)
    assert_match "^0 deleted stacks purged" "$out" "a second purge finds nothing"
}

test_purge_refuses_bad_input() {
    local rc d
    for d in "" 5x -1s 1.5h 3h20 999999999999d; do
        rc=0
        ctl purge --older-than "$d" >/dev/null 2>&1 || rc=$?
        assert_eq 2 "$rc" "purge --older-than '$d'" || return 1
    done
    rc=0
    ctl purge >/dev/null 2>&1 || rc=$?
    assert_eq 2 "$rc" "purge without --older-than" || return 1
    ctl purge --help | grep -q -- "--older-than D" || fail "purge --help"
}

test_purge_failed_update_and_rollback_leave_no_traversal_keys() {
    local name id rc=0 U=$DATA/stacks/update
    name=$(stack_name purge-rollback)
    ctl submit "$name" "$U/value.yaml" -P value=good --enable-rollback --wait --timeout 60 >/dev/null
    ctl update "$name" "$U/value.yaml" -P value=bad -P fail=true --wait --timeout 60 \
        >/dev/null 2>&1 || rc=$?
    assert_eq 1 "$rc" "the failed update exits 1" || return 1
    assert_eq ROLLBACK_COMPLETE "$(ctl status "$name" -o json | jq -r .status)" status || return 1
    id=$(purge_id "$name")
    cv_wait_until 10 "the traversal keys of $name to be swept" purge_no_traversal_key "$id" ||
        fail "left after the failed update and its rollback: $(purge_traversal_keys "$id")" || return 1
    # Without rollback the failed traversal's keys go too.
    rc=0
    ctl update "$name" "$U/value.yaml" -P fail=true --disable-rollback --wait --timeout 60 \
        >/dev/null 2>&1 || rc=$?
    assert_eq UPDATE_FAILED "$(ctl status "$name" -o json | jq -r .status)" status || return 1
    cv_wait_until 10 "the keys of the failed update of $name to be swept" \
        purge_no_traversal_key "$id" ||
        fail "left after a failed update: $(purge_traversal_keys "$id")" || return 1
    ctl delete "$name" --wait --timeout 60 >/dev/null
}

test_purge_caps_the_event_stream() {
    local name id tpl n last
    name=$(stack_name purge-events)
    tpl=$(mktemp /tmp/cv-purge-events.XXXXXX.yaml)
    # 1,100 resources that settle at once: an entry each (their two events),
    # past the default bound of 1000 entries.
    {
        echo "heat_template_version: 2018-08-31"
        echo "resources:"
        for n in $(seq 1 1100); do printf '  r%d:\n    type: OS::Heat::None\n' "$n"; done
    } >"$tpl"
    ctl submit "$name" "$tpl" --wait --timeout 120 >/dev/null
    rm -f "$tpl"
    id=$(purge_id "$name")
    n=$(redis XLEN "${PURGE_P}{$id}:events")
    # MAXLEN ~ 1000: at least 1000 kept, whole stream nodes trimmed.
    [ "$n" -ge 1000 ] && [ "$n" -lt 1200 ] ||
        fail "the stack's event stream holds $n entries; the bound is about 1000" || return 1
    last=$(ctl events "$name" -o json | jq -r '.[-1] | "\(.resource) \(.action) \(.status)"')
    assert_eq "$name CREATE COMPLETE" "$last" "the newest event is kept" || return 1
    ctl delete "$name" --wait --timeout 120 >/dev/null
}

test_purge_never_touches_a_live_or_recreated_stack() {
    local live again old new out
    live=$(stack_name purge-live)
    again=$(stack_name purge-again)
    ctl submit "$live" "$DATA/stacks/flat.yaml" --wait --timeout 60 >/dev/null
    ctl submit "$again" "$DATA/stacks/flat.yaml" --wait --timeout 60 >/dev/null
    old=$(purge_id "$again")
    ctl delete "$again" --wait --timeout 60 >/dev/null
    ctl submit "$again" "$DATA/stacks/chain.yaml" --wait --timeout 60 >/dev/null
    new=$(purge_id "$again")
    [ "$old" != "$new" ] || fail "the re-created stack has the old id" || return 1
    # A forged entry names the live stack as deleted long ago.
    redis ZADD "${PURGE_P}deleted" 1 "$(purge_id "$live")" >/dev/null
    out=$(ctl purge --older-than 0s)
    assert_match "purged stack $again \($old\)" "$out" "the deleted one is purged" || return 1
    ! grep -q -e "$new" -e "$(purge_id "$live")" <<<"$out" || fail "purged a live stack: $out" ||
        return 1
    assert_eq CREATE_COMPLETE "$(ctl status "$live" -o json | jq -r .status)" "the live stack" ||
        return 1
    assert_eq CREATE_COMPLETE "$(ctl status "$again" -o json | jq -r .status)" "the re-created one" ||
        return 1
    assert_eq "$new" "$(redis HGET "${PURGE_P}stacks" "$again")" "the name maps to the new stack" ||
        return 1
    ctl output-show "$again" --all >/dev/null || fail "the re-created stack's outputs" || return 1
    [ -n "$(redis HGET "${PURGE_P}{$new}:def" template)" ] || fail "the new stack's definition" ||
        return 1
    purge_no_key_of "$old" || fail "keys of the old stack remain: $(purge_keys_of "$old")" || return 1
    ctl delete "$live" --wait --timeout 60 >/dev/null
    ctl delete "$again" --wait --timeout 60 >/dev/null
}

test_purge_keeps_the_keys_of_a_traversal_in_progress() {
    local name id out t1 t2 U=$DATA/stacks/update
    name=$(stack_name purge-inflight)
    # Its create waits 6 s in `thing`; an update supersedes it meanwhile.
    ctl submit "$name" "$U/value.yaml" -P wait=6 >/dev/null
    id=$(purge_id "$name")
    cv_wait_until 20 "the create of $name to be expanded" purge_expanded "$id" || return 1
    t1=$(redis HGET "${PURGE_P}{$id}:stack" traversal)
    ctl update "$name" "$U/value.yaml" -P wait=6 -P value=two >/dev/null
    t2=$(redis HGET "${PURGE_P}{$id}:stack" traversal)
    [ "$t2" -gt "$t1" ] || fail "the update began no traversal" || return 1
    out=$(ctl purge --older-than 0s)
    ! grep -q "$id" <<<"$out" || fail "purged a stack in progress: $out" || return 1
    # The superseded create's keys go; those of the update in progress stay.
    cv_wait_until 10 "the superseded traversal $t1 of $name to be swept" purge_swept "$id" "$t1" ||
        fail "keys of the superseded traversal remain" || return 1
    [[ $(ctl status "$name" -o json | jq -r .status) == UPDATE_IN_PROGRESS ]] ||
        fail "the update is no longer in progress: too slow a machine for this test" || return 1
    [ "$(redis EXISTS "${PURGE_P}{$id}:graph:$t2")" = 1 ] &&
        [ "$(redis EXISTS "${PURGE_P}{$id}:rdef:$t2")" = 1 ] ||
        fail "the graph of the traversal in progress is gone" || return 1
    cv_wait_until 60 "$name to settle" purge_settled "$name" || return 1
    assert_eq UPDATE_COMPLETE "$(ctl status "$name" -o json | jq -r .status)" status || return 1
    assert_eq two "$(ctl output-show "$name" value -o json | jq -r .output_value)" \
        "the update's output" || return 1
    ctl delete "$name" --wait --timeout 60 >/dev/null
}

# The engines purge by themselves once a deleted stack is older than their
# --deleted-retention-s; engines restarted with a 1 s retention here.
test_purge_engines_purge_deleted_stacks_after_the_retention() {
    local name id rc=0
    name=$(stack_name purge-retention)
    purge_engines --deleted-retention-s 1 || return 1
    (
        ctl submit "$name" "$DATA/stacks/chain.yaml" --wait --timeout 60 >/dev/null
        id=$(purge_id "$name")
        ctl delete "$name" --wait --timeout 60 >/dev/null
        [ -n "$(purge_keys_of "$id")" ] || fail "stack $id kept no key after its delete" || exit 1
        cv_wait_until 20 "the engines to purge the deleted stack $id" purge_no_key_of "$id" ||
            fail "keys of $id remain: $(purge_keys_of "$id")" || exit 1
        cv_wait_until 10 "$id to leave ${PURGE_P}deleted" purge_unnoted "$id"
    ) || rc=$?
    purge_engines || rc=1
    return $rc
}
