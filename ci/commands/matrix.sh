# shellcheck shell=bash
# ci/torchplace matrix [--versions LIST] [--out DIR] [--roots DIR] [--gate] [--fresh]
#                      [--bookworm-root] [--cuda-compile] [--columns-only | --merge-only]
# The LibTorch version matrix: builds and runs the suite (scenarios and a short benchmark pass)
# against each LibTorch version, each in its own cached Debian root (1.13.1 on the host when the
# host is Debian 12 with libtorch-dev 1.13.1), then merges the columns into DIR/matrix.json and
# DIR/matrix.md and renders the report. Columns land in DIR/<version>/.
#   --gate           exit 2 when a cell that passed on an older version fails on a newer one
#                    (any cell: a fix that stops working, an expected error no longer raised),
#                    or when a version that built and ran on the older one does not on the newer
#                    (every behaviour change is printed, and written to DIR/matrix-gate.json)
#   --fresh          recreate the roots (a from-nothing run, as on a fresh CI machine)
#   --bookworm-root  run 1.13.1 in a bookworm root even on a suitable host
#   --cuda-compile   add the compile-only CUDA cell: trixie + libtorch-cuda-dev 2.6.0 +
#                    nvidia-cuda-toolkit (~10 GiB root), built and linked, never run
#   --columns-only   make the columns into DIR/<version>/ and stop (no merge, no gate): one job of
#                    a fanned-out matrix; each column's run.json records its root (prepare.root)
#   --cuda-only      with --columns-only: make only the compile-only CUDA column (DIR/cuda-2.6.0/)
#   --merge-only     make nothing: merge (and --gate) the columns already in DIR/<version>/, made
#                    elsewhere; needs no root. An expected column that is missing or unreadable
#                    (with --cuda-compile, DIR/cuda-2.6.0 too) is exit 3, naming it
# Roots live in /var/cache/torchplace/roots (TORCHPLACE_ROOTS or --roots); the mirror is the host's
# (/etc/apt/sources.list.d/debian.sources) unless TORCHPLACE_MIRROR is set.
# Exit: 0 all columns built, ran and passed; 1 a column failed to build or run (its scenario
# binary crashed, exited with neither 0 nor 1, or left out cells another column has), or a cell
# failed; 2 --gate found a regression (including any such column, and a cell failing on every
# version); 3 unknown version, unreachable mirror, no root; 64 bad arguments.

# shellcheck source=../matrix/roots.sh
source "$TP_ROOT/ci/matrix/roots.sh"
# shellcheck source=../matrix/columns.sh
source "$TP_ROOT/ci/matrix/columns.sh"

cmd_matrix() {
  local versions="${TP_MATRIX_VERSIONS// /,}" out="$TP_ROOT/out/matrix" gate=0 cuda=0 mode=all cuda_only=0
  while (($#)); do
    case "$1" in
      --versions) [[ $# -ge 2 ]] || tp_die $TP_EXIT_USAGE "matrix: --versions needs a list, e.g. 1.13.1,2.14.1"
        versions=$2; shift ;;
      --out) [[ $# -ge 2 ]] || tp_die $TP_EXIT_USAGE "matrix: --out needs a folder"; out=$2; shift ;;
      --roots) [[ $# -ge 2 ]] || tp_die $TP_EXIT_USAGE "matrix: --roots needs a folder"
        export TORCHPLACE_ROOTS=$2; shift ;;
      --gate) gate=1 ;;
      --fresh) export TORCHPLACE_MATRIX_FRESH=1 ;;
      --bookworm-root) export TORCHPLACE_MATRIX_NO_HOST=1 ;;
      --cuda-compile) cuda=1 ;;
      --cuda-only) cuda=1 cuda_only=1 ;;
      --columns-only | --merge-only)
        [[ $mode == all ]] || tp_die $TP_EXIT_USAGE "matrix: --columns-only and --merge-only exclude each other"
        mode=${1#--} ;;
      *) tp_die $TP_EXIT_USAGE "matrix: unknown argument '$1' (see the top of ci/commands/matrix.sh)" ;;
    esac
    shift
  done
  tp_matrix_parse_versions "$versions"
  ((cuda_only == 0)) || [[ $mode == columns-only ]] ||
    tp_die $TP_EXIT_USAGE "matrix: --cuda-only goes with --columns-only"
  if [[ $mode == merge-only ]]; then
    [[ -d "$out" ]] || tp_die $TP_EXIT_ENV "matrix: --merge-only: no columns folder $out"
    local flags=()
    ((cuda)) && flags=(--require-cuda-compile)
    tp_matrix_finish "$(cd "$out" && pwd)" "$gate" "${TP_MATRIX_CHOSEN[@]}" "${flags[@]}"
    return
  fi
  [[ $(id -u) == 0 ]] || tp_die $TP_EXIT_ENV "matrix: needs root (debootstrap, chroot, mount)"
  mkdir -p "$out" || tp_die $TP_EXIT_ENV "matrix: cannot create $out"
  out=$(cd "$out" && pwd)
  trap tp_matrix_release_sources EXIT

  local version pairs=()
  ((cuda_only)) && TP_MATRIX_CHOSEN=()
  for version in "${TP_MATRIX_CHOSEN[@]}"; do
    tp_matrix_column "$version" "$out"
    pairs+=("$version=$(tp_matrix_root_label "$version")")
  done
  ((cuda)) && tp_matrix_cuda_column "$out"
  if [[ $mode == columns-only ]]; then
    tp_log "matrix: columns made in $out (merge them with --merge-only)"
    return 0
  fi
  tp_matrix_finish "$out" "$gate" "${pairs[@]}"
}

# Merges, renders the report (when ci/torchplace report exists), gates; returns the exit code.
tp_matrix_finish() { # <out> <gate 0|1> <version=root | version (root from its run.json)>...
  local out=$1 gate=$2 python
  shift 2
  python=$(tp_python || command -v python3) || tp_die $TP_EXIT_ENV "matrix: no python3 to merge the columns"
  "$python" -m torchplace.matrix.merge "$out" "$@" || tp_die $TP_EXIT_ENV "matrix: merging the columns failed (a column missing or unreadable: see above)"
  tp_log "matrix: $out/matrix.json and $out/matrix.md"
  if [[ -f "$TP_ROOT/ci/commands/report.sh" ]]; then
    "$TP_ROOT/ci/torchplace" report "$out" || tp_log "matrix: the report could not be rendered (exit $?)"
  else
    tp_log "matrix: ci/torchplace report is absent here: no report rendered"
  fi
  if ((gate)); then
    local gate_status=0
    "$python" -m torchplace.matrix.gate "$out/matrix.json" --out "$out/matrix-gate.json" || gate_status=$?
    ((gate_status == 0)) || return "$gate_status"
  fi
  # Columns that did not build or run, a CUDA compile that failed, failed cells: one line each.
  "$python" -m torchplace.matrix.status "$out/matrix.json"
}
