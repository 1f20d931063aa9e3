#!/usr/bin/env bash
#
# install.sh — the one step every Converge image runs on Debian 12: the
# runtime libraries the binaries link against, redis-tools (the health
# check reads the liveness record with redis-cli), and the non-root user
# `converge` (uid/gid 10001) with its home /var/lib/converge. The
# Containerfiles RUN it and deploy/container/rootfs.sh runs it under chroot,
# so an image and the root filesystem the packaging test runs are made by the
# same steps. Idempotent: with everything present it changes nothing and
# needs no network.
#
# usage: install.sh [--print-packages]
#   --print-packages  print the Debian packages installed, one a line, and exit
set -euo pipefail

# From `ldd` of the binaries: librdkafka1 (Kafka), libhiredis0.14 (Redis),
# libuv1 (event loop), libmsgpackc2 (messages), libyaml-0-2 and libjansson4
# (templates, JSON), libsodium23 (encryption at rest); their own dependencies (libssl3, libsasl2-2, ...) come
# with them.
PACKAGES=(librdkafka1 libhiredis0.14 libuv1 libmsgpackc2 libyaml-0-2 libjansson4 libsodium23
    redis-tools ca-certificates)
CONVERGE_UID=10001

if [[ ${1:-} == --print-packages ]]; then
    printf '%s\n' "${PACKAGES[@]}"
    exit 0
elif [[ ${1:-} == -h || ${1:-} == --help ]]; then
    sed -n '/^# usage:/,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
elif (($#)); then
    echo "install.sh: unknown argument: $1 (usage: install.sh [--print-packages])" >&2
    exit 2
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
    [[ $(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null) == "ii"* ]] || missing+=("$pkg")
done
if ((${#missing[@]} > 0)); then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
    apt-get clean
    rm -rf /var/lib/apt/lists/*
fi

getent group converge >/dev/null || groupadd --system --gid "$CONVERGE_UID" converge
getent passwd converge >/dev/null ||
    useradd --system --uid "$CONVERGE_UID" --gid converge --home-dir /var/lib/converge \
        --no-create-home --shell /usr/sbin/nologin converge
# The agent's node directory (replica state, logs, work dirs) lives here.
install -d -o converge -g converge -m 0750 /var/lib/converge /var/lib/converge/agent
