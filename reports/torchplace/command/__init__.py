"""The torchplace command (`python3 -m torchplace`, `ci/torchplace`, the installed `torchplace`):
one front door over the suite's binaries, CMake, CTest and the package's tools.

  cli       the usage text and the dispatch to one module a subcommand
  common    exit codes as errors, logging, the tree, the build, the run record, Python lookup
  run       `run`: build, the scenario cells, the benchmarks, the report (and, with --gpu and
            --budget-s, the GPU machine's steps under a time budget)
  steps     the budgeted step runner `run` uses: steps.txt, not_run.txt, run.tar.gz
  tools     `report`, `gate`, `explain`: they exec the subpackage's own entry point
  build     `test` and `mutate`: CMake, CTest and torchplace.mutation
  matrix    `matrix`: the columns (Debian roots through ci/matrix/*.sh) and their merge

Bash is left only for apt, debootstrap and chroot (ci/lib/common.sh tp_ensure_deps,
ci/matrix/roots.sh, columns.sh, build_and_run.sh), run as subprocesses.
"""
