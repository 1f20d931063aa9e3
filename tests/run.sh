#!/usr/bin/env bash
# The test command: sets everything up on a fresh Debian machine and runs the
# whole suite — static checks, unit tests (plain and ASan+UBSan builds),
# integration tests against real Redis + Kafka with the plain workers, and the
# tests of tests/integration/sanitize.list again with the sanitizer-built
# workers (that time against a Redis in cluster mode, which refuses what spans
# two slots), the chaos suite in its CI form (each fault scenario once on a
# 2,200-resource stack), the security suite (tests/security: every attack of
# docs/security.md), a small benchmark run and a short libFuzzer run of every
# fuzz target. Exits non-zero on any failure.
#
# Each configuration is built once (build/, build-asan/, build-fuzz/). After
# the first build, what does not share state runs at the same time: the
# integration tests in two shards, each against a deployment of its own
# (tests/integration/run.sh --shards), beside the security, console and
# packaging suites and, niced on what the deployments leave of the CPU, the
# sanitizers' build and fuzzing. Then the sanitizer pass in two shards, and
# niced beside it the static checks and the scenario harness. Then the chaos
# suite and the benchmark, each alone: their timings are the machine's. A step
# that runs in the background prints its output, whole, when its job ends;
# the summary gives each step's time and when it ran.
# Usage: tests/run.sh [--quick | --fast]
#   --quick  everything but the ASan+UBSan pass, chaos, benchmark and fuzzing
#   --fast   the tier for a developer's loop (under 3 minutes on 2 cores on a
#            fresh clone once the packages are installed): setup and build,
#            static checks, unit tests and 1,000 schedules of the scenario
#            harness
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
TIER=full
case ${1:-} in
--quick) TIER=quick ;;
--fast) TIER=fast ;;
-h | --help)
    sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
"") ;;
*)
    echo "tests/run.sh: unknown argument $1 (usage: tests/run.sh [--quick | --fast])" >&2
    exit 2
    ;;
esac

LOGS=$(mktemp -d)
# One line per step that ended: status, start and end (s since the run
# began), name, log. Appended by the steps running in the background too
# (a line is one short write: appends do not interleave).
RESULTS=$LOGS/results
: >"$RESULTS"
declare -A JOBS=() # background job's pid -> what it runs
# shellcheck disable=SC2317 # called by the traps
stop_jobs() {
    local pid
    # Each job in a process group of its own (set -m in spawn): its suite's
    # own traps stop the deployments it brought up.
    for pid in "${!JOBS[@]}"; do kill -TERM -- "-$pid" 2>/dev/null; done
    for pid in "${!JOBS[@]}"; do wait "$pid" 2>/dev/null; done
}
trap 'stop_jobs; rm -rf "$LOGS"' EXIT
trap 'exit 130' INT TERM

# run_logged LOG NAME CMD...: runs CMD, its output to LOG, and records its
# result; the status of CMD.
run_logged() {
    local log=$1 name=$2 t0=$SECONDS rc=0
    shift 2
    # (a file, not a pipe: a daemon a step leaves running would hold a
    # pipe open, and the step must not wait for it)
    "$@" >"$log" 2>&1 </dev/null || rc=$?
    printf '%s\t%s\t%s\t%s\t%s\n' "$rc" "$t0" "$SECONDS" "$name" "$log" >>"$RESULTS"
    return $rc
}

# run_step NAME CMD...: run_logged with a log of its own.
run_step() { run_logged "$(mktemp "$LOGS/step.XXXXXX")" "$@"; }

declare -A SHOWN=() # logs of the steps whose output was shown

# step NAME CMD...: a step in the foreground, its output shown as it comes.
step() {
    local name=$1 log pid
    shift
    echo "=== $name"
    log=$(mktemp "$LOGS/step.XXXXXX")
    SHOWN[$log]=1
    run_logged "$log" "$name" "$@" &
    pid=$!
    tail -n +1 -f --pid="$pid" "$log"
    wait "$pid"
}

