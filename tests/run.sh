#!/usr/bin/env bash
# The test command: sets everything up on a fresh Debian machine and runs the
# whole suite — static checks, unit tests (plain and ASan+UBSan builds),
# integration tests against real Redis + Kafka with the plain workers and
# again with the sanitizer-built workers (that time against a Redis in
# cluster mode, which refuses what spans two slots), the chaos suite in its CI form
# (each fault scenario once on a 2,200-resource stack), the security suite
# (tests/security: every attack of docs/security.md), a small benchmark
# run and a short libFuzzer run of every fuzz target.
# Exits non-zero on any failure.
# Usage: tests/run.sh [--quick | --fast]
#   --quick  everything but the ASan+UBSan pass, chaos, benchmark and fuzzing
#   --fast   the tier for a developer's loop (about 1.5 minutes on 2 cores once
#            the packages are installed): setup and build, static checks, unit
#            tests and 1,000 schedules of the scenario harness
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
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

declare -a RESULTS=()
declare -a FAILURES=()
FAILED=0
PASSED=0
LOGS=$(mktemp -d)
trap 'rm -rf "$LOGS"' EXIT
# Each step's output goes to the terminal and to a log, so that the summary
# (the end of the output, which is what a CI page shows) can repeat the
# lines that say what failed.
step() { # name, command...
    local name=$1; shift
    local t0=$SECONDS log="$LOGS/$((PASSED + FAILED)).log"
    echo "=== $name"
    # (a log followed by tail, not a pipe: a daemon a step leaves running
    # would hold a pipe open, and the step must not wait for it)
    : >"$log" # before tail opens it, whoever runs first
    "$@" >"$log" 2>&1 &
    local pid=$!
    tail -n +1 -f --pid="$pid" "$log"
    if wait "$pid"; then
        RESULTS+=("PASS  $name ($((SECONDS - t0)) s)"); PASSED=$((PASSED + 1))
    else
        RESULTS+=("FAIL  $name ($((SECONDS - t0)) s)"); FAILED=$((FAILED + 1))
        FAILURES+=("$name" "$log")
    fi
}

failure_lines() { # log: the lines naming a failure, at most 40
    grep -E -i -A2 "fail|error|assert|sanitizer|timed out|stuck" "$1" | tail -n 40
}

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

integration() { # build dir, state dir, up.sh options (--sanitize keeps the build's sanitizers)
    local build=$1 state=$2 rc=0
    shift 2
    deploy/local/up.sh --build-dir "$build" --dir "$state" --engines 2 --observers 2 --nodes 9 \
        "$@" || return 1
    CONVERGECTL="$ROOT/$build/convergectl" STATE="$state" tests/integration/run.sh || rc=1
    deploy/local/down.sh --dir "$state" || rc=1
    # A worker that crashed (or a sanitizer report) fails the run.
    if grep -lE "AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer|runtime error:" \
        "$state"/log/engine-*.log "$state"/log/observer-*.log "$state"/log/agent-*.log \
        2>/dev/null; then
        echo "sanitizer reports in worker logs above"; rc=1
    fi
    return $rc
}

bench_smoke() {
    tests/bench/run.sh --quick --ceiling --build-dir build --dir .local-bench &&
        build/tests/bench/placement/bench_placement --quick &&
        build/tests/bench/placement/bench_balance --quick &&
        tests/bench/hotpath.sh --quick --build-dir build
}

step "setup (packages, Kafka, build)" deploy/local/setup.sh --build-dir build
step "static checks (module layers, clang-format, cppcheck)" static_checks
step "unit tests" unit_tests build
if [ $TIER = fast ]; then
    step "scenario harness (1,000 random schedules)" \
        tests/scenario/run.sh --build-dir build --schedules 1000
else
    step "scenario harness (10,000 random schedules)" tests/scenario/run.sh --build-dir build
    step "integration tests" integration build .local-itest
    step "security suite (limits, replicas, secrets, defaults, purge)" tests/security/run.sh --build-dir build --dir .local-security
    step "packaging (systemd units, image root filesystem under chroot, manifests)" tests/packaging/run.sh --build-dir build
    step "web console (API, browser)" tests/web/run.sh --build-dir build
fi
if [ $TIER = full ]; then
    step "setup (ASan+UBSan build)" deploy/local/setup.sh --sanitize --build-dir build-asan
    step "unit tests (ASan+UBSan)" unit_tests build-asan
    # Against a Redis in cluster mode (one master, every slot): Redis then
    # refuses any script or transaction that spans two slots (docs/redis-cluster.md).
    step "integration tests (ASan+UBSan workers, Redis in cluster mode)" \
        integration build-asan .local-itest-asan --sanitize --redis-one-node-cluster
    step "chaos suite (kill, pause, redis, kafka, broker-failover, redis-failover, partitions, poison, duplicate, cluster)" \
        tests/chaos/run.sh --build-dir build --dir .local-chaos
    step "benchmark (quick)" bench_smoke
    step "fuzz (libFuzzer, 10 s per target)" tests/fuzz/run.sh --seconds 10 --build-dir build-fuzz
fi

echo
for ((i = 0; i < ${#FAILURES[@]}; i += 2)); do
    echo "=== what failed in: ${FAILURES[i]}"
    failure_lines "${FAILURES[i + 1]}"
done
echo "=== summary"
printf '%s\n' "${RESULTS[@]}"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
