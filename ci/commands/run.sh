# shellcheck shell=bash
# ci/torchplace run [--out DIR] [--suite BIN [--bench BIN]] [--no-install]: the main job.
# Without --suite: builds this repository (CMake preset "ci"), runs the scenario matrix on every
# device here, then the transfer benchmarks, then renders the report, all into DIR.
# With --suite: runs a suite built elsewhere (a user's own torchplace_add_suite executable; the
# only form the installed command offers), and --bench a benchmark suite, builds nothing.
#   DIR/results.json         one record per cell, with the fingerprint
#   DIR/scenarios-junit.xml  the same cells as JUnit
#   DIR/bench.json           the benchmarks (Google Benchmark JSON, every repetition kept)
#   DIR/run.json             what each step did: status, exit, seconds (torchplace.run/1)
#   DIR/index.html, DIR/summary.md, DIR/*.png   the report (python3 -m torchplace.report)
# These files from an earlier run into DIR are deleted first (other files in DIR are kept).
# Benchmarks: TORCHPLACE_BENCH_REPETITIONS (default 5) repetitions of TORCHPLACE_BENCH_MIN_TIME
# seconds (default 0.1; 0.1s works too, whatever the Google Benchmark) each: about 1.5 minutes on a
# 2-core CPU-only host; TORCHPLACE_BENCH_FILTER (a --benchmark_filter regex) runs only some.
readonly TP_RUN_USAGE="usage: torchplace run [--out DIR] [--suite BIN [--bench BIN]] [--no-install]"

cmd_run() {
  local out="$TP_ROOT/out" suite="" bench=""
  [[ -f "$TP_ROOT/CMakeLists.txt" ]] || out="$PWD/out"  # installed: never into the prefix
  while (($#)); do
    case "$1" in
      --out | --suite | --bench)
        [[ $# -ge 2 ]] || tp_die $TP_EXIT_USAGE "run: $1 needs a value ($TP_RUN_USAGE)"
        case "$1" in --out) out=$2 ;; --suite) suite=$2 ;; --bench) bench=$2 ;; esac
        shift ;;
      --no-install) export TORCHPLACE_NO_INSTALL=1 ;;
      *) tp_die $TP_EXIT_USAGE "run: unknown argument '$1' ($TP_RUN_USAGE)" ;;
    esac
    shift
  done
  [[ -z "$bench" || -n "$suite" ]] || tp_die $TP_EXIT_USAGE "run: --bench goes with --suite ($TP_RUN_USAGE)"
  [[ -n "$suite" || -f "$TP_ROOT/CMakeLists.txt" ]] || tp_die $TP_EXIT_USAGE \
    "run: the installed command runs your own suite: give --suite BIN ($TP_RUN_USAGE)"
  local binary
  for binary in "$suite" "$bench"; do
    [[ -z "$binary" ]] && continue
    [[ -x "$binary" && -f "$binary" ]] || tp_die $TP_EXIT_USAGE "run: '$binary' is not an executable file"
  done
  local repetitions=${TORCHPLACE_BENCH_REPETITIONS:-5} min_time=${TORCHPLACE_BENCH_MIN_TIME:-0.1}
  [[ "$repetitions" =~ ^[1-9][0-9]*$ ]] || tp_die $TP_EXIT_USAGE \
    "TORCHPLACE_BENCH_REPETITIONS must be a whole number >= 1, got '$repetitions'"
  [[ "$min_time" =~ ^[0-9]*\.?[0-9]+s?$ ]] || tp_die $TP_EXIT_USAGE \
    "TORCHPLACE_BENCH_MIN_TIME must be a number of seconds (0.1 or 0.1s), got '$min_time'"
  mkdir -p "$out" || tp_die $TP_EXIT_ENV "cannot create $out"
  out=$(cd "$out" && pwd)
  remove_earlier_output "$out"
  local record=$out/run.json start=$SECONDS
  if [[ -z "$suite" ]]; then
    tp_ensure_deps
    tp_build
    tp_record "$record" build status=ok seconds=$((SECONDS - start))
    suite="$(tp_build_dir)/scenarios/torchplace_scenarios"
    bench="$(tp_build_dir)/scenarios/torchplace_bench"
  fi
  local scenario_status=0 bench_status=0 report_status=0
  start=$SECONDS
  run_scenarios "$suite" "$out" || scenario_status=$?
  tp_record "$record" scenarios status="$(scenario_verdict "$out" "$TP_SCENARIOS_EXIT")" \
    exit="$TP_SCENARIOS_EXIT" seconds=$((SECONDS - start))
  if [[ -n "$bench" ]]; then
    start=$SECONDS
    run_benchmarks "$bench" "$out" "$repetitions" "$min_time" || bench_status=$?
    tp_record "$record" bench status="$( ((bench_status == 0)) && echo ran || echo failed)" \
      exit=$bench_status seconds=$((SECONDS - start))
  else
    tp_record "$record" bench status=absent
  fi
  render_report "$out" || report_status=$?
  tp_record "$record" report status="$( ((report_status == 0)) && echo ok || echo failed)"
  ((scenario_status == 0 && bench_status == 0 && report_status == 0)) && return $TP_EXIT_OK
  return $TP_EXIT_FAIL
}

