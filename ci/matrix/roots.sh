# The version matrix's Debian roots: which Debian suite carries which LibTorch, and how a cached
# root is made (debootstrap --variant=minbase), provisioned (apt) and entered (chroot).
# shellcheck shell=bash

# Each root gets TP_APT_PACKAGES (ci/lib/common.sh), libgloo-dev included: c10d's
# ProcessGroupGloo.hpp includes <gloo/...>, which no libtorch-dev depends on (the ddp scenario).
# LibTorch version -> the Debian suite whose libtorch-dev is that version.
declare -grA TP_MATRIX_SUITES=([1.13.1]=bookworm [2.6.0]=trixie [2.14.1]=sid)
readonly TP_MATRIX_VERSIONS="1.13.1 2.6.0 2.14.1" # oldest first
# The CUDA compile-only cell: trixie's contrib libtorch-cuda-dev 2.6.0 (which conflicts with
# libtorch-dev) and non-free's CUDA 12.4, with the rest of the suite's packages. Its
# libtorch-cuda-2.6 depends on libgloo-cuda-0, which conflicts with libgloo0 and so with
# libgloo-dev: the Gloo headers come from contrib's libgloo-cuda-dev there.
tp_matrix_cuda_packages() {
  local packages=${TP_APT_PACKAGES/libtorch-dev/libtorch-cuda-dev}
  echo "${packages/libgloo-dev/libgloo-cuda-dev} nvidia-cuda-toolkit"
}
readonly TP_MATRIX_CUDA_PACKAGES="$(tp_matrix_cuda_packages)"

tp_matrix_roots_dir() { echo "${TORCHPLACE_ROOTS:-/var/cache/torchplace/roots}"; }

# The host's Debian mirror, read at run time (never written into the repository):
# the first URIs line of a stanza whose Suites are not the security ones.
tp_matrix_mirror() {
  [[ -n "${TORCHPLACE_MIRROR:-}" ]] && { echo "$TORCHPLACE_MIRROR"; return 0; }
  local sources=/etc/apt/sources.list.d/debian.sources
  [[ -r "$sources" ]] || tp_die $TP_EXIT_ENV "matrix: cannot read $sources to find the Debian mirror (or set TORCHPLACE_MIRROR)"
  awk '/^URIs:/ {uri = $2} /^Suites:/ && !/security/ && uri {print uri; exit} /^$/ {uri = ""}' "$sources"
}

# Fails with exit 3 naming the mirror and suite when the suite's Release file cannot be fetched.
tp_matrix_check_mirror() { # <mirror> <suite>
  wget -q --timeout=20 --tries=2 -O /dev/null "$1/dists/$2/Release" ||
    tp_die $TP_EXIT_ENV "matrix: mirror $1 cannot be reached (or has no suite '$2')"
}

# Creates ROOT with debootstrap into a temporary folder first, so the cache never holds half a root.
tp_matrix_create_root() { # <root> <suite> <mirror> <components>
  local root=$1 suite=$2 mirror=$3 components=$4
  if ! command -v debootstrap >/dev/null && [[ "${TORCHPLACE_NO_INSTALL:-0}" != 1 ]]; then
    tp_log "installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2 ||
      { apt-get update -q $TP_APT_SNAPSHOT_OPTIONS >&2 &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >&2; }
  fi
  command -v debootstrap >/dev/null || tp_die $TP_EXIT_ENV "matrix: debootstrap is missing: apt-get install debootstrap"
  tp_matrix_check_mirror "$mirror" "$suite"
  rm -rf "$root.partial"
  mkdir -p "$(dirname "$root")" || tp_die $TP_EXIT_ENV "matrix: cannot create $(dirname "$root")"
  tp_log "debootstrap --variant=minbase $suite $root (from $mirror)"
  debootstrap --variant=minbase --components="${components// /,}" "$suite" "$root.partial" "$mirror" \
    >"$root.debootstrap.log" 2>&1 ||
    tp_die $TP_EXIT_ENV "matrix: debootstrap of $suite failed: $(tp_apt_cause "$root.debootstrap.log")"
  echo "deb $mirror $suite $components" >"$root.partial/etc/apt/sources.list"
  mv "$root.partial" "$root"
}

