#!/usr/bin/env bash
# Runs every test_* function of tests/integration/test_*.sh, each bounded in
# time, and prints "integration: N passed, N failed". Needs CONVERGECTL and
# STATE (see lib.sh). SUITE_DIR and SUITE_NAME run another folder's tests on
# the same helpers (tests/security/run.sh).
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
for f in "${SUITE_DIR:-$HERE}"/test_*.sh; do
    # shellcheck disable=SC1090
    source "$f"
done
ONLY=${1:-}
passed=0; failed=0; failed_names=()
for t in $(declare -F | awk '{print $3}' | grep '^test_' | sort); do
    [ -n "$ONLY" ] && [[ $t != *"$ONLY"* ]] && continue
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
echo "${SUITE_NAME:-integration}: $passed passed, $failed failed"
[ "$failed" = 0 ]
