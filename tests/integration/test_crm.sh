# The cluster resource manager (docs/crm.md): one observer at a time holds
# its role under the lease {cluster}:crm with a fencing epoch; a holder
# killed is succeeded within the lease time, a holder paused past its lease
# stands down when it resumes and its moves are refused (svc_move.lua
# answers FENCED); its phases run on their timers and say so in
# {cluster}:crm:status; a whole fault domain lost is seen in one refresh.
# Needs a deployment with two observers or more (up.sh --observers 2).
# Nodes and services written by hand (as in test_live.sh) are unique to the
# run and removed at the end.
# shellcheck shell=bash disable=SC2317,SC2016 # functions defined inside tests are called by cv_wait_until; jq programs in single quotes

CRM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

crm_lease() { redis GET "$(ckey crm)"; }
crm_status() { redis HGET "$(ckey crm:status)" "$1"; }
crm_held() { [ -n "$(crm_lease)" ]; }

# crm_service ACTION NAME: deploy/local/service.sh on the test's state.
crm_service() {
    "$CRM_ROOT/deploy/local/service.sh" --dir "$STATE" --build-dir "$(dirname "$CONVERGECTL")" \
        "$1" "$2"
}

crm_observers() { find "$STATE/pids" -name 'observer-*.pid' -printf '%f\n' | sed 's/\.pid$//' | sort; }

# crm_taken_from VALUE: the lease is held, by another value than VALUE, and
# the status names the same holder and epoch as the lease.
crm_taken_from() {
    local v
    v=$(crm_lease)
    [ -n "$v" ] && [ "$v" != "$1" ] && [ "$v" = "$(crm_status holder):$(crm_status epoch)" ]
}

# crm_move LEASE_VALUE SVC_KEY MOVES_JSON: svc_move.lua as the manager calls
# it; prints its reply, one element a line.
crm_move() {
    redis EVAL "$(cat "$CRM_ROOT/proto/lua/svc_move.lua")" 2 "$2" "$(ckey crm)" "$1" "$3"
}

# crm_node RUN NODE FD UD: registers a node by hand, alive and enabled.
crm_node() {
    redis HSET "$(ckey nodes)" "$2" \
        "{\"name\":\"$2\",\"faultDomain\":\"fd:/$3\",\"upgradeDomain\":\"$4\",\"properties\":{\"run\":\"$1\"},\"capacities\":{\"MemoryMB\":1000}}" >/dev/null
    redis SET "$(ckey "alive:$2")" x >/dev/null
    redis HSET "$(ckey "node:$2")" admin enabled fence_ms 1000 >/dev/null
}

# crm_service_put RUN SVC REPLICAS: a service record written by hand (as
# svc_put.lua writes it) with the stack and resource that own it.
crm_service_put() {
    local spec stack="$1-stack"
    spec=$(printf '{"name":"web","serviceType":"web","replicas":%d,"placementConstraints":"run == %s","metrics":[{"name":"MemoryMB","primaryLoad":64}],"process":{"tasks":[{"name":"main","command":["sleep","600"]}],"restart_policy":{"policy":"Always"},"digest":"d1"}}' "$3" "$1")
    redis HSET "$(ckey "svc:$2")" spec "$spec" state active gen 0 stack "$stack" \
        stack_name demo resource web >/dev/null
    redis HSET "${CONVERGE_PREFIX:-cv:}{$stack}:stack" status CREATE_COMPLETE >/dev/null
    redis HSET "${CONVERGE_PREFIX:-cv:}{$stack}:res:web" physical_id "$2" >/dev/null
    redis SADD "$(ckey services)" "$2" >/dev/null
}

# crm_cleanup RUN SVC NODE...: the hand-written nodes and service gone.
crm_cleanup() {
    local run=$1 svc=$2 n
    shift 2
    redis DEL "$(ckey "svc:$svc")" "$(ckey "load:$svc")" >/dev/null
    redis SREM "$(ckey services)" "$svc" >/dev/null
    redis DEL "${CONVERGE_PREFIX:-cv:}{$run-stack}:stack" "${CONVERGE_PREFIX:-cv:}{$run-stack}:res:web" >/dev/null
    for n; do
        redis HDEL "$(ckey nodes)" "$n" >/dev/null
        redis DEL "$(ckey "alive:$n")" "$(ckey "node:$n")" "$(ckey "assign:$n")" \
            "$(ckey "down:$n")" "$(ckey "report:$n")" >/dev/null
        redis HDEL "$(ckey health)" "System.FM:$n|State" >/dev/null
    done
}

