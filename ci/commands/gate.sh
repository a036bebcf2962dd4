# ci/torchplace gate: the CI regression gate (python3 -m torchplace.gate; its data in ci/gate/).
# Behaviour, speed, or both, one verdict.
#   gate --results RUN_DIR                         behaviour: RUN_DIR/results.json vs the committed
#                                                  expectations (ci/gate/expectations.json)
#   gate --baseline BASE.json --candidate CAND.json   speed: two saved Google Benchmark runs
#   gate --ab BASE_REF [--rounds N] [--batch K] [--filter REGEX] [--min-time S]
#                                                  speed, A/B on this machine: builds BASE_REF (a git
#                                                  worktree) and this tree, runs both torchplace_bench
#                                                  binaries interleaved, then compares
#   gate --refresh-expectations RUN_DIR            rewrite the committed expectations from a run
# Options: --out DIR (summary.md, gate.json, and the A/B runs), --policy FILE, --expectations FILE.
# Exit codes (the gate's own, not TP_EXIT_*): 0 pass, 1 speed regression, 2 behaviour regression,
# 3 bad input, usage or tool error.
# shellcheck shell=bash
readonly TP_GATE_INPUT=3

gate_usage() { sed -n '1,13s/^# \{0,1\}//p' "$TP_ROOT/ci/commands/gate.sh"; }

cmd_gate() {
  local ab_ref="" out="" ab_opts=() gate_opts=()
  while (($#)); do
    case "$1" in
      -h | --help) gate_usage; return 0 ;;
      --ab | --out | --rounds | --batch | --filter | --min-time)
        [[ $# -ge 2 ]] || tp_die $TP_GATE_INPUT "gate: $1 needs a value (see ci/torchplace gate --help)"
        case "$1" in
          --ab) ab_ref=$2 ;;
          --out) out=$2 ;;
          *) ab_opts+=("$1" "$2") ;;
        esac
        shift ;;
      --no-install) export TORCHPLACE_NO_INSTALL=1 ;;
      *) gate_opts+=("$1") ;;
    esac
    shift
  done
  if [[ ! -f "$TP_ROOT/CMakeLists.txt" ]]; then  # the installed command: no source tree
    [[ -z "$ab_ref" ]] || tp_die $TP_GATE_INPUT "gate --ab builds two commits of the torchplace source tree; the installed command cannot"
    if [[ " ${gate_opts[*]} " =~ \ --(results|refresh-expectations)\  && " ${gate_opts[*]} " != *" --expectations "* ]]; then
      tp_die $TP_GATE_INPUT "gate: give --expectations FILE (your project's own; the installed command has none)"
    fi
  fi
  local python speed=0
  [[ -n "$ab_ref" || " ${gate_opts[*]} " == *" --baseline "* ]] && speed=1
  python=$(gate_python "$speed") || tp_die $TP_GATE_INPUT \
    "gate: no Python 3 with scipy found (the speed gate needs it); apt-get install python3-scipy (or set TORCHPLACE_PYTHON)"
  if [[ -n "$ab_ref" ]]; then
    out=${out:-$TP_ROOT/out/gate}
    gate_ab "$ab_ref" "$out" "$python" "${ab_opts[@]}"
    gate_opts+=(--baseline "$out/ab-baseline.json" --candidate "$out/ab-candidate.json")
  elif ((${#ab_opts[@]})); then
    tp_die $TP_GATE_INPUT "gate: ${ab_opts[0]} applies to --ab only"
  fi
  [[ -n "$out" ]] && gate_opts+=(--out "$out")
  # exec: a SIGTERM to `ci/torchplace gate` reaches the gate itself, which exits cleanly (exit 3,
  # its verdict saying so); no orphan goes on to write a verdict after the command is gone. The
  # A/B scratch worktree is removed first, as the EXIT trap would have.
  if [[ -n "$ab_ref" ]]; then
    gate_ab_cleanup
    trap - EXIT
  fi
  exec "$python" -m torchplace.gate "${gate_opts[@]}"
}

# gate_python <needs scipy: 0|1>: the speed gate needs scipy, the behaviour gate only the
# standard library (a bare GPU runner can still gate behaviour); either needs a Python 3 that
# runs torchplace.
gate_python() {
  local candidate needs=()
  (($1)) && needs=(scipy)
  for candidate in "${TORCHPLACE_PYTHON:-}" /usr/bin/python3 python3; do
    [[ -n "$candidate" ]] && command -v "$candidate" >/dev/null || continue
    if "$candidate" -m torchplace.requires "${needs[@]}" 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

# gate_ab <base ref> <out dir> <python> [interleave options]: builds both sides, runs them
# interleaved, writes OUT/ab-baseline.json and OUT/ab-candidate.json. Any failure is exit 3.
gate_ab() {
  local ref=$1 out=$2 python=$3
  shift 3
  git -C "$TP_ROOT" rev-parse --verify --quiet "$ref^{commit}" >/dev/null || tp_die $TP_GATE_INPUT \
    "gate --ab: '$ref' is not a commit here (a shallow CI clone needs fetch-depth: 0)"
  mkdir -p "$out" || tp_die $TP_GATE_INPUT "gate: cannot create $out"
  GATE_SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/torchplace-ab.XXXXXX")
  trap gate_ab_cleanup EXIT
  git -C "$TP_ROOT" worktree add --detach "$GATE_SCRATCH/base" "$ref" >&2 ||
    tp_die $TP_GATE_INPUT "gate --ab: git worktree add failed for $ref"
  tp_ensure_deps
  tp_log "building the baseline ($ref) in $GATE_SCRATCH/build"
  TORCHPLACE_BUILD_DIR="$GATE_SCRATCH/build" bash -c 'source "$1/ci/lib/common.sh" && tp_build' \
    _ "$GATE_SCRATCH/base" || tp_die $TP_GATE_INPUT "gate --ab: the baseline ($ref) does not build"
  tp_log "building the candidate (this tree) in $(tp_build_dir)"
  (tp_build) || tp_die $TP_GATE_INPUT "gate --ab: the candidate does not build"
  local base_bin="$GATE_SCRATCH/build/scenarios/torchplace_bench" cand_bin
  cand_bin="$(tp_build_dir)/scenarios/torchplace_bench"
  [[ -x "$base_bin" ]] || tp_die $TP_GATE_INPUT "gate --ab: $ref has no torchplace_bench to compare"
  [[ -x "$cand_bin" ]] || tp_die $TP_GATE_INPUT "gate --ab: this tree built no torchplace_bench"
  "$python" -m torchplace.gate.interleave --baseline-bin "$base_bin" --candidate-bin "$cand_bin" \
    --out-baseline "$out/ab-baseline.json" --out-candidate "$out/ab-candidate.json" "$@" ||
    tp_die $TP_GATE_INPUT "gate --ab: running the benchmarks failed"
}

gate_ab_cleanup() {
  [[ -n "${GATE_SCRATCH:-}" ]] || return 0
  git -C "$TP_ROOT" worktree remove --force "$GATE_SCRATCH/base" 2>/dev/null || true
  rm -rf "$GATE_SCRATCH"
}
