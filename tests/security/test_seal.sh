# Encryption at rest (docs/security.md "Encryption at rest"), on the stack of
# test_secrets.sh's secrets_submit: with the
# deployment's key file (up.sh makes STATE/secret.key), a hidden parameter's
# value, a RandomString's value and everything computed from them are
# stored sealed: no key of the stack in Redis holds them (a stack's outputs
# aside: they show what they compute, as in Heat). The key rotates without
# a restart: new key first, `convergectl rekey`, old key removed; the stack
# still reads, updates and deletes. A reader without the key masks; a key
# file others can read is refused.
# shellcheck shell=bash

SEAL_FILE=${CONVERGE_SECRET_KEY_FILE:-}

seal_new_key() { head -c 32 /dev/urandom | base64; }

# seal_dump OUT: every key of the deployment's stacks, every field and value
# (hashes, sets, streams), as the operator reads them, into OUT, but the
# stacks' outputs, which show what they compute.
seal_dump() {
    local key type
    : >"$1"
    while read -r key; do
        type=$(redis TYPE "$key")
        case $type in
        hash) redis HGETALL "$key" | awk -v k="$key" 'NR % 2 { f = $0; next }
                !(k ~ /:stack$/ && f == "outputs") { print k, f, $0 }' >>"$1" ;;
        set) redis SMEMBERS "$key" >>"$1" ;;
        stream) redis XRANGE "$key" - + >>"$1" ;;
        *) redis DUMP "$key" >>"$1" 2>/dev/null || true ;;
        esac
    done < <(redis --scan --pattern "${CONVERGE_PREFIX:-cv:}{*")
}

# seal_absent WHAT FILE: no sealed secret of secrets_submit's stack
# (test_secrets.sh) appears in FILE (matched from a file, never on a command
# line): the hidden password given, the RandomStrings' values. (Its hidden
# api_key's default is in the stored template, which is not sealed.)
seal_absent() {
    local pats hits
    pats=$(mktemp /tmp/cv-seal-pats.XXXXXX)
    printf '%s\n' "$SECRET_PW" "$SECRET_RANDOM" $SECRET_MEMBERS >"$pats"
    hits=$(grep -cF -f "$pats" "$2" || true)
    rm -f "$pats"
    [[ $hits == 0 ]] || fail "$1: a secret value appears in $hits lines"
}

# Every live worker's record names key $1 as the one it seals with.
seal_workers_on() {
    local key n=0
    while read -r key; do
        [[ -n $key ]] || continue
        [[ $(redis HGET "$key" seal_key) == "$1" ]] || return 1
        n=$((n + 1))
    done < <(redis --scan --pattern "${CONVERGE_PREFIX:-cv:}worker:*")
    ((n > 0))
}

# The key file holds $@ (lines), written as a rotation would: in place.
seal_write_keys() { printf '%s\n' "$@" >"$SEAL_FILE"; }

test_seal_secrets_are_absent_from_every_key_in_redis() {
    [[ -s $SEAL_FILE ]] || fail "the deployment has no key file (CONVERGE_SECRET_KEY_FILE)"
    local name dump
    name=$(stack_name seal)
    secrets_submit "$name"
    dump=$(mktemp /tmp/cv-seal-dump.XXXXXX)
    seal_dump "$dump"
    # The dump reads the stack: it is no empty file that passes by itself.
    grep -q "{$SECRET_ID}:res:dsn" "$dump" || fail "the dump misses the stack's records"
    grep -q "cv:sealed:1:" "$dump" || fail "no sealed value in Redis"
    seal_absent "Redis" "$dump"
    rm -f "$dump"
    # Sealed, not lost: the readers open them for --show-secrets, and the
    # engines computed from them (the nested stack and token got the values).
    assert_eq "postgres://app:$SECRET_PW@db" "$(ctl resource-show "$name" dsn --show-secrets -o json |
        jqr .attributes.value)" "dsn's attribute"
    assert_eq "$SECRET_RANDOM" "$(ctl resource-show "$name" token --show-secrets -o json |
        jqr .attributes.value)" "token's attribute"
    local child
    child=$(ctl resource-show "$name" child -o json | jqr .nested_stack_id)
    assert_eq "$SECRET_PW" "$(ctl resource-show "$child" copy --show-secrets -o json |
        jqr .attributes.value)" "the nested stack's value"
    assert_eq '******' "$(ctl resource-show "$name" dsn -o json | jqr .properties.value)" \
        "dsn's property, masked"
}

test_seal_a_reader_without_the_key_masks_and_says_why() {
    local name err
    name=$(stack_name seal-nokey)
    secrets_submit "$name"
    err=$(mktemp /tmp/cv-seal-err.XXXXXX)
    local doc
    doc=$(CONVERGE_SECRET_KEY_FILE='' ctl resource-show "$name" token -o json --show-secrets 2>"$err") ||
        fail "resource-show without the key failed"
    # (a record's attributes are sealed whole: all of them are masked)
    assert_eq '******' "$(jqr .attributes <<<"$doc")" "sealed attributes without the key"
    grep -q "no key file (CONVERGE_SECRET_KEY_FILE)" "$err" || fail "no reason given: $(cat "$err")"
    assert_eq '******' "$(CONVERGE_SECRET_KEY_FILE='' ctl status "$name" -o json --show-secrets \
        2>/dev/null | jqr .parameters.db_password)" "a sealed parameter without the key"
    # A writer cannot store what it cannot read: refused, nothing changed.
    local rc=0 before
    before=$(status_json "$name" | jqr .traversal)
    CONVERGE_SECRET_KEY_FILE='' ctl update "$name" --existing -P unused=1 >/dev/null 2>"$err" ||
        rc=$?
    assert_eq 2 "$rc" "update without the key"
    grep -q "sealed with a key this client lacks" "$err" || fail "update's refusal: $(cat "$err")"
    assert_eq "$before" "$(status_json "$name" | jqr .traversal)" "the stack's traversal"
    rm -f "$err"
}

