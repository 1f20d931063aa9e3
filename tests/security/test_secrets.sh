# Secrets that stay secret (docs/security.md "Secrets"): a stack with a
# hidden parameter read by a property, by a nested stack's parameter and by
# an output, and an OS::Heat::RandomString read by another resource and by an
# output. The secret values, read from Redis as only the deployment's
# operator can, must be absent from what every reader prints (convergectl's
# status, resources, resource-show, events, template-show; the console's
# API), from every worker log, `ps` and every worker's /metrics; outputs show
# what they compute, as in Heat; --show-secrets shows the values.
# shellcheck shell=bash

# secrets_submit NAME: submits the stack NAME (the template and its nested
# template in a fresh folder) with the hidden password SECRET_PW and the
# hidden parameter api_key defaulting to SECRET_KEY, waits for
# CREATE_COMPLETE; sets SECRET_ID, SECRET_CHILD (the nested stack's id),
# SECRET_RANDOM (the RandomString's value, read from Redis), SECRET_GROUP and
# SECRET_MEMBERS (a group of RandomStrings: its stack and their values).
secrets_submit() {
    local dir
    dir=$(mktemp -d /tmp/cv-secrets.XXXXXX)
    cat >"$dir/child.yaml" <<'EOF'
heat_template_version: 2018-08-31
parameters:
  pw: {type: string}
resources:
  copy:
    type: OS::Heat::Value
    properties:
      value: {get_param: pw}
outputs:
  pw: {value: {get_attr: [copy, value]}}
EOF
    cat >"$dir/secrets.yaml" <<'EOF'
heat_template_version: 2018-08-31
parameters:
  db_password: {type: string, hidden: true}
  who: {type: string, default: plain-visible-value}
  api_key: {type: string, hidden: true, default: API_KEY}
resources:
  rand:
    type: OS::Heat::RandomString
    properties: {length: 24}
  dsn:
    type: OS::Heat::Value
    properties:
      value:
        str_replace:
          template: postgres://app:PW@db
          params: {PW: {get_param: db_password}}
  token:
    type: OS::Heat::Value
    properties:
      value: {get_attr: [rand, value]}
  greeting:
    type: OS::Heat::Value
    properties:
      value: {get_param: who}
  child:
    type: child.yaml
    properties:
      pw: {get_param: db_password}
  key_user:
    type: OS::Heat::Value
    properties:
      value: {get_param: api_key}
  passwords:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def: {type: OS::Heat::RandomString}
outputs:
  password: {value: {get_param: db_password}}
  random: {value: {get_attr: [rand, value]}}
EOF
    SECRET_KEY="key-${RUN_ID}-Yy7"
    sed -i "s/API_KEY/$SECRET_KEY/" "$dir/secrets.yaml"
    # The value never on a command line: a parameter file, as docs/security.md advises.
    SECRET_PW="pw-${RUN_ID}-Zq8"
    printf 'parameters:\n  db_password: "%s"\n' "$SECRET_PW" >"$dir/secret.env"
    ctl submit "$1" "$dir/secrets.yaml" --param-file "$dir/secret.env" --wait --timeout 90 \
        >/dev/null
    rm -rf "$dir"
    SECRET_ID=$(status_json "$1" | jqr .id)
    # (Redis holds the values sealed: the operator's --show-secrets opens them.)
    SECRET_RANDOM=$(ctl resource-show "$1" rand --show-secrets -o json | jqr .attributes.value)
    SECRET_CHILD=$(ctl resource-show "$1" child -o json | jqr .nested_stack_id)
    SECRET_GROUP=$(ctl resource-show "$1" passwords -o json | jqr .nested_stack_id)
    SECRET_MEMBERS=$(for m in 0 1; do
        ctl resource-show "$SECRET_GROUP" "$m" --show-secrets -o json | jqr .attributes.value
    done)
    [[ $(wc -w <<<"$SECRET_MEMBERS") == 2 ]] || fail "the group's values: '$SECRET_MEMBERS'"
    [[ ${#SECRET_RANDOM} == 24 ]] || fail "the RandomString's value read from Redis: '$SECRET_RANDOM'"
    [[ $SECRET_CHILD =~ ^[0-9a-f]+$ ]] || fail "the nested stack's id: '$SECRET_CHILD'"
}

# secrets_absent WHAT FILE: neither secret value appears in FILE. The values
# are matched from a file, so that they are never on a command line either.
secrets_absent() {
    local pats
    pats=$(mktemp /tmp/cv-secret-pats.XXXXXX)
    printf '%s\n' "$SECRET_PW" "$SECRET_RANDOM" "$SECRET_KEY" ${SECRET_MEMBERS:-} >"$pats"
    local hits
    hits=$(grep -cF -f "$pats" "$2" || true)
    rm -f "$pats"
    [[ $hits == 0 ]] || fail "$1: a secret value appears in $hits lines"
}

# secrets_reader_out OUT ARGS...: runs convergectl ARGS, appending its output to OUT.
secrets_reader_out() {
    local out=$1
    shift
    ctl "$@" >>"$out" || fail "convergectl $* failed"
}

test_secrets_are_masked_by_every_convergectl_reader() {
    local name out
    name=$(stack_name secrets)
    secrets_submit "$name"
    out=$(mktemp /tmp/cv-secret-out.XXXXXX)
    for stack in "$name" "$SECRET_CHILD" "$SECRET_GROUP"; do
        # A stack's outputs show what they compute, as in Heat (the last
        # section of the text, a field of the JSON): everything else is read.
        ctl status "$stack" | sed '/^outputs:/,$d' >>"$out"
        ctl status "$stack" -o json | jq 'del(.outputs)' >>"$out"
        secrets_reader_out "$out" resources "$stack"
        secrets_reader_out "$out" resources "$stack" -o json
        secrets_reader_out "$out" events "$stack"
        secrets_reader_out "$out" events "$stack" -o json
        secrets_reader_out "$out" template-show "$stack"
    done
    for res in rand dsn token greeting child key_user passwords; do
        secrets_reader_out "$out" resource-show "$name" "$res"
        secrets_reader_out "$out" resource-show "$name" "$res" -o json
    done
    secrets_reader_out "$out" resource-show "$SECRET_CHILD" copy -o json
    secrets_absent "convergectl's readers" "$out"
    # Masked, not dropped: the readers say a secret is there.
    local doc
    doc=$(ctl resource-show "$name" dsn -o json)
    assert_eq '******' "$(jqr .properties.value <<<"$doc")" "dsn's property"
    # A copy inside longer text: the secret alone is masked.
    assert_eq 'postgres://app:******@db' "$(jqr .attributes.value <<<"$doc")" "dsn's attribute"
    assert_eq '******' "$(ctl resource-show "$name" rand -o json | jqr .attributes.value)" \
        "the RandomString's value"
    assert_eq '******' "$(status_json "$name" | jqr .parameters.db_password)" "status's parameter"
    # What is no secret is still shown.
    assert_eq plain-visible-value "$(ctl resource-show "$name" greeting -o json |
        jqr .attributes.value)" "a plain parameter's value"
    rm -f "$out"
}

test_secrets_show_secrets_shows_them_and_outputs_compute() {
    local name
    name=$(stack_name secrets-show)
    secrets_submit "$name"
    # Outputs keep Heat's behaviour: they show what they compute.
    assert_eq "$SECRET_PW" "$(ctl output-show "$name" password -o json | jqr .output_value)" \
        "output-show password"
    assert_eq "$SECRET_RANDOM" "$(ctl output-show "$name" random -o json | jqr .output_value)" \
        "output-show random"
    assert_eq "$SECRET_RANDOM" "$(ctl resource-show "$name" rand --show-secrets -o json |
        jqr .attributes.value)" "resource-show --show-secrets"
    assert_eq "postgres://app:$SECRET_PW@db" "$(ctl resource-show "$name" dsn --show-secrets \
        -o json | jqr .properties.value)" "a property with --show-secrets"
    assert_eq "$SECRET_PW" "$(ctl status "$name" -o json --show-secrets |
        jqr .parameters.db_password)" "status --show-secrets"
    assert_eq "$SECRET_RANDOM" "$(ctl resources "$name" -o json --show-secrets |
        jq -r '.[] | select(.name == "rand") | .attributes.value')" "resources --show-secrets"
    assert_eq "$SECRET_KEY" "$(ctl template-show "$name" --show-secrets |
        jqr .parameters.api_key.default)" "template-show --show-secrets"
    assert_eq '******' "$(ctl template-show "$name" | jqr .parameters.api_key.default)" \
        "template-show: a hidden parameter's default"
    assert_eq "$SECRET_PW" "$(ctl resource-show "$SECRET_CHILD" copy --show-secrets -o json |
        jqr .properties.value)" "the nested stack's property with --show-secrets"
    ctl events "$name" --show-secrets -o json | jq -e 'length > 0' >/dev/null ||
        fail "events --show-secrets"
}