tp_matrix_mount_proc() { # <root>
  mountpoint -q "$1/proc" || mount -t proc proc "$1/proc" || tp_die $TP_EXIT_ENV "matrix: cannot mount /proc in $1"
}

# Installs what is missing of <packages> into the root. A package left unpacked but not configured
# (libtorch-cuda-dev behind the offline nvidia-cudnn downloader) is accepted when <lenient> is 1.
tp_matrix_unpacked() { # <root> <package>: installed, or at least unpacked
  chroot "$1" dpkg-query -W -f='${Status}' "$2" 2>/dev/null | grep -q "install ok"
}

tp_matrix_install() { # <root> <packages> [lenient]
  local root=$1 packages=$2 lenient=${3:-0} missing=() pkg
  for pkg in $packages; do
    tp_matrix_unpacked "$root" "$pkg" || missing+=("$pkg")
  done
  ((${#missing[@]} == 0)) && return 0
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  tp_log "installing into $root: ${missing[*]}"
  local apt=(chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C apt-get -q $TP_APT_SNAPSHOT_OPTIONS)
  "${apt[@]}" update >"$root.apt.log" 2>&1 ||
    tp_die $TP_EXIT_ENV "matrix: apt-get update in $root failed: $(tp_apt_cause "$root.apt.log")"
  tp_apt_note_expired "$root"
  "${apt[@]}" install -y --no-install-recommends "${missing[@]}" >>"$root.apt.log" 2>&1 && return 0
  ((lenient)) || tp_die $TP_EXIT_ENV \
    "matrix: apt-get install ${missing[*]} in $root failed: $(tp_apt_cause "$root.apt.log")"
  for pkg in "${missing[@]}"; do
    tp_matrix_unpacked "$root" "$pkg" ||
      tp_die $TP_EXIT_ENV "matrix: $pkg is not even unpacked in $root; see $root.apt.log"
  done
  tp_log "apt-get install reported errors (expected offline for nvidia-cudnn); see $root.apt.log"
}

# The Debian version of the root's libtorch-dev (or <package>), e.g. 2.14.1+dfsg-1; "" when absent.
tp_matrix_libtorch_version() { # <root, or "" for the host> [package]
  local query=(dpkg-query -W -f='${Version}' "${2:-libtorch-dev}")
  if [[ -n "$1" ]]; then chroot "$1" "${query[@]}" 2>/dev/null; else "${query[@]}" 2>/dev/null; fi
  return 0
}

# Makes (or reuses) the cached root of <suite>, mounts /proc, installs <packages>; sets
# TP_MATRIX_PREPARED to the prepare step's fields for the column's run.json (seconds spent).
tp_matrix_prepare_root() { # <root> <suite> <packages> <components> [lenient]
  local root=$1 suite=$2 packages=$3 components=$4 lenient=${5:-0} start=$SECONDS cached=1
  if [[ ! -d "$root" || "${TORCHPLACE_MATRIX_FRESH:-0}" == 1 ]]; then
    tp_matrix_umount_all "$root"
    # Never delete through a mount (a bound source tree would go with it).
    ! grep -q " $root/" /proc/mounts || tp_die $TP_EXIT_ENV "matrix: $root still has mounts; unmount them first"
    rm -rf "$root"
    tp_matrix_create_root "$root" "$suite" "$(tp_matrix_mirror)" "$components"
    cached=0
  fi
  local root_seconds=$((SECONDS - start))
  tp_matrix_mount_proc "$root"
  start=$SECONDS
  tp_matrix_install "$root" "$packages" "$lenient"
  TP_MATRIX_PREPARED=(status=ok root_cached=$cached root_seconds=$root_seconds
    install_seconds=$((SECONDS - start)))
}

# Binds the source tree read-only at ROOT/src for one run.
tp_matrix_bind_source() { # <root>
  mkdir -p "$1/src"
  mountpoint -q "$1/src" && umount "$1/src"
  mount --bind "$TP_ROOT" "$1/src" && mount -o remount,bind,ro "$1/src" ||
    tp_die $TP_EXIT_ENV "matrix: cannot bind $TP_ROOT to $1/src"
}

tp_matrix_umount_all() { # <root>
  local mnt
  for mnt in src proc; do
    mountpoint -q "$1/$mnt" 2>/dev/null && umount "$1/$mnt"
  done
  return 0
}
