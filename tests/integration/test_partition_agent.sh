# A node agent cut off from Redis (docs/services.md "Node loss"
# and "Agent restarts, SIGTERM, the fence"): one agent runs in a network
# namespace of its own (netns.sh, as the engine of test_partition.sh; its
# replicas start inside it too) with the only replica of a stateful service;
# two more agents outside can take it. The namespace is cut off from Redis
# alone. The agent must fence itself (its stateful replica's process gone
# within --fence-ms of the cut, and its log saying why), the cluster loop
# must place the index on another node only after that (every replica
# process on the machine scanned every 100 ms: never two of the index at
# once), and once the network heals the agent must learn that its replica
# moved and not start it again: the index runs exactly once, on the new node.
# A second run first loses only Redis's answers (netns.sh cut-redis-replies)
# until the agent fenced, then cuts both ways: the answers TCP delivers after
# the heal were computed before the move, and none may start the replica.
# Uses the helpers of test_services.sh (svt_*) and test_partition.sh.
# shellcheck shell=bash disable=SC2317 # functions defined inside tests are called by cv_wait_until

PAG_NETNS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/netns.sh"
# A namespace and a /30 of this run's own: namespaces and veths are the
# whole machine's, and another run's setup would tear down one of the same
# name (its agent then cut off from everything, healed or not).
PAG_NS="cva$((RUN_ID % 1000000))"
PAG_NET="10.201.$((RUN_ID % 250 + 1))"
# The cut agent's fence: fence + fenceMarginMs (2 s) is over the grace (5 s),
# so the stateful rule is the one that holds the index back.
PAG_FENCE_MS=4000

pag_net() { CV_NETNS_NET=$PAG_NET "$PAG_NETNS" "$1" "$PAG_NS"; }

pag_cleanup() {
    set +e
    kill "${PAG_SCANPID:-}" 2>/dev/null
    pag_net heal # the agent inside hears the delete of the stack
    svc_agents_cleanup "${SVT_STACKS[@]}"
    pag_net teardown
}

# pag_start_cut CLUSTER_FILE NODE: NODE's agent, in the namespace, started
# as svc_agent_start starts any agent (through a wrapper in its place).
pag_start_cut() {
    local wrap=$STATE/agents/$2.netns-agent
    printf '#!/bin/sh\nexec env CV_NETNS_NET=%s %q exec %s %q "$@"\n' \
        "$PAG_NET" "$PAG_NETNS" "$PAG_NS" "$SVC_AGENT" >"$wrap"
    chmod +x "$wrap"
    SVC_AGENT=$wrap svc_agent_start "$1" "$2" --fence-ms "$PAG_FENCE_MS"
}

# pag_in_ns PID: the process runs in the namespace's network.
pag_in_ns() { [ "$(readlink "/proc/$1/ns/net")" != "$(readlink /proc/self/ns/net)" ]; }

# pag_scan_t SCAN NODE first|last: the first or last sample time (ms) in
# which a replica process of NODE ran ("!NODE": of another node).
pag_scan_t() {
    awk -v n="$2" -v w="$3" '$2 != "-" && (substr(n, 1, 1) == "!" ? $4 != substr(n, 2) : $4 == n) {
        if (w == "first") { print $1; exit } t = $1 } END { if (w == "last" && t) print t }' "$1"
}

pag_scan_has() { [ -n "$(pag_scan_t "$1" "$2" first)" ]; }

# pag_forgot NODE RID: NODE's agent dropped RID (its state file and report).
pag_forgot() {
    ! compgen -G "$STATE/agents/$1/replicas/*.json" >/dev/null && [ -z "$(svc_report "$1" "$2")" ]
}

pag_lines_over() { [ "$(wc -l <"$1")" -gt "$2" ]; }