# NODE...: replicas of this run's services (their ids start with the run,
# as the nodes' names do) assigned over the nodes; another test's service
# balanced onto them does not count.
crm_assigned() {
    local n total=0 run=${1%-*}
    for n; do
        total=$((total + $(redis HKEYS "$(ckey "assign:$n")" | grep -c "^$run\." || true)))
    done
    echo "$total"
}
crm_assigned_is() { [ "$(crm_assigned "${@:2}")" = "$1" ]; }

# ---------------------------------------------------------------------------

test_crm_exactly_one_holder_among_the_observers() {
    local i v values="" holder
    [ "$(crm_observers | wc -l)" -ge 2 ] || fail "the deployment needs two observers: $(crm_observers)"
    cv_wait_until 10 "an observer to hold the role" crm_held
    # Every 100 ms for 3 s: one lease value, and the status names it.
    for i in $(seq 30); do
        v="$(crm_lease) $(crm_status holder):$(crm_status epoch)"
        values+="$v"$'\n'
        sleep 0.1
    done
    assert_eq 1 "$(sort -u <<<"$values" | grep -c .)" "distinct holders seen: $(sort -u <<<"$values" | paste -sd,)"
    v=$(head -1 <<<"$values")
    assert_eq "${v% *}" "${v#* }" "the lease's value and the status's holder:epoch"
    holder=$(crm_status holder)
    crm_observers | grep -qx "$holder" || fail "the holder $holder is none of the observers"
    grep -q "holds the cluster resource manager's role (lease .* = $(crm_lease))" \
        "$STATE/log/$holder.log" || fail "$holder does not log that it took the role"
}

test_crm_killed_holder_is_succeeded_within_the_lease_time() {
    local holder value t0 t1
    cv_wait_until 10 "an observer to hold the role" crm_held
    value=$(crm_lease) holder=$(crm_status holder)
    trap 'crm_service start "'"$holder"'" >/dev/null 2>&1 || true' EXIT
    t0=$(cv_now_ms)
    crm_service kill "$holder" >/dev/null || fail "could not kill $holder"
    cv_wait_until 10 "another observer to take the role from $value" crm_taken_from "$value"
    t1=$(cv_now_ms)
    # The lease is 3000 ms from the holder's last renewal; the successor
    # tries every PLBRefreshGap. The bound allows a second more: the test
    # command runs other suites beside this one, and a loaded machine is
    # late to schedule a process, which no lease time can promise.
    [ $((t1 - t0)) -le 5000 ] || fail "the role was taken $((t1 - t0)) ms after the kill (lease 3000 ms)"
    [ "$(crm_status holder)" != "$holder" ] || fail "the killed $holder still holds the role"
    [ "$(crm_status epoch)" -gt "${value##*:}" ] || fail "the epoch did not grow: $(crm_status epoch)"
    crm_service start "$holder" >/dev/null || fail "could not start $holder again"
}

test_crm_paused_holder_stands_down_and_its_moves_are_fenced() {
    local holder value pid successor i v reply log
    cv_wait_until 10 "an observer to hold the role" crm_held
    value=$(crm_lease) holder=$(crm_status holder) log="$STATE/log/$(crm_status holder).log"
    pid=$(crm_service pid "$holder") || fail "no pid of $holder"
    trap 'kill -CONT '"$pid"' 2>/dev/null || true' EXIT
    kill -STOP "$pid"
    cv_wait_until 10 "a successor while $holder is stopped" crm_taken_from "$value"
    successor=$(crm_lease)
    kill -CONT "$pid"
    cv_wait_until 10 "$holder to stand down once resumed" \
        grep -q "no longer holds the cluster resource manager's role (.* was $value)" "$log"
    # From then on only the successor acts: the lease and the status stay its.
    for i in $(seq 15); do
        v="$(crm_lease) $(crm_status holder):$(crm_status epoch)"
        assert_eq "$successor $successor" "$v" "lease and status 100 ms x $i after $holder resumed"
        sleep 0.1
    done
    # A move under the old value is refused, whatever service it names.
    reply=$(crm_move "$value" "$(ckey "svc:crm-none")" '[]' | paste -sd' ')
    assert_eq "FENCED $successor" "$reply" "svc_move.lua under the paused holder's value"
}

