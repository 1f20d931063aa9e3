# shellcheck shell=bash
# shellcheck disable=SC2034,SC2317,SC2001,SC2004 # variables and functions shared across the sourced files
#
# scenarios.sh — the chaos scenarios (sourced by tests/chaos/run.sh after
# lib.sh). Each scenario_NAME RUN runs one stack through its fault, checks
# the invariants, and leaves in globals: CHAOS_VIOLATIONS, CHAOS_FAULTS,
# CHAOS_RECOVERY (ms per kill), SCEN_MS (time for the stack to complete, all
# phases summed) and SCEN_DETAIL (one line of figures).
#
# Settings: SIZE (resources per stack), WORK (scratch directory),
# FAULT_WINDOW (s of faults per phase at most), SETTLE (s a stack may take to
# settle after its faults end, on top of the lease and the group session).

# shellcheck disable=SC2034 # used by run.sh
SCENARIOS=(kill pause redis kafka broker-failover redis-failover partition-redis partition-kafka poison duplicate cluster)

SESSION_S=2 # the workers' consumer group session (1 s locally, docs/kafka.md), and some

# scen_stack TAG RUN: generates the stack (gen.sh) for a scenario run; sets
# TPL, DEPS, CHANGES and NAME.
scen_stack() {
    local base=$WORK/$1-$2
    "$CHAOS_HERE/gen.sh" "$SIZE" "$base" || { chaos_violation "gen.sh failed"; return 1; }
    TPL=$base.yaml DEPS=$base.deps.json CHANGES=$base.changes.json
    NAME=chaos-$1-$2-$$-$RANDOM
}

# How long a stack may make no progress once the faults stopped before it
# counts as stuck: a held lease must run out and a dead member's session
# expire before its work moves, and then some.
settle_s() { echo $((SETTLE + $(chaos_lease_ms) / 1000 + SESSION_S)); }

# scen_check ID PHASE [BEFORE_DUMP] [SAVE]: the invariants, into
# CHAOS_VIOLATIONS; the events from PHASE_TRAV (set when the phase started).
scen_check() {
    local id=$1 phase=$2 before=${3:-} save=${4:-} expect line out
    case $phase in create) expect=CREATE_COMPLETE ;; update) expect=UPDATE_COMPLETE ;; *) expect=DELETE_COMPLETE ;; esac
    out=$(chaos_check "$STATE" "$id" "$phase" "$DEPS" "$CHANGES" "$before" "$expect" "$LEDGER" "$save" \
        "${PHASE_TRAV:-}")
    while IFS= read -r line; do
        case $line in
        VIOLATION:*) chaos_violation "$phase: ${line#VIOLATION: }" ;;
        note:*) chaos_note "$phase: ${line#note: }" ;;
        esac
    done <<<"$out"
}

# End of every scenario: workers alive, live (a fresh liveness record in
# state ready: a process that stopped working shows here), no crash report
# in their logs.
scen_end() {
    local name
    chaos_watch_workers
    # After a broker restart a member may take a while to be given its
    # partitions again, during which it is rightly "joining"; one that stays
    # so longer than 90 s is stuck.
    cv_wait_until 90 "every worker to report ready" chaos_workers_ready 2>/dev/null || true
    for name in $(chaos_workers); do
        cv_alive "$name" >/dev/null || continue
        local st
        st=$(rcli hget "${PREFIX}worker:$name" state 2>/dev/null)
        [[ $st == ready ]] ||
            chaos_violation "$name runs but is not working: liveness record ${st:-missing} (expected ready, refreshed every 2 s)"
    done
    chaos_scan_logs
    chaos_reaper_notes
}

# ---------------------------------------------------------------------------
# 1. kill -9 a random engine or observer every 0.5-2 s, restarting it at
#    once, during create, update (10% changed) and delete.
# ---------------------------------------------------------------------------

fault_kill() {
    local w
    w=$(chaos_random_worker)
    chaos_kill_restart "$w"
}

