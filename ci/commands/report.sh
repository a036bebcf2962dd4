# shellcheck shell=bash
# ci/torchplace report IN_DIR [--out DIR]: renders the report of a run folder from its saved JSON
# (results.json, or matrix.json for a version-matrix folder; bench.json optional), also JSON from another
# machine. Writes index.html, summary.md and the PNGs into DIR (default IN_DIR), each atomically;
# on bad input it writes nothing and exits 3.
cmd_report() {
  local in_dir="" out=""
  while (($#)); do
    case "$1" in
      --out) [[ $# -ge 2 ]] || tp_die $TP_EXIT_USAGE "report: --out needs a folder"; out=$2; shift ;;
      -*) tp_die $TP_EXIT_USAGE "report: unknown option '$1' (usage: ci/torchplace report IN_DIR [--out DIR])" ;;
      *) [[ -z "$in_dir" ]] || tp_die $TP_EXIT_USAGE "report: one IN_DIR only (got '$in_dir' and '$1')"
         in_dir=$1 ;;
    esac
    shift
  done
  [[ -n "$in_dir" ]] || tp_die $TP_EXIT_USAGE "report: usage: ci/torchplace report IN_DIR [--out DIR]"
  [[ -d "$in_dir" ]] || tp_die $TP_EXIT_ENV "report: $in_dir is not a folder"
  local python
  python=$(tp_require_python)
  # exec: a SIGTERM to the command reaches the report, which stops cleanly (exit 3)
  exec "$python" -m torchplace.report "$in_dir" --out "${out:-$in_dir}"
}
