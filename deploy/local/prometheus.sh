#!/usr/bin/env bash
#
# prometheus.sh — a Prometheus (the Debian package's) scraping a local
# deployment: writes DATA/prometheus.yml with one scrape job per role
# (converge-engine, converge-observer, converge-agent) over the metrics
# addresses up.sh gave its processes (STATE/metrics), with the alerts of
# deploy/prometheus/alerts.yml, and starts Prometheus on a free loopback
# port; or stops the one it started. Prints the URL it serves on.
#
# usage: deploy/local/prometheus.sh [--dir STATE] [--data DIR] [--port PORT]
#                                   [--interval DURATION] [--stop]
#   --dir STATE         the deployment's state directory (default .local)
#   --data DIR          Prometheus' configuration, data, log and PID file
#                       (default STATE/prometheus)
#   --port PORT         listen on 127.0.0.1:PORT (default: a free port, kept in
#                       DATA/port across restarts)
#   --interval DURATION scrape and evaluation interval (default 5s)
#   --stop              stop the Prometheus of DATA (by its PID file)
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

state_arg=$CV_REPO_ROOT/.local data="" prom_port="" interval=5s stop=false
while (($#)); do
    case $1 in
    --dir | --data | --port | --interval)
        (($# >= 2)) || cv_usage_error "$1 needs a value"
        case $1 in
        --dir) state_arg=$2 ;;
        --data) data=$2 ;;
        --port) prom_port=$2 ;;
        --interval) interval=$2 ;;
        esac
        shift 2
        ;;
    --stop) stop=true && shift ;;
    -h | --help) cv_usage 0 ;;
    *) cv_usage_error "unknown argument: $1" ;;
    esac
done
[[ -z $prom_port || $prom_port =~ ^[0-9]+$ ]] || cv_usage_error "--port $prom_port: expected a port number"
[[ $interval =~ ^[0-9]+(ms|s|m)$ ]] || cv_usage_error "--interval $interval: expected e.g. 1s, 500ms, 1m"
STATE=$(cv_abspath "$state_arg")
data=$(cv_abspath "${data:-$STATE/prometheus}")
pidfile=$data/prometheus.pid

running_pid() { cv_pid_alive "$pidfile" prometheus "--config.file=$data/prometheus.yml"; }

if $stop; then
    if pid=$(running_pid); then
        kill "$pid"
        cv_wait_until 30 "Prometheus (pid $pid) to stop" cv_pid_gone "$pid" || kill -9 "$pid"
        cv_log "prometheus: stopped (pid $pid)"
    fi
    exit 0
fi

command -v prometheus >/dev/null || cv_die "prometheus is not installed (deploy/local/setup.sh installs it)"
[[ -s $STATE/metrics ]] || cv_die "$STATE/metrics is missing: start the deployment with deploy/local/up.sh --dir $STATE"
mkdir -p "$data"
if pid=$(running_pid); then
    cv_die "a Prometheus already runs on $data (pid $pid); stop it with --stop"
fi

# The targets of one role: "127.0.0.1:P1", "127.0.0.1:P2" from STATE/metrics.
targets_of() {
    sed -n "s/^$1-[^=]*=\([0-9]\+\)$/\"127.0.0.1:\1\"/p" "$STATE/metrics" | paste -sd, -
}

{
    echo "# Written by deploy/local/prometheus.sh for $STATE."
    echo "global: {scrape_interval: $interval, evaluation_interval: $interval}"
    echo "rule_files: [\"$CV_REPO_ROOT/deploy/prometheus/alerts.yml\"]"
    echo "scrape_configs:"
    for role in engine observer agent; do
        echo "  - job_name: converge-$role"
        echo "    static_configs: [{targets: [$(targets_of "$role")]}]"
    done
} >"$data/prometheus.yml"
promtool check config "$data/prometheus.yml" >/dev/null ||
    cv_die "promtool refuses $data/prometheus.yml"

# (not "port": cv_pick_port's own local of that name would shadow it)
[[ -n $prom_port ]] || prom_port=$(cat "$data/port" 2>/dev/null || true)
cv_pick_port prom_port
echo "$prom_port" >"$data/port"
cv_spawn "$pidfile" "$data/prometheus.log" prometheus \
    "--config.file=$data/prometheus.yml" "--storage.tsdb.path=$data/tsdb" \
    "--web.listen-address=127.0.0.1:$prom_port"
ready() { curl -sf "http://127.0.0.1:$prom_port/-/ready" >/dev/null; }
if ! cv_wait_until 60 "Prometheus on 127.0.0.1:$prom_port to be ready" ready; then
    cv_tail_log "$data/prometheus.log"
    exit 1
fi
echo "http://127.0.0.1:$prom_port"
