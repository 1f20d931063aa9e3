# Helpers for the integration tests (sourced). Tests talk to real Redis and
# Kafka started by deploy/local/up.sh, through convergectl and redis-cli.
# Every wait for a condition goes through cv_wait_until SECONDS WHAT CMD...
# (deploy/lib/common.sh): it polls CMD until it succeeds and returns 1, saying
# what it waited for, once SECONDS have passed.
# shellcheck shell=bash

: "${CONVERGECTL:?CONVERGECTL must point at the convergectl binary}"
: "${STATE:?STATE must name the up.sh state dir}"
# Absolute: the paths made of it (the operator's password files below) reach
# programs that run elsewhere (service.sh, agents, replicas).
STATE=$(cd "$STATE" && pwd) || return 1
# shellcheck disable=SC2034 # read by common.sh
CV_TAG=integration
# shellcheck source=SCRIPTDIR/../../deploy/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/common.sh"
# shellcheck disable=SC1091
source "$STATE/env"
# up.sh secures a deployment by default (docs/security.md "Secure by default"):
# STATE/env makes its clients converge-cli. The suite plays the operator
# instead, who may do everything: what it starts itself (workers, agents, a
# console, convergectl) authenticates as Redis' `default` user and Kafka's
# converge-admin, kcat with STATE/kafka-sasl/admin.conf (KCAT_CONFIG), and
# `redis` (below) with the operator's password. Passwords go by file or
# environment, never on a command line.
CV_TEST_REDIS_AUTH=""
if [[ -f $STATE/redis.acl && -s $STATE/redis-admin.pass ]]; then
    CV_TEST_REDIS_AUTH=$(head -n1 "$STATE/redis-admin.pass")
    export CONVERGE_REDIS=${CONVERGE_REDIS/converge-cli@/}
    export CONVERGE_REDIS_PASSWORD_FILE=$STATE/redis-admin.pass
fi
if [[ -f $STATE/kafka-sasl/admin.conf ]]; then
    export CONVERGE_KAFKA_OPTS=${CONVERGE_KAFKA_OPTS/sasl.username=converge-cli/sasl.username=converge-admin}
    export CONVERGE_KAFKA_PASSWORD_FILE=$STATE/kafka-sasl/admin.pass
    export KCAT_CONFIG=$STATE/kafka-sasl/admin.conf
fi
# shellcheck disable=SC2034 # used by the test files sourced after this one
DATA="$(cd "$(dirname "${BASH_SOURCE[0]}")/../data" && pwd)"
RUN_ID=${RUN_ID:-$(date +%s)$$}

ctl() { "$CONVERGECTL" "$@"; }

# redis_admin_cli ARGS...: redis-cli as the deployment's operator (the
# password through REDISCLI_AUTH, for this command only).
redis_admin_cli() {
    if [[ -n $CV_TEST_REDIS_AUTH ]]; then
        REDISCLI_AUTH=$CV_TEST_REDIS_AUTH redis-cli "$@"
    else
        redis-cli "$@"
    fi
}