# secrets_web PATH: GET the deployment's console (its token when it has one),
# appending the body, but a stack's outputs (they show what they compute),
# to SECRET_WEB_OUT; fails unless 200.
secrets_web() {
    local auth=() token_file=${CONVERGE_WEB_TOKEN_FILE:-$STATE/web.token}
    [[ -s $token_file ]] && auth=(-H "Authorization: Bearer $(head -n1 "$token_file")")
    local code
    code=$(curl -sS -o "$SECRET_WEB_OUT.one" -w '%{http_code}' "${auth[@]}" \
        "$CONVERGE_WEB_URL$1")
    assert_eq 200 "$code" "GET $1"
    jq 'if type == "object" then del(.outputs) else . end' "$SECRET_WEB_OUT.one" \
        >>"$SECRET_WEB_OUT"
}

test_secrets_are_masked_by_the_console_api() {
    [[ -n ${CONVERGE_WEB_URL:-} ]] || fail "the deployment runs no console (CONVERGE_WEB_URL)"
    local name
    name=$(stack_name secrets-web)
    secrets_submit "$name"
    SECRET_WEB_OUT=$(mktemp /tmp/cv-secret-web.XXXXXX)
    for stack in "$name" "$SECRET_CHILD" "$SECRET_GROUP"; do
        for route in "" /graph /resources /events; do
            secrets_web "/api/stacks/$stack$route"
        done
    done
    secrets_web "/api/stacks"
    secrets_web "/api/stacks/$name/resources"
    assert_eq '******' "$(jq -r '.resources[] | select(.name == "rand") | .attributes.value' \
        "$SECRET_WEB_OUT.one")" "the console's RandomString value"
    secrets_absent "the console's API" "$SECRET_WEB_OUT"
    rm -f "$SECRET_WEB_OUT" "$SECRET_WEB_OUT.one"
}

