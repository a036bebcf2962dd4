# ci/torchplace run [--out DIR] [--no-install]: the main job. Builds, runs the scenario matrix on
# every device here, then the transfer benchmarks, then renders the report, all into DIR.
#   DIR/results.json         one record per cell, with the fingerprint
#   DIR/scenarios-junit.xml  the same cells as JUnit
cmd_run() {
  local out="$TP_ROOT/out"
  while (($#)); do
    case "$1" in
      --out) [[ $# -ge 2 ]] || tp_die $TP_EXIT_USAGE "run: --out needs a folder"; out=$2; shift ;;
      --no-install) export TORCHPLACE_NO_INSTALL=1 ;;
      *) tp_die $TP_EXIT_USAGE "run: unknown argument '$1' (usage: ci/torchplace run [--out DIR] [--no-install])" ;;
    esac
    shift
  done
  tp_ensure_deps
  tp_build
  mkdir -p "$out" || tp_die $TP_EXIT_ENV "cannot create $out"
  out=$(cd "$out" && pwd)
  local build_dir scenario_status=0
  build_dir=$(tp_build_dir)
  "$build_dir/scenarios/torchplace_scenarios" --torchplace_results="$out/results.json" \
    --gtest_output="xml:$out/scenarios-junit.xml" || scenario_status=$?
  tp_log "scenario results: $out/results.json"
  ((scenario_status == 0)) || tp_log "some scenario cells failed (exit $scenario_status); results.json lists them"
  return $((scenario_status == 0 ? TP_EXIT_OK : TP_EXIT_FAIL))
}
