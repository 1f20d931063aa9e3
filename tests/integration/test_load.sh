# Dynamic load and the cluster resource manager's view (docs/crm.md
# "Dynamic load" and "Status"): `convergectl report-load` stores a replica's
# reported loads in {cluster}:load:<svc> and refuses what is no replica,
# metric or value of the service; a replica that writes the file its
# CONVERGE_LOAD_FILE names has those loads in its agent's report; `convergectl
# crm` shows the holder of the role and a status it can only partly read, and
# `nodes --map` the balance before and after the last pass. The tests with
# replicas start their own agents (tests/data/services/cluster_9nodes.json,
# names prefixed); a deployment with agents (up.sh --nodes 9) has the
# cluster's metrics known for the service that is never placed.
# shellcheck shell=bash disable=SC2317 # functions defined inside tests are called by cv_wait_until

LOAD_PREFIX="t${RUN_ID}crm:"

load_stack_id() { redis HGET "${CONVERGE_PREFIX:-cv:}stacks" "$1"; }

# load_of SVC INDEX: the loads reported for the replica ({cluster}:load:<svc>).
load_of() { redis HGET "$(ckey "load:$1")" "$2"; }

# A stack whose service `web` (replicas 0 and 1, metrics Slots and MemoryMB)
# is written to the cluster but placed nowhere (no node has its TestGroup):
# LOAD_NAME, LOAD_SVC. One agent of the test's own makes Slots a metric of
# the cluster, whatever the deployment's nodes have.
load_unplaced_service() {
    local p
    p="lu$(printf %04x $((RANDOM ^ RUN_ID % 65536)))-"
    LOAD_NAME=$(stack_name load-cli)
    trap 'svc_agents_cleanup "$LOAD_NAME"' EXIT
    rm -rf "${STATE:?}/agents/${p}N1"
    svc_agent_start "$(svc_cluster_file "$p")" "${p}N1"
    ctl submit "$LOAD_NAME" "$DATA/services/loadfile.yaml" -P "constraint=TestGroup == none$RUN_ID" \
        >/dev/null || fail "submit $LOAD_NAME"
    cv_wait_until 30 "the service of $LOAD_NAME in $(ckey services)" svc_id "$LOAD_NAME" web >/dev/null
    LOAD_SVC=$(svc_id "$LOAD_NAME" web)
}

test_load_report_load_stores_the_replicas_loads_merged_with_the_time() {
    load_unplaced_service
    local before out stored
    before=$(date +%s)
    out=$(ctl report-load "$LOAD_NAME" web 1 Slots=3 MemoryMB=120.5)
    assert_eq "replica web-1.$LOAD_NAME reports Slots 3, MemoryMB 120.5" "$out" "report-load's answer"
    stored=$(load_of "$LOAD_SVC" 1)
    assert_eq 3 "$(jqr .Slots <<<"$stored")" "Slots stored"
    assert_eq 120.5 "$(jqr .MemoryMB <<<"$stored")" "MemoryMB stored"
    jq -e --argjson t "$before" '.time >= $t and .time <= $t + 60' <<<"$stored" >/dev/null ||
        fail "time of the report: $stored (now $before)"
    # Another report of one metric keeps the other.
    ctl report-load "$LOAD_NAME" web 1 Slots=0 >/dev/null
    assert_eq '{"MemoryMB":120.5,"Slots":0}' "$(load_of "$LOAD_SVC" 1 | jq -cS 'del(.time)')" "merged"
    # METRIC= removes one; -o json prints what is stored.
    out=$(ctl report-load "$LOAD_NAME" web 1 MemoryMB= -o json)
    assert_eq '{"Slots":0}' "$(jq -cS 'del(.time)' <<<"$out")" "-o json after removing MemoryMB"
    assert_eq "$(jq -cS . <<<"$out")" "$(load_of "$LOAD_SVC" 1 | jq -cS .)" "-o json is what is stored"
    # Removing the last metric removes the replica's field.
    ctl report-load "$LOAD_NAME" web 1 Slots= >/dev/null
    assert_eq 0 "$(redis HEXISTS "$(ckey "load:$LOAD_SVC")" 1)" "field 1 once no metric is left"
    # Index 0 is a replica too, and a stack id names the stack as well as its name.
    ctl report-load "$(load_stack_id "$LOAD_NAME")" web 0 Slots=2 >/dev/null
    assert_eq 2 "$(load_of "$LOAD_SVC" 0 | jqr .Slots)" "index 0 through the stack id"
}

