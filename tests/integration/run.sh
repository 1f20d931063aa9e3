#!/usr/bin/env bash
# Runs the integration tests: every test_* function of tests/integration/test_*.sh
# (or those a list names), each in a subshell of its own, bounded in time,
# and prints "integration: N passed, N failed".
#
# usage: tests/integration/run.sh [--list FILE] [FILTER]
#   against a running deployment: needs CONVERGECTL and STATE (see lib.sh).
# usage: tests/integration/run.sh --shards N --build-dir DIR --dir PREFIX
#                                 [--list FILE] [FILTER] [-- UP.SH OPTIONS...]
#   brings up N deployments of its own (deploy/local/up.sh --dir PREFIX-1 ...
#   --engines 2 --observers 2 --nodes 9 --no-build, and the options after --),
#   splits the test files among them and runs the N shards at once, each
#   against its own deployment, one test at a time; each deployment is
#   stopped (down.sh) once its shard is done, and every one of them on any
#   failure or interruption. Fails if a test fails, a deployment does not
#   come up, or a Converge program of a deployment (workers, agents, the
#   console) logged a sanitizer report, which is printed.
#   Prints each shard's output as it ends, then one line per shard and
#   "integration: N passed, N failed" over all of them.
#
#   --list FILE  only the tests FILE names, one a line: a test file
#                (test_hooks.sh or test_hooks: all its tests) or a test
#                function; a line "-NAME" leaves that file or function out;
#                "#" starts a comment (tests/integration/sanitize.list)
#   FILTER       only the tests whose function name contains FILTER
# SUITE_DIR and SUITE_NAME run another folder's tests on the same helpers
# (tests/security/run.sh). RUN_ID (lib.sh) is the first shard's; shard K
# gets RUN_ID + K - 1, so that what tests derive from it (agents' port
# ranges, network namespaces) differs between shards.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SUITE_DIR=${SUITE_DIR:-$HERE}
NAME=${SUITE_NAME:-integration}

# sanitizer_clean DIR: true when no Converge program of the deployment in DIR
# (an up.sh state directory: the workers, agents and console up.sh started)
# logged an ASan, UBSan or LeakSanitizer report; prints each report found.
# A worker's leak report is written when it exits: look after down.sh. Used
# for the shards' deployments below and by the tests that bring up
# deployments of their own (they run in this shell); a test that starts a
# program itself looks at its log itself (test_agent.sh).
CV_SANITIZER_RE='AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer|runtime error:'
sanitizer_clean() {
    local log clean=0
    for log in "$1"/log/engine-*.log "$1"/log/observer-*.log "$1"/log/agent-*.log "$1"/log/web.log; do
        if [[ ! -f $log ]] || ! grep -qE "$CV_SANITIZER_RE" "$log"; then continue; fi
        echo "sanitizer report in $log:"
        grep -E -m 3 -A 40 "$CV_SANITIZER_RE" "$log" | head -n 150
        clean=1
    done
    return $clean
}

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

LIST="" ONLY="" SHARDS="" BUILD="" PREFIX="" UP_ARGS=()
while (($#)); do
    case $1 in
    --list) LIST=${2:?--list takes a file}; shift 2 ;;
    --shards) SHARDS=${2:?--shards takes a count}; shift 2 ;;
    --build-dir) BUILD=${2:?--build-dir takes a directory}; shift 2 ;;
    --dir) PREFIX=${2:?--dir takes a path}; shift 2 ;;
    --) shift; UP_ARGS=("$@"); break ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "tests/integration/run.sh: unknown option $1" >&2; exit 2 ;;
    *) ONLY=$1; shift ;;
    esac
done
[[ -z $LIST || -r $LIST ]] || { echo "tests/integration/run.sh: cannot read $LIST" >&2; exit 2; }

# ---------------------------------------------------------------------------
# Which tests: "FILE FUNCTION" lines, in the order they run (by name, as
# always). A file's functions are its lines "test_...() {", which is how
# every test file defines them.
# ---------------------------------------------------------------------------

all_tests() {
    local f
    for f in "$SUITE_DIR"/test_*.sh; do
        grep -oE '^test_[A-Za-z0-9_]+ *\(\)' "$f" | sed "s/ *()\$//; s|^|$(basename "$f" .sh) |"
    done | sort -k2
}

