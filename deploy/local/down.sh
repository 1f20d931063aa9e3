#!/usr/bin/env bash
#
# down.sh — stops what up.sh started in a state directory, by PID: the node
# agents first, then every replica process they started (found by the
# agents' state files, STATE/agents/NODE/replicas/*.json, and signalled only
# while its /proc start time is the one recorded), then the workers
# (SIGTERM, SIGKILL after 10 s), then the Kafka brokers and Redis. Only
# processes named by the directory's PID files are signalled, and
# only while their command line still matches what up.sh started, so a
# recycled PID is never killed. Safe to run when nothing is up.
#
# usage: deploy/local/down.sh [--dir STATE] [--purge]
#   --dir STATE  state directory (default .local in the repository)
#   --purge      also delete the state: Redis data, logs, configuration
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
# shellcheck source=SCRIPTDIR/../lib/state.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/state.sh"
# shellcheck source=SCRIPTDIR/../lib/agents.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/agents.sh"
# shellcheck source=SCRIPTDIR/../lib/redis_cluster.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/redis_cluster.sh"

state_arg=$CV_REPO_ROOT/.local
purge=false
while (($#)); do
    case $1 in
    --dir)
        (($# >= 2)) || cv_usage 2
        state_arg=$2
        shift 2
        ;;
    --purge) purge=true && shift ;;
    -h | --help) cv_usage 0 ;;
    *) cv_usage_error "unknown argument: $1" ;;
    esac
done

state_dir=$(cv_abspath "$state_arg")
if [[ ! -e $state_dir/.converge-state ]]; then
    [[ -d $state_dir ]] && [[ -n $(ls -A "$state_dir") ]] &&
        cv_die "$state_dir was not created by up.sh; not touching it"
    cv_log "nothing to stop in $state_dir"
    exit 0
fi
cv_state_open "$state_dir"

# The web console (up.sh's ensure_web): it only reads, so it goes first.
if web_port=$(cat "$STATE/web.port" 2>/dev/null) &&
    web_pid=$(cv_pid_alive "$STATE/pids/web.pid" "converge-web" "--listen 127.0.0.1:$web_port"); then
    kill -TERM "$web_pid" 2>/dev/null || true
    cv_wait_until 10 "converge-web to exit" cv_pid_gone "$web_pid" && cv_log "stopped web (pid $web_pid)"
fi
rm -f "$STATE/pids/web.pid"

mapfile -t agents < <(cv_agent_names)
status=0
# Agents before their replicas (an agent alive would restart them), and
# replicas before the workers and Redis (nothing is left running unowned).
((${#agents[@]} == 0)) || cv_stop_all 10 "${agents[@]}" || status=1
cv_agent_stop_replicas 10 || status=1
mapfile -t workers < <(cv_worker_names)
((${#workers[@]} == 0)) || cv_stop_all 10 "${workers[@]}" || status=1
# Every broker with a PID file: also those of an earlier --brokers count.
mapfile -t brokers < <(cd "$STATE/pids" && ls kafka.pid kafka-*.pid 2>/dev/null | sed 's/\.pid$//')
((${#brokers[@]} == 0)) || cv_stop_all 20 "${brokers[@]}" || status=1
mapfile -t redis_nodes < <(cv_redis_cluster_names)
cv_stop_all 10 stunnel redis "${redis_nodes[@]}" || status=1
rm -f "$STATE/env"

if ((status != 0)); then
    cv_die "some processes would not die; their PIDs are still in $STATE/pids/"
fi
cv_log "everything in $STATE is stopped"
if $purge; then
    # Only the paths up.sh creates, never a blind rm -rf of the directory.
    rm -rf "$STATE/pids" "$STATE/log" "$STATE/redis" "$STATE"/redis-c[0-9]* "$STATE"/kafka*-data "$STATE/agents" "$STATE/tls" \
        "$STATE/kafka-sasl"
    rm -f "$STATE"/redis-*.pass "$STATE/redis.acl" "$STATE/redis-cluster.conf" "$STATE/stunnel.conf" "$STATE/worker.env" \
        "$STATE/worker.env.tmp"
    rm -f "$STATE/cluster.json" "$STATE/cluster.json.tmp" "$STATE/ports" "$STATE/ports.tmp" "$STATE/env.tmp" "$STATE"/*.properties \
        "$STATE/.converge-state" "$STATE/.lock" "$STATE/web.port" "$STATE/metrics"
    rmdir "$STATE" 2>/dev/null || cv_warn "$STATE is not empty after purging; left in place"
    cv_log "purged $STATE"
fi
