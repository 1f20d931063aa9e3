#!/usr/bin/env bash
#
# run.sh — builds the libFuzzer targets of tests/fuzz with clang
# (-fsanitize=fuzzer,address,undefined) and runs each one for a while over a
# temporary copy of its seed corpus (tests/fuzz/corpus/<target>/ is never
# grown). Prints one line per target: name, executions, coverage, result.
# A crash, leak, timeout or out-of-memory keeps its reproducer and log under
# BUILD_DIR/fuzz-artifacts/ and makes the script fail.
#
# usage: tests/fuzz/run.sh [--seconds N] [--build-dir DIR] [TARGET...]
#   --seconds N      time per target (default 20)
#   --build-dir DIR  clang build directory (default build-fuzz)
#   TARGET           only these targets (msg, template, ...); default all
# env: CONVERGE_JOBS parallel build jobs (default 2)
# exit status: 0 all clean, 1 a target failed, 2 bad usage, 3 build failed
#
# Reproduce a failure: BUILD_DIR/tests/fuzz/fuzz_<target> <reproducer file>
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 3
ROOT=$PWD

SECONDS_PER_TARGET=20
BUILD=build-fuzz
TIMEOUT_PER_INPUT=10 # seconds: one input taking longer is a hang
RSS_LIMIT_MB=2048

usage() { # exit status: 0 prints to stdout, anything else to stderr
    local text
    text=$(sed -n '/^# usage:/,/^# Reproduce/p' "$0" | sed 's/^# \{0,1\}//')
    if ((${1:-0} == 0)); then echo "$text"; else echo "$text" >&2; fi
    exit "${1:-0}"
}

targets=()
while (($#)); do
    case $1 in
    --seconds)
        [[ ${2:-} =~ ^[0-9]+$ ]] || usage 2
        SECONDS_PER_TARGET=$2
        shift 2
        ;;
    --build-dir)
        (($# >= 2)) || usage 2
        BUILD=$2
        shift 2
        ;;
    -h | --help) usage 0 ;;
    -*)
        echo "run.sh: unknown option $1" >&2
        usage 2
        ;;
    *)
        targets+=("$1")
        shift
        ;;
    esac
done
[[ $BUILD = /* ]] || BUILD=$ROOT/$BUILD

if ((${#targets[@]} == 0)); then
    for src in tests/fuzz/fuzz_*.c; do
        name=$(basename "$src" .c)
        targets+=("${name#fuzz_}")
    done
fi
for t in "${targets[@]}"; do
    [[ -f tests/fuzz/fuzz_$t.c ]] || {
        echo "run.sh: no target $t (tests/fuzz/fuzz_$t.c)" >&2
        exit 2
    }
done

if ! command -v clang >/dev/null; then
    echo "run.sh: clang is not installed (deploy/local/setup.sh installs it)" >&2
    exit 3
fi

# ---------------------------------------------------------------------------
# Building: Debug for assertions, -O1 for speed; no unit tests.
# ---------------------------------------------------------------------------

# Never reconfigure another build (build/, build-asan/) for fuzzing.
if [[ -f $BUILD/CMakeCache.txt ]] && ! grep -q '^CONVERGE_FUZZ:BOOL=ON' "$BUILD/CMakeCache.txt"; then
    echo "run.sh: $BUILD is a build directory without CONVERGE_FUZZ; choose another" >&2
    exit 2
fi
mkdir -p "$BUILD"
if ! cmake -S "$ROOT" -B "$BUILD" -DCMAKE_C_COMPILER=clang -DCONVERGE_FUZZ=ON \
    -DCONVERGE_TESTS=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g" \
    >"$BUILD/fuzz-configure.log" 2>&1; then
    tail -n 40 "$BUILD/fuzz-configure.log" >&2
    echo "run.sh: cmake configure failed (log: $BUILD/fuzz-configure.log)" >&2
    exit 3
fi
if ! cmake --build "$BUILD" --target fuzz -j "${CONVERGE_JOBS:-2}" >"$BUILD/fuzz-build.log" 2>&1; then
    grep -v -E '^\[ *[0-9]+%\]|^Scanning|^Consolidate|^-- ' "$BUILD/fuzz-build.log" | head -n 60 >&2
    echo "run.sh: build failed (log: $BUILD/fuzz-build.log)" >&2
    exit 3
fi

# ---------------------------------------------------------------------------
# Running.
# ---------------------------------------------------------------------------

# Symbolized stacks in reports, when LLVM's symbolizer is there.
for s in /usr/lib/llvm-*/bin/llvm-symbolizer; do
    [[ -x $s ]] && export ASAN_SYMBOLIZER_PATH=$s
done
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ARTIFACTS=$BUILD/fuzz-artifacts
failed=0

# The last "cov: N" libFuzzer printed, and its execution count.
stat_of() { # log, what
    case $2 in
    runs) sed -n 's/^stat::number_of_executed_units: *//p' "$1" | tail -n 1 ;;
    cov) grep -o 'cov: [0-9]*' "$1" | tail -n 1 | cut -d' ' -f2 ;;
    esac
}

printf '%-10s %12s %8s  %s\n' target runs cov result
for t in "${targets[@]}"; do
    bin=$BUILD/tests/fuzz/fuzz_$t
    corpus=$WORK/$t-corpus
    log=$WORK/$t.log
    mkdir -p "$corpus"
    [[ -d tests/fuzz/corpus/$t ]] && cp -R "tests/fuzz/corpus/$t/." "$corpus/"
    # Scheduling by execution time keeps the few slow regression seeds
    # (inputs that once asked for gigabytes) from taking most of the run.
    args=(-max_total_time="$SECONDS_PER_TARGET" -timeout="$TIMEOUT_PER_INPUT"
        -rss_limit_mb="$RSS_LIMIT_MB" -entropic_scale_per_exec_time=1 -print_final_stats=1
        -artifact_prefix="$WORK/$t-")
    [[ -f tests/fuzz/dict/$t.dict ]] && args+=(-dict="tests/fuzz/dict/$t.dict")
    timeout --kill-after=10 $((SECONDS_PER_TARGET + 120)) "$bin" "${args[@]}" "$corpus" \
        >"$log" 2>&1
    rc=$?
    result=ok
    if ((rc != 0)); then
        failed=1
        mkdir -p "$ARTIFACTS"
        cp "$log" "$ARTIFACTS/$t.log"
        kept=""
        for a in "$WORK/$t-"{crash,leak,timeout,oom,slow-unit}-*; do
            [[ -f $a ]] || continue
            cp "$a" "$ARTIFACTS/"
            kept="$ARTIFACTS/$(basename "$a")"
        done
        why=$(grep -m 1 -o -E 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer): [a-z-]+' "$log" ||
            grep -m 1 -o 'runtime error: .*' "$log" || echo "exit status $rc")
        result="FAIL: $why${kept:+ (reproducer: $kept)} log: $ARTIFACTS/$t.log"
    fi
    printf '%-10s %12s %8s  %s\n' "$t" "$(stat_of "$log" runs)" "$(stat_of "$log" cov)" "$result"
done
exit $failed
