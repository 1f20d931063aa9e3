#!/usr/bin/env bash
#
# rootfs.sh — assembles the root filesystem of the Converge images without a
# container engine: a Debian 12 (bookworm) minbase made by debootstrap, then
# the COPY and RUN steps of deploy/container/Containerfile.<role>, read from
# those files and performed under chroot (RUN) or as file copies from the
# repository (COPY), so the result holds what the images hold. Every role's
# Containerfile is applied to the one tree; Containerfile.web only when its
# binary is built. FROM, USER, HEALTHCHECK, ENTRYPOINT and the like are left
# to whoever runs the tree (tests/packaging/run.sh reads them from the files).
#
# The debootstrap result, with install.sh's packages already in it, is cached
# as a tarball under $CONVERGE_CACHE (default /var/cache/converge), named
# by a digest of the suite, the mirror and install.sh (its package list): the
# first run takes minutes, later ones seconds. Needs root.
#
# usage: deploy/container/rootfs.sh --dir DIR [--build-dir DIR] [--mirror URL]
#   --dir DIR        where to assemble the tree (created; must not exist or be empty)
#   --build-dir DIR  where the binaries are built (default build/)
#   --mirror URL     the Debian mirror (default: the one this machine's apt
#                    sources use for bookworm, else http://deb.debian.org/debian)
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

SUITE=bookworm
dir="" build_dir="" mirror=""
while (($#)); do
    case $1 in
    --dir | --build-dir | --mirror)
        (($# >= 2)) || cv_usage_error "$1 needs a value"
        case $1 in
        --dir) dir=$2 ;;
        --build-dir) build_dir=$2 ;;
        --mirror) mirror=$2 ;;
        esac
        shift 2
        ;;
    -h | --help) cv_usage 0 ;;
    *) cv_usage_error "unknown argument: $1" ;;
    esac
done
[[ -n $dir ]] || cv_usage_error "--dir is required"
build_dir=$(cv_abspath "${build_dir:-$CV_REPO_ROOT/build}")
((EUID == 0)) || cv_die "needs root (debootstrap, chroot, mounts)"
command -v debootstrap >/dev/null || cv_die "debootstrap is not installed (deploy/local/setup.sh installs it)"
[[ -x $build_dir/converge-engine ]] || cv_die "$build_dir/converge-engine does not exist: build first"
if [[ -e $dir ]] && [[ -n $(ls -A "$dir") ]]; then
    cv_die "--dir $dir exists and is not empty"
fi
mkdir -p "$dir"
dir=$(cv_abspath "$dir")

