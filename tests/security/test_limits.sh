# shellcheck shell=bash
# Limits the workers enforce (docs/security.md "Limits the workers enforce"):
# a submitter who asks for a group of 10^9, a template that includes itself
# or a 5 MB template is refused by convergectl with the engines' own words
# (they publish their limits in Redis), and, when a lax client lets the
# definition through, by the engine before anything is expanded: the stack
# fails with the reason, no member is defined, the engines' memory does not
# move; an update that raises a count past a limit leaves the stack as it ran.
# Sourced by tests/security/run.sh after tests/integration/lib.sh.

LIM_P=${CONVERGE_PREFIX:-cv:}
LIM_RESOURCES="number of resources 1000000001 exceeds the limit of 100000 \\(CONVERGE_MAX_RESOURCES, or the workers' --max-resources\\)"

# lim_dir: a fresh directory for a test's templates.
lim_dir() { mktemp -d /tmp/cv-sec-limits.XXXXXX; }

# lim_group FILE COUNT: a ResourceGroup of COUNT OS::Heat::None.
lim_group() {
    printf '%s\n' "heat_template_version: 2018-08-31" "resources:" "  big:" \
        "    type: OS::Heat::ResourceGroup" "    properties:" "      count: $2" \
        "      resource_def: {type: OS::Heat::None}" >"$1"
}

# lim_engines_rss_kb: the engines' resident memory, summed (VmRSS, kB).
lim_engines_rss_kb() {
    local f pid kb total=0
    for f in "$STATE"/pids/engine-*.pid; do
        pid=$(cat "$f")
        kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
        total=$((total + kb))
    done
    echo "$total"
}

lim_id() { ctl status "$1" -o json | jq -r .id; }
lim_status() { ctl status "$1" -o json | jq -r .status; }
lim_reason() { ctl status "$1" -o json | jq -r .reason; }
lim_settled() { [[ $(lim_status "$1") != *_IN_PROGRESS ]]; }

# lim_lax FIELD=VALUE[,FIELD=VALUE...] CMD...: runs CMD as a lax client
# would: the published limits raised for the moment the client reads them,
# then put back. The engines keep their own: they are the authority.
lim_lax() {
    local key="${LIM_P}limits" pair field was rc=0 saved=()
    local -a pairs
    IFS=, read -r -a pairs <<<"$1"
    shift
    for pair in "${pairs[@]}"; do
        field=${pair%%=*}
        was=$(redis HGET "$key" "$field")
        [ -n "$was" ] || fail "the engines published no $field in $key" || return 1
        saved+=("$field" "$was")
        redis HSET "$key" "$field" "${pair#*=}" >/dev/null
    done
    "$@" || rc=$?
    redis HSET "$key" "${saved[@]}" >/dev/null
    return $rc
}
LIM_LAX_COUNT=max-resources=2000000000,max-traversal-resources=2000000000

# lim_member_keys ID: the keys that say the stack was expanded at all:
# resource definitions, graphs, resource records, children.
lim_member_keys() {
    redis --scan --pattern "${LIM_P}{$1}*" | grep -E '\}:(rdef|graph|res|children)(:|$)' || true
}

# lim_records ID: every resource record of the stack and of its children,
# in a stable text, to compare before and after.
lim_records() {
    local id=$1 key child
    for key in $(redis --scan --pattern "${LIM_P}{$id}:res:*" | sort); do
        echo "$key"
        redis HGETALL "$key"
    done
    for child in $(redis SMEMBERS "${LIM_P}{$id}:children" | sort); do
        lim_records "$child"
    done
}

test_limits_engines_publish_their_limits() {
    local key="${LIM_P}limits"
    cv_wait_until 40 "the engines' limits in $key" \
        test -n "$(redis HGET "$key" max-resources)" || return 1
    assert_eq 100000 "$(redis HGET "$key" max-resources)" "published max-resources"
    assert_eq 1048576 "$(redis HGET "$key" max-template-bytes)" "published max-template-bytes"
    assert_eq 5 "$(redis HGET "$key" max-nesting-depth)" "published max-nesting-depth"
    assert_eq 1500000 "$(redis HGET "$key" max-traversal-resources)" \
        "published max-traversal-resources"
}