redis() { # redis-cli against the test Redis, as the operator
    # a cluster's first seed, following its redirections (not saying so)
    local hostport=${CONVERGE_REDIS#*://}; hostport=${hostport#*@}; hostport=${hostport%%/*}
    hostport=${hostport%%,*}
    if [[ $CONVERGE_REDIS != redis+cluster://* ]]; then
        # (return $?, not a bare return: in an EXIT trap, which cleanups
        # are, a bare return gives the status the trap began with, and the
        # cleanup stopped at its first redis call after a failed test)
        redis_admin_cli -h "${hostport%%:*}" -p "${hostport##*:}" "$@"
        return $?
    fi
    local out rc=0
    out=$(redis_admin_cli -c -h "${hostport%%:*}" -p "${hostport##*:}" "$@") || rc=$?
    [[ -z $out ]] || sed '/^-> Redirected to slot/d' <<<"$out"
    return $rc
}

# A stack name unique to this run, so tests never see each other's stacks.
# template_file NAME: a temporary file holding the template written on stdin.
template_file() {
    local f
    f=$(mktemp --suffix=".$1.yaml")
    cat >"$f"
    echo "$f"
}

stack_name() { echo "t${RUN_ID}-$1"; }

fail() { echo "    FAIL: $*" >&2; return 1; }

assert_eq() { # expected actual what
    [ "$1" = "$2" ] || fail "$3: expected '$1', got '$2'"
}

assert_match() { # regex actual what
    [[ $2 =~ $1 ]] || fail "$3: '$2' does not match /$1/"
}

# status_json NAME -> the JSON of `convergectl status -o json`
status_json() { ctl status "$1" -o json; }

jqr() { jq -r "$@"; }

# "ms resource action status" of the events of stack NAME or ID, oldest first,
# as users read them (a settled action's one stream entry is its two events).
event_lines() {
    ctl events "$1" -o json |
        jq -r '.[] | "\((.time * 1000 + 0.5) | floor) \(.resource) \(.action) \(.status)"'
}

# The ms of the first event of stack NAME or ID that is RESOURCE:ACTION:STATUS.
event_ms() { # stack resource:action:status
    event_lines "$1" | awk -v want="$2" '$2 ":" $3 ":" $4 == want { print $1; exit }'
}

# index_of EVENTS_JSON RESOURCE ACTION STATUS -> position in the event list (-1 if absent)
event_index() {
    jq --arg r "$2" --arg a "$3" --arg s "$4" \
        '[.[] | select(.resource == $r and .action == $a and .status == $s)] as $m
         | if ($m | length) == 0 then -1 else (index($m[0])) end' <<<"$1"
}

# Proves dependency order from the events: for every (child parent) pair,
# the child's ACTION IN_PROGRESS comes after the parent's ACTION COMPLETE.
assert_after() { # events child parent action
    local c p
    c=$(event_index "$1" "$2" "$4" IN_PROGRESS)
    p=$(event_index "$1" "$3" "$4" COMPLETE)
    [ "$c" -ge 0 ] || fail "no $4 IN_PROGRESS event for $2"
    [ "$p" -ge 0 ] || fail "no $4 COMPLETE event for $3"
    [ "$c" -gt "$p" ] || fail "$2 $4 started (event $c) before $3 completed (event $p)"
}

# stack_keys_of NAME -> how many keys belong to stacks called NAME (by the
# `name` of their stack hash): what a refused submit must not leave. Unlike a
# count of all keys, it does not move with other stacks still at work.
stack_keys_of() {
    local keys id n=0 key name
    keys=$(redis --scan --pattern "${CONVERGE_PREFIX:-cv:}{*}:stack")
    [ -n "$keys" ] || { echo 0; return 0; }
    # One redis-cli for all the HGETs: a run leaves hundreds of stacks.
    while read -r key name; do
        [ "$name" = "$1" ] || continue
        id=${key#*\{}; id=${id%%\}*}
        n=$((n + $(redis --scan --pattern "${CONVERGE_PREFIX:-cv:}{$id}*" | wc -l)))
    done < <(paste -d' ' <(echo "$keys") <(sed 's/.*/HGET "&" name/' <<<"$keys" | redis))
    echo "$n"
}

# ---------------------------------------------------------------------------
# Node agents and replica processes (docs/services.md). A test
# starts its own agents, one per node of a cluster file, each with a private
# --dir under $STATE/agents/<node> and a port range of its own, against this
# deployment's Redis; svc_agents_cleanup stops them, every replica process
# they started and removes their nodes from the cluster, even after a failure.

SVC_AGENT=${CONVERGE_AGENT:-$(dirname "$CONVERGECTL")/converge-agent}
SVC_PROCSCAN="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/procscan.sh"
SVC_CKEY="${CONVERGE_PREFIX:-cv:}{cluster}"
# Heartbeat TTL of the test's agents (ms): node loss is noticed within it.
SVC_TTL_MS=${SVC_TTL_MS:-1000}

ckey() { echo "$SVC_CKEY:$1"; } # ckey node:N1 -> cv:{cluster}:node:N1

# svc_cluster_file PREFIX [SRC]: a copy of the cluster file SRC (default
# tests/data/services/cluster_9nodes.json) whose node names carry PREFIX
# ("a-N1") and whose nodes have the property TestGroup = PREFIX without its
# last character: a test's services keep to its own nodes with the placement
# constraint "TestGroup == ..." (svc_group_constraint), whatever other nodes
# the deployment has (up.sh --nodes); prints its path. The settings already
# in {cluster}:settings (other agents' node types) are merged in: an agent
# writes its file's settings there, and the deployment's nodes must keep
# their types.
svc_cluster_file() {
    local out=$STATE/agents/$1.cluster.json settings
    mkdir -p "$STATE/agents"
    settings=$(redis GET "$(ckey settings)" | jq -c 'objects' 2>/dev/null)
    jq --arg p "$1" --argjson s "${settings:-{\}}" '($s * del(.nodes)) + {nodes: .nodes}
        | .nodes |= map(.name = $p + .name | .properties.TestGroup = ($p | .[:-1]))' \
        "${2:-$DATA/services/cluster_9nodes.json}" >"$out"
    echo "$out"
}

# svc_group_constraint PREFIX [EXPR]: "TestGroup == <group>", and EXPR.
svc_group_constraint() { echo "TestGroup == ${1%?}${2:+ && ($2)}"; }

# svc_agent_pid NODE: the agent's PID if it runs.
svc_agent_pid() { cv_pid_alive "$STATE/agents/$1/agent.pid" converge-agent "--node $1 "; }

# svc_agent_start CLUSTER_FILE NODE [ARGS...]: starts NODE's agent (its
# description read from the cluster file) and waits for its heartbeat.
svc_agent_start() {
    local file=$1 node=$2 dir=$STATE/agents/$2 k base
    shift 2
    mkdir -p "$dir"
    echo "$node" >>"$STATE/agents/started"
    # 20 host ports per node below the ephemeral range; the node's position
    # in the file keeps ranges apart, the run id keeps runs apart.
    k=$(jq --arg n "$node" '.nodes | map(.name) | index($n)' "$file")
    base=$((22000 + (RUN_ID % 40) * 250 + k * 20))
    # In a subshell: the agent is no job of the test's shell, which would
    # report its kill -9.
    (cv_spawn "$dir/agent.pid" "$dir/agent.log" \
        env CONVERGE_REDIS="$CONVERGE_REDIS" CONVERGE_PREFIX="${CONVERGE_PREFIX:-cv:}" \
        "$SVC_AGENT" --cluster "$file" --node "$node" --dir "$dir" \
        --ports "$base-$((base + 19))" --heartbeat-ttl "$SVC_TTL_MS" "$@") ||
        fail "agent $node did not start" || return 1
    cv_wait_until 20 "agent $node to register" svc_node_alive "$node" ||
        { cv_tail_log "$dir/agent.log" 10; fail "agent $node is not up"; }
}

# svc_agents_start CLUSTER_FILE NODE...: svc_agent_start for each NODE.
svc_agents_start() {
    local file=$1 node
    shift
    for node; do svc_agent_start "$file" "$node" || return 1; done
}

svc_node_alive() { [ "$(redis EXISTS "$(ckey "alive:$1")")" = 1 ]; }
svc_node_gone() { [ "$(redis EXISTS "$(ckey "alive:$1")")" = 0 ]; }

# svc_agent_kill NODE [SIGNAL]: signals the agent (default KILL) and waits for it to exit.
svc_agent_kill() {
    local pid
    pid=$(svc_agent_pid "$1") || return 0
    kill "-${2:-KILL}" "$pid"
    cv_wait_until 20 "agent $1 to exit" cv_pid_gone "$pid"
}

# svc_procs STACK_NAME...: "pid ppid name node index service stack starttime"
# for every replica process of the stacks (procscan.sh once).
svc_procs() { "$SVC_PROCSCAN" once "$@"; }
svc_proc_count() { svc_procs "$@" | grep -c . || true; }
svc_no_procs() { [ "$(svc_proc_count "$@")" = 0 ]; }

# svc_kill_node_procs NODE: kill -9 every process a replica of NODE runs in
# (a node lost with its agent loses its processes too).
svc_kill_node_procs() {
    local pid
    for pid in $(grep -l -a -P "(^|\x00)CONVERGE_NODE=\Q$1\E(\x00|$)" /proc/[0-9]*/environ 2>/dev/null |
        cut -d/ -f3); do
        kill -KILL "$pid" 2>/dev/null || true
    done
}

# svc_agents_cleanup [STACK_NAME...]: deletes the stacks (bounded), stops
# every agent this run started (TERM, then KILL), kills the replica
# processes of the stacks and of those nodes still running, and removes the
# nodes from the cluster. For EXIT traps: never fails.
svc_agents_cleanup() {
    local name node pid pids=()
    set +e # an EXIT trap under errexit would stop at the first failure
    for name; do ctl delete "$name" --wait --timeout 60 >/dev/null 2>&1 || true; done
    [ -f "$STATE/agents/started" ] || return 0
    for node in $(sort -u "$STATE/agents/started"); do
        pid=$(svc_agent_pid "$node") && { kill -TERM "$pid" 2>/dev/null; pids+=("$pid"); }
    done
    cv_wait_until 15 "the agents to stop" cv_pids_gone "${pids[@]}" 2>/dev/null ||
        for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    for node in $(sort -u "$STATE/agents/started"); do
        svc_kill_node_procs "$node"
        redis HDEL "$(ckey nodes)" "$node" >/dev/null
        redis DEL "$(ckey "node:$node")" "$(ckey "alive:$node")" "$(ckey "down:$node")" \
            "$(ckey "report:$node")" >/dev/null
    done
    for name; do
        for pid in $(svc_procs "$name" | awk '{ print $1 }'); do kill -KILL "$pid" 2>/dev/null || true; done
    done
    rm -f "$STATE/agents/started"
}

# svc_id STACK_NAME RESOURCE: the service id of the stack's resource (the
# newest not fully deleted, from {cluster}:services).
svc_id() {
    local s
    for s in $(redis SMEMBERS "$(ckey services)"); do
        [ "$(redis HGET "$(ckey "svc:$s")" stack_name)" = "$1" ] || continue
        [ "$(redis HGET "$(ckey "svc:$s")" resource)" = "$2" ] || continue
        [ "$(redis HGET "$(ckey "svc:$s")" state)" = active ] || continue
        echo "$s"
        return 0
    done
    return 1
}

svc_field() { redis HGET "$(ckey "svc:$1")" "$2"; } # svc_field SVC FIELD

# svc_placement SVC: the placement JSON list sorted by index, [] if none.
svc_placement() { svc_field "$1" placement | jq -c 'sort_by(.index)' 2>/dev/null || echo '[]'; }

# svc_report NODE RID: the agent's report JSON on the replica (empty if none).
svc_report() { redis HGET "$(ckey "report:$1")" "$2"; }

# svc_replicas SVC: the placement with each replica's report merged in:
# [{"index", "rid", "node", "role", "state", "pid", "restarts", ...}].
svc_replicas() {
    local p row node rid out='[]'
    p=$(svc_placement "$1")
    while read -r row; do
        [ -n "$row" ] || continue
        node=$(jq -r .node <<<"$row") rid=$(jq -r .rid <<<"$row")
        out=$(jq -c --argjson r "$row" --argjson rep "$(svc_report "$node" "$rid" | jq -c . 2>/dev/null || echo '{}')" \
            '. + [$r + ($rep // {} | del(.rid))]' <<<"$out")
    done < <(jq -c '.[]' <<<"$p")
    echo "$out"
}

# svc_all_healthy SVC N: N replicas placed, each reported healthy by its
# agent with a live process.
svc_all_healthy() {
    local r pid
    r=$(svc_replicas "$1")
    [ "$(jq '[.[] | select(.state == "healthy")] | length' <<<"$r")" = "$2" ] || return 1
    [ "$(jq length <<<"$r")" = "$2" ] || return 1
    for pid in $(jq -r '.[].pid' <<<"$r"); do kill -0 "$pid" 2>/dev/null || return 1; done
}

# svc_ledger: {cluster}:ledger as JSON {"start:<rid>": n, "restart:<rid>": n}.
svc_ledger() {
    redis HGETALL "$(ckey ledger)" | jq -Rn '[inputs] | [range(0; length; 2) as $i
        | {(.[$i]): (.[$i + 1] | tonumber)}] | add // {}'
}

# svc_starts_of SVC: the ledger's start counts of SVC's replica ids, as a JSON map.
svc_starts_of() {
    svc_ledger | jq -c --arg s "start:$1/" 'with_entries(select(.key | startswith($s)))'
}

# svc_health_about TEXT: the health reports whose source, property or
# description contains TEXT (JSON list).
svc_health_about() {
    redis HVALS "$(ckey health)" | jq -sc --arg t "$1" \
        '[.[] | select((.source + " " + .property + " " + .description) | contains($t))]'
}