scenario_kill() {
    local run=$1
    local id dump=$WORK/kill-$run.create.json times=() phase rc
    scen_stack kill "$run" || return 1
    PHASE_T0=$(cv_now_ms)
    id=$(chaos_submit "$NAME" "$TPL") || { chaos_violation "submit failed"; return 1; }
    SCEN_MS=0
    for phase in create update delete; do
        [[ $phase == create ]] || PHASE_T0=$(cv_now_ms)
        local faults0=$CHAOS_FAULTS
        case $phase in
        update) timeout 60 "$CTL" update "$NAME" --existing -P ver=2 >/dev/null ||
            { chaos_violation "convergectl update failed"; break; } ;;
        delete) timeout 60 "$CTL" delete "$NAME" >/dev/null ||
            { chaos_violation "convergectl delete failed"; break; } ;;
        esac
        PHASE_TRAV=$(stack_get "$id" traversal)
        chaos_run_phase "$id" "$FAULT_WINDOW" "$(settle_s)" fault_kill 500 2000
        rc=$?
        ((CHAOS_FAULTS > faults0)) || chaos_note "$phase: the phase settled before the first kill"
        times+=("$phase $(chaos_secs "$PHASE_MS")")
        SCEN_MS=$((SCEN_MS + PHASE_MS))
        ((rc == 0)) || times[-1]+=" (stuck)"
        scen_check "$id" "$phase" "$dump" "$([[ $phase == create ]] && echo "$dump")"
        # A phase that got stuck is superseded by the next one (update and
        # delete are allowed at any time), so the next phase still runs.
    done
    SCEN_DETAIL="$(IFS=,; echo "${times[*]}" | sed 's/,/, /g'); $CHAOS_FAULTS kills"
    scen_end
}

# ---------------------------------------------------------------------------
# 2. SIGSTOP an engine that holds leases for longer than the lease, SIGCONT
#    it; its stale writes must be refused (fenced), never applied.
# ---------------------------------------------------------------------------