test_secrets_are_absent_from_logs_ps_and_metrics() {
    local name out
    name=$(stack_name secrets-logs)
    secrets_submit "$name"
    # The stack's readers too, so that the test fails where they print them.
    out=$(mktemp /tmp/cv-secret-logs.XXXXXX)
    secrets_reader_out "$out" resources "$SECRET_CHILD" -o json
    secrets_reader_out "$out" resource-show "$SECRET_CHILD" copy -o json
    cat "$STATE"/log/*.log >>"$out" 2>/dev/null || true
    ps -eo args >>"$out"
    local addr
    for addr in ${CONVERGE_METRICS_TARGETS//,/ }; do # engines, observers, agents (STATE/env)
        curl -sS --max-time 5 "http://$addr/metrics" >>"$out" || fail "GET $addr/metrics"
    done
    grep -q '^converge_' "$out" || fail "no worker's /metrics was read"
    secrets_absent "logs, ps and metrics" "$out"
    rm -f "$out"
}

test_secrets_a_refused_value_is_masked_in_reasons() {
    # A hidden value of the wrong type: the resource fails with a reason
    # quoting the value it refused (as Heat's do), which every reader masks.
    local name dir out
    name=$(stack_name secrets-refused)
    dir=$(mktemp -d /tmp/cv-secrets.XXXXXX)
    cat >"$dir/t.yaml" <<'YAML'
heat_template_version: 2018-08-31
parameters:
  n: {type: string, hidden: true}
resources:
  other:
    type: OS::Heat::None
  r:
    type: OS::Heat::RandomString
    properties:
      # (get_resource keeps validation from evaluating the call, as in
      # Heat: only the engine sees the value, and refuses it)
      length:
        str_replace:
          template: X
          params: {X: {get_param: n}, Y: {get_resource: other}}
YAML
    SECRET_PW="bad-${RUN_ID}-Qx"
    SECRET_RANDOM=$SECRET_PW SECRET_KEY=$SECRET_PW
    printf 'parameters:\n  n: "%s"\n' "$SECRET_PW" >"$dir/e.yaml"
    local rc=0
    out=$(mktemp /tmp/cv-secret-out.XXXXXX)
    # The reason `submit --wait` ends with is a reader's too.
    ctl submit "$name" "$dir/t.yaml" --param-file "$dir/e.yaml" --wait --timeout 60 \
        >>"$out" 2>&1 || rc=$?
    rm -rf "$dir"
    assert_eq 1 "$rc" "the stack fails"
    grep -q 'reason: .*got "\*\*\*\*\*\*"' "$out" || fail "submit --wait's reason: $(cat "$out")"
    ctl watch "$name" --timeout 10 >>"$out" 2>&1 || true
    secrets_reader_out "$out" status "$name"
    secrets_reader_out "$out" status "$name" -o json
    secrets_reader_out "$out" events "$name" -o json
    secrets_reader_out "$out" resources "$name"
    secrets_reader_out "$out" resource-show "$name" r -o json
    secrets_reader_out "$out" list --name "$name" -o json
    SECRET_WEB_OUT=$out
    local route
    for route in "" /graph /resources /events; do
        secrets_web "/api/stacks/$name$route"
    done
    secrets_web "/api/stacks?name=$name"
    secrets_absent "the readers of a refused hidden value" "$out"
    assert_match 'got "\*\*\*\*\*\*"' "$(ctl events "$name" -o json |
        jq -r '.[] | select(.resource == "r") | .reason')" "the failure's event"
    # The worker that failed the resource logged its reason with the quoted
    # value masked (it knows no secrets: cv_str_redact_quoted).
    cat "$STATE"/log/engine-*.log "$STATE"/log/observer-*.log >"$out"
    grep -q "resource r: .*got \"\*\*\*\*\*\*\"" "$out" || fail "no masked failure line in the workers' logs"
    secrets_absent "the workers' logs of a refused hidden value" "$out"
    rm -f "$out" "$out.one"
}
