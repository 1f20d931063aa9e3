#!/usr/bin/env bash
#
# run.sh — the packaging test: what can be checked of deploy/systemd,
# deploy/container and deploy/k8s on a machine where no container engine can
# run (docs/deploying.md "What the test checks").
#   1. systemd: the programs installed by `cmake --install` into a temporary
#      prefix, the units rewritten to it, `systemd-analyze verify` on each;
#      any message fails the check.
#   2. the image root filesystem: deploy/container/rootfs.sh (debootstrap +
#      the Containerfiles' COPY and RUN steps); against a local deployment
#      without workers (deploy/local/up.sh --engines 0 --observers 0), an
#      engine and an observer run from that tree under chroot as the
#      Containerfile's USER, through its ENTRYPOINT, with ids rootfs-*;
#      a stack converges; the liveness records name those workers; the
#      Containerfile's HEALTHCHECK command passes in the chroot, then fails
#      once the engine is stopped. The same for a node agent, and for the
#      web console when it is built.
#   3. the compose file, the Kubernetes manifests and the Containerfiles
#      (tests/packaging/manifests.py).
# Everything it starts, mounts and creates is undone on exit, failed or not.
#
# usage: tests/packaging/run.sh [--build-dir DIR]
#   --build-dir DIR  where the programs are built (default build/)
# exit status: 0 all passed, 1 a check failed, 2 bad usage
set -euo pipefail
CV_TAG=packaging
# shellcheck source=SCRIPTDIR/../../deploy/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../deploy/lib/common.sh"