# pag_guard_runs NODE: the fence guard of NODE's agent runs (its pid file
# names a live process; a relative --dir once kept it from starting).
pag_guard_runs() {
    local pid
    pid=$(cut -d' ' -f1 "$STATE/agents/$1/fence.guard" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# pag_scenario both|replies-first: the whole test; replies-first cuts only
# Redis's replies until the agent fenced, then both ways.
pag_scenario() {
    local mode=$1 name svc cut log r0 r1 rid0 pid0 line t_cut t_fenced t_moved t_heal t_back t_forgot
    local scan old_last new_first new_node n doubles guard
    part_can_run || return 0
    SVT_P="pcut$(printf %04x $((RANDOM ^ RUN_ID % 65536)))-" SVT_STACKS=()
    SVT_CL=$(svc_cluster_file "$SVT_P")
    cut=${SVT_P}N1 log=$STATE/agents/${SVT_P}N1/agent.log scan=$STATE/agents/$SVT_P.procscan
    trap pag_cleanup EXIT
    rm -rf "${STATE:?}/agents/$cut" "$STATE/agents/${SVT_P}N4" "$STATE/agents/${SVT_P}N7"
    pag_net setup >/dev/null
    pag_start_cut "$SVT_CL" "$cut"
    # The only node of the test at first: the replica is placed on it.
    name=$(stack_name svc-pcut) && svt_stack svc-pcut
    ctl submit "$name" "$DATA/services/sleeper.yaml" -P replicas=1 -P stateful=true \
        -P "constraint=$(svt_c)" --wait --timeout 60 >/dev/null ||
        fail "create: $(status_json "$name" | jqr .reason)"
    svc=$(svc_id "$name" web)
    cv_wait_until 30 "the replica healthy" svc_all_healthy "$svc" 1
    r0=$(svc_replicas "$svc")
    assert_eq "$cut" "$(jqr '.[0].node' <<<"$r0")" "node of the replica"
    rid0=$(jqr '.[0].rid' <<<"$r0") pid0=$(jqr '.[0].pid' <<<"$r0")
    pag_in_ns "$pid0" || fail "the replica process $pid0 is not in the namespace"
    cv_wait_until 5 "the fence guard of $cut" pag_guard_runs "$cut"
    # Nodes in two other fault domains, outside the namespace, to take it.
    svc_agents_start "$SVT_CL" "${SVT_P}N4" "${SVT_P}N7"
    : >"$scan"
    "$SVC_PROCSCAN" watch "$scan" "$name" &
    PAG_SCANPID=$!
    cv_wait_until 5 "the scan to see the replica" grep -q " $cut\$" "$scan"
    line=$(wc -l <"$log")
    t_cut=$(cv_now_ms)
    if [ "$mode" = replies-first ]; then
        # Redis executes what the agent sends (heartbeats, reads of its
        # assignments, still naming the replica) but its answers are lost;
        # after the heal TCP delivers them, older than the move.
        pag_net cut-redis-replies
        cv_wait_until 15 "the replica process $pid0 fenced" cv_pid_gone "$pid0"
        pag_net cut-redis
        echo "    replies from Redis lost for $(($(cv_now_ms) - t_cut)) ms, then cut both ways"
    else
        pag_net cut-redis
    fi
    # (1) The agent fences itself: the process is gone within the fence time.
    cv_wait_until 15 "the replica process $pid0 fenced" cv_pid_gone "$pid0"
    t_fenced=$(cv_now_ms)
    echo "    replica process $pid0 on $cut gone $((t_fenced - t_cut)) ms after the cut (fence $PAG_FENCE_MS ms)"
    [ $((t_fenced - t_cut)) -le $((PAG_FENCE_MS + 1000)) ] ||
        fail "fenced $((t_fenced - t_cut)) ms after the cut, over the fence $PAG_FENCE_MS ms + 1 s"
    [ $((t_fenced - t_cut)) -ge $((PAG_FENCE_MS - 1000)) ] ||
        fail "the replica died $((t_fenced - t_cut)) ms after the cut, long before the fence: not the fence"
    [ -z "$(svc_procs "$name" | awk -v n="$cut" '$4 == n')" ] ||
        fail "a replica process still runs on $cut: $(svc_procs "$name")"
    cv_wait_until 3 "the agent to log its fence" part_log_since "$log" "$line" "fenced: Redis unreachable"
    echo "    agent: $(tail -n "+$((line + 1))" "$log" | grep -m1 'fenced: Redis unreachable' | sed 's/^.*node /node /')"
    # Its fence guard watches the same clock (the last heartbeat Redis
    # accepted) and may be first by a look; either way the agent says why.
    guard=$(grep 'showed no life' "$STATE/agents/$cut/fence-guard.log" 2>/dev/null | tail -1) || true
    [ -z "$guard" ] || echo "    guard: ${guard#*fence guard: }"
    # (2) The cluster loop places the index elsewhere, after the fence only.
    cv_wait_until 30 "replica 0 to run healthy off $cut" svt_moved_off "$svc" 0 "$cut"
    t_moved=$(cv_now_ms)
    r1=$(svc_replicas "$svc")
    new_node=$(jqr '.[0].node' <<<"$r1")
    echo "    index 0 healthy on $new_node $((t_moved - t_cut)) ms after the cut"
    cv_wait_until 3 "the scan to see the new process" pag_scan_has "$scan" "!$cut"
    old_last=$(pag_scan_t "$scan" "$cut" last) new_first=$(pag_scan_t "$scan" "!$cut" first)
    echo "    scans: the old process last seen $((old_last - t_cut)) ms, the new one first seen" \
        "$((new_first - t_cut)) ms after the cut"
    [ "$new_first" -gt "$old_last" ] || fail "the new process ran before the old one was gone"
    # (3) Healed, the agent comes back, learns the index moved, starts nothing.
    line=$(wc -l <"$log")
    t_heal=$(cv_now_ms)
    pag_net heal
    cv_wait_until 40 "the agent on $cut to reach Redis again" part_log_since "$log" "$line" "the fence is lifted"
    t_back=$(cv_now_ms)
    cv_wait_until 20 "the agent on $cut to drop replica $rid0" pag_forgot "$cut" "$rid0"
    t_forgot=$(cv_now_ms)
    echo "    healed: the agent reached Redis $((t_back - t_heal)) ms, dropped $rid0 $((t_forgot - t_heal)) ms after the heal"
    svc_node_alive "$cut" || fail "$cut has no heartbeat after the heal"
    # Two more seconds of scans with the agent back.
    n=$(wc -l <"$scan")
    cv_wait_until 10 "2 s more of scans" pag_lines_over "$scan" $((n + 20))
    kill "$PAG_SCANPID" || true
    # Fenced, the agent starts nothing again: not during the cut (its
    # restart policy would restart a process the guard killed), not after.
    [ -z "$(awk -v t="$t_fenced" -v n="$cut" '$1 >= t && $4 == n' "$scan")" ] ||
        fail "a replica process ran on $cut after the fence: $(awk -v t="$t_fenced" -v n="$cut" '$1 >= t && $4 == n' "$scan" | head -2)"
    doubles=$("$SVC_PROCSCAN" doubles "$scan")
    [ -z "$doubles" ] || fail "index 0 ran twice at once (t_ms name pids nodes): $(head -3 <<<"$doubles")"
    svt_one_proc_per_name "$name" 1
    assert_eq "$new_node" "$(svc_procs "$name" | awk '{ print $4 }')" "node of the one process"
    assert_eq "$new_node" "$(jqr '.[0].node' <<<"$(svc_replicas "$svc")")" "node of the placement"
    assert_eq 1 "$(svc_ledger | jq --arg k "start:$rid0" '.[$k]')" "ledger start:$rid0"
    assert_eq null "$(svc_ledger | jq --arg k "restart:$rid0" '.[$k]')" "ledger restart:$rid0 (never started again)"
    kill -0 "$(svc_agent_pid "$cut")" || fail "the agent on $cut is gone: $(tail -3 "$log")"
}

test_partition_agent_cut_from_redis_fences_its_stateful_replica_which_moves_once() {
    pag_scenario both
}

# Replies Redis sent before the move, delivered after the heal, must not
# start the fenced replica again.
test_partition_agent_replies_lost_then_cut_no_stale_answer_restarts_the_replica() {
    pag_scenario replies-first
}