# list_names: LIST's names, one a line, comments and blanks dropped, a
# leading "-" kept.
list_names() {
    local line
    [[ -n $LIST ]] || return 0
    while read -r line; do
        line=${line%%#*}
        line=${line//[[:space:]]/}
        line=${line%.sh}
        [[ -z $line ]] || echo "$line"
    done <"$LIST"
}

# selected_tests: all_tests narrowed by LIST and ONLY.
selected_tests() {
    local want="" skip="" line
    while read -r line; do
        if [[ $line == -* ]]; then skip+=" ${line#-} "; else want+=" $line "; fi
    done < <(list_names)
    all_tests | while read -r file fn; do
        [[ -z $LIST || $want == *" $file "* || $want == *" $fn "* ]] || continue
        [[ $skip == *" $file "* || $skip == *" $fn "* ]] && continue
        [[ -z $ONLY || $fn == *"$ONLY"* ]] || continue
        echo "$file $fn"
    done
}

# A list naming a test that does not exist would leave it out unseen.
check_list() {
    local line names
    [[ -n $LIST ]] || return 0
    names=" $(all_tests | tr '\n' ' ') "
    while read -r line; do
        line=${line#-}
        [[ $names == *" $line "* ]] && continue
        echo "tests/integration/run.sh: $LIST names $line, which is no test file or test" >&2
        return 1
    done < <(list_names)
}
check_list || exit 2

# ---------------------------------------------------------------------------
# One run against a running deployment.
# ---------------------------------------------------------------------------

run_tests() {
    # shellcheck source=tests/integration/lib.sh
    source "$HERE/lib.sh"
    local f t t0 rc r passed=0 failed=0 failed_names=() tests
    for f in "$SUITE_DIR"/test_*.sh; do
        # shellcheck disable=SC1090
        source "$f"
    done
    tests=$(selected_tests | cut -d' ' -f2)
    for t in $tests; do
        t0=$(date +%s%N)
        # Not inside `if`: errexit must stay active in the test's subshell.
        ( set -e; "$t" )
        rc=$?
        if [ $rc = 0 ]; then
            passed=$((passed + 1)); r=ok
        else
            failed=$((failed + 1)); r=FAILED; failed_names+=("$t")
        fi
        printf '  %-64s %s (%d ms)\n' "$t" "$r" $((($(date +%s%N) - t0) / 1000000))
    done
    [ ${#failed_names[@]} -gt 0 ] && printf 'failed: %s\n' "${failed_names[*]}"
    echo "$NAME: $passed passed, $failed failed"
    [ "$failed" = 0 ]
}

if [[ -z $SHARDS ]]; then
    run_tests
    exit
fi

# ---------------------------------------------------------------------------
# Shards, each against a deployment of its own.
# ---------------------------------------------------------------------------

[[ $SHARDS =~ ^[1-9][0-9]?$ ]] || { echo "--shards takes a count from 1 to 99" >&2; exit 2; }
[[ -n $BUILD && -n $PREFIX ]] || { echo "--shards needs --build-dir and --dir" >&2; exit 2; }
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
case $PREFIX in /*) ;; *) PREFIX=$ROOT/$PREFIX ;; esac
for bin in converge-engine converge-observer converge-agent convergectl; do
    # Built once by the caller: shards building the same directory at once
    # would race, so each up.sh is given --no-build.
    [[ -x $BUILD/$bin ]] || { echo "$BUILD/$bin is missing: build first (deploy/local/setup.sh)" >&2; exit 2; }
done

# Seconds each file's tests took on 2 cores (the plain pass; the sanitizer
# pass takes about as long, the tests being mostly waits): used only to
# balance the shards (longest file first, each to the shard with the least
# time so far). A file not in the table counts as 10 s. Which shard a file
# lands in does not matter otherwise: every shard has a deployment of its
# own and runs its tests one at a time, as the suite always did.
declare -A WEIGHT=(
    [test_resilience]=115 [test_services]=93 [test_rollout]=90 [test_crm]=56
    [test_redis_cluster_secure]=60 [test_partition_agent]=37 [test_nodeloss]=30
    [test_service]=26 [test_kafka_auth]=26 [test_hooks]=25 [test_types]=24
    [test_redis_cluster]=23 [test_partition]=21 [test_autoscaling]=17 [test_redis_tls]=16
    [test_live]=15 [test_agent]=14 [test_inflight]=13 [test_group_policies]=12
    [test_signal]=10 [test_metrics]=10 [test_cli]=10 [test_balance]=10 [test_nodes]=9
    [test_update]=8 [test_redis_auth]=8 [test_nested]=7 [test_load]=7
    [test_express_lane]=7 [test_validation]=6 [test_delete]=6 [test_create]=6
    [test_topics]=5 [test_service_blocklisted]=5 [test_logs]=5 [test_group_rolling]=5
    [test_environment]=5 [test_web]=4 [test_registry_types]=4 [test_failure]=4
    [test_cli_heat]=4 [test_conditions]=3 [test_poison]=2 [test_heat_refusals]=2
    [test_group_attrs]=2 [test_triggers]=1 [test_hot_versions]=1 [test_graph]=1
)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cv-itest.XXXXXX")
selected_tests >"$WORK/tests"
[[ -s $WORK/tests ]] || { echo "no test selected" >&2; rm -rf "$WORK"; exit 2; }

# Each file's selected share of its weight, then the files longest first,
# each to the shard with the least so far (ties: the lowest number).
declare -a LOAD=() FILES=()
for ((k = 1; k <= SHARDS; k++)); do LOAD[k]=0 FILES[k]=""; : >"$WORK/shard-$k.list"; done
while read -r w file; do
    best=1
    for ((k = 2; k <= SHARDS; k++)); do ((LOAD[k] < LOAD[best])) && best=$k; done
    LOAD[best]=$((LOAD[best] + w)) FILES[best]+=" $file"
    grep "^$file " "$WORK/tests" | cut -d' ' -f2 >>"$WORK/shard-$best.list"
done < <(
    cut -d' ' -f1 "$WORK/tests" | sort | uniq -c | while read -r n file; do
        total=$(grep -cE '^test_[A-Za-z0-9_]+ *\(\)' "$SUITE_DIR/$file.sh")
        echo "$((${WEIGHT[$file]:-10} * 1000 * n / total)) $file"
    done | sort -k1,1nr -k2,2
)

declare -A PIDS=() # shard -> pid of its job
# Every deployment stopped, whatever happened: a shard's job stops its own
# when its tests end; this stops the rest (interrupted, or the job killed).
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    local k pid
    for k in "${!PIDS[@]}"; do
        pid=${PIDS[$k]}
        # The job and what it started in its process group (set -m below).
        kill -TERM -- "-$pid" 2>/dev/null
    done
    for k in "${!PIDS[@]}"; do
        [[ -f $PREFIX-$k/env && ! -f $WORK/shard-$k.down ]] || continue
        "$ROOT/deploy/local/down.sh" --dir "$PREFIX-$k" >/dev/null 2>&1
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shard_up K: up.sh for shard K, twice at most. up.sh picks each port free
# when it looks (cv_pick_port), and another deployment coming up at the same
# time, or a replica of another shard's test, may take it before the server
# binds it ("address already in use"): a second attempt picks again.
shard_up() {
    local k=$1 attempt
    for attempt in 1 2; do
        "$ROOT/deploy/local/up.sh" --build-dir "$BUILD" --dir "$PREFIX-$k" --engines 2 --observers 2 \
            --nodes 9 "${UP_ARGS[@]}" --no-build >"$WORK/shard-$k.up.log" 2>&1 && return 0
        tail -n 30 "$WORK/shard-$k.up.log"
        echo "shard $k: up.sh failed (attempt $attempt)"
        "$ROOT/deploy/local/down.sh" --dir "$PREFIX-$k" >/dev/null 2>&1
    done
    return 1
}

# shard K: up, its tests, down, the logs' sanitizer reports; its output to
# WORK/shard-K.log and its status to WORK/shard-K.rc.
shard() {
    local k=$1 state=$PREFIX-$1 rc=0
    echo "=== shard $k ($state):$(sort <<<"${FILES[k]// /$'\n'}" | paste -sd' ')"
    if ! shard_up "$k"; then
        echo "shard $k: the deployment in $state did not come up"
        rc=1
    else
        CONVERGECTL=$BUILD/convergectl STATE=$state RUN_ID=$((RUN_BASE + k - 1)) \
            "$HERE/run.sh" --list "$WORK/shard-$k.list" </dev/null || rc=1
    fi
    "$ROOT/deploy/local/down.sh" --dir "$state" >/dev/null 2>&1 || { echo "shard $k: down.sh failed"; rc=1; }
    : >"$WORK/shard-$k.down"
    if ! sanitizer_clean "$state"; then
        echo "shard $k: sanitizer reports in the logs above"
        rc=1
    fi
    return $rc
}

RUN_BASE=${RUN_ID:-$(date +%s)$$}
echo "$NAME: $(wc -l <"$WORK/tests") tests in $SHARDS shards, each against its own deployment ($PREFIX-K)"
# Job control: each shard in a process group of its own, which cleanup
# can signal whole (the tests' agents, servers and replicas with it).
set -m
for ((k = 1; k <= SHARDS; k++)); do
    [[ -s $WORK/shard-$k.list ]] || continue
    (
        t0=$SECONDS
        shard "$k" >"$WORK/shard-$k.log" 2>&1
        echo "$? $((SECONDS - t0))" >"$WORK/shard-$k.rc"
    ) &
    PIDS[$k]=$!
done
set +m

# Each shard's output once it ends, whole (not interleaved with the others').
status=0 passed=0 failed=0 summary=()
while ((${#PIDS[@]} > 0)); do
    wait -n -p done_pid "${PIDS[@]}"
    for k in "${!PIDS[@]}"; do
        [[ ${PIDS[$k]} == "$done_pid" ]] || continue
        unset "PIDS[$k]"
        cat "$WORK/shard-$k.log"
        read -r rc secs <"$WORK/shard-$k.rc" || rc=1 secs='?'
        ((rc == 0)) || status=1
        line=$(grep -E "^$NAME: [0-9]+ passed, [0-9]+ failed\$" "$WORK/shard-$k.log" | tail -n 1)
        [[ $line =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]] &&
            passed=$((passed + BASH_REMATCH[1])) failed=$((failed + BASH_REMATCH[2]))
        summary+=("shard $k: ${line#"$NAME: "}${line:+, }${secs} s$( ((rc == 0)) || echo ", FAILED")")
    done
done
printf '%s\n' "${summary[@]}" | sort -V
# A shard that never reached its tests has them neither passed nor failed.
missing=$(($(wc -l <"$WORK/tests") - passed - failed))
((missing == 0)) || { echo "$NAME: $missing tests did not run"; status=1; }
echo "$NAME: $passed passed, $failed failed"
exit $status
