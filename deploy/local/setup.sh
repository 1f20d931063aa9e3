#!/usr/bin/env bash
#
# setup.sh — makes this machine able to build and run Converge locally, then
# builds it. Installs the Debian packages that are missing (one apt-get update,
# only when something is missing), fetches the Kafka 4.1 broker (KRaft) from
# Maven Central with Maven into the cache (deploy/kafka/pom.xml), configures
# the C project with CMake and builds it. Idempotent: when everything is present it only runs the
# incremental build.
#
# usage: deploy/local/setup.sh [--build-dir DIR] [--sanitize] [--no-build]
#   --build-dir DIR  build directory (default build/, or build-asan/ with --sanitize)
#   --sanitize       configure with -DCONVERGE_SANITIZE=ON (ASan + UBSan)
#   --no-build       install and fetch only; do not configure or build
# env: CONVERGE_CACHE  where the Kafka distribution is kept (default /var/cache/converge)
#      CONVERGE_JOBS   parallel build jobs (default 2)
# exit status: 0 ready, 1 installing failed, 2 bad usage, 3 configure or build failed
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

# Everything the build, the tests and deploy/local need from Debian (clang and
# its runtime libraries, which hold libFuzzer, for tests/fuzz/run.sh;
# debootstrap, systemd's systemd-analyze and python3-yaml for
# tests/packaging/run.sh).
PACKAGES=(build-essential cmake pkg-config librdkafka-dev libhiredis-dev libuv1-dev
    libmsgpack-dev libcmocka-dev libyaml-dev libjansson-dev libsodium-dev redis-server
    openjdk-17-jre-headless maven kcat jq clang-format cppcheck procps clang libclang-rt-14-dev
    curl python3 nftables stunnel4 valgrind graphviz libxml2-utils debootstrap systemd
    python3-yaml prometheus acl
    nodejs chromium) # nodejs, chromium (and npm): the web console's browser tests (tests/web)
# Debian's npm conflicts with a nodejs that bundles its own (NodeSource's).
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)

build_dir=""
sanitize=false
build=true
while (($#)); do
    case $1 in
    --build-dir)
        (($# >= 2)) || cv_usage 2
        build_dir=$2
        shift 2
        ;;
    --sanitize) sanitize=true && shift ;;
    --no-build) build=false && shift ;;
    -h | --help) cv_usage 0 ;;
    *) cv_usage_error "unknown argument: $1" ;;
    esac
done
build_dir=$(cv_build_dir "$build_dir" "$sanitize")

# ---------------------------------------------------------------------------
# What is missing.
# ---------------------------------------------------------------------------

# Prints the packages of PACKAGES that dpkg does not report as installed.
missing_packages() {
    local installed
    installed=" $(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${PACKAGES[@]}" 2>/dev/null |
        awk '$1 == "ii" { printf "%s ", $2 }' || true)"
    local pkg
    for pkg in "${PACKAGES[@]}"; do
        [[ $installed == *" $pkg "* ]] || echo "$pkg"
    done
}

kafka_present() {
    [[ -f $CV_KAFKA_HOME/$CV_KAFKA_JAR ]]
}

as_root() {
    if ((EUID == 0)); then
        "$@"
    else
        sudo "$@"
    fi
}

# ---------------------------------------------------------------------------
# Installing.
# ---------------------------------------------------------------------------

apt_install() {
    cv_log "apt: installing $*"
    local log
    log=$(mktemp)
    if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$log" 2>&1 ||
        ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends -o DPkg::Lock::Timeout=300 "$@" >>"$log" 2>&1; then
        cv_tail_log "$log" 40
        rm -f "$log"
        cv_die "apt-get failed"
    fi
    rm -f "$log"
    cv_log "apt: installed $# packages"
}

