"""The usage text and the dispatch: `python3 -m torchplace COMMAND [options]`."""

import sys
from typing import Callable, Dict, List

from torchplace import schema
from torchplace.command import common

USAGE = """\
usage: ci/torchplace <command> [options]

commands:
  run [--out DIR] [--no-install]   build, run every scenario on every device here, run the
                                   transfer benchmarks, write results and the report to DIR
                                   (default: out/)
  run --suite BIN [--bench BIN] [--out DIR]
                                   the same for a suite built elsewhere (your own project's
                                   torchplace_add_suite executables); builds nothing
  run --gpu [--budget-s N] [--out DIR]
                                   the GPU machine's run (ci/gpu/README.md): installs nothing,
                                   adds CTest's cuda label, the message probe and the rest of
                                   CTest, then the behaviour gate; with --budget-s (any run),
                                   each step under what is left of N seconds (exit 5 when cut)
  test [--no-install]              build and run the CTest suite
  gate [--results DIR] [--baseline B.json --candidate C.json | --ab REF] [--out DIR]
                                   the CI regression gate (ci/torchplace gate --help); exits
                                   0 pass, 1 speed, 2 behaviour regression, 3 bad input
  report IN_DIR [--out DIR]        re-render index.html, summary.md and the plots from saved
                                   JSON (a run folder, also one copied back from a GPU machine)
  explain [--json] [FILE | -]      which LibTorch errors a message or a log holds: class,
                                   message family and versions, what it names, the scenario
                                   and fix that cover it; exits 0 all known, 1 one unknown,
                                   3 none found
  conformance [--torch VERSION] [--sweeps ops,modules,models,mixed] [--sample SEED]
              [--budget-s N] [--out DIR]
                                   the sim judged by PyTorch's op_db and module_db, torchvision's
                                   models and the mixed-placement rules, this build's sim on the
                                   host's torch, or pip's torch==VERSION with the package
                                   installed; exits 0 all agree or listed, 1 a new difference,
                                   3 nothing judged (harness/sim/CONFORMANCE.md)
  matrix [--versions LIST] [--gate] [--out DIR]
                                   build and run the suite against each LibTorch version
                                   (1.13.1 host, 2.6.0 trixie root, 2.14.1 sid root), merged
  matrix --columns-only | --merge-only [--gate] --versions LIST --out DIR
                                   fanned out: make columns alone; merge columns made
                                   elsewhere (a missing column is exit 3; ci/matrix/README.md)
  mutate [--only NAME,...] [--list]
                                   the mutation check: breaks each fix in a scratch copy and
                                   expects a CPU test to fail (ci/mutation/README.md); exits
                                   1 naming a mutation that survived
  mutate --generated [--sample SEED] [--budget-s N] [--lang cpp,py] [--out FILE]
                                   the generated mutants (every operator on every line in
                                   scope), all or a sample ordered by SEED within N seconds
  help                             this text

Environment: Torch_DIR or CMAKE_PREFIX_PATH point at another LibTorch; TORCHPLACE_NO_INSTALL=1
never installs; TORCHPLACE_BUILD_DIR picks the build folder; TORCHPLACE_PYTHON picks the Python.
Exit codes: 0 ok, 1 a test or scenario failed, 2 a behaviour regression (gate, matrix --gate),
3 environment or input error, 4 build failed, 5 run --budget-s ran out, 64 bad arguments."""

# The installed command (bin/torchplace) has no source tree to build, test or mutate.
NEEDS_SOURCE_TREE = ("test", "matrix", "mutate", "conformance")


def commands() -> Dict[str, Callable[[List[str]], int]]:
    from torchplace.command import build, conformance, matrix, run, tools

    return {
        "run": run.command,
        "test": build.test,
        "gate": tools.gate,
        "report": tools.report,
        "explain": tools.explain,
        "conformance": conformance.command,
        "matrix": matrix.command,
        "mutate": build.mutate,
    }


def dispatch(argv: List[str]) -> int:
    if not argv:
        print(USAGE, file=sys.stderr)
        return schema.EXIT_USAGE
    name, args = argv[0], argv[1:]
    if name in ("help", "-h", "--help"):
        print(USAGE)
        return schema.EXIT_OK
    table = commands()
    if name not in table:
        print(USAGE, file=sys.stderr)
        common.die(schema.EXIT_USAGE, f"unknown command '{name}'")
    if name in NEEDS_SOURCE_TREE and not common.is_source_tree():
        common.die(
            schema.EXIT_USAGE,
            f"'{name}' needs the torchplace source tree; the installed command offers run "
            "--suite, report, gate and explain",
        )
    return table[name](args)


def console() -> int:
    """The installed `torchplace` script (pyproject.toml)."""
    return main(sys.argv[1:])


def main(argv: List[str]) -> int:
    """Runs one command; its errors print "torchplace: ..." and exit with their code, and a
    SIGTERM stops it cleanly (its children first) with exit 3."""
    common.export_pythonpath()
    schema.exit_cleanly_on_sigterm()
    try:
        return dispatch(list(argv))
    except common.Exit as error:
        if error.message:
            print(f"torchplace: {error.message}", file=sys.stderr)
        return error.code
    except schema.Terminated as error:
        print(f"torchplace: {error}; the command stopped its children and exits 3", file=sys.stderr)
        return schema.EXIT_ENV
    except KeyboardInterrupt:
        print("torchplace: interrupted", file=sys.stderr)
        return schema.EXIT_ENV
    except BrokenPipeError:  # the reader went away (`| head`): nothing more to say to it
        schema.to_devnull(sys.stdout)
        return schema.EXIT_FAIL