test_crm_svc_move_writes_moves_only_under_the_lease_and_of_replicas_on_from() {
    local svc key value reply moves
    svc="crm${RUN_ID}.web.00000001" key=$(ckey "svc:crm${RUN_ID}.web.00000001")
    trap 'redis DEL "'"$key"'" >/dev/null' EXIT
    # Not in {cluster}:services: no reconcile touches it.
    redis HSET "$key" state active gen 5 \
        placement '[{"index":0,"rid":"r0","node":"A"},{"index":1,"rid":"r1","node":"B"}]' >/dev/null
    cv_wait_until 10 "an observer to hold the role" crm_held
    value=$(crm_lease)
    reply=$(crm_move "$value" "$key" '[{"index":0,"from":"A","to":"C","reason":"constraint","detail":"MemoryMB over capacity"},{"index":1,"from":"A","to":"C","reason":"balancing"}]' | paste -sd' ')
    assert_eq "OK 1" "$reply" "moves written (index 1 is not on A)"
    assert_eq 6 "$(redis HGET "$key" gen)" "generation after the move"
    moves=$(redis HGET "$key" moves)
    jq -e --argjson e "${value##*:}" '."0" | .from == "A" and .to == "C" and .reason == "constraint"
        and .detail == "MemoryMB over capacity" and .epoch == $e and .at > 0' <<<"$moves" >/dev/null ||
        fail "the move of index 0: $moves"
    jq -e 'has("1") | not' <<<"$moves" >/dev/null || fail "index 1 moved from a node it is not on: $moves"
    reply=$(crm_move "$value" "$key" '[{"index":0,"from":"A","to":"D","reason":"balancing"}]' | paste -sd' ')
    assert_eq "OK 0" "$reply" "a second move of an index already moving"
    reply=$(crm_move "$value-stale" "$key" '[{"index":1,"from":"B","to":"C","reason":"balancing"}]' | head -1)
    assert_eq FENCED "$reply" "a move under another lease value"
    assert_eq 6 "$(redis HGET "$key" gen)" "generation after the refused moves"
    reply=$(crm_move "$value" "$(ckey "svc:crm${RUN_ID}-none")" '[]')
    assert_eq GONE "$reply" "a move of a service that does not exist"
}

# crm_phase_ats PHASE SAMPLES: the distinct `at` of the phase among the samples.
crm_phase_ats() { jq -r --arg p "$1" '.[$p] | fromjson | .at' <<<"$2" | sort -un; }

# crm_min_gap ATS: the smallest difference between consecutive values (s).
crm_min_gap() { awk 'NR > 1 { d = $1 - p; if (m == "" || d < m) m = d } { p = $1 } END { print m + 0 }' <<<"$1"; }

# crm_every_second PHASE ATS: 5 to 12 runs in 11 s, 1 s apart at least.
crm_every_second() {
    local n
    n=$(grep -c . <<<"$2")
    if [ "$n" -lt 5 ] || [ "$n" -gt 12 ]; then fail "$n $1 passes in 11 s (every 1 s)"; fi
    awk -v m="$(crm_min_gap "$2")" 'BEGIN { exit !(m >= 0.95) }' ||
        fail "$1 passes $(crm_min_gap "$2") s apart (every 1 s): $(paste -sd' ' <<<"$2")"
}

test_crm_status_fields_and_phases_advancing_at_their_intervals() {
    local samples="" f refresh balancing t_end
    cv_wait_until 10 "an observer to hold the role" crm_held
    cv_wait_until 15 "a first balancing pass" eval '[ -n "$(crm_status balancing)" ]'
    for f in holder epoch since refresh placement constraint balancing imbalance window state; do
        redis HEXISTS "$(ckey crm:status)" "$f" | grep -qx 1 || fail "no field $f in the status"
    done
    jq -e '.since > 0 and .moves >= 0 and .throttled >= 0' <<<"$(crm_status window)" >/dev/null ||
        fail "window: $(crm_status window)"
    # 11 s of samples, every 100 ms: two balancing passes at least.
    t_end=$(($(cv_now_ms) + 11000))
    while (($(cv_now_ms) < t_end)); do
        samples+=$(redis HGETALL "$(ckey crm:status)" | jq -Rn '[inputs] | [range(0; length; 2) as $i
            | {(.[$i]): .[$i + 1]}] | add' -c)$'\n'
        sleep 0.1
    done
    refresh=$(crm_phase_ats refresh "$samples")
    # refresh every 0.1 s (one phase after it waits for the next): 11 s gives
    # more refreshes than the 12 placements at most (how many more depends
    # on how long a refresh takes on the machine).
    [ "$(grep -c . <<<"$refresh")" -gt 12 ] || fail "$(grep -c . <<<"$refresh") refreshes in 11 s"
    crm_every_second placement "$(crm_phase_ats placement "$samples")"
    crm_every_second constraint "$(crm_phase_ats constraint "$samples")"
    balancing=$(crm_phase_ats balancing "$samples")
    [ "$(grep -c . <<<"$balancing")" -ge 2 ] || fail "$(grep -c . <<<"$balancing") balancing passes in 11 s"
    awk -v m="$(crm_min_gap "$balancing")" 'BEGIN { exit !(m >= 4.95) }' ||
        fail "balancing passes $(crm_min_gap "$balancing") s apart (every 5 s): $(paste -sd' ' <<<"$balancing")"
}

