# shellcheck shell=bash
#
# metrics.sh — where each process of a local deployment serves its
# Prometheus metrics (docs/metrics.md). up.sh gives every worker and agent
# a free loopback port once (cv_metrics_assign) and keeps it in
# STATE/metrics, so a process restarted by up.sh or service.sh serves on
# the same address and a scrape config written once stays right. Sourced
# by agents.sh (after common.sh and state.sh), never run.
#
#   STATE/metrics   NAME=PORT per process (engine-1, observer-1, agent-n1, ...)

# cv_metrics_assign NAME...: a port for each NAME: the one it had while
# its process runs or the port is still free, else a new free one. Not in
# a subshell: cv_pick_port remembers the ports it handed out.
cv_metrics_assign() {
    local name metrics_port file=$STATE/metrics
    touch "$file"
    for name; do
        # (not "port": cv_pick_port's own local would shadow it)
        metrics_port=$(sed -n "s/^$name=//p" "$file" | head -1)
        if [[ -z $metrics_port ]] || ! cv_alive "$name" >/dev/null; then
            cv_pick_port metrics_port
        fi
        sed -i "/^$name=/d" "$file"
        echo "$name=$metrics_port" >>"$file"
    done
}

# cv_metrics_addr NAME: the address NAME serves on; 127.0.0.1:0 (a free
# port, written to its liveness record) for a process given none.
cv_metrics_addr() {
    local port
    port=$(sed -n "s/^$1=//p" "$STATE/metrics" 2>/dev/null | head -1)
    echo "127.0.0.1:${port:-0}"
}

# cv_metrics_env NAME...: the env lines naming every NAME's address, one
# CONVERGE_METRICS_<NAME> each and CONVERGE_METRICS_TARGETS with them all.
cv_metrics_env() {
    local name var targets=()
    for name; do
        var=CONVERGE_METRICS_$(echo "$name" | tr 'a-z-' 'A-Z_')
        echo "export $var=$(cv_metrics_addr "$name")"
        targets+=("$(cv_metrics_addr "$name")")
    done
    echo "export CONVERGE_METRICS_TARGETS=\"$(
        IFS=,
        echo "${targets[*]}"
    )\""
}
