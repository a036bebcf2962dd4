"""torchplace's Python: one package, imported with reports/ on PYTHONPATH (ci/lib/common.sh and
CTest set it). See reports/README.md for the layout and the `python3 -m` entry points.

  schema        the exit codes and the readers of the suite's JSON (every module uses these)
  report        the HTML/Markdown report (the only part that imports matplotlib)
  gate          the regression gate (behaviour and speed); matrix: the version matrix
  mutation      the mutation check; apt_log, bench_json, sim_verdicts, torch_info: small tools
"""
