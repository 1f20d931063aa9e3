#!/usr/bin/env bash
#
# run.sh — the deterministic scenario harness: random schedules of every
# scenario against a private Redis (the real scripts, decisions and types;
# an in-memory bus with seeded reordering, duplicates, losses and worker
# deaths), each checked against the chaos suite's invariants. First the
# self-test: the checker must report invariants broken on purpose.
#
# usage: tests/scenario/run.sh [--build-dir DIR] [--schedules N]
#                              [--scenario NAME] [--seed S] [--jobs N] [--trace]
#   --build-dir DIR   where scenario_runner was built (default build)
#   --schedules N     schedules in all, shared by the scenarios (default 10000)
#   --scenario NAME   only this scenario (scenario_runner --list names them)
#   --seed S          replay one schedule exactly (with --scenario)
#   --jobs N          processes sharing the schedules (default 4)
#   --trace           print each delivery, kill, loss and duplicate
# Exits non-zero on any violation. Redis runs on a unix socket in a
# temporary directory and is always stopped.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=deploy/lib/common.sh
source "$ROOT/deploy/lib/common.sh"

BUILD=build
ARGS=()
while (($#)); do
    case $1 in
    --build-dir) BUILD=${2:?--build-dir needs a directory}; shift 2 ;;
    --schedules | --scenario | --seed | --jobs) ARGS+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
    --trace) ARGS+=("$1"); shift ;;
    -h | --help) cv_usage 0 ;;
    *) cv_usage_error "unknown argument $1" ;;
    esac
done
[[ $BUILD = /* ]] || BUILD=$ROOT/$BUILD
RUNNER=$BUILD/tests/scenario/scenario_runner
[[ -x $RUNNER ]] || cv_die "$RUNNER is not built (cmake --build $BUILD)"
command -v redis-server >/dev/null || cv_die "redis-server is not installed"

DIR=$(mktemp -d "${TMPDIR:-/tmp}/cv-scenario.XXXXXX")
SOCK=$DIR/redis.sock
REDIS_PID=
stop_redis() {
    if [[ -n $REDIS_PID ]] && kill -0 "$REDIS_PID" 2>/dev/null; then
        kill "$REDIS_PID" 2>/dev/null || true
        wait "$REDIS_PID" 2>/dev/null || true
    fi
    rm -rf "$DIR"
}
trap stop_redis EXIT

redis-server --port 0 --unixsocket "$SOCK" --unixsocketperm 700 --save "" --appendonly no \
    --dir "$DIR" --logfile "$DIR/redis.log" --daemonize no &
REDIS_PID=$!
redis_up() { redis-cli -s "$SOCK" ping >/dev/null 2>&1; }
cv_wait_until 10 "redis on $SOCK" redis_up ||
    { cv_tail_log "$DIR/redis.log"; exit 1; }

rc=0
if ((${#ARGS[@]} == 0)) || [[ " ${ARGS[*]} " != *" --seed "* ]]; then
    "$RUNNER" --socket "$SOCK" --self-test || rc=1
fi
"$RUNNER" --socket "$SOCK" "${ARGS[@]}" || rc=1
exit $rc