test_limits_group_count_refused_by_validate_and_submit() {
    local dir name out rc=0
    dir=$(lim_dir)
    name=$(stack_name lim-billion)
    lim_group "$dir/big.yaml" 1000000000
    out=$(ctl validate "$dir/big.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "validate's exit status" || return 1
    assert_match "$LIM_RESOURCES" "$out" "validate's message" || return 1
    rc=0
    out=$(ctl submit "$name" "$dir/big.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "submit's exit status" || return 1
    assert_match "$LIM_RESOURCES" "$out" "submit's message" || return 1
    assert_eq 0 "$(stack_keys_of "$name")" "keys stored for $name"
    rm -rf "$dir"
}

test_limits_client_env_may_lower_a_limit_never_raise_it() {
    local dir name out rc=0
    dir=$(lim_dir)
    name=$(stack_name lim-env)
    lim_group "$dir/big.yaml" 1000000000
    # Raising the limit on the client does not raise the engines'.
    out=$(CONVERGE_MAX_RESOURCES=2000000000 ctl submit "$name" "$dir/big.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "submit's exit status with CONVERGE_MAX_RESOURCES raised" || return 1
    assert_match "$LIM_RESOURCES" "$out" "submit's message" || return 1
    assert_match "CONVERGE_MAX_RESOURCES above the engines' limits" "$out" "the warning" || return 1
    assert_eq 0 "$(stack_keys_of "$name")" "keys stored for $name" || return 1
    # Lowering it is the client's right.
    lim_group "$dir/small.yaml" 3
    rc=0
    out=$(CONVERGE_MAX_RESOURCES=2 ctl validate "$dir/small.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "validate's exit status with CONVERGE_MAX_RESOURCES=2" || return 1
    assert_match 'number of resources 4 exceeds the limit of 2' "$out" "validate's message"
    rm -rf "$dir"
}

test_limits_engine_refuses_a_group_count_a_lax_client_let_through() {
    local dir name id rss0 rss1 reason
    dir=$(lim_dir)
    name=$(stack_name lim-lax)
    lim_group "$dir/big.yaml" 1000000000
    rss0=$(lim_engines_rss_kb)
    lim_lax "$LIM_LAX_COUNT" ctl submit "$name" "$dir/big.yaml" >/dev/null ||
        fail "a lax client's submit was refused" || return 1
    cv_wait_until 60 "$name settled" lim_settled "$name" || return 1
    assert_eq CREATE_FAILED "$(lim_status "$name")" "the stack's status" || return 1
    reason=$(lim_reason "$name")
    assert_match "resources.big: $LIM_RESOURCES" "$reason" "the stack's reason" || return 1
    id=$(lim_id "$name")
    assert_eq "" "$(lim_member_keys "$id")" "definitions or records written for $name" || return 1
    rss1=$(lim_engines_rss_kb)
    echo "    the engines' RSS: $rss0 kB before, $rss1 kB after" >&2
    ((rss1 - rss0 < 5120)) ||
        fail "the engines' RSS grew by $((rss1 - rss0)) kB ($rss0 -> $rss1) refusing the group"
    rm -rf "$dir"
}

test_limits_engine_refuses_a_count_known_only_when_the_group_is_created() {
    local dir name reason rss0 rss1
    dir=$(lim_dir)
    name=$(stack_name lim-attr)
    # The count comes from another resource's attribute: no client can count it.
    printf '%s\n' "heat_template_version: 2018-08-31" "resources:" \
        "  n: {type: OS::Heat::Value, properties: {value: 1000000000, type: number}}" \
        "  big:" "    type: OS::Heat::ResourceGroup" "    properties:" \
        "      count: {get_attr: [n, value]}" "      resource_def: {type: OS::Heat::None}" \
        >"$dir/attr.yaml"
    rss0=$(lim_engines_rss_kb)
    ctl submit "$name" "$dir/attr.yaml" >/dev/null || fail "submit of $dir/attr.yaml failed" || return 1
    cv_wait_until 60 "$name settled" lim_settled "$name" || return 1
    assert_eq CREATE_FAILED "$(lim_status "$name")" "the stack's status" || return 1
    reason=$(lim_reason "$name")
    assert_match "resources.big: .*number of resources 1000000000 exceeds the limit of 100000 \\(CONVERGE_MAX_RESOURCES, or the workers' --max-resources\\)" \
        "$reason" "the stack's reason" || return 1
    assert_eq "" "$(redis SMEMBERS "${LIM_P}{$(lim_id "$name")}:children")" \
        "child stacks of $name" || return 1
    rss1=$(lim_engines_rss_kb)
    ((rss1 - rss0 < 5120)) ||
        fail "the engines' RSS grew by $((rss1 - rss0)) kB ($rss0 -> $rss1) refusing the group"
    rm -rf "$dir"
}

test_limits_recursion_refused_by_the_client() {
    local dir out rc f name
    dir=$(lim_dir)
    printf '%s\n' "heat_template_version: 2018-08-31" "resources:" "  s:" \
        "    type: OS::Heat::Stack" "    properties: {template: {get_file: self.yaml}}" \
        >"$dir/self.yaml"
    printf '%s\n' "heat_template_version: 2018-08-31" "resources:" "  r: {type: loop.yaml}" \
        >"$dir/loop.yaml"
    printf '%s\n' "heat_template_version: 2018-08-31" "resources:" "  r: {type: b.yaml}" >"$dir/a.yaml"
    printf '%s\n' "heat_template_version: 2018-08-31" "resources:" "  r: {type: a.yaml}" >"$dir/b.yaml"
    for f in self loop a; do
        rc=0
        out=$(ctl validate "$dir/$f.yaml" 2>&1) || rc=$?
        assert_eq 2 "$rc" "validate $f.yaml's exit status" || return 1
        assert_match "recursion: template .* includes itself" "$out" "validate $f.yaml's message" ||
            return 1
    done
    assert_match 'a.yaml -> b.yaml -> a.yaml\)' "$out" "the cycle's path" || return 1
    name=$(stack_name lim-self)
    rc=0
    out=$(ctl submit "$name" "$dir/self.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "submit's exit status" || return 1
    assert_match "includes itself \(.*self.yaml -> s \(OS::Heat::Stack in .*self.yaml\)\)" "$out" \
        "submit's message" || return 1
    assert_eq 0 "$(stack_keys_of "$name")" "keys stored for $name"
    rm -rf "$dir"
}

# lim_descendants ID: how many stacks are nested under the stack ID, at
# any depth (its children sets).
lim_descendants() {
    local child n=0
    for child in $(redis SMEMBERS "${LIM_P}{$1}:children"); do
        n=$((n + 1 + $(lim_descendants "$child")))
    done
    echo "$n"
}

test_limits_recursion_refused_by_the_engine() {
    local dir name reason
    dir=$(lim_dir)
    name=$(stack_name lim-rec)
    # The outer stack's nested template comes from a resource's attribute,
    # so the client cannot see the recursion inside it: self.yaml, a stack
    # that holds itself. The engine refuses it when it expands that child.
    printf '%s\n' "heat_template_version: 2018-08-31" "resources:" "  s:" \
        "    type: OS::Heat::Stack" "    properties: {template: {get_file: self.yaml}}" \
        >"$dir/self.yaml"
    printf '%s\n' "heat_template_version: 2018-08-31" "resources:" \
        "  t: {type: OS::Heat::Value, properties: {value: {get_file: self.yaml}}}" "  outer:" \
        "    type: OS::Heat::Stack" "    properties: {template: {get_attr: [t, value]}}" \
        >"$dir/outer.yaml"
    ctl submit "$name" "$dir/outer.yaml" >/dev/null || fail "submit of outer.yaml failed" || return 1
    cv_wait_until 60 "$name settled" lim_settled "$name" || return 1
    assert_eq CREATE_FAILED "$(lim_status "$name")" "the stack's status" || return 1
    reason=$(lim_reason "$name")
    assert_match 'recursion: template .* includes itself' "$reason" "the stack's reason" || return 1
    # Refused at the first nested stack: none deeper was begun.
    local n
    n=$(lim_descendants "$(lim_id "$name")")
    ((n <= 1)) || fail "$n stacks nested under $name: the recursion ran on"
    rm -rf "$dir"
}

test_limits_oversize_template_refused_by_the_engine() {
    local dir name reason
    dir=$(lim_dir)
    name=$(stack_name lim-5mb)
    # 5 MB of description: few resources, a lot of bytes.
    {
        echo "heat_template_version: 2018-08-31"
        printf 'description: "'
        head -c 5000000 /dev/zero | tr '\0' 'x'
        echo '"'
        echo "resources:"
        echo "  r: {type: OS::Heat::None}"
    } >"$dir/huge.yaml"
    local out rc=0
    out=$(ctl validate "$dir/huge.yaml" 2>&1) || rc=$?
    assert_eq 2 "$rc" "validate's exit status" || return 1
    assert_match "template size 50000[0-9]+ bytes exceeds the limit of 1048576 \\(CONVERGE_MAX_TEMPLATE_BYTES, or the workers' --max-template-bytes\\)" \
        "$out" "validate's message" || return 1
    lim_lax max-template-bytes=100000000 env CONVERGE_MAX_TEMPLATE_BYTES=100000000 \
        "$CONVERGECTL" submit "$name" "$dir/huge.yaml" >/dev/null ||
        fail "a lax client's submit was refused" || return 1
    cv_wait_until 60 "$name settled" lim_settled "$name" || return 1
    assert_eq CREATE_FAILED "$(lim_status "$name")" "the stack's status" || return 1
    reason=$(lim_reason "$name")
    assert_match 'stored template: template size [0-9]+ bytes exceeds the limit of 1048576 \(--max-template-bytes, CONVERGE_MAX_TEMPLATE_BYTES\)' \
        "$reason" "the stack's reason" || return 1
    assert_eq "" "$(lim_member_keys "$(lim_id "$name")")" "definitions or records written"
    rm -rf "$dir"
}

test_limits_update_raising_a_count_is_refused_and_the_stack_untouched() {
    local dir name id before after out rc=0 reason
    dir=$(lim_dir)
    name=$(stack_name lim-upd)
    printf '%s\n' "heat_template_version: 2018-08-31" "parameters:" \
        "  n: {type: number, default: 2}" "resources:" "  g:" \
        "    type: OS::Heat::ResourceGroup" "    properties:" "      count: {get_param: n}" \
        "      resource_def: {type: OS::Heat::Value, properties: {value: v%index%}}" \
        >"$dir/grow.yaml"
    ctl submit "$name" "$dir/grow.yaml" --wait --timeout 60 >/dev/null ||
        fail "the stack to update did not create" || return 1
    id=$(lim_id "$name")
    before=$(lim_records "$id")
    [ -n "$before" ] || fail "no resource records for $name" || return 1
    # The client refuses, with the engines' words...
    out=$(ctl update "$name" --existing -P n=1000000000 2>&1) || rc=$?
    assert_eq 2 "$rc" "update's exit status" || return 1
    assert_match 'resources.g: number of resources 1000000001 exceeds the limit of 100000' "$out" \
        "update's message" || return 1
    assert_eq CREATE_COMPLETE "$(lim_status "$name")" "the status after a refused update" || return 1
    # ...and the engine refuses what a lax client let through.
    lim_lax "$LIM_LAX_COUNT" ctl update "$name" --existing -P n=1000000000 >/dev/null ||
        fail "a lax client's update was refused" || return 1
    cv_wait_until 60 "$name settled" lim_settled "$name" || return 1
    assert_eq UPDATE_FAILED "$(lim_status "$name")" "the stack's status" || return 1
    reason=$(lim_reason "$name")
    assert_match "resources.g: $LIM_RESOURCES" "$reason" "the update's reason" || return 1
    after=$(lim_records "$id")
    assert_eq "$before" "$after" "the resources' records after the refused update"
    rm -rf "$dir"
}