build_dir=""
while (($#)); do
    case $1 in
    --build-dir)
        (($# >= 2)) || cv_usage_error "--build-dir needs a value"
        build_dir=$2
        shift 2
        ;;
    -h | --help) cv_usage 0 ;;
    *) cv_usage_error "unknown argument: $1" ;;
    esac
done
BUILD=$(cv_abspath "${build_dir:-$CV_REPO_ROOT/build}")
[[ -x $BUILD/converge-engine ]] || cv_die "$BUILD/converge-engine does not exist: build first"
((EUID == 0)) || cv_die "needs root (debootstrap, chroot, mounts)"
for tool in systemd-analyze debootstrap chroot /usr/bin/python3 redis-cli jq; do
    command -v "$tool" >/dev/null || cv_die "$tool is missing (deploy/local/setup.sh installs it)"
done
WEB=false
[[ -x $BUILD/converge-web ]] && WEB=true

TMP=$(mktemp -d /tmp/converge-packaging.XXXXXX)
ROOTFS=$TMP/rootfs
STATE=$TMP/state
STARTED=() # PIDs of the processes this test started
MOUNTED=() # mount points, in the order mounted
FAILED=()
TIMINGS=()

# ---------------------------------------------------------------------------
# Cleanup: processes, then the deployment, then mounts; the temporary tree is
# removed only once nothing is mounted under it.
# ---------------------------------------------------------------------------

# Processes whose root directory is the tree: ours whatever their parent.
processes_in_tree() {
    local p
    for p in /proc/[0-9]*; do
        [[ $(readlink "$p/root" 2>/dev/null) == "$ROOTFS" ]] && echo "${p#/proc/}"
    done
    return 0
}

cleanup() {
    local rc=$? pid i
    mapfile -t -O "${#STARTED[@]}" STARTED < <(processes_in_tree)
    for pid in "${STARTED[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${STARTED[@]}"; do
        cv_wait_until 20 "process $pid to exit" cv_pid_gone_ "$pid" || kill -KILL "$pid" 2>/dev/null || true
    done
    [[ ! -f $STATE/env ]] || "$CV_REPO_ROOT/deploy/local/down.sh" --dir "$STATE" >"$TMP/down.log" 2>&1 ||
        cv_tail_log "$TMP/down.log"
    for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
        umount "${MOUNTED[i]}" 2>/dev/null || umount -l "${MOUNTED[i]}" || true
    done
    if findmnt -rno TARGET | grep -q "^$TMP/"; then
        cv_err "still mounted under $TMP; leaving it in place"
        rc=1
    else
        rm -rf --one-file-system "$TMP"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cv_pid_gone_() { ! kill -0 "$1" 2>/dev/null; }

# section NAME FUNCTION: runs one part, timed; a failed part is recorded and
# the others still run.
section() {
    local name=$1 t0=$SECONDS rc=0
    cv_log "=== $name"
    "$2" || rc=$?
    TIMINGS+=("$(printf '%-4s %3d s  %s' "$( ((rc == 0)) && echo ok || echo FAIL)" $((SECONDS - t0)) "$name")")
    ((rc == 0)) || FAILED+=("$name")
}

fail() {
    cv_err "$*"
    return 1
}

# ---------------------------------------------------------------------------
# 1. systemd units
# ---------------------------------------------------------------------------

check_units() {
    local prefix=$TMP/prefix units=$TMP/units f out rc=0 unit
    cmake --install "$BUILD" --prefix "$prefix" >"$TMP/install.log" 2>&1 || {
        cv_tail_log "$TMP/install.log"
        fail "cmake --install failed"
        return 1
    }
    cv_log "installed into $prefix/bin: $(cd "$prefix/bin" && echo *)"
    mkdir -p "$units"
    for f in "$CV_REPO_ROOT"/deploy/systemd/*.service "$CV_REPO_ROOT"/deploy/systemd/*.target; do
        sed "s|/usr/local/bin/|$prefix/bin/|g" "$f" >"$units/$(basename "$f")"
    done
    # A template is verified through an instance of it.
    for f in "$units"/*@.service; do
        ln -s "$(basename "$f")" "${f%@.service}@1.service"
    done
    for f in "$units"/*.service "$units"/*.target; do
        unit=$(basename "$f")
        [[ $unit == *@.service ]] && continue
        if [[ $unit == converge-web.service ]] && ! $WEB; then
            cv_log "skipped $unit: $BUILD/converge-web is not built"
            continue
        fi
        out=$(cd "$units" && systemd-analyze verify "./$unit" 2>&1) || {
            printf '%s\n' "$out" >&2
            rc=1
            cv_err "systemd-analyze verify $unit failed"
            continue
        }
        [[ -z $out ]] || {
            printf '%s\n' "$out" >&2
            rc=1
            cv_err "systemd-analyze verify $unit printed warnings"
            continue
        }
        cv_log "systemd-analyze verify $unit: clean"
    done
    return $rc
}

# ---------------------------------------------------------------------------
# 2. the image root filesystem under chroot
# ---------------------------------------------------------------------------

# containerfile_json ROLE INSTRUCTION: the exec-form (JSON) argument list of
# INSTRUCTION (ENTRYPOINT, or HEALTHCHECK's CMD) in Containerfile.ROLE, one
# word a line.
containerfile_json() {
    local file=$CV_REPO_ROOT/deploy/container/Containerfile.$1 line
    line=$(grep -E "^$2 " "$file" | tail -n1)
    [[ $2 == HEALTHCHECK ]] && line=${line#* CMD } || line=${line#"$2" }
    jq -r '.[]' <<<"$line"
}

# The Containerfile's USER, as chroot --userspec wants it.
containerfile_user() {
    grep -E '^USER ' "$CV_REPO_ROOT/deploy/container/Containerfile.$1" | tail -n1 | cut -d' ' -f2
}

# image_cmd ROLE COMMAND...: sets IMAGE_CMD to COMMAND in the tree as ROLE's
# user, with the environment a container would get (ROLE_ENV added). An
# array, not a function, so that a background job is the process itself.
image_cmd() {
    local role=$1
    shift
    IMAGE_CMD=(chroot --userspec="$(containerfile_user "$role")" "$ROOTFS" /usr/bin/env -i
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOSTNAME=rootfs
        HOME=/var/lib/converge CONVERGE_REDIS="$CONVERGE_REDIS" CONVERGE_KAFKA="$CONVERGE_KAFKA"
        CONVERGE_KAFKA_OPTS="${CONVERGE_KAFKA_OPTS:-}" CONVERGE_PREFIX="${CONVERGE_PREFIX:-cv:}"
        CONVERGE_SESSION_MS="${CONVERGE_SESSION_MS:-6000}" "${ROLE_ENV[@]}" "$@")
}

# start_in_image ROLE ENV...: the Containerfile's ENTRYPOINT in the tree, in
# the background; its PID (chroot, env, the entrypoint script and the
# program exec one another: one process) in STARTED and LAST_PID.
start_in_image() {
    local role=$1 entry
    shift
    ROLE_ENV=("$@")
    mapfile -t entry < <(containerfile_json "$role" ENTRYPOINT)
    image_cmd "$role" "${entry[@]}"
    "${IMAGE_CMD[@]}" >"$TMP/$role.log" 2>&1 &
    LAST_PID=$!
    STARTED+=("$LAST_PID")
    cv_log "$role: started from the tree as $(containerfile_user "$role") (pid $LAST_PID): ${entry[*]} ${ROLE_ENV[*]}"
}

# health ROLE ENV...: the Containerfile's HEALTHCHECK command in the tree.
health() {
    local role=$1 cmd
    shift
    ROLE_ENV=("$@")
    mapfile -t cmd < <(containerfile_json "$role" HEALTHCHECK)
    image_cmd "$role" "${cmd[@]}"
    "${IMAGE_CMD[@]}"
}

liveness_field() { # worker field
    redis-cli -u "${CONVERGE_REDIS%%,*}" --raw HGET "${CONVERGE_PREFIX:-cv:}worker:$1" "$2" 2>/dev/null
}

worker_ready() { [[ $(liveness_field "$1" state) == ready ]]; }

stack_status() {
    "$BUILD/convergectl" status "$1" -o json 2>/dev/null | jq -r '.status // empty'
}
stack_complete() { [[ $(stack_status "$1") == CREATE_COMPLETE ]]; }

alive_and_ready() { # pid worker
    kill -0 "$1" 2>/dev/null || return 0
    worker_ready "$2"
}

check_rootfs() {
    local t0=$SECONDS engine_id=rootfs-engine-$$ observer_id=rootfs-observer-$$ engine_pid observer_pid
    local stack=packaging-$$ stack_id workers out
    deploy/container/rootfs.sh --dir "$ROOTFS" --build-dir "$BUILD" || return 1
    cv_log "root filesystem assembled in $((SECONDS - t0)) s"
    local ldd_out
    # shellcheck disable=SC2016 # expanded inside the tree
    ldd_out=$(chroot "$ROOTFS" sh -c '
        for b in /usr/local/bin/converge*; do
            [ "$(head -c 4 "$b" | tail -c 3)" != ELF ] || ldd "$b" || exit 1
        done') ||
        fail "ldd failed inside the tree" || return 1
    ! grep 'not found' <<<"$ldd_out" || fail "libraries not found in the tree (ldd)" || return 1
    cv_log "ldd: every library of the programs in /usr/local/bin resolves inside the tree"

    t0=$SECONDS
    # --insecure: the workers run in the tree as a container would, given
    # only an environment; the secured deployment's password files and CA
    # live outside the tree (docs/security.md "Secure by default").
    deploy/local/up.sh --build-dir "$BUILD" --dir "$STATE" --engines 0 --observers 0 --no-build \
        --insecure >"$TMP/up.log" 2>&1 || {
        cv_tail_log "$TMP/up.log" 40
        fail "deploy/local/up.sh failed"
        return 1
    }
    # shellcheck disable=SC1091
    . "$STATE/env"
    cv_log "local Redis and Kafka up in $((SECONDS - t0)) s (no workers): $CONVERGE_REDIS, $CONVERGE_KAFKA"

    mount -t proc proc "$ROOTFS/proc" && MOUNTED+=("$ROOTFS/proc")
    mount --bind /dev "$ROOTFS/dev" && MOUNTED+=("$ROOTFS/dev")

    t0=$SECONDS
    start_in_image engine CONVERGE_WORKER_ID="$engine_id"
    engine_pid=$LAST_PID
    start_in_image observer CONVERGE_WORKER_ID="$observer_id"
    observer_pid=$LAST_PID
    if ! cv_wait_until 60 "$engine_id to be ready" alive_and_ready "$engine_pid" "$engine_id" ||
        ! cv_wait_until 60 "$observer_id to be ready" alive_and_ready "$observer_pid" "$observer_id" ||
        ! kill -0 "$engine_pid" "$observer_pid" 2>/dev/null; then
        cv_tail_log "$TMP/engine.log"
        cv_tail_log "$TMP/observer.log"
        fail "the workers from the tree did not become ready"
        return 1
    fi
    cv_log "both workers ready in $((SECONDS - t0)) s"

    # The liveness records name the chrooted workers, with their PIDs.
    [[ $(liveness_field "$engine_id" role) == engine && $(liveness_field "$engine_id" pid) == "$engine_pid" ]] ||
        fail "worker:$engine_id: role $(liveness_field "$engine_id" role), pid $(liveness_field "$engine_id" pid), not engine and $engine_pid" || return 1
    [[ $(liveness_field "$observer_id" role) == observer && $(liveness_field "$observer_id" pid) == "$observer_pid" ]] ||
        fail "worker:$observer_id: not the observer $observer_pid" || return 1
    cv_log "liveness records: worker:$engine_id (engine, pid $engine_pid), worker:$observer_id (observer, pid $observer_pid)"

    t0=$SECONDS
    "$BUILD/convergectl" submit "$stack" "$CV_REPO_ROOT/tests/data/stacks/wait.yaml" >"$TMP/submit.log" 2>&1 || {
        cv_tail_log "$TMP/submit.log"
        fail "convergectl submit failed"
        return 1
    }
    cv_wait_until 60 "stack $stack to reach CREATE_COMPLETE" stack_complete "$stack" || {
        "$BUILD/convergectl" status "$stack" >&2 || true
        cv_tail_log "$TMP/engine.log"
        fail "stack $stack is $(stack_status "$stack"), not CREATE_COMPLETE"
        return 1
    }
    # Its events were written by the chrooted workers (the observer records
    # the slow resource's end), and by no other worker.
    stack_id=$(redis-cli -u "$CONVERGE_REDIS" --raw HGET "${CONVERGE_PREFIX:-cv:}stacks" "$stack")
    workers=$(redis-cli -u "$CONVERGE_REDIS" --raw XRANGE "${CONVERGE_PREFIX:-cv:}{$stack_id}:events" - + |
        awk 'prev == "worker" { print } { prev = $0 }' | sort -u | tr '\n' ' ')
    [[ $workers == *"$engine_id "* ]] || fail "no event of $stack names $engine_id (workers: $workers)" || return 1
    [[ $workers == *"$observer_id "* ]] || fail "no event of $stack names $observer_id (workers: $workers)" || return 1
    ! tr ' ' '\n' <<<"$workers" | grep -q -v -e "^$engine_id\$" -e "^$observer_id\$" -e '^convergectl$' -e '^$' ||
        fail "events of $stack name other workers: $workers" || return 1
    cv_log "stack $stack CREATE_COMPLETE in $((SECONDS - t0)) s; its events name: $workers"

    # The Containerfiles' HEALTHCHECK, inside the tree.
    out=$(health engine CONVERGE_WORKER_ID="$engine_id" 2>&1) || fail "engine health check failed: $out" || return 1
    out=$(health observer CONVERGE_WORKER_ID="$observer_id" 2>&1) || fail "observer health check failed: $out" || return 1
    cv_log "HEALTHCHECK passes for the engine and the observer"
    kill -TERM "$engine_pid"
    cv_wait_until 20 "the engine (pid $engine_pid) to exit after SIGTERM" cv_pid_gone_ "$engine_pid" || return 1
    if out=$(health engine CONVERGE_WORKER_ID="$engine_id" 2>&1); then
        fail "the engine's health check passes after the engine stopped"
        return 1
    fi
    cv_log "after SIGTERM the engine's HEALTHCHECK fails: $out"
    out=$(health observer CONVERGE_WORKER_ID="$observer_id" 2>&1) || fail "observer health check failed: $out" || return 1

    check_agent_in_rootfs && check_web_in_rootfs
}

agent_healthy() { health agent CONVERGE_NODE="$1" >/dev/null 2>&1; }
agent_unhealthy() { ! agent_healthy "$1"; }

# The node agent from the tree: its heartbeat makes its HEALTHCHECK pass; once
# it is stopped, the heartbeat lapses (its TTL, 3 s) and the check fails.
check_agent_in_rootfs() {
    local node=rootfs-node-$$ pid out
    start_in_image agent CONVERGE_NODE="$node"
    pid=$LAST_PID
    cv_wait_until 30 "the agent's HEALTHCHECK to pass" agent_healthy "$node" || {
        cv_tail_log "$TMP/agent.log"
        fail "the agent from the tree never became healthy"
        return 1
    }
    cv_log "agent of node $node: HEALTHCHECK passes"
    kill -TERM "$pid"
    cv_wait_until 20 "the agent to exit" cv_pid_gone_ "$pid" || return 1
    cv_wait_until 15 "the agent's HEALTHCHECK to fail" agent_unhealthy "$node" || return 1
    out=$(health agent CONVERGE_NODE="$node" 2>&1) || true
    cv_log "agent: after SIGTERM its HEALTHCHECK fails: $out"
}

web_healthy() { health web CONVERGE_WEB_LISTEN="$1" >/dev/null 2>&1; }

check_web_in_rootfs() {
    if ! $WEB; then
        cv_log "web console: skipped, $BUILD/converge-web is not built"
        return 0
    fi
    local WEB_PORT pid out
    cv_pick_port WEB_PORT
    start_in_image web CONVERGE_WEB_LISTEN="127.0.0.1:$WEB_PORT"
    pid=$LAST_PID
    cv_wait_until 30 "the web console's HEALTHCHECK to pass" web_healthy "127.0.0.1:$WEB_PORT" || {
        cv_tail_log "$TMP/web.log"
        fail "the web console from the tree never became healthy"
        return 1
    }
    cv_log "web console: HEALTHCHECK passes on 127.0.0.1:$WEB_PORT"
    kill -TERM "$pid"
    cv_wait_until 20 "the web console to exit" cv_pid_gone_ "$pid" || return 1
    if out=$(health web CONVERGE_WEB_LISTEN="127.0.0.1:$WEB_PORT" 2>&1); then
        fail "the web console's health check passes after it stopped"
        return 1
    fi
    cv_log "web console: after SIGTERM its HEALTHCHECK fails: $out"
}

# ---------------------------------------------------------------------------
# 3. compose, Kubernetes, Containerfiles
# ---------------------------------------------------------------------------

check_manifests() {
    /usr/bin/python3 "$CV_REPO_ROOT/tests/packaging/manifests.py" --repo "$CV_REPO_ROOT" --build-dir "$BUILD"
}

cd "$CV_REPO_ROOT"
$WEB || cv_log "note: $BUILD/converge-web is not built: the web console's unit, image and health check are skipped"
section "systemd units (systemd-analyze verify)" check_units
section "image root filesystem under chroot (engine, observer, agent$($WEB && echo ", web"))" check_rootfs
section "compose, Kubernetes manifests, Containerfiles" check_manifests
cv_log "=== summary"
printf '  %s\n' "${TIMINGS[@]}"
((${#FAILED[@]} == 0)) || {
    cv_err "failed: ${FAILED[*]}"
    exit 1
}
cv_log "all passed"
