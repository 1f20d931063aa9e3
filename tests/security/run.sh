#!/usr/bin/env bash
# The security suite (docs/security.md): every attack a hostile submitter or a
# careless deployment could make, each asserting the refusal or the masking.
# Brings up its own deployment with deploy/local/up.sh (secured as up.sh
# secures by default), sources the integration helpers (tests/integration/lib.sh)
# and runs every test_* function of tests/security/test_*.sh, each in a subshell,
# then prints "security: N passed, N failed" and stops the deployment.
#
# usage: tests/security/run.sh [--build-dir DIR] [--dir STATE] [--keep] [FILTER]
#   --build-dir DIR  the binaries (default build/)
#   --dir STATE      the deployment's state directory (default .local-security)
#   --keep           leave the deployment running afterwards (for a rerun)
#   FILTER           only the tests whose name holds FILTER
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=build
DIR=.local-security
KEEP=0
ONLY=
while (($#)); do
    case $1 in
    --build-dir) BUILD=$2 && shift 2 ;;
    --dir) DIR=$2 && shift 2 ;;
    --keep) KEEP=1 && shift ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' && exit 0 ;;
    -*) echo "tests/security/run.sh: unknown option $1" >&2 && exit 2 ;;
    *) ONLY=$1 && shift ;;
    esac
done
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
case $DIR in /*) ;; *) DIR=$ROOT/$DIR ;; esac
SANITIZE=()
grep -q '^CONVERGE_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null && SANITIZE=(--sanitize)

deploy/local/up.sh --build-dir "$BUILD" --dir "$DIR" --engines 2 --observers 1 --nodes 3 \
    "${SANITIZE[@]}" || exit 1

export CONVERGECTL=$BUILD/convergectl STATE=$DIR
export CONVERGE_BUILD_DIR=$BUILD
HERE=$ROOT/tests/security
# shellcheck source=tests/integration/lib.sh
source "$ROOT/tests/integration/lib.sh"
for f in "$HERE"/test_*.sh; do
    # shellcheck disable=SC1090
    source "$f"
done

passed=0
failed=0
failed_names=()
for t in $(declare -F | awk '{print $3}' | grep '^test_' | sort); do
    [ -n "$ONLY" ] && [[ $t != *"$ONLY"* ]] && continue
    t0=$(date +%s%N)
    # Not inside `if`: errexit must stay active in the test's subshell.
    (set -e; "$t")
    rc=$?
    if [ $rc = 0 ]; then
        passed=$((passed + 1)); r=ok
    else
        failed=$((failed + 1)); r=FAILED; failed_names+=("$t")
    fi
    printf '  %-64s %s (%d ms)\n' "$t" "$r" $((($(date +%s%N) - t0) / 1000000))
done
[ ${#failed_names[@]} -gt 0 ] && printf 'failed: %s\n' "${failed_names[*]}"

if [ $KEEP = 0 ]; then
    deploy/local/down.sh --dir "$DIR" || failed=$((failed + 1))
fi
echo "security: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
