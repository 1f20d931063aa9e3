#!/usr/bin/env bash
# The security suite (docs/security.md): every attack a hostile submitter or a
# careless deployment could make, each asserting the refusal or the masking.
# Brings up its own deployment with deploy/local/up.sh (secured as up.sh
# secures by default) and runs every test_* function of tests/security/test_*.sh
# with the integration suite's runner and helpers (tests/integration/run.sh,
# lib.sh), each in a subshell, printing "security: N passed, N failed"; then
# stops the deployment.
#
# usage: tests/security/run.sh [--build-dir DIR] [--dir STATE] [--keep] [--no-build] [FILTER]
#   --build-dir DIR  the binaries (default build/)
#   --dir STATE      the deployment's state directory (default .local-security)
#   --keep           leave the deployment running afterwards (for a rerun)
#   --no-build       the binaries are built already (tests/run.sh builds once)
#   FILTER           only the tests whose name holds FILTER
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
BUILD=build
DIR=.local-security
KEEP=0
ONLY=
UP_ARGS=()
while (($#)); do
    case $1 in
    --build-dir) BUILD=$2 && shift 2 ;;
    --dir) DIR=$2 && shift 2 ;;
    --keep) KEEP=1 && shift ;;
    --no-build) UP_ARGS+=(--no-build) && shift ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' && exit 0 ;;
    -*) echo "tests/security/run.sh: unknown option $1" >&2 && exit 2 ;;
    *) ONLY=$1 && shift ;;
    esac
done
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
case $DIR in /*) ;; *) DIR=$ROOT/$DIR ;; esac
SANITIZE=()
grep -q '^CONVERGE_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null && SANITIZE=(--sanitize)

deploy/local/up.sh --build-dir "$BUILD" --dir "$DIR" --engines 2 --observers 1 --nodes 3 \
    "${SANITIZE[@]}" "${UP_ARGS[@]}" || exit 1
# Interrupted, the deployment is stopped all the same (unless --keep).
[ $KEEP = 1 ] || trap 'deploy/local/down.sh --dir "$DIR" >/dev/null 2>&1; exit 130' INT TERM

rc=0
CONVERGECTL=$BUILD/convergectl STATE=$DIR CONVERGE_BUILD_DIR=$BUILD SUITE_DIR=$ROOT/tests/security SUITE_NAME=security \
    tests/integration/run.sh "$ONLY" || rc=1
if [ $KEEP = 0 ]; then
    deploy/local/down.sh --dir "$DIR" || rc=1
fi
exit $rc
