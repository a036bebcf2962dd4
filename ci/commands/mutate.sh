# shellcheck shell=bash
# ci/torchplace mutate [--only NAME,...] [--list] [--no-install]: the mutation check
# (ci/mutation/README.md). Breaks each fix in turn in a scratch copy (build/mutate/), rebuilds
# only what the mutation touches, and expects its CPU tests to fail. Exits 1 naming any mutation
# that survived, 3 when it cannot judge, 4 when the unmutated copy does not build.
cmd_mutate() {
  local args=()
  while (($#)); do
    case "$1" in
      --no-install) export TORCHPLACE_NO_INSTALL=1 ;;
      --list) args+=(--list) ;;
      --only)
        (($# >= 2)) || tp_die $TP_EXIT_USAGE "mutate: --only needs a comma-separated list of names"
        args+=(--only "$2")
        shift
        ;;
      *) tp_die $TP_EXIT_USAGE "mutate: unknown argument '$1' (usage: ci/torchplace mutate [--only NAME,...] [--list] [--no-install])" ;;
    esac
    shift
  done
  tp_ensure_deps
  command -v python3 >/dev/null || tp_die $TP_EXIT_ENV "mutate: needs python3"
  local status=0
  python3 -m torchplace.mutation "${args[@]}" || status=$?
  return "$status"
}