# The bookworm mirror of this machine's apt sources (deb822 or one-line).
host_mirror() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -f $f ]] || continue
        awk 'BEGIN { RS = ""; FS = "\n" }
             /Suites:[^\n]*bookworm( |\n|$)/ {
                 for (i = 1; i <= NF; i++) if ($i ~ /^URIs:/) { sub(/^URIs: */, "", $i); split($i, u, " "); print u[1]; exit }
             }' "$f"
    done
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        awk '$1 == "deb" && $3 == "bookworm" { print $2 }' || true
}
[[ -n $mirror ]] || mirror=$(host_mirror | head -n1 || true)
mirror=${mirror:-http://deb.debian.org/debian}

# ---------------------------------------------------------------------------
# Mounts: /proc for the RUN steps (apt, dpkg), always undone.
# ---------------------------------------------------------------------------

MOUNTED=()
unmount_all() {
    local i
    for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
        umount "${MOUNTED[i]}" 2>/dev/null || umount -l "${MOUNTED[i]}" || true
    done
    MOUNTED=()
}
WORK=""
cleanup() {
    unmount_all
    [[ -z $WORK ]] || rm -rf --one-file-system "$WORK"
}
trap cleanup EXIT

# in_chroot ROOT COMMAND...: COMMAND as root inside ROOT, with /proc mounted.
in_chroot() {
    local root=$1
    shift
    mkdir -p "$root/proc"
    mount -t proc proc "$root/proc"
    MOUNTED+=("$root/proc")
    cp -f /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    local rc=0
    chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root "$@" || rc=$?
    unmount_all
    return $rc
}

# ---------------------------------------------------------------------------
# The Containerfiles' steps.
# ---------------------------------------------------------------------------

# containerfile_steps FILE: prints its COPY and RUN instructions, one a line,
# with the ARG defaults substituted (continuation lines are not used in our
# Containerfiles, and refused here so that nothing is silently skipped).
containerfile_steps() {
    local file=$1 line name value
    local -A args=()
    while IFS= read -r line || [[ -n $line ]]; do
        [[ $line == *\\ ]] && cv_die "$file: continuation lines are not supported: $line"
        if [[ $line =~ ^ARG\ +([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]]; then
            args[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
            continue
        fi
        [[ $line =~ ^(COPY|RUN)\  ]] || continue
        for name in "${!args[@]}"; do
            value=${args[$name]}
            line=${line//\$\{$name\}/$value}
        done
        printf '%s\n' "$line"
    done <"$file"
}

# apply_containerfile ROOT FILE: its COPY (from the repository root, the
# build context; build/ stands for --build-dir) and RUN steps on ROOT.
apply_containerfile() {
    local root=$1 file=$2 step words dest src
    while IFS= read -r step; do
        read -r -a words <<<"${step#* }"
        case $step in
        RUN\ *)
            cv_log "$(basename "$file"): RUN ${step#RUN }"
            in_chroot "$root" /bin/sh -c "${step#RUN }" || cv_die "$(basename "$file"): RUN failed: $step"
            ;;
        COPY\ *)
            dest=${words[-1]}
            unset 'words[-1]'
            [[ $dest == /* ]] || cv_die "$file: COPY to a relative path: $step"
            for src in "${words[@]}"; do
                [[ $src == build/* ]] && src=$build_dir/${src#build/} || src=$CV_REPO_ROOT/$src
                [[ -e $src ]] || cv_die "$file: COPY source $src does not exist"
                if [[ $dest == */ ]]; then
                    mkdir -p "$root$dest"
                    cp -f "$src" "$root$dest"
                else
                    mkdir -p "$(dirname "$root$dest")"
                    cp -f "$src" "$root$dest"
                fi
            done
            ;;
        esac
    done < <(containerfile_steps "$file")
}

# ---------------------------------------------------------------------------
# The base: debootstrap, then install.sh's packages, cached.
# ---------------------------------------------------------------------------

key=$( {
    echo "$SUITE $mirror"
    cat "$CV_REPO_ROOT/deploy/container/install.sh"
} | sha256sum | cut -c1-16)
tarball=$CV_CACHE/rootfs-$SUITE-$key.tar

make_base() {
    WORK=$(mktemp -d "$CV_CACHE/.rootfs.XXXXXX")
    cv_log "debootstrap: $SUITE minbase from $mirror (cached afterwards as $tarball)"
    if ! debootstrap --variant=minbase "$SUITE" "$WORK/root" "$mirror" >"$WORK/debootstrap.log" 2>&1; then
        cv_tail_log "$WORK/debootstrap.log" 30
        cv_die "debootstrap failed"
    fi
    install -D -m 0755 "$CV_REPO_ROOT/deploy/container/install.sh" "$WORK/root/usr/local/lib/converge/install.sh"
    in_chroot "$WORK/root" /usr/local/lib/converge/install.sh >"$WORK/install.log" 2>&1 || {
        cv_tail_log "$WORK/install.log" 30
        cv_die "install.sh failed in the new root"
    }
    rm -rf "$WORK/root/var/cache/apt/archives/"*.deb
    tar -C "$WORK/root" --numeric-owner -cf "$WORK/base.tar" .
    mv -f "$WORK/base.tar" "$tarball"
    # Bases of an older install.sh or another mirror are of no more use.
    find "$CV_CACHE" -maxdepth 1 -name "rootfs-$SUITE-*.tar" ! -path "$tarball" -delete
    rm -rf --one-file-system "$WORK"
    WORK=""
}

mkdir -p "$CV_CACHE"
if [[ ! -f $tarball ]]; then
    exec 8>"$CV_CACHE/.rootfs.lock"
    flock -w 900 8 || cv_die "another rootfs.sh holds $CV_CACHE/.rootfs.lock"
    [[ -f $tarball ]] || make_base
    exec 8>&-
fi
tar -C "$dir" --numeric-owner -xf "$tarball"
cv_log "base: $tarball ($(du -m "$tarball" | cut -f1) MB) unpacked into $dir"

for role in engine observer agent web; do
    if [[ $role == web && ! -x $build_dir/converge-web ]]; then
        cv_log "Containerfile.web: skipped, $build_dir/converge-web is not built"
        continue
    fi
    apply_containerfile "$dir" "$CV_REPO_ROOT/deploy/container/Containerfile.$role"
done
cv_log "root filesystem ready in $dir"