test_seal_a_key_file_others_can_read_is_refused() {
    local copy rc=0
    copy=$(mktemp /tmp/cv-seal-key.XXXXXX)
    cp "$SEAL_FILE" "$copy"
    chmod 0644 "$copy"
    CONVERGE_SECRET_KEY_FILE=$copy ctl list >/dev/null 2>"$copy.err" || rc=$?
    assert_eq 2 "$rc" "convergectl with a 0644 key file"
    grep -q "can be read by others (mode 0644)" "$copy.err" || fail "the refusal: $(cat "$copy.err")"
    printf 'k1 c2hvcnQ=\n' >"$copy" && chmod 0600 "$copy"
    rc=0
    CONVERGE_SECRET_KEY_FILE=$copy ctl list >/dev/null 2>"$copy.err" || rc=$?
    assert_eq 2 "$rc" "convergectl with a bad key"
    grep -q "line 1: key k1 is not the base64 of 32 bytes" "$copy.err" ||
        fail "the refusal: $(cat "$copy.err")"
    rm -f "$copy" "$copy.err"
}

test_seal_rekey_refuses_while_a_worker_seals_with_another_key() {
    local copy rc=0 before after
    before=$(head -n1 "$SEAL_FILE" | cut -d' ' -f1)
    copy=$(mktemp /tmp/cv-seal-key.XXXXXX)
    # A key file whose first key no worker has.
    { printf 'other%s %s\n' "$RANDOM" "$(seal_new_key)"; cat "$SEAL_FILE"; } >"$copy"
    CONVERGE_SECRET_KEY_FILE=$copy ctl rekey >"$copy.out" 2>&1 || rc=$?
    assert_eq 1 "$rc" "rekey with a key the workers lack"
    grep -q "seals with key $before, not with key other" "$copy.out" ||
        fail "the refusal: $(cat "$copy.out")"
    after=$(redis --scan --pattern "${CONVERGE_PREFIX:-cv:}{*" | head -n 50 |
        while read -r k; do [[ $(redis TYPE "$k") == hash ]] && redis HGETALL "$k"; done |
        grep -c ":other" || true)
    assert_eq 0 "$after" "values sealed with the refused key"
    rm -f "$copy" "$copy.out"
}

test_seal_the_key_rotates_without_a_restart() {
    local name old new_line dump
    name=$(stack_name seal-rotate)
    secrets_submit "$name"
    old=$(grep -v '^#' "$SEAL_FILE" | head -n1)
    local old_id=${old%% *} new_id="r$RANDOM"
    new_line="$new_id $(seal_new_key)"
    # 1. The new key first, the old one kept: every worker seals with it
    #    within a second, and still opens what the old one sealed.
    seal_write_keys "$new_line" "$old"
    cv_wait_until 20 "every worker to seal with key $new_id" seal_workers_on "$new_id" ||
        fail "the workers did not read the rotated key file"
    # 2. Re-seal what is stored.
    local out
    out=$(ctl rekey) || fail "rekey failed: $out"
    assert_match "^re-sealed [1-9][0-9]* values? in [1-9][0-9]* keys? with key $new_id$" "$out" \
        "rekey's report"
    dump=$(mktemp /tmp/cv-seal-dump.XXXXXX)
    seal_dump "$dump"
    if grep -q "cv:sealed:1:$old_id:" "$dump"; then
        fail "values sealed with the old key remain: $(grep -c "cv:sealed:1:$old_id:" "$dump")"
    fi
    seal_absent "Redis after rekey" "$dump"
    # 3. The old key removed: nothing needs it.
    seal_write_keys "$new_line"
    cv_wait_until 20 "every worker to read the key file again" seal_workers_on "$new_id" ||
        fail "the workers lost the key"
    assert_eq "$SECRET_RANDOM" "$(ctl resource-show "$name" token --show-secrets -o json |
        jqr .attributes.value)" "a value re-sealed, opened with the new key alone"
    # The workers read, update and delete the stack with the new key alone.
    local dir
    dir=$(mktemp -d /tmp/cv-seal.XXXXXX)
    printf 'parameters:\n  db_password: "%s-2"\n' "$SECRET_PW" >"$dir/secret.env"
    ctl update "$name" --existing --param-file "$dir/secret.env" --wait --timeout 90 >/dev/null ||
        fail "update after the rotation"
    rm -rf "$dir"
    assert_eq "postgres://app:$SECRET_PW-2@db" "$(ctl resource-show "$name" dsn --show-secrets \
        -o json | jqr .attributes.value)" "the updated value"
    ctl delete "$name" --wait --timeout 90 >/dev/null || fail "delete after the rotation"
    rm -f "$dump"
}