# refused CODE PATTERN ARGS...: report-load ARGS exits CODE saying PATTERN.
refused() {
    local code=$1 pattern=$2 rc=0 err
    shift 2
    err=$(ctl report-load "$@" 2>&1 >/dev/null) || rc=$?
    assert_eq "$code" "$rc" "exit status of report-load $*"
    assert_match "$pattern" "$err" "message of report-load $*"
}

test_load_report_load_refuses_a_bad_metric_index_value_or_service() {
    load_unplaced_service
    ctl report-load "$LOAD_NAME" web 0 Slots=1 >/dev/null
    local stored
    stored=$(load_of "$LOAD_SVC" 0)
    refused 2 "metric Disk is not one of the metrics of web \(Slots, MemoryMB\)" \
        "$LOAD_NAME" web 0 Slots=2 Disk=1
    refused 2 "INDEX 2 is no replica of web: its replicas are 0 to 1" "$LOAD_NAME" web 2 Slots=1
    refused 2 "INDEX 'x' is not a replica index" "$LOAD_NAME" web x Slots=1
    refused 2 "'Slots=-1': the value of Slots must be 0 or more" "$LOAD_NAME" web 0 Slots=-1
    refused 2 "'Slots=lots': the value 'lots' of Slots is not a number" "$LOAD_NAME" web 0 Slots=lots
    refused 2 "'Slots': expected METRIC=VALUE" "$LOAD_NAME" web 0 Slots
    refused 2 "no METRIC=VALUE given" "$LOAD_NAME" web 0
    refused 2 "stack $LOAD_NAME has no resource nosuch of type Converge::Service" \
        "$LOAD_NAME" nosuch 0 Slots=1
    refused 2 "stack nosuch$RUN_ID not found" "nosuch$RUN_ID" web 0 Slots=1
    # Nothing refused was stored.
    assert_eq "$stored" "$(load_of "$LOAD_SVC" 0)" "index 0's loads after the refusals"
    assert_eq 0 "$(redis HEXISTS "$(ckey "load:$LOAD_SVC")" 2)" "no field for index 2"
    ctl report-load --help | grep -q '^usage: convergectl report-load NAME SERVICE INDEX' ||
        fail "report-load --help"
}

# load_reported SVC INDEX SLOTS MEMORY: the replica's agent reports these
# loads for it.
load_reported() {
    local r
    r=$(svc_replicas "$1" | jq -c --argjson i "$2" '.[] | select(.index == $i) | .load')
    [ "$(jqr .Slots <<<"$r")" = "$3" ] && [ "$(jqr .MemoryMB <<<"$r")" = "$4" ]
}

# load_slots_are SVC INDEX N: the replica's report has Slots N.
load_slots_are() {
    [ "$(svc_replicas "$1" | jq --argjson i "$2" '.[] | select(.index == $i) | .load.Slots')" = "$3" ]
}

test_load_a_replica_writing_its_load_file_has_that_load_in_its_report() {
    local p cl name svc row pid node rid file log
    p="ld$(printf %04x $((RANDOM ^ RUN_ID % 65536)))-"
    cl=$(svc_cluster_file "$p")
    name=$(stack_name load-file)
    LOAD_NAME=$name # for the trap, which runs once this function's locals are gone
    trap 'svc_agents_cleanup "$LOAD_NAME"' EXIT
    for node in N1 N2 N3; do rm -rf "${STATE:?}/agents/$p$node"; done
    svc_agents_start "$cl" "${p}N1" "${p}N2" "${p}N3"
    ctl submit "$name" "$DATA/services/loadfile.yaml" -P "constraint=$(svc_group_constraint "$p")" \
        --wait --timeout 90 >/dev/null || fail "create: $(status_json "$name" | jqr .reason)"
    svc=$(svc_id "$name" web)
    # Each replica wrote Slots = index + 2 and MemoryMB = 300: they win over
    # the declared Slots 1 and the measured memory of a shell.
    cv_wait_until 20 "replica 0 to report Slots 2, MemoryMB 300" load_reported "$svc" 0 2 300
    cv_wait_until 20 "replica 1 to report Slots 3, MemoryMB 300" load_reported "$svc" 1 3 300
    row=$(svc_replicas "$svc" | jq -c '.[] | select(.index == 1)')
    pid=$(jqr .pid <<<"$row") node=$(jqr .node <<<"$row") rid=$(jqr .rid <<<"$row")
    file="$(cd "$STATE/agents/$node" && pwd)/loads/${rid//\//+}/load"
    assert_eq "$file" "$(tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^CONVERGE_LOAD_FILE=//p')" \
        "CONVERGE_LOAD_FILE of replica 1"
    [ -f "$file" ] || fail "no load file $file"
    # The node's load sums what its replicas report.
    [ "$(redis HGET "$(ckey "node:$node")" load | jqr .MemoryMB)" -ge 300 ] ||
        fail "node $node's load: $(redis HGET "$(ckey "node:$node")" load)"
    # A new value is read with the next report; the bad line was warned
    # about once, however many reports read it.
    printf 'Slots=0\nthis line is no load\nMemoryMB=301\n' >"$file.tmp" && mv "$file.tmp" "$file"
    cv_wait_until 20 "replica 1 to report Slots 0, MemoryMB 301" load_reported "$svc" 1 0 301
    log="$STATE/agents/$node/agent.log"
    assert_eq 1 "$(grep -c "replica $rid: 1 bad line(s) in its load file" "$log")" "warnings in $log"
    assert_match "line 2: 'this line is no load': expected METRIC=VALUE" \
        "$(grep "replica $rid: 1 bad line" "$log")" "the warning names the line"
    # Without the file, the declared load again (the memory measured).
    rm -f "$file"
    cv_wait_until 20 "replica 1 to report its declared Slots 1" load_slots_are "$svc" 1 1
}

