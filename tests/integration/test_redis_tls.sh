# Redis over TLS through the stunnel sidecar of up.sh --redis-tls
# (docs/security.md): a deployment of its own, about 10 s, since the suite's
# has no TLS.
# shellcheck shell=bash

test_redis_tls_stack_completes_through_the_sidecar_with_the_plain_port_off() {
    local dir name out plain tls
    dir=$(mktemp -d /tmp/cv-rtls-up.XXXXXX)
    # shellcheck disable=SC2064 # dir is local: expanded now, on purpose
    trap "'$CV_REPO_ROOT/deploy/local/down.sh' --dir '$dir' >/dev/null 2>&1; rm -rf '$dir' '$dir.up.log'" EXIT
    "$CV_REPO_ROOT/deploy/local/up.sh" --build-dir "$(dirname "$CONVERGECTL")" --dir "$dir" \
        --no-build --engines 1 --observers 1 --insecure --redis-tls >"$dir.up.log" 2>&1 ||
        fail "up.sh --redis-tls: $(tail -5 "$dir.up.log")"
    plain=$(sed -n 's/^REDIS_PORT=//p' "$dir/ports")
    tls=$(sed -n 's/^REDIS_TLS_PORT=//p' "$dir/ports")
    name=$(stack_name rtls)
    out=$(bash -c "source '$dir/env' && '$CONVERGECTL' submit '$name' '$DATA/stacks/chain.yaml' \
        --wait --timeout 60 && '$CONVERGECTL' delete '$name' --wait --timeout 60" 2>&1) ||
        fail "create and delete through the sidecar: $out"
    assert_match DELETE_COMPLETE "$out" "the stack's end"
    assert_eq "port 0" "$(redis-cli -p "$plain" CONFIG GET port | tr '\n' ' ' | sed 's/ $//')" \
        "Redis's plain port"
    [[ $(redis-cli -p "$tls" PING 2>&1) != PONG ]] || fail "Redis answers plain text on its TLS port"
    assert_eq PONG "$(redis-cli -p "$tls" --tls --cacert "$dir/tls/ca.crt" PING)" \
        "TLS with the local CA"
    grep -q "Certificate accepted" "$dir/log/stunnel.log" ||
        fail "stunnel did not verify the certificate: $(tail -3 "$dir/log/stunnel.log")"
}