test_crm_a_fault_domain_lost_at_once_is_seen_in_one_refresh_and_re_placed() {
    local run="cf${RUN_ID}" nodes=() i svc fd1 marks
    for i in 1 2 3 4 5 6 7 8 9; do nodes+=("$run-n$i"); done
    svc="$run.web.00000001" fd1=("$run-n1" "$run-n2" "$run-n3")
    trap 'crm_cleanup '"$run $svc ${nodes[*]}" EXIT
    for i in 1 2 3 4 5 6 7 8 9; do
        crm_node "$run" "$run-n$i" "fd$(((i - 1) / 3 + 1))" "ud$(((i - 1) % 3 + 1))"
    done
    crm_service_put "$run" "$svc" 4
    cv_wait_until 20 "4 replicas assigned" crm_assigned_is 4 "${nodes[@]}"
    [ "$(crm_assigned "${fd1[@]}")" -ge 1 ] || fail "no replica in fd1"
    # The three nodes of fd1 lose their heartbeats at once.
    redis DEL "$(ckey "alive:${fd1[0]}")" "$(ckey "alive:${fd1[1]}")" "$(ckey "alive:${fd1[2]}")" >/dev/null
    crm_marked() { for i in "${fd1[@]}"; do [ -n "$(redis GET "$(ckey "down:$i")")" ] || return 1; done; }
    cv_wait_until 10 "the nodes of fd1 marked down" crm_marked
    marks=$(for i in "${fd1[@]}"; do redis GET "$(ckey "down:$i")"; done | sort -u)
    assert_eq 1 "$(grep -c . <<<"$marks")" "down marks of fd1 (one refresh sees them all): $(paste -sd' ' <<<"$marks")"
    cv_wait_until 30 "fd1's replicas re-placed" crm_assigned_is 0 "${fd1[@]}"
    assert_eq 4 "$(redis HGET "$(ckey "svc:$svc")" placement | jq length)" "replicas placed after fd1 was lost"
    # One placement pass re-placed them all: their events carry one time.
    local times
    times=$(redis XRANGE "${CONVERGE_PREFIX:-cv:}{$run-stack}:events" - + |
        awk -v p="moved from $run-n[123] to .* \\(node $run-n[123] down" '
            $0 == "time" { getline; t = $0 } $0 ~ p { print t }' | sort -u)
    [ -n "$times" ] || fail "no event of a replica moved off fd1"
    assert_eq 1 "$(grep -c . <<<"$times")" "times of the moves off fd1: $(paste -sd' ' <<<"$times")"
}

test_crm_balancing_waits_while_a_service_upgrades_by_upgrade_domain() {
    local run="cu${RUN_ID}" nodes=("cu${RUN_ID}-a" "cu${RUN_ID}-b") svc
    svc="$run.web.00000001"
    trap 'crm_cleanup '"$run $svc ${nodes[*]}" EXIT
    crm_node "$run" "${nodes[0]}" fd1 ud1
    crm_node "$run" "${nodes[1]}" fd2 ud2
    crm_service_put "$run" "$svc" 1
    cv_wait_until 20 "the replica assigned" crm_assigned_is 1 "${nodes[@]}"
    redis HSET "$(ckey "svc:$svc")" rollout '{"from":"d0","to":"d1","state":"rolling","by_upgrade_domain":true,"domains":["ud1","ud2"],"domain":"ud1"}' >/dev/null
    crm_paused() { crm_status why | grep -q "balancing is paused while service $svc upgrades by upgrade domain"; }
    cv_wait_until 15 "balancing to say it waits for $svc" crm_paused
    redis HSET "$(ckey "svc:$svc")" rollout '{"from":"d0","to":"d1","state":"complete","by_upgrade_domain":true}' >/dev/null
    cv_wait_until 15 "balancing to go on once the upgrade is complete" eval '! crm_paused'
}

# ---------------------------------------------------------------------------
# End to end, with node agents and real replica processes (as in
# test_services.sh): the constraint check and balancing of cv_balance, their
# moves written by the manager and carried out by each service's reconcile.

# crm_agents_up TAG NODE...: a cluster file whose nodes carry a prefix of
# this test (CRM_P) and keep to the group TestGroup; starts the agents of
# NODE... and arranges their cleanup, and CRM_STACKS', on exit.
crm_agents_up() {
    local tag=$1 n nodes=()
    shift
    CRM_P="$tag$(printf %04x $((RANDOM ^ RUN_ID % 65536)))-"
    CRM_STACKS=()
    CRM_CL=$(svc_cluster_file "$CRM_P")
    trap 'svc_agents_cleanup "${CRM_STACKS[@]}"' EXIT
    [ -x "$SVC_AGENT" ] || fail "$SVC_AGENT is not built"
    for n; do
        rm -rf "${STATE:?}/agents/$CRM_P$n"
        nodes+=("$CRM_P$n")
    done
    svc_agents_start "$CRM_CL" "${nodes[@]}"
}

# crm_submit TAG ARGS...: a sleeper stack on this test's nodes; prints its name.
crm_submit() {
    local name
    name=$(stack_name "$1")
    shift
    ctl submit "$name" "$DATA/services/sleeper.yaml" -P "constraint=$(svc_group_constraint "$CRM_P")" \
        "$@" --wait --timeout 90 >/dev/null || fail "create $name: $(status_json "$name" | jqr .reason)"
    echo "$name"
}

# crm_node_of SVC INDEX: the node INDEX is placed on.
crm_node_of() { svc_placement "$1" | jqr --argjson i "$2" '.[] | select(.index == $i) | .node'; }

# crm_on NODE SVC...: "svc index" of every replica placed on NODE.
crm_on() {
    local s
    for s in "${@:2}"; do
        svc_placement "$s" | jqr --arg n "$1" --arg s "$s" '.[] | select(.node == $n) | "\($s) \(.index)"'
    done
}

# crm_move_of SVC INDEX: the record's move of INDEX ({} when none).
crm_move_of() {
    local m
    m=$(svc_field "$1" moves)
    [ -n "$m" ] || { echo '{}'; return; }
    jq -c --arg i "$2" '.[$i] // {}' <<<"$m" 2>/dev/null || echo '{}'
}

test_crm_a_load_spike_moves_a_replica_off_the_node_over_capacity() {
    local a b u sa sb su full svc index t0 t1 placed_u moved to
    crm_agents_up spike N1 N5 N9
    a=$(crm_submit crm-spike-a -P replicas=2) && CRM_STACKS+=("$a")
    b=$(crm_submit crm-spike-b -P replicas=2) && CRM_STACKS+=("$b")
    # An unrelated service: it shares no metric with the others; it never moves.
    u=$(crm_submit crm-spike-u -P replicas=1 -P metric=MemoryMB -P slots=1) && CRM_STACKS+=("$u")
    sa=$(svc_id "$a" web) sb=$(svc_id "$b" web) su=$(svc_id "$u" web)
    cv_wait_until 60 "every replica healthy" eval 'svc_all_healthy "$sa" 2 && svc_all_healthy "$sb" 2 && svc_all_healthy "$su" 1'
    placed_u=$(svc_placement "$su" | jq -c 'map({index, node, rid})')
    # 4 replicas of 1 Slot on 3 nodes of 4 Slots: one node holds two.
    for full in "${CRM_P}N1" "${CRM_P}N5" "${CRM_P}N9"; do
        [ "$(crm_on "$full" "$sa" "$sb" | grep -c .)" = 2 ] && break
    done
    [ "$(crm_on "$full" "$sa" "$sb" | grep -c .)" = 2 ] || fail "no node holds two replicas: $(svc_placement "$sa") $(svc_placement "$sb")"
    index=$(crm_on "$full" "$sa" | awk '{ print $2 }')
    # The replica of a on that node reports 3.5 Slots: the node holds 4.5 of 4.
    t0=$(cv_now_ms)
    ctl report-load "$a" web "$index" Slots=3.5 >/dev/null || fail "report-load failed"
    # The move record lasts only until the move is done (100 ms when the
    # new replica is healthy at once): its stack's event stays.
    crm_decided() {
        local s i ev
        for s in "$sa" "$sb"; do
            for i in 0 1; do
                moved=$(crm_move_of "$s" "$i")
                [ "$(jqr '.from // ""' <<<"$moved")" = "$full" ] && { svc="$s" index=$i; return 0; }
                ev=$(ctl events "$(svc_field "$s" stack_name)" -o json | jq -c --arg r "^replica web-$i[.].* moved from $full to " \
                    '[.[] | select(.reason | test($r))] | last // empty')
                [ -n "$ev" ] || continue
                moved=$(jq -c '.reason | capture(" to (?<to>[^ ]+) [(](?<reason>[a-z]+)") ' <<<"$ev")
                svc="$s" index=$i
                return 0
            done
        done
        return 1
    }
    cv_wait_until 10 "a move off $full" crm_decided
    t1=$(cv_now_ms)
    assert_eq constraint "$(jqr .reason <<<"$moved")" "the move's reason: $moved"
    # Two constraint checks (1 s each) at most, the refresh before them, and
    # a second for a machine loaded by the suites running beside this one.
    [ $((t1 - t0)) -le 3600 ] || fail "the move was decided $((t1 - t0)) ms after the report"
    to=$(jqr .to <<<"$moved")
    grep -q "crm: move replica $index of service $svc from $full to $to (constraint" "$STATE"/log/observer-*.log ||
        fail "no observer logs the move of $svc $index"
    cv_wait_until 60 "replica $index of $svc healthy on $to" eval \
        '[ "$(crm_node_of "$svc" "$index")" = "$to" ] && svc_all_healthy "$svc" 2 && [ "$(crm_move_of "$svc" "$index")" = "{}" ]'
    ctl events "$(svc_field "$svc" stack_name)" -o json | jq -e --arg f "$full" --arg t "$to" \
        '[.[] | select(.reason | test("moved from " + $f + " to " + $t + " \\(constraint"))] | length >= 1' >/dev/null ||
        fail "no 'moved' event with its reason in the stack of $svc"
    assert_eq "$placed_u" "$(svc_placement "$su" | jq -c 'map({index, node, rid})')" "the unrelated service's placement"
    assert_eq "" "$(svc_field "$su" moves)" "moves of the unrelated service"
}

test_crm_a_node_added_to_an_imbalanced_cluster_receives_replicas() {
    local s1 s2 s3 ids=() s n10 on10
    crm_agents_up grow N1 N2 N3
    s1=$(crm_submit crm-grow-1 -P replicas=3) && CRM_STACKS+=("$s1")
    s2=$(crm_submit crm-grow-2 -P replicas=3) && CRM_STACKS+=("$s2")
    s3=$(crm_submit crm-grow-3 -P replicas=3) && CRM_STACKS+=("$s3")
    for s in "$s1" "$s2" "$s3"; do ids+=("$(svc_id "$s" web)"); done
    cv_wait_until 60 "every replica healthy" eval 'svc_all_healthy "${ids[0]}" 3 && svc_all_healthy "${ids[1]}" 3 && svc_all_healthy "${ids[2]}" 3'
    n10="${CRM_P}N10"
    svc_agent_start "$CRM_CL" "$n10"
    # Three nodes with 3 Slots used of 4 and one with none: balancing moves
    # a replica onto the new node (every 5 s) as a handover. One move is the
    # best layout: the nodes are one fault domain, N10 is in UD0 like N1, and
    # each service keeps one replica per upgrade domain, so only N1's
    # replicas may go, and a second would only swap the loads of N1 and N10.
    crm_on10() { [ "$(crm_on "$n10" "${ids[@]}" | grep -c .)" -ge 1 ]; }
    cv_wait_until 60 "a replica moved onto $n10" crm_on10
    on10=$(crm_on "$n10" "${ids[@]}")
    cv_wait_until 60 "the moved replica healthy" eval 'svc_all_healthy "${ids[0]}" 3 && svc_all_healthy "${ids[1]}" 3 && svc_all_healthy "${ids[2]}" 3'
    grep -q "crm: move replica .* from ${CRM_P}N1 to $n10 (balancing: Slots" "$STATE"/log/observer-*.log ||
        fail "no observer logs a balancing move to $n10 (on it: $on10)"
    [ "$(crm_on "${CRM_P}N1" "${ids[@]}" | grep -c .)" = $((3 - $(grep -c . <<<"$on10"))) ] ||
        fail "the replicas on $n10 ($on10) did not come from ${CRM_P}N1"
    crm_status imbalance | jq -e 'map(select(.metric == "Slots")) | length >= 1' >/dev/null ||
        fail "the status's imbalance has no Slots: $(crm_status imbalance)"
}
