# One column of the version matrix per LibTorch version: where it runs (host or root), and how
# the suite is built and run there (build_and_run.sh). Sourced by ci/matrix/column.sh (run by `ci/torchplace matrix`).
# shellcheck shell=bash

TP_MATRIX_BOUND_ROOTS=() # roots whose /src is bound for this run, released on exit

# "1.13.1,2.14.1" (commas or spaces) -> TP_MATRIX_CHOSEN, oldest first; an unknown one is exit 3.
# (Not a $(...) function: tp_die must stop the command itself, not a subshell.)
tp_matrix_parse_versions() { # <list>
  local requested=" ${1//,/ } " version
  TP_MATRIX_CHOSEN=()
  for version in $requested; do
    [[ -n "${TP_MATRIX_SUITES[$version]:-}" ]] ||
      tp_die $TP_EXIT_ENV "matrix: unknown LibTorch version '$version' (known: $TP_MATRIX_VERSIONS)"
  done
  for version in $TP_MATRIX_VERSIONS; do
    [[ "$requested" == *" $version "* ]] && TP_MATRIX_CHOSEN+=("$version")
  done
  ((${#TP_MATRIX_CHOSEN[@]})) || tp_die $TP_EXIT_USAGE "matrix: --versions is empty"
}

# The host serves 1.13.1 when it is Debian 12 with that libtorch-dev, unless told otherwise.
tp_matrix_on_host() { # <version>
  [[ "$1" == 1.13.1 && "${TORCHPLACE_MATRIX_NO_HOST:-0}" != 1 ]] || return 1
  grep -q 'VERSION_CODENAME=bookworm' /etc/os-release 2>/dev/null &&
    [[ "$(tp_matrix_libtorch_version "")" == 1.13.1[+-]* ]]
}

tp_matrix_root_label() { # <version>
  if tp_matrix_on_host "$1"; then echo "host-${TP_MATRIX_SUITES[$1]}"; else echo "${TP_MATRIX_SUITES[$1]}"; fi
}

# The column's status as the merge reads it from its run.json, for the log.
tp_matrix_column_status() { # <column dir>
  python3 -m torchplace.matrix.merge --status "$1" || echo "unknown (its run.json is unreadable)"
}

tp_matrix_release_sources() {
  local root
  for root in "${TP_MATRIX_BOUND_ROOTS[@]}"; do
    mountpoint -q "$root/src" && umount "$root/src"
  done
  TP_MATRIX_BOUND_ROOTS=()
}

# Builds and runs one version into OUT/<version>/. Root and install problems stop the whole
# matrix (exit 3, naming the version); a failing build or run is the column's result.
tp_matrix_column() { # <version> <out>
  local version=$1 column=$2/$1
  rm -rf "$column" && mkdir -p "$column" || tp_die $TP_EXIT_ENV "matrix: cannot create $column"
  if tp_matrix_on_host "$version"; then
    tp_log "matrix: LibTorch $version on the host"
    local start=$SECONDS
    tp_ensure_deps
    TP_MATRIX_PREPARED=(status=ok root_cached=1 root_seconds=0 install_seconds=$((SECONDS - start)))
    "$TP_ROOT/ci/matrix/build_and_run.sh" "$TP_ROOT" "$(tp_build_dir)" "$column"
    tp_record "$column/run.json" prepare "${TP_MATRIX_PREPARED[@]}" \
      "root=$(tp_matrix_root_label "$version")"
  else
    tp_matrix_column_in_root "$version" "$column" "${TP_MATRIX_SUITES[$version]}" main \
      "$TP_APT_PACKAGES" 0
  fi
  tp_log "matrix: LibTorch $version: $(tp_matrix_column_status "$column")"
}

# Prepares the cached root, checks that its libtorch-dev is <version>, and runs
# build_and_run.sh inside it on the read-only bound source tree.
tp_matrix_column_in_root() { # <version> <column dir> <suite> <components> <packages> <lenient>
  local version=$1 column=$2 suite=$3 components=$4 packages=$5 lenient=$6
  local root label=${column##*/} package=libtorch-dev
  root=$(tp_matrix_roots_dir)/$suite
  [[ "$components" == main ]] || { root+=-cuda; package=libtorch-cuda-dev; }
  tp_log "matrix: LibTorch $version in the $suite root $root"
  tp_matrix_prepare_root "$root" "$suite" "$packages" "$components" "$lenient"
  local found
  found=$(tp_matrix_libtorch_version "$root" "$package")
  [[ "$found" == "$version"[+-]* ]] ||
    tp_die $TP_EXIT_ENV "matrix: the $suite root has $package '${found:-none}', not $version"
  tp_matrix_bind_source "$root"
  TP_MATRIX_BOUND_ROOTS+=("$root")
  rm -rf "$root/out/$label"
  chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
    TP_MATRIX_COMPILE_ONLY="${TP_MATRIX_COMPILE_ONLY:-0}" \
    TP_MATRIX_CMAKE_ARGS="${TP_MATRIX_CMAKE_ARGS:-}" TP_MATRIX_TARGETS="${TP_MATRIX_TARGETS:-}" \
    /src/ci/matrix/build_and_run.sh /src "/build/torchplace-$label" "/out/$label"
  cp -a "$root/out/$label/." "$column/" || tp_die $TP_EXIT_ENV "matrix: cannot copy $root/out/$label"
  # The root's label travels with the column: a merge elsewhere (--merge-only) reads it here.
  tp_record "$column/run.json" prepare "${TP_MATRIX_PREPARED[@]}" "root=${root##*/}"
  tp_matrix_release_sources
}

# The compile-only CUDA cell (--cuda-compile) into OUT/cuda-2.6.0/: trixie with contrib and
# non-free. nvidia-cudnn's offline post-install fails, leaving libtorch-cuda-dev unpacked but
# complete; libtorch_cuda.so then needs the absent libcudnn.so.9 at link time, hence the linker
# flag, and no binary can start, hence test discovery at ctest time (PRE_TEST), not after linking.
# Only the targets whose sources hold CUDA code (TP_MATRIX_CUDA_TARGETS, with what they link): the
# sim's tests and tools have none, and the 2.14.1 column compiles them.
TP_MATRIX_CUDA_TARGETS="torchplace_harness_tests torchplace_scenarios torchplace_bench \
torchplace_transfer_tests torchplace_runner_probe"
tp_matrix_cuda_column() { # <out>
  local column=$1/cuda-2.6.0
  rm -rf "$column" && mkdir -p "$column" || tp_die $TP_EXIT_ENV "matrix: cannot create $column"
  TP_MATRIX_COMPILE_ONLY=1 TP_MATRIX_TARGETS="$TP_MATRIX_CUDA_TARGETS" \
    TP_MATRIX_CMAKE_ARGS="-DCMAKE_EXE_LINKER_FLAGS=-Wl,--unresolved-symbols=ignore-in-shared-libs \
-DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST" \
    tp_matrix_column_in_root 2.6.0 "$column" trixie "main contrib non-free" \
    "$TP_MATRIX_CUDA_PACKAGES" 1
  tp_log "matrix: CUDA compile-only cell: $(tp_matrix_column_status "$column")"
}