# show_ended: prints each step that ended in the background and was not
# shown yet, with its whole output.
show_ended() {
    local rc t0 t1 name log
    while IFS=$'\t' read -r rc t0 t1 name log; do
        [[ -z ${SHOWN[$log]:-} ]] || continue
        SHOWN[$log]=1
        echo "=== $name (from $t0 s to $t1 s)"
        cat "$log"
        echo "--- $name: $( ((rc == 0)) && echo PASS || echo FAIL) ($((t1 - t0)) s)"
    done <"$RESULTS"
}

EVENTS=$LOGS/events
mkfifo "$EVENTS"
# Held open both ways: opening it never blocks, and a read waits for a line.
exec 3<>"$EVENTS"

# spawn FUNCTION ARGS...: runs FUNCTION (one step, or several in turn, each
# with run_step) in the background, in a process group of its own; says so
# through EVENTS when it ends, however it ends.
spawn() {
    set -m
    (
        trap 'echo "end $BASHPID" >"$EVENTS"' EXIT
        "$@"
    ) &
    JOBS[$!]="$*"
    set +m
}

# join_jobs: waits for every background job, printing each step's output
# once the job that ran it ended.
join_jobs() {
    local event pid
    while ((${#JOBS[@]} > 0)); do
        read -r -u 3 event pid || break
        [[ $event == end && -n ${JOBS[$pid]:-} ]] || continue
        wait "$pid" 2>/dev/null
        unset "JOBS[$pid]"
        show_ended
    done
}

failure_lines() { # log: the lines naming a failure, at most 40
    grep -E -i -A2 "fail|error|assert|sanitizer|timed out|stuck" "$1" | tail -n 40
}

# ---------------------------------------------------------------------------
# The steps.
# ---------------------------------------------------------------------------

# batch CMD...: CMD niced (a function too). Batch work (the builds, the
# scenario harness, cppcheck, fuzzing) yields the CPU to the deployments'
# processes, whose timers, leases and heartbeats the tests rely on.
batch() (
    renice -n 19 -p "$BASHPID" >/dev/null
    "$@"
)

static_checks() {
    tests/static/layers.sh && tests/static/test_layers.sh || return 1
    tests/static/test_docs_layout.sh && tests/static/test_docs_layout.sh --self-test || return 1
    local files
    files=$(git ls-files '*.c' '*.h')
    # shellcheck disable=SC2086
    clang-format --dry-run --Werror $files || return 1
    # shellcheck disable=SC2086
    cppcheck --enable=warning,performance --error-exitcode=1 --inline-suppr -q \
        --suppress=missingIncludeSystem $files
}

unit_tests() { # build dir
    (cd "$1" && ctest -L unit --output-on-failure -j2)
}

bench_smoke() {
    tests/bench/run.sh --quick --ceiling --build-dir build --dir .local-bench --no-build &&
        build/tests/bench/placement/bench_placement --quick &&
        build/tests/bench/placement/bench_balance --quick &&
        tests/bench/hotpath.sh --quick --build-dir build
}

# down.sh --purge, at the end of tests/web/run.sh, keeps STATE/secret.key,
# and up.sh then refuses the directory as not its own: a second run on this
# checkout would fail. What a purge left (no .converge-state) goes first.
web_console() {
    [[ -e .local-webtest/.converge-state ]] || rm -f .local-webtest/secret.key
    tests/web/run.sh --build-dir build
}

# The background jobs: each runs its steps in turn. Steps of different jobs
# share nothing: each suite brings up deployments of its own, in state
# directories of its own, on ports picked free. The plain integration
# shards run beside the other suites, the builds and the checks; then the
# sanitizer pass, and the chaos suite alone. The machine has 2 cores: more
# deployments at once leave the tests' timers, and the chaos suite's
# deadlines, too late (a Kafka broker alone takes a quarter of a core idle).

# The builds' and the checks' CPU work, niced. Beside the plain shards: the
# unit tests, the sanitizers' build (the next phase needs it) and fuzzing,
# which together take about as long as the shards; the other checks
# follow, beside the shards (quick) or beside the sanitizer pass, which
# leaves most of the CPU idle (full).
build_chain() {
    run_step "unit tests" unit_tests build
    [ $TIER = full ] || {
        checks_chain
        return
    }
    run_step "setup (ASan+UBSan build)" batch deploy/local/setup.sh --sanitize --build-dir build-asan &&
        run_step "unit tests (ASan+UBSan)" batch unit_tests build-asan
    run_step "fuzz (libFuzzer, 10 s per target)" batch tests/fuzz/run.sh --seconds 10 --build-dir build-fuzz
}

checks_chain() {
    run_step "static checks (module layers, clang-format, cppcheck)" batch static_checks
    run_step "scenario harness (10,000 random schedules)" batch tests/scenario/run.sh --build-dir build
}

integration_plain() {
    run_step "integration tests" tests/integration/run.sh --shards 2 --build-dir build --dir .local-itest
}

suites_chain() {
    run_step "security suite (limits, replicas, secrets, defaults, purge)" \
        tests/security/run.sh --build-dir build --dir .local-security --no-build
    run_step "web console (API, browser)" web_console
    run_step "packaging (systemd units, image root filesystem under chroot, manifests)" \
        tests/packaging/run.sh --build-dir build
}

# The integration tests that exercise the workers' and agents' C paths
# (tests/integration/sanitize.list says which and why) with the sanitizers'
# build, against a Redis in cluster mode (one master, every slot): Redis
# then refuses any script or transaction that spans two slots
# (docs/redis-cluster.md).
integration_asan() {
    local name="integration tests (ASan+UBSan workers, Redis in cluster mode; tests/integration/sanitize.list)"
    if [[ ! -x build-asan/converge-engine ]]; then
        run_step "$name" sh -c 'echo "no ASan+UBSan build: its setup failed"; exit 1'
        return
    fi
    run_step "$name" tests/integration/run.sh --shards 2 --list tests/integration/sanitize.list \
        --build-dir build-asan --dir .local-itest-asan -- --sanitize --redis-one-node-cluster
}

step "setup (packages, Kafka, build)" deploy/local/setup.sh --build-dir build
if [ $TIER = fast ]; then
    step "static checks (module layers, clang-format, cppcheck)" static_checks
    step "unit tests" unit_tests build
    step "scenario harness (1,000 random schedules)" \
        tests/scenario/run.sh --build-dir build --schedules 1000
else
    echo "=== the steps below run in phases, several at once; a step's output follows when its job ends"
    spawn integration_plain
    spawn suites_chain
    spawn build_chain
    join_jobs
    if [ $TIER = full ]; then
        spawn integration_asan
        spawn checks_chain
        join_jobs
        step "chaos suite (kill, pause, redis, kafka, broker-failover, redis-failover, partitions, poison, duplicate, cluster)" \
            tests/chaos/run.sh --build-dir build --dir .local-chaos
        # Last and alone: its figures are the machine's, not the other steps'.
        step "benchmark (quick)" bench_smoke
    fi
fi

echo
FAILED=0 PASSED=0
while IFS=$'\t' read -r rc t0 t1 name log; do
    if ((rc == 0)); then
        PASSED=$((PASSED + 1))
    else
        FAILED=$((FAILED + 1))
        echo "=== what failed in: $name"
        failure_lines "$log"
    fi
done <"$RESULTS"
echo "=== summary (seconds since the start: from-to)"
sort -t$'\t' -k2,2n -k3,3n "$RESULTS" | while IFS=$'\t' read -r rc t0 t1 name log; do
    printf '%s  %s (%d s, %d-%d)\n' "$( ((rc == 0)) && echo PASS || echo FAIL)" "$name" \
        $((t1 - t0)) "$t0" "$t1"
done
echo "$PASSED passed, $FAILED failed in $SECONDS s"
[ "$FAILED" = 0 ]
