# shellcheck shell=bash disable=SC2034 # its variables are for the scripts sourcing it
#
# common.sh — what the deploy scripts share: logging, deadlines, free ports,
# PID files, and where the Kafka distribution lives. Sourced, never run.
#
# Waiting is always "poll a condition until a deadline": no fixed sleeps, only
# short polling intervals inside bounded loops.

CV_REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CV_CACHE=${CONVERGE_CACHE:-/var/cache/converge}
# The Kafka broker's jars (deploy/kafka/pom.xml), one directory per version.
CV_KAFKA_VERSION=4.1.1
CV_KAFKA_HOME=$CV_CACHE/kafka-$CV_KAFKA_VERSION
# The jar whose presence says the cached Kafka distribution is complete.
CV_KAFKA_JAR=libs/kafka_2.13-$CV_KAFKA_VERSION.jar

CV_TAG=${CV_TAG:-$(basename "$0" .sh)}
CV_T0=${EPOCHREALTIME//[!0-9]/}

# ---------------------------------------------------------------------------
# Logging: one line per step, with the seconds since the script started.
# ---------------------------------------------------------------------------

cv_now_ms() {
    local us=${EPOCHREALTIME//[!0-9]/}
    echo $((us / 1000))
}

cv_elapsed() {
    local us=${EPOCHREALTIME//[!0-9]/}
    local ds=$(((us - CV_T0) / 100000))
    printf '%d.%ds' $((ds / 10)) $((ds % 10))
}

cv_log() { printf '[%s %s] %s\n' "$CV_TAG" "$(cv_elapsed)" "$*"; }
cv_warn() { printf '[%s %s] warning: %s\n' "$CV_TAG" "$(cv_elapsed)" "$*" >&2; }
cv_err() { printf '[%s %s] error: %s\n' "$CV_TAG" "$(cv_elapsed)" "$*" >&2; }
cv_die() {
    cv_err "$*"
    exit 1
}

# Prints the last lines of a log file to stderr, framed, for failure reports.
cv_tail_log() {
    local file=$1 lines=${2:-25}
    if [[ -s $file ]]; then
        printf -- '--- last %d lines of %s ---\n' "$lines" "$file" >&2
        tail -n "$lines" "$file" >&2
        printf -- '--- end of %s ---\n' "$file" >&2
    else
        printf -- '--- %s is empty or missing ---\n' "$file" >&2
    fi
}

# ---------------------------------------------------------------------------
# Command lines.
# ---------------------------------------------------------------------------

# cv_usage [STATUS]: prints the running script's usage (its header comment
# from "# usage:" to "set -euo") and exits with STATUS (default 0). On an
# error the usage goes to stderr, so that it never mixes with output.
cv_usage() {
    local text
    text=$(sed -n '/^# usage:/,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//')
    if ((${1:-0} == 0)); then echo "$text"; else echo "$text" >&2; fi
    exit "${1:-0}"
}

# cv_usage_error MESSAGE: says what is wrong with the command line, then
# prints the usage; exits 2.
cv_usage_error() {
    cv_err "$*"
    cv_usage 2
}

# cv_build_dir DIR SANITIZE: prints DIR as an absolute path; an empty DIR is
# the repository's build/, or build-asan/ when SANITIZE is true, so that a
# sanitizer build never overwrites the plain one.
cv_build_dir() {
    local dir=$1
    if [[ -z $dir ]]; then
        dir=$CV_REPO_ROOT/build
        [[ $2 == true ]] && dir=$CV_REPO_ROOT/build-asan
    fi
    cv_abspath "$dir"
}

# ---------------------------------------------------------------------------
# Deadlines.
# ---------------------------------------------------------------------------

# cv_wait_until SECONDS WHAT CMD [ARGS...]
# Runs CMD until it succeeds or SECONDS have passed, polling every 20 ms at
# first and backing off to 200 ms. Returns 1 on timeout (after saying what it
# waited for); the caller decides what to print and whether to exit.
cv_wait_until() {
    local seconds=$1 what=$2
    shift 2
    local deadline=$(($(cv_now_ms) + seconds * 1000)) delay_ms=20
    while true; do
        if "$@"; then
            return 0
        fi
        if (($(cv_now_ms) >= deadline)); then
            cv_err "gave up after ${seconds}s waiting for $what"
            return 1
        fi
        sleep "0.$(printf '%03d' "$delay_ms")"
        ((delay_ms < 200)) && delay_ms=$((delay_ms * 2 > 200 ? 200 : delay_ms * 2))
    done
}

# ---------------------------------------------------------------------------
# Ports.
# ---------------------------------------------------------------------------

CV_TAKEN_PORTS=" "

# cv_port_in_use PORT [STATE]: true if a TCP socket on this machine (any
# address) has local port PORT — in any state, or only in STATE (a hex code of
# /proc/net/tcp: 0A is LISTEN).
cv_port_in_use() {
    awk -v port="$(printf '%04X' "$1")" -v state="${2:-}" '
        NR > 1 && substr($2, length($2) - 3) == port && (state == "" || $4 == state) { found = 1 }
        END { exit !found }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# cv_pick_port VAR: keeps VAR's port if it is set and nothing listens on it
# (so addresses stay stable across restarts; our servers all bind with
# SO_REUSEADDR, so connections of their previous run lingering in TIME_WAIT
# do not matter), otherwise sets VAR to a TCP port no socket uses at all,
# below the kernel's ephemeral range so that no outgoing connection can be
# handed it later. A port picked once by this process is not picked again.
# (A variable, not output: a $(...) subshell would forget CV_TAKEN_PORTS.)
cv_pick_port() {
    local -n cv_port_var=$1
    local low _high span port tries
    port=${cv_port_var:-}
    if [[ -n $port && $CV_TAKEN_PORTS != *" $port "* ]] && ! cv_port_in_use "$port" 0A; then
        CV_TAKEN_PORTS+="$port "
        return 0
    fi
    read -r low _high </proc/sys/net/ipv4/ip_local_port_range
    ((low > 21000)) || low=32768
    span=$((low - 20000))
    for ((tries = 0; tries < 200; tries++)); do
        port=$((20000 + (RANDOM * 32768 + RANDOM) % span))
        [[ $CV_TAKEN_PORTS == *" $port "* ]] && continue
        cv_port_in_use "$port" && continue
        CV_TAKEN_PORTS+="$port "
        cv_port_var=$port
        return 0
    done
    cv_die "no free TCP port found"
}

# ---------------------------------------------------------------------------
# Processes and PID files. A PID file is trusted only while /proc/PID/cmdline
# carries every marker given, so a recycled PID is never signalled.
# ---------------------------------------------------------------------------

# Prints the PID stored in FILE, if FILE holds a number.
cv_pid_read() {
    local pid=""
    if [[ -f $1 ]]; then
        read -r pid <"$1" 2>/dev/null || true
    fi
    [[ $pid =~ ^[0-9]+$ ]] && echo "$pid"
}

# cv_pid_matches PID MARKER...: PID is alive and its command line has every MARKER.
cv_pid_matches() {
    local pid=$1 cmdline marker
    shift
    [[ -r /proc/$pid/cmdline ]] || return 1
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
    [[ -n $cmdline ]] || return 1 # a zombie has an empty command line
    for marker in "$@"; do
        [[ $cmdline == *"$marker"* ]] || return 1
    done
}

# cv_pid_alive FILE MARKER...: prints the PID if FILE names a live process of ours.
cv_pid_alive() {
    local file=$1 pid
    shift
    pid=$(cv_pid_read "$file") || return 1
    cv_pid_matches "$pid" "$@" && echo "$pid"
}

# cv_spawn PIDFILE LOGFILE CMD [ARGS...]
# Starts CMD in its own session (no terminal, immune to the caller's Ctrl-C
# and hang-up), output appended to LOGFILE. The process writes its own PID
# before exec'ing CMD, so the file names CMD itself whatever setsid does; the
# call returns once the file is written. File descriptors 7-9 (the scripts'
# locks and pipes) are closed in CMD: a long-lived process must not hold a
# lock its starter took.
cv_spawn() {
    local pidfile=$1 logfile=$2
    shift 2
    rm -f "$pidfile"
    # shellcheck disable=SC2016 # $$ and $@ belong to the inner shell.
    setsid bash -c 'echo $$ >"$0.tmp" && mv -f "$0.tmp" "$0" && exec "$@"' \
        "$pidfile" "$@" >>"$logfile" 2>&1 </dev/null 7>&- 8>&- 9>&- &
    cv_wait_until 10 "$pidfile" test -s "$pidfile"
}

# True once PID has exited. Processes that are not our children count as gone
# once only a zombie is left (their parent reaps them, not us).
cv_pid_gone() {
    local stat
    kill -0 "$1" 2>/dev/null || return 0
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0 # not $(<): see agents.sh
    stat=${stat##*) } # the state follows the command name, which may hold spaces
    [[ ${stat%% *} == Z ]]
}

# True once every PID given has exited.
cv_pids_gone() {
    local pid
    for pid; do
        cv_pid_gone "$pid" || return 1
    done
}

# ---------------------------------------------------------------------------
# Paths.
# ---------------------------------------------------------------------------

# Prints PATH as an absolute, normalised path; relative paths are taken from
# the current directory. PATH need not exist.
cv_abspath() {
    realpath -m -- "$1"
}

# cv_tls_certs DIR NAME CA_CN SAN EKU: a local CA (DIR/ca.crt) and a
# certificate for NAME (DIR/NAME.crt, key DIR/NAME.key, 0600) with the
# subjectAltName SAN and extendedKeyUsage EKU, made with openssl unless
# there; its log in DIR/openssl.log. Returns non-zero when openssl failed.
cv_tls_certs() {
    local dir=$1 name=$2 ca_cn=$3 san=$4 eku=$5
    [[ -s $dir/$name.crt && -s $dir/ca.crt ]] && return 0
    mkdir -p "$dir"
    (
        umask 077
        cd "$dir" &&
            openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 365 \
                -subj "/CN=$ca_cn" &&
            openssl req -newkey rsa:2048 -nodes -keyout "$name.key" -out "$name.csr" \
                -subj "/CN=127.0.0.1" &&
            printf '%s\n' "subjectAltName=$san" "basicConstraints=CA:FALSE" \
                "extendedKeyUsage=$eku" >"$name.ext" &&
            openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
                -out "$name.crt" -days 365 -extfile "$name.ext" && rm -f "$name.csr"
    ) >"$dir/openssl.log" 2>&1 || return 1
    chmod 0644 "$dir/ca.crt" "$dir/$name.crt"
}
