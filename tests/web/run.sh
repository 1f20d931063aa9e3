#!/usr/bin/env bash
#
# run.sh — the web console's tests: its API (tests/integration/test_web.sh)
# and the browser tests (console.test.mjs: Playwright driving Debian's
# Chromium, headless), against a live local deployment — its own, started
# with up.sh --nodes 4 in .local-webtest and stopped at the end, or the one
# given with --state (which must have node agents and CONVERGE_WEB_URL).
# Screenshots land in tests/web/artifacts/; with --update-docs the README's
# two are also copied to docs/images/ (console-stack.png,
# console-cluster.png), so that a test run leaves the tree as it was.
#
# usage: tests/web/run.sh [--build-dir DIR] [--state DIR] [--no-api] [--update-docs]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
# shellcheck disable=SC2034 # read by common.sh
CV_TAG="web-test"
# shellcheck source=SCRIPTDIR/../../deploy/lib/common.sh
. "$REPO/deploy/lib/common.sh"

build_dir="" state="" api=true images=""
while (($#)); do
    case $1 in
    --build-dir | --state)
        (($# >= 2)) || cv_usage 2
        if [[ $1 == --build-dir ]]; then build_dir=$2; else state=$2; fi
        shift 2
        ;;
    --no-api) api=false && shift ;;
    --update-docs) images=$REPO/docs/images && shift ;;
    -h | --help) cv_usage 0 ;;
    *) cv_usage_error "unknown argument: $1" ;;
    esac
done
build_dir=$(cv_build_dir "$build_dir" false)
for bin in converge-web convergectl converge-hello; do
    [[ -x $build_dir/$bin ]] || cv_die "$build_dir/$bin does not exist: build first (deploy/local/setup.sh)"
done
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    cv_die "node and npm are needed (deploy/local/setup.sh installs them)"
fi
chromium=${CHROMIUM:-/usr/bin/chromium}
[[ -x $chromium ]] || cv_die "$chromium does not exist (deploy/local/setup.sh installs chromium)"

# playwright-core as package-lock.json pins it, installed once.
want=$(jq -r '.packages["node_modules/playwright-core"].version' "$HERE/package-lock.json")
have=$(jq -r .version "$HERE/node_modules/playwright-core/package.json" 2>/dev/null || true)
if [[ $have != "$want" ]]; then
    cv_log "npm ci (playwright-core $want)"
    (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
fi

if [[ -z $state ]]; then
    state=$REPO/.local-webtest
    trap '"$REPO/deploy/local/down.sh" --dir "$state" --purge >/dev/null || true' EXIT
    "$REPO/deploy/local/up.sh" --build-dir "$build_dir" --dir "$state" --engines 1 --observers 1 \
        --nodes 4 --no-build
fi
state=$(cv_abspath "$state")
# shellcheck disable=SC1091
. "$state/env"
[[ -n ${CONVERGE_WEB_URL:-} ]] || cv_die "$state/env has no CONVERGE_WEB_URL: up.sh did not start converge-web"
[[ -n ${CONVERGE_AGENTS:-} ]] || cv_die "$state has no node agents: start it with up.sh --nodes 4"

status=0
if $api; then
    cv_log "API tests (tests/integration/test_web.sh)"
    CONVERGECTL=$build_dir/convergectl STATE=$state "$REPO/tests/integration/run.sh" test_web_ || status=1
fi
cv_log "browser tests against $CONVERGE_WEB_URL (Chromium $("$chromium" --version 2>/dev/null | awk '{print $2}'))"
mkdir -p "$HERE/artifacts"
CONVERGECTL=$build_dir/convergectl STATE=$state BUILD_DIR=$build_dir ARTIFACTS=$HERE/artifacts \
    IMAGES=$images CHROMIUM=$chromium node "$HERE/console.test.mjs" || status=1
exit $status