# Prints "resource token" for every lease of stack ID held now (one round trip);
# a token is "<worker id>@<incarnation>:<n>" (a worker id has no '@').
LEASES_LUA="local out, c = {}, '0'
repeat
  local r = redis.call('SCAN', c, 'MATCH', ARGV[1] .. '*', 'COUNT', 1000)
  c = r[1]
  for _, k in ipairs(r[2]) do
    local v = redis.call('GET', k)
    if v then out[#out + 1] = string.sub(k, #ARGV[1] + 1) .. ' ' .. v end
  end
until c == '0'
return out"
# The stack's key is named only so that on a Redis Cluster the script runs on
# the master of the stack's slot.
leases_of() { rcli eval "$LEASES_LUA" 1 "${PREFIX}{$1}:stack" "${PREFIX}{$1}:lease:" 2>/dev/null; }

scenario_pause() {
    local run=$1 id lease_ms target pid tries held=() r v t_stop t_resume now attempt
    local moved=() refused=() applied=() deadline t0
    lease_ms=$(chaos_lease_ms)
    # Catch an engine while it holds leases of the stack: stop it, and keep it
    # stopped if after 300 ms (Redis has run whatever it had already sent)
    # leases with its token remain. A small stack may finish before that
    # happens: then another stack, three at most.
    # At least 2,200 resources: a smaller stack is often done before an engine
    # is caught with a lease.
    local size=$SIZE
    ((SIZE >= 2200)) || SIZE=2200
    for attempt in 1 2 3; do
        scen_stack pause "$run-$attempt" || { SIZE=$size; return 1; }
        id=$(chaos_submit "$NAME" "$TPL") || { chaos_violation "submit failed"; return 1; }
        t0=$(cv_now_ms)
        tries=0
        while ((tries++ < 200)); do
            stack_settled "$id" && break
            target=$(leases_of "$id" | awk '$2 ~ /^engine-/ { split($2, a, "@"); n[a[1]]++ }
                END { for (w in n) if (n[w] > best) { best = n[w]; bw = w }; print bw }')
            if [[ -z $target ]]; then
                sleep 0.01
                continue
            fi
            pid=$(cv_alive "$target") || continue
            kill -STOP "$pid"
            sleep 0.3
            mapfile -t held < <(leases_of "$id" | awk -v w="$target" 'index($2, w "@") == 1 { print $1 }')
            ((${#held[@]} > 0)) && break 2
            kill -CONT "$pid"
        done
        chaos_note "attempt $attempt: the stack settled before an engine could be caught holding its leases"
        chaos_wait_settled "$id" "$(settle_s)"
    done
    SIZE=$size
    if ((${#held[@]} == 0)); then
        chaos_violation "could not catch an engine holding a lease of a stack in 3 attempts (use a larger --size)"
        SCEN_MS=$(($(cv_now_ms) - t0))
        SCEN_DETAIL="no pause"
        scen_end
        return
    fi
    t_stop=$(cv_now_ms)
    CHAOS_FAULTS=1
    local -A v0=()
    for r in "${held[@]}"; do v0[$r]=$(rcli hget "${PREFIX}{$id}:res:$r" version); done
    chaos_say "  SIGSTOP $target (pid $pid) holding ${#held[@]} leases (e.g. ${held[0]}); lease ${lease_ms} ms"
    # Keep it stopped past its lease, until another worker took over what it held.
    all_moved() {
        local r
        (($(cv_now_ms) - t_stop >= lease_ms + 1000)) || return 1
        for r in "${held[@]}"; do
            [[ $(rcli hget "${PREFIX}{$id}:res:$r" version) != "${v0[$r]}" ]] || return 1
        done
    }
    deadline=$((lease_ms / 1000 + SESSION_S + SETTLE))
    while ! all_moved; do
        (($(cv_now_ms) - t_stop < deadline * 1000)) || break
        for r in $(chaos_workers); do
            [[ $r == "$target" ]] || cv_alive "$r" >/dev/null || chaos_watch_workers
        done
        sleep 0.2
    done
    for r in "${held[@]}"; do
        [[ $(rcli hget "${PREFIX}{$id}:res:$r" version) != "${v0[$r]}" ]] && moved+=("$r")
    done
    t_resume=$(cv_now_ms)
    local resume_iso
    resume_iso=$(date -u -d "@$((t_resume / 1000))" +%FT%T)
    kill -CONT "$pid"
    chaos_say "  SIGCONT $target after $(chaos_secs $((t_resume - t_stop))); ${#moved[@]} of ${#held[@]} resources taken over meanwhile"
    chaos_wait_settled "$id" "$(settle_s)"
    SCEN_MS=$(($(cv_now_ms) - t0))
    # Its stale writes: each resource it held and another worker took over must
    # see its write refused (logged), never applied (an event or record by it).
    refused_in_log() {
        local r
        for r in "${moved[@]}"; do
            awk -v t="$resume_iso" '$1 >= t' "$STATE/log/$target.log" |
                grep -q "resource $r: write refused" || return 1
        done
    }
    cv_wait_until 20 "$target to report its refused writes" refused_in_log 2>/dev/null || true
    for r in "${moved[@]}"; do
        if awk -v t="$resume_iso" '$1 >= t' "$STATE/log/$target.log" | grep -q "resource $r: write refused"; then
            refused+=("$r")
        fi
    done
    # An event of a resource it held, by the paused worker, after it resumed:
    # a stale write applied.
    mapfile -t applied < <(chaos_dump "$STATE" "$id" "" | jq -r --arg w "$target" --argjson t "$t_resume" \
        --args '$ARGS.positional as $moved | [.events[] | select(.[6] == $w
            and (.[0] | split("-")[0] | tonumber) >= $t and (.[1] as $r | $moved | index([$r])))
            | .[1]] | unique[]' "${moved[@]}")
    ((${#applied[@]} == 0)) ||
        chaos_violation "stale writes of $target applied after SIGCONT: ${applied[*]:0:5}"
    if ((${#refused[@]} != ${#moved[@]})); then
        local quiet=() lines
        for r in "${moved[@]}"; do
            [[ " ${refused[*]} " == *" $r "* ]] || quiet+=("$r")
        done
        lines=$(awk -v t="$resume_iso" '$1 >= t' "$STATE/log/$target.log" | grep -a "resource ${quiet[0]}[: ]" | head -2 | cut -c1-200 | paste -sd'|')
        chaos_note "$target logged no refused write for ${#quiet[@]} of the ${#moved[@]} resources taken over (${quiet[*]:0:3}); its log on ${quiet[0]} after SIGCONT: ${lines:-nothing}"
    fi
    local fenced_total
    fenced_total=$(awk -v t="$resume_iso" '$1 >= t' "$STATE/log/$target.log" | grep -c "write refused")
    scen_check "$id" create
    SCEN_DETAIL="paused $target $(chaos_secs $((t_resume - t_stop))) holding ${#held[@]} leases; ${#moved[@]} taken over; ${#refused[@]} of them refused ($fenced_total writes refused in all), ${#applied[@]} applied"
    scen_end
}

# ---------------------------------------------------------------------------
# 3, 4. Restart Redis / the Kafka broker in the middle of a stack.
# ---------------------------------------------------------------------------

# scen_outage KIND RUN FAULT_FN: submit, fault at 20% done, wait, check.
scen_outage() {
    local kind=$1 run=$2 fn=$3 id t0 d0 t_back
    scen_stack "$kind" "$run" || return 1
    id=$(chaos_submit "$NAME" "$TPL") || { chaos_violation "submit failed"; return 1; }
    t0=$(cv_now_ms)
    if ! chaos_wait_progress "$id" 20 60; then
        if stack_settled "$id"; then
            chaos_violation "the stack settled before the fault ($(stack_get "$id" status)); use a larger --size"
        else
            chaos_violation "the stack did not reach 20% in 60 s (done $(stack_get "$id" done)/$(stack_get "$id" total)) before the fault"
        fi
    fi
    d0=$(stack_get "$id" done)
    "$fn"
    CHAOS_FAULTS=1
    t_back=$(cv_now_ms)
    # Recovery: from the service being back to the next progress.
    local rec=""
    while (($(cv_now_ms) - t_back < $(settle_s) * 1000)); do
        local st d
        st=$(stack_get "$id" status) d=$(stack_get "$id" done)
        if [[ $d =~ ^[0-9]+$ ]] && ((d > d0)) || [[ -n $st && $st != *_IN_PROGRESS ]]; then
            rec=$(($(cv_now_ms) - t_back))
            break
        fi
        chaos_watch_workers
        sleep 0.1
    done
    [[ -n $rec ]] && CHAOS_RECOVERY+=("$rec")
    chaos_wait_settled "$id" "$(settle_s)"
    SCEN_MS=$(($(cv_now_ms) - t0))
    scen_check "$id" create
    SCEN_DETAIL="$OUTAGE_WHAT at ${d0:-?}/$(stack_get "$id" total) done; progress again ${rec:-?} ms after it was back"
    scen_end
}

OUTAGE_S=${CHAOS_OUTAGE_S:-3}

fault_redis() { chaos_restart_redis "$OUTAGE_S"; OUTAGE_WHAT="Redis down ${OUTAGE_S} s (SIGTERM, AOF)"; }

scenario_redis() { scen_outage redis "$1" fault_redis; }

# SIGKILL on odd runs, SIGTERM on even ones (the CI form runs it once: SIGKILL).
KAFKA_HOW=KILL
fault_kafka() {
    chaos_restart_kafka "$KAFKA_HOW" "$OUTAGE_S"
    OUTAGE_WHAT="every Kafka broker SIG$KAFKA_HOW, down ${OUTAGE_S} s+"
}

scenario_kafka() {
    KAFKA_HOW=KILL
    (($1 % 2 == 0)) && KAFKA_HOW=TERM
    scen_outage kafka "$1" fault_kafka
}

# ---------------------------------------------------------------------------
# 4b. The broker leading the most job partitions killed (SIGKILL) at 20% of a
#     create on three brokers: its partitions get leaders among the other two,
#     no acknowledged job is lost (replication 3, min.insync.replicas 2,
#     acks=all) and the stack completes; then the broker is started again.
# ---------------------------------------------------------------------------

scenario_broker-failover() {
    local run=$1 id t0 d0 t_kill t_led="" rec="" victim led name
    if ((${KAFKA_BROKERS:-1} < 3)); then
        chaos_violation "broker-failover needs 3 brokers (CHAOS_BROKERS=3), this deployment has ${KAFKA_BROKERS:-1}"
        return 1
    fi
    scen_stack broker-failover "$run" || return 1
    id=$(chaos_submit "$NAME" "$TPL") || { chaos_violation "submit failed"; return 1; }
    t0=$(cv_now_ms)
    chaos_wait_progress "$id" 20 60 ||
        chaos_violation "the stack did not reach 20% before the fault (done $(stack_get "$id" done)/$(stack_get "$id" total), $(stack_get "$id" status))"
    read -r victim led < <(chaos_busiest_broker)
    [[ $victim =~ ^[0-9]+$ ]] || { chaos_violation "no leader found in the metadata"; return 1; }
    name=$(cv_kafka_name "$victim")
    d0=$(stack_get "$id" done)
    t_kill=$(cv_now_ms)
    chaos_service kill "$name" >/dev/null || { chaos_violation "$name would not die"; return 1; }
    CHAOS_FAULTS=1
    # New leaders, and the stack's next progress, both from the kill.
    while (($(cv_now_ms) - t_kill < $(settle_s) * 1000)) && [[ -z $t_led || -z $rec ]]; do
        [[ -z $t_led ]] && chaos_led_without "$victim" && t_led=$(($(cv_now_ms) - t_kill))
        local d
        d=$(stack_get "$id" done)
        [[ -z $rec && $d =~ ^[0-9]+$ ]] && ((d > d0)) && rec=$(($(cv_now_ms) - t_kill))
        stack_settled "$id" && [[ -z $rec ]] && rec=$(($(cv_now_ms) - t_kill))
        sleep 0.05
    done
    [[ -n $t_led ]] || chaos_violation "the partitions $name led got no new leader within $(settle_s) s"
    [[ -n $rec ]] && CHAOS_RECOVERY+=("$rec")
    chaos_wait_settled "$id" "$(settle_s)"
    SCEN_MS=$(($(cv_now_ms) - t0))
    scen_check "$id" create
    chaos_service start "$name" >/dev/null || chaos_violation "$name would not start again"
    SCEN_DETAIL="$name (leader of $led job partitions) SIGKILL at ${d0:-?}/$(stack_get "$id" total) done; new leaders after ${t_led:-?} ms, progress again ${rec:-?} ms after the kill"
    scen_end
}

# ---------------------------------------------------------------------------
# 4b'. A Redis Cluster master killed under three stacks, in each of create,
#      update and delete, on a cluster deployment of its own.
# ---------------------------------------------------------------------------

# shellcheck source=redis_failover.sh
. "$CHAOS_HERE/redis_failover.sh"

# ---------------------------------------------------------------------------
# 4c, 4d. Asymmetric partitions: an extra engine, engine-cut, in a network
#     namespace of its own (tests/integration/netns.sh) is cut off from Redis
#     only / Kafka only at 20% of a create. It must step aside (log it), the
#     stack must complete on the other workers, no lease of engine-cut may
#     exist once those it took before stepping aside ran out (--lease-ms),
#     and once healed it must rejoin (ready, with partitions).
# ---------------------------------------------------------------------------

PART_NETNS=$CHAOS_ROOT/tests/integration/netns.sh
PART_NS=cvchaos
PART_WORKER=engine-cut

part_net() { CV_NETNS_NET=10.200.1 "$PART_NETNS" "$1" "$PART_NS"; }

# engine-cut in its namespace, logging to STATE/log/engine-cut.log; PART_PID.
part_start() {
    local worker_args=()
    [[ -n $CHAOS_WORKER_ARGS ]] && read -r -a worker_args <<<"$CHAOS_WORKER_ARGS"
    rcli del "${PREFIX}worker:$PART_WORKER" >/dev/null
    part_net setup >/dev/null || return 1
    CV_NETNS_NET=10.200.1 chaos_as_worker "$PART_NETNS" exec "$PART_NS" "$CHAOS_BUILD/converge-engine" \
        --id "$PART_WORKER" --isolation-ms 5000 "${worker_args[@]}" >>"$STATE/log/$PART_WORKER.log" 2>&1 &
    PART_PID=$!
}

part_stop() {
    if [[ -n ${PART_PID:-} ]]; then
        kill -TERM "$PART_PID" 2>/dev/null
        wait "$PART_PID" 2>/dev/null
        PART_PID=""
    fi
    part_net teardown
}

part_ready() { [[ $(rcli hget "${PREFIX}worker:$PART_WORKER" state 2>/dev/null) == ready ]]; }

# part_logged SINCE_BYTES PATTERN: engine-cut logged PATTERN after SINCE_BYTES.
part_logged() { tail -c +"$(($1 + 1))" "$STATE/log/$PART_WORKER.log" | grep -aq "$2"; }

# scen_partition SERVICE RUN: the scenario for a cut from SERVICE (redis|kafka).
scen_partition() {
    local service=$1 run=$2 id t0 d0 d_cut mark t_cut t_aside="" t_clear="" rec="" t_heal t_back="" n
    local lease_ms
    lease_ms=$(chaos_lease_ms)
    if ! command -v nft >/dev/null || [[ $(id -u) != 0 ]]; then
        chaos_violation "partition-$service needs root and nft (nftables): NOT TESTED"
        return 1
    fi
    part_start || { chaos_violation "the network namespace could not be set up"; part_stop; return 1; }
    if ! cv_wait_until 60 "$PART_WORKER to be ready" part_ready; then
        chaos_violation "$PART_WORKER never became ready in its namespace: $(tail -n 3 "$STATE/log/$PART_WORKER.log" | tr '\n' '|')"
        part_stop
        return 1
    fi
    scen_stack "partition-$service" "$run" || { part_stop; return 1; }
    id=$(chaos_submit "$NAME" "$TPL") || { chaos_violation "submit failed"; part_stop; return 1; }
    t0=$(cv_now_ms)
    chaos_wait_progress "$id" 20 60 ||
        chaos_violation "the stack did not reach 20% before the cut (done $(stack_get "$id" "done")/$(stack_get "$id" total), $(stack_get "$id" status))"
    d0=$(stack_get "$id" "done") d_cut=$d0
    mark=$(stat -c %s "$STATE/log/$PART_WORKER.log")
    t_cut=$(cv_now_ms)
    part_net "cut-$service"
    CHAOS_FAULTS=1
    # Until the stack settles: when engine-cut steps aside, the next progress
    # after that, and any lease of engine-cut once its old ones ran out.
    while (($(cv_now_ms) - t_cut < ($(settle_s) + 30) * 1000)); do
        if [[ -z $t_aside ]] && part_logged "$mark" "stepping aside"; then
            t_aside=$(cv_now_ms) d0=$(stack_get "$id" "done")
        fi
        if [[ -n $t_aside && -z $rec ]]; then
            local d
            d=$(stack_get "$id" "done")
            [[ $d =~ ^[0-9]+$ ]] && ((d > d0)) && rec=$(($(cv_now_ms) - t_aside))
        fi
        n=$(leases_of "$id" | grep -c " $PART_WORKER@" || true)
        if [[ -n $t_aside ]] && ((n == 0)) && [[ -z $t_clear ]]; then
            t_clear=$(cv_now_ms)
        elif [[ -n $t_clear ]] && ((n > 0)); then
            chaos_violation "$PART_WORKER holds $n leases of the stack $(($(cv_now_ms) - t_aside)) ms after it stepped aside"
            break
        fi
        if [[ -n $t_aside ]] && stack_settled "$id"; then
            [[ -z $rec ]] && rec=$(($(cv_now_ms) - t_aside))
            break
        fi
        chaos_watch_workers
        sleep 0.1
    done
    [[ -n $t_aside ]] || chaos_violation "$PART_WORKER did not step aside within $(($(cv_now_ms) - t_cut)) ms of the $service cut"
    [[ -n $t_aside && -n $t_clear ]] && (((t_clear - t_aside) > lease_ms + 2000)) &&
        chaos_violation "$PART_WORKER's leases outlived its step aside by $((t_clear - t_aside)) ms (lease $lease_ms ms)"
    [[ -n $rec ]] && CHAOS_RECOVERY+=("$rec")
    chaos_wait_settled "$id" "$(settle_s)"
    SCEN_MS=$(($(cv_now_ms) - t0))
    scen_check "$id" create
    mark=$(stat -c %s "$STATE/log/$PART_WORKER.log")
    t_heal=$(cv_now_ms)
    part_net heal
    if cv_wait_until 60 "$PART_WORKER to rejoin" part_logged "$mark" "rejoining" &&
        cv_wait_until 60 "$PART_WORKER to be ready again" part_ready; then
        t_back=$(($(cv_now_ms) - t_heal))
    else
        chaos_violation "$PART_WORKER did not rejoin within 60 s of the heal"
    fi
    kill -0 "$PART_PID" 2>/dev/null || chaos_violation "$PART_WORKER died: $(tail -n 3 "$STATE/log/$PART_WORKER.log" | tr '\n' '|')"
    local crash
    crash=$(tail -c +"$((mark + 1))" "$STATE/log/$PART_WORKER.log" | grep -aE "$CHAOS_CRASH_RE" | head -1)
    [[ -z $crash ]] || chaos_violation "$PART_WORKER log has a crash report: $crash"
    part_stop
    SCEN_DETAIL="$service cut at ${d_cut:-?}/$(stack_get "$id" total) done; $PART_WORKER stepped aside ${t_aside:+$((t_aside - t_cut)) ms after the cut}, progress ${rec:-?} ms after that, its leases gone ${t_clear:+$((t_clear - t_aside)) ms after it}; rejoined ${t_back:-?} ms after the heal"
    scen_end
}

scenario_partition-redis() { scen_partition redis "$1"; }

scenario_partition-kafka() { scen_partition kafka "$1"; }

# ---------------------------------------------------------------------------
# 5. 1,000 malformed and hostile messages into both topics during a stack:
#    every one ends in converge.dead, the stack completes.
# ---------------------------------------------------------------------------

POISON_COUNT=${CHAOS_POISON_COUNT:-1000}

# chaos_inject_dir DIR: the messages of hostile.pl's manifest, to their topics.
chaos_inject_dir() {
    local dir=$1 topic files empties k
    for topic in check observe; do
        mapfile -t files < <(awk -v t="$topic" '$2 == t && $3 != "empty" { print $1 }' "$dir/manifest")
        chaos_produce_files "converge.$topic" "${files[@]}" || chaos_violation "kcat could not produce to converge.$topic"
        # Zero-byte messages: kcat sends none from an empty file, so as keyed
        # lines with an empty value (and, every other one, a NULL value).
        empties=$(awk -v t="$topic" '$2 == t && $3 == "empty"' "$dir/manifest" | wc -l)
        for ((k = 0; k < empties; k++)); do
            local z=()
            ((k % 2)) && z=(-Z)
            printf 'chaos-empty\t\n' | timeout 30 kcat -P -q "${z[@]}" -K '\t' -b "$CONVERGE_KAFKA" \
                "${KCAT_OPTS[@]}" -t "converge.$topic"
        done
    done
}

# Lines "CATEGORY FILE" of the injected messages not (yet) among the dead
# letters that were not there before (BEFORE: their base64 originals).
poison_missing() {
    local dir=$1 before=$2
    chaos_dead_json | jq -r '.[] | if .original_base64 == "" then "EMPTY" else .original_base64 end' \
        >"$dir/dead.now" || return 0
    awk 'FNR == 1 { f++ } f == 1 { gone[$1]++; next } f == 2 { if (gone[$1] > 0) gone[$1]--; else have[$1]++; next }
         { if (have[$1] > 0) have[$1]--; else print $2, $3 }' "$before" "$dir/dead.now" "$dir/injected"
}

# Of the messages, this many are well-formed jobs of the running stack's
# traversal for resources it does not have (0: none).
POISON_UNKNOWN_RESOURCE=${CHAOS_POISON_UNKNOWN_RESOURCE:-30}

scenario_poison() {
    local run=$1
    local id dir=$WORK/poison-$run t0 trav missing n_unknown=$POISON_UNKNOWN_RESOURCE
    scen_stack poison "$run" || return 1
    rm -rf "$dir"
    mkdir -p "$dir"
    ((n_unknown < POISON_COUNT)) || n_unknown=0
    # Generated before the stack starts (the huge ones take a while); only the
    # jobs naming the stack are made once it exists.
    perl "$CHAOS_HERE/hostile.pl" "$dir/msgs" "$((POISON_COUNT - n_unknown))" "$((run * 7919 + 17))" ||
        { chaos_violation "hostile.pl failed"; return 1; }
    chaos_dead_json | jq -r '.[] | if .original_base64 == "" then "EMPTY" else .original_base64 end' >"$dir/dead.before"
    id=$(chaos_submit "$NAME" "$TPL") || { chaos_violation "submit failed"; return 1; }
    t0=$(cv_now_ms)
    chaos_wait_progress "$id" 2 60 || true
    trav=$(stack_get "$id" traversal)
    if ((n_unknown > 0)); then
        perl "$CHAOS_HERE/hostile.pl" "$dir/msgs2" "$n_unknown" "$((run * 7919 + 18))" "$id" "$trav" ||
            { chaos_violation "hostile.pl failed"; return 1; }
        cat "$dir/msgs2/manifest" >>"$dir/msgs/manifest"
    fi
    chaos_inject_dir "$dir/msgs"
    CHAOS_FAULTS=$(wc -l <"$dir/msgs/manifest")
    chaos_say "  injected $CHAOS_FAULTS messages; the stack was at $(stack_get "$id" done)/$(stack_get "$id" total) done when they were sent"
    while read -r f topic cat; do
        if [[ -s $f ]]; then printf '%s %s %s\n' "$(base64 -w0 <"$f")" "$cat" "${f##*/}"; else printf 'EMPTY %s %s\n' "$cat" "${f##*/}"; fi
    done <"$dir/msgs/manifest" >"$dir/injected"
    chaos_wait_settled "$id" "$(settle_s)"
    SCEN_MS=$(($(cv_now_ms) - t0))
    scen_check "$id" create
    # Every injected message in converge.dead (bounded wait).
    poison_all_dead() { [[ -z $(poison_missing "$dir" "$dir/dead.before" | head -1) ]]; }
    cv_wait_until 60 "every injected message to be dead-lettered" poison_all_dead 2>/dev/null || true
    missing=$(poison_missing "$dir" "$dir/dead.before")
    if [[ -n $missing ]]; then
        while read -r n cat; do
            chaos_violation "$n of $(awk -v c="$cat" '$2 == c' "$dir/injected" | wc -l) $cat messages never reached converge.dead (e.g. $(awk -v c="$cat" '$1 == c { print $2; exit }' <<<"$missing"))"
        done < <(awk '{ print $1 }' <<<"$missing" | sort | uniq -c)
    fi
    SCEN_DETAIL="$CHAOS_FAULTS messages ($n_unknown of them jobs for resources the stack lacks), $(($(wc -l <"$dir/injected") - $(grep -c . <<<"$missing"))) dead-lettered"
    scen_end
}

# ---------------------------------------------------------------------------
# 6. Every job published twice for a whole create + update + delete.
# ---------------------------------------------------------------------------

DUP_PIDS=()
# The job topics: both lanes (a stack of the chaos suite's size expands in
# the bulk lane; its submit and small stacks ride the express one).
JOB_TOPICS=(converge.check converge.observe converge.check.express converge.observe.express)
# Starts one consumer -> dup.pl -> producer pipe per topic; returns once each
# consumer has reached the end of every partition.
dup_start() {
    local topic
    DUP_PIDS=()
    for topic in "${JOB_TOPICS[@]}"; do
        : >"$WORK/dup-$topic.err"
        kcat -C -u -b "$CONVERGE_KAFKA" "${KCAT_OPTS[@]}" -t "$topic" -o end -f '%p %K %S\n%k%s' \
            2>"$WORK/dup-$topic.err" |
            perl "$CHAOS_HERE/dup.pl" "$topic" "$WORK/dup-$topic.stats" -- \
                kcat -P -q -b "$CONVERGE_KAFKA" "${KCAT_OPTS[@]}" -t "$topic" \
                -K '\xc1\xc1=key=\xc1\xc1' -D '\xc1\xc1=msg=\xc1\xc1\n' -l &
        DUP_PIDS+=($!)
    done
    dup_ready() {
        local t parts
        for t in "${JOB_TOPICS[@]}"; do
            parts=$(grep -c "Reached end of topic $t" "$WORK/dup-$t.err" 2>/dev/null)
            ((parts >= 8)) || return 1
        done
    }
    cv_wait_until 30 "the duplicating consumers to reach the end of the topics" dup_ready
}

dup_stop() {
    local pid kpid
    # The consumers end (kcat ignores SIGPIPE games: signal it by PID), dup.pl
    # flushes and exits at EOF.
    for kpid in $(pgrep -f "kcat -C -u -b $CONVERGE_KAFKA .* -o end -f %p %K %S" 2>/dev/null); do
        kill "$kpid" 2>/dev/null
    done
    for pid in "${DUP_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
    DUP_PIDS=()
}

scenario_duplicate() {
    local run=$1
    local id dump=$WORK/dup-$run.create.json phase t rc times=() seen=0 dups=0 failed=0 s
    scen_stack dup "$run" || return 1
    SCEN_MS=0
    if ! dup_start; then
        chaos_violation "the duplicating pipe did not start"
        dup_stop
        return 1
    fi
    PHASE_T0=$(cv_now_ms)
    id=$(chaos_submit "$NAME" "$TPL") || { chaos_violation "submit failed"; dup_stop; return 1; }
    for phase in create update delete; do
        [[ $phase == create ]] || PHASE_T0=$(cv_now_ms)
        case $phase in
        update) timeout 60 "$CTL" update "$NAME" --existing -P ver=2 >/dev/null || { chaos_violation "update failed"; break; } ;;
        delete) timeout 60 "$CTL" delete "$NAME" >/dev/null || { chaos_violation "delete failed"; break; } ;;
        esac
        PHASE_TRAV=$(stack_get "$id" traversal)
        chaos_wait_settled "$id" "$(settle_s)"
        rc=$?
        times+=("$phase $(chaos_secs "$PHASE_MS")")
        SCEN_MS=$((SCEN_MS + PHASE_MS))
        ((rc == 0)) || times[-1]+=" (stuck)"
        scen_check "$id" "$phase" "$dump" "$([[ $phase == create ]] && echo "$dump")"
    done
    # Let the last duplicates be consumed before stopping.
    dup_stop
    for t in "${JOB_TOPICS[@]}"; do
        read -r _ s _ d _ _ _ f <"$WORK/dup-$t.stats" 2>/dev/null || continue
        seen=$((seen + s)) dups=$((dups + d)) failed=$((failed + f))
    done
    CHAOS_FAULTS=$dups
    ((failed == 0)) || chaos_violation "$failed duplicates could not be produced"
    ((dups > 0)) || chaos_violation "nothing was duplicated"
    SCEN_DETAIL="$(IFS=,; echo "${times[*]}" | sed 's/,/, /g'); $dups of $seen messages published twice"
    scen_end
}

# ---------------------------------------------------------------------------
# 7. Node agents and replica processes killed under a 200-replica service.
# ---------------------------------------------------------------------------

# shellcheck source=cluster.sh
. "$CHAOS_HERE/cluster.sh"
