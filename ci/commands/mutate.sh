# shellcheck shell=bash
# ci/torchplace mutate [--only NAME,...] [--list] [--no-install]: the mutation check
# (ci/mutation/README.md). Breaks each fix in turn in a scratch copy (build/mutate/), rebuilds
# only what the mutation touches, and expects its CPU tests to fail. Exits 1 naming any mutation
# that survived, 3 when it cannot judge, 4 when the unmutated copy does not build.
# ci/torchplace mutate --generated [--sample SEED] [--budget-s N] [--lang cpp,py] [--out FILE]
#   [--only ID,...] [--list]: the generated mutants instead (python3 -m torchplace.mutation.generated,
#   scratch build/mutate-generated/): every one, or a sample ordered by SEED within N seconds.
cmd_mutate() {
  local args=() module=torchplace.mutation
  local usage="usage: ci/torchplace mutate [--only NAME,...] [--list] [--no-install] | --generated [--sample SEED] [--budget-s N] [--lang cpp,py] [--files PATH,...] [--limit N] [--out FILE] [--in-tree BUILD_DIR] [--only ID,...] [--tests REGEX] [--write-ledger FILE] [--list]"
  while (($#)); do
    case "$1" in
      --no-install) export TORCHPLACE_NO_INSTALL=1 ;;
      --list) args+=(--list) ;;
      --generated) module=torchplace.mutation.generated ;;
      --only | --sample | --budget-s | --lang | --out | --in-tree | --files | --limit | --tests | --write-ledger)
        (($# >= 2)) || tp_die $TP_EXIT_USAGE "mutate: $1 needs a value ($usage)"
        args+=("$1" "$2")
        shift
        ;;
      *) tp_die $TP_EXIT_USAGE "mutate: unknown argument '$1' ($usage)" ;;
    esac
    shift
  done
  tp_ensure_deps
  command -v python3 >/dev/null || tp_die $TP_EXIT_ENV "mutate: needs python3"
  local status=0
  python3 -m "$module" "${args[@]}" || status=$?
  return "$status"
}