# ---------------------------------------------------------------------------

lctl() { ctl --prefix "$LOAD_PREFIX" "$@"; }
lkey() { echo "${LOAD_PREFIX}{cluster}:$1"; }

crm_lease_held() { [ -n "$(redis GET "$(ckey crm)")" ]; }

test_load_crm_shows_the_holder_of_the_role() {
    cv_wait_until 20 "an observer to hold $(ckey crm)" crm_lease_held
    local lease holder out
    lease=$(redis GET "$(ckey crm)")
    holder=$lease
    [[ $lease =~ ^(.+):[0-9]+$ ]] && holder=${BASH_REMATCH[1]}
    out=$(ctl crm) || fail "convergectl crm failed"
    assert_match "^Cluster resource manager: ${holder}[,( ]" "$out" "crm's first line"
    assert_eq "$holder" "$(ctl crm -o json | jqr .holder)" "crm -o json's holder"
}

test_load_crm_shows_what_it_can_read_of_a_status() {
    # A hand-written lease and status under a prefix of their own: no
    # observer writes there.
    trap 'redis DEL "$(lkey crm)" "$(lkey crm:status)" >/dev/null' EXIT
    local out json map
    out=$(lctl crm)
    assert_match 'No cluster resource manager holds the role' "$out" "without a lease"
    assert_match 'No status yet' "$out" "without a status"
    redis SET "$(lkey crm)" "observer-x:5" PX 60000 >/dev/null
    redis HSET "$(lkey crm:status)" holder observer-x epoch 5 \
        refresh '{"at": 1, "ms": 2, "moves": 0}' balancing '{"at": 1, "ms"' \
        imbalance '[{"metric":"CPU","nodeType":null,"max":3,"min":1,"ratio":3,"threshold":2,"activity":0,"strategy":"balance","imbalanced":true,"after":1.2}]' \
        why 'CPU: no move improves enough' >/dev/null
    out=$(lctl crm) || fail "crm on a half-readable status"
    assert_match '^Cluster resource manager: observer-x, epoch 5' "$out" "holder line"
    assert_match 'refresh +[0-9a-z]+ ago +2 +0' "$out" "refresh row"
    assert_match 'balancing +never' "$out" "the unreadable balancing row"
    assert_match 'CPU +\(all\) +3 +1 +3\.00 +2 +0 +balance +yes +1\.20' "$out" "imbalance row"
    assert_match 'Nothing moved: CPU: no move improves enough' "$out" "why"
    assert_match 'Unreadable status field balancing: not JSON' "$out" "the field named"
    json=$(lctl crm -o json)
    assert_eq 5 "$(jqr .epoch <<<"$json")" "epoch"
    assert_eq 2 "$(jqr .refresh.ms <<<"$json")" "refresh.ms"
    assert_eq null "$(jqr .balancing <<<"$json")" "balancing unreadable"
    assert_match '^not JSON' "$(jqr .errors.balancing <<<"$json")" "errors.balancing"
    map=$(lctl nodes --map)
    assert_match 'CPU max/min 3\.00 → 1\.20 \(threshold 2, imbalanced\)' "$map" "the map's balance line"
}