# scenario_verdict <out dir> <exit>: the scenarios step's status in run.json. The suite's own
# verdicts are 0 (every cell passed) and 1 (a cell failed); any other exit is a crash.
scenario_verdict() {
  if [[ ! -f "$1/results.json" ]]; then echo no_results
  elif (($2 == 0)); then echo ok
  elif (($2 == 1)); then echo cells_failed
  else echo crashed
  fi
}

# run_scenarios <suite> <out dir>: every cell on every device here, into results.json. Sets
# TP_SCENARIOS_EXIT to the suite's own exit (a crash keeps its code, e.g. 139, for run.json).
run_scenarios() {
  local suite=$1 out=$2 status=0
  "$suite" --torchplace_results="$out/results.json" \
    --gtest_output="xml:$out/scenarios-junit.xml" || status=$?
  TP_SCENARIOS_EXIT=$status
  if [[ -f "$out/results.json" ]]; then
    tp_log "scenario results: $out/results.json"
    ((status == 0)) || tp_log "some scenario cells failed (exit $status); results.json lists them"
    return $status
  fi
  tp_log "the scenario binary (exit $status) did not write $out/results.json: no scenario results"
  return $TP_EXIT_FAIL
}

# remove_earlier_output <out dir>: deletes what an earlier run wrote there (only the names this
# job writes), so a crash or a failed step of this run never leaves an old file shown as current.
remove_earlier_output() {
  local out=$1 name
  local names="results.json scenarios-junit.xml bench.json bench.json.partial index.html summary.md
    run.json"
  for name in $names; do
    rm -f -- "${out:?}/$name" || tp_die $TP_EXIT_ENV "cannot remove the earlier $out/$name"
  done
  local png
  for png in "$out"/*.png; do # the report's figures; a literal '*.png' when there are none
    [[ -f "$png" ]] || continue
    rm -f -- "$png" || tp_die $TP_EXIT_ENV "cannot remove the earlier $png"
  done
}

# render_report <out dir>: index.html, summary.md and the PNGs from the JSON in <out dir>. A failure
# is logged and returned, never fatal: the results stay and the scenario status still counts.
# A host without matplotlib (a bare GPU runner) only logs: render there later from the JSON.
render_report() {
  local out=$1 python status=0
  if ! python=$(tp_python); then
    tp_log "no report here: no Python with matplotlib and scipy (apt-get install python3-matplotlib" \
      "python3-scipy); render it elsewhere from the JSON: ci/torchplace report $out"
    return 0
  fi
  "$python" -m torchplace.report "$out" >&2 || status=$?
  if ((status != 0)); then
    tp_log "report failed (exit $status); the results in $out are kept; rerun: ci/torchplace report $out"
  fi
  return $status
}

# run_benchmarks <bench suite> <out dir> <repetitions> <min time>: writes <out>/bench.json. Failed
# benchmarks (exit 1) are in it with their errors, for the report; a crash or output that is not
# JSON stays as bench.json.partial.
run_benchmarks() {
  local bench=$1 out=$2 repetitions=$3 min_time=$4 status=0 partial=$2/bench.json.partial
  "$bench" --benchmark_repetitions="$repetitions" \
    --benchmark_min_time="$min_time" --benchmark_out="$partial" --benchmark_out_format=json \
    ${TORCHPLACE_BENCH_FILTER:+"--benchmark_filter=$TORCHPLACE_BENCH_FILTER"} >&2 || status=$?
  if [[ ! -f "$partial" ]]; then
    tp_log "benchmarks failed (exit $status) before writing any output: no bench.json"
    return $TP_EXIT_FAIL
  fi
  if ((status != 0 && status != TP_EXIT_FAIL)) || ! is_json "$partial"; then
    tp_log "benchmarks failed (exit $status); partial output: $partial"
    return $TP_EXIT_FAIL
  fi
  mv -f "$partial" "$out/bench.json"
  tp_log "benchmark results: $out/bench.json ($repetitions repetitions)"
  ((status == 0)) || tp_log "some benchmarks failed (exit $status); bench.json lists their errors"
  return $status
}

is_json() { # <file>
  local python
  python=$(tp_python || command -v python3) || return 0 # nothing to check with: trust the exit code
  "$python" -m torchplace.bench_json is-json "$1"
}
