#!/usr/bin/env bash
#
# node_loss.sh — loses one node of a local deployment for the browser test,
# and brings it back: the node's agent and every replica process it runs
# are killed at once (SIGKILL), as a machine that dies; `restore` starts
# the agent again (deploy/lib/agents.sh), which then stops the replicas no
# longer assigned to it.
#
# usage: tests/web/node_loss.sh STATE BUILD_DIR kill|restore NODE
set -euo pipefail
(($# == 4)) || { echo "usage: $0 STATE BUILD_DIR kill|restore NODE" >&2; exit 2; }
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
# shellcheck disable=SC2034 # read by common.sh
CV_TAG="node-loss"
# shellcheck source=SCRIPTDIR/../../deploy/lib/common.sh
. "$REPO/deploy/lib/common.sh"
# shellcheck source=SCRIPTDIR/../../deploy/lib/state.sh
. "$REPO/deploy/lib/state.sh"
# shellcheck source=SCRIPTDIR/../../deploy/lib/agents.sh
. "$REPO/deploy/lib/agents.sh"
state=$1 build_dir=$(cv_abspath "$2") action=$3 node=$4
cv_state_open "$state"
# shellcheck disable=SC1091
. "$STATE/env"
# shellcheck disable=SC1091
[[ ! -f $STATE/worker.env ]] || . "$STATE/worker.env"
case $action in
kill)
    pids=()
    pid=$(cv_alive "agent-$node") || cv_die "agent-$node is not running"
    pids+=("$pid")
    mapfile -t -O 1 pids < <(cv_agent_replica_pids "$node")
    kill -KILL "${pids[@]}" 2>/dev/null || true
    cv_wait_until 10 "agent-$node and its replicas to die" cv_pids_gone "${pids[@]}"
    rm -f "$STATE/pids/agent-$node.pid"
    cv_log "killed agent-$node and ${#pids[@]} process(es)"
    ;;
restore)
    cv_alive "agent-$node" >/dev/null && exit 0
    cv_agent_start "$build_dir" "$node"
    cv_wait_until 30 "agent-$node's heartbeat" cv_agent_up "$node"
    cv_log "agent-$node is back"
    ;;
*) cv_die "unknown action: $action (kill or restore)" ;;
esac