# Fetches the broker's jars from Maven Central into the cache. The new copy
# is complete before it replaces anything, so an interrupted fetch never
# leaves a half-copied broker behind.
fetch_kafka() {
    local tmp
    tmp=$(mktemp -d "$CV_CACHE/.kafka.XXXXXX") # same file system: the rename below is atomic
    cv_log "kafka: fetching $CV_KAFKA_VERSION from Maven Central (deploy/kafka/pom.xml)"
    if ! mvn -B -q -f "$CV_REPO_ROOT/deploy/kafka/pom.xml" dependency:copy-dependencies \
        -DincludeScope=runtime -DoutputDirectory="$tmp/libs" >"$tmp/mvn.log" 2>&1; then
        cv_tail_log "$tmp/mvn.log" 40
        rm -rf "$tmp"
        cv_die "mvn could not fetch the Kafka broker"
    fi
    [[ -f $tmp/$CV_KAFKA_JAR ]] || {
        rm -rf "$tmp"
        cv_die "deploy/kafka/pom.xml did not bring $CV_KAFKA_JAR"
    }
    rm -f "$tmp/mvn.log"
    rm -rf "$CV_KAFKA_HOME"
    mv "$tmp" "$CV_KAFKA_HOME"
    chmod 0755 "$CV_KAFKA_HOME"
    cv_log "kafka: installed in $CV_KAFKA_HOME ($(ls "$CV_KAFKA_HOME/libs" | wc -l) jars)"
}

install_missing() {
    local missing=("$@")
    ((${#missing[@]} == 0)) || apt_install "${missing[@]}"
    mapfile -t missing < <(missing_packages)
    ((${#missing[@]} == 0)) || cv_die "still not installed after apt-get: ${missing[*]}"
    kafka_present || fetch_kafka
}

# The check needs no lock and no root; only when something is missing do we
# take the cache lock (several checkouts may run setup at once) and look again.
mapfile -t missing < <(missing_packages)
if ((${#missing[@]} > 0)) || ! kafka_present; then
    mkdir -p "$CV_CACHE" || cv_die "cannot create $CV_CACHE; set CONVERGE_CACHE to a writable directory"
    exec 9>"$CV_CACHE/.setup.lock"
    flock -w 900 9 || cv_die "another setup.sh holds $CV_CACHE/.setup.lock"
    mapfile -t missing < <(missing_packages)
    install_missing "${missing[@]}"
    exec 9>&-
fi
cv_log "packages: all ${#PACKAGES[@]} present; kafka $CV_KAFKA_VERSION in $CV_KAFKA_HOME"

# The unprivileged user node agents run replicas as (converge-agent
# --replica-user, docs/security.md "Replicas: what a submitter can do on a node").
if ! getent passwd converge-replica >/dev/null; then
    as_root useradd --system --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin --user-group converge-replica ||
        cv_die "cannot create the system user converge-replica"
    cv_log "user: created the system user converge-replica"
fi
# Replicas run programs and serve files from the checkout (the examples, the
# tests' data, STATE): a checkout under a private folder (/root is 0700) would
# be out of their user's reach. Each folder above it that converge-replica
# cannot enter gets an ACL entry letting that one user through (x: enter, not
# list), which changes nobody else's access.
dir=$CV_REPO_ROOT
while [ "$dir" != / ]; do
    dir=$(dirname "$dir")
    if ! runuser -u converge-replica -- test -x "$dir" 2>/dev/null; then
        as_root setfacl -m u:converge-replica:x "$dir" ||
            cv_die "cannot let converge-replica through $dir (setfacl)"
        cv_log "acl: converge-replica may enter $dir (the checkout is below it)"
    fi
done

# ---------------------------------------------------------------------------
# Building.
# ---------------------------------------------------------------------------

$build || exit 0

want=OFF
$sanitize && want=ON
mkdir -p "$build_dir"
if ! grep -qx "CONVERGE_SANITIZE:BOOL=$want" "$build_dir/CMakeCache.txt" 2>/dev/null; then
    cv_log "cmake: configuring $build_dir (CONVERGE_SANITIZE=$want)"
    if ! cmake -S "$CV_REPO_ROOT" -B "$build_dir" -DCONVERGE_SANITIZE="$want" \
        >"$build_dir/configure.log" 2>&1; then
        cv_tail_log "$build_dir/configure.log" 40
        cv_err "cmake configure failed (full log: $build_dir/configure.log)"
        exit 3
    fi
fi
if ! cmake --build "$build_dir" -j "${CONVERGE_JOBS:-2}" >"$build_dir/build.log" 2>&1; then
    # The compiler's and linker's messages, without make's progress lines.
    grep -v -E '^\[ *[0-9]+%\] (Building|Linking|Built|Generating)|^Scanning|^Consolidate|^-- ' \
        "$build_dir/build.log" | head -n 80 >&2 || true
    cv_err "build failed (full log: $build_dir/build.log)"
    exit 3
fi
cv_log "build: $build_dir up to date ($(grep -c 'Building C object' "$build_dir/build.log" || true) files compiled)"
