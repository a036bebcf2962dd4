"""Generated mutants (issue 26): standard operators applied to every line in scope (scope.py),
each tried in a scratch copy, rebuilt where C++, and run against only the tests that can kill it.

  python3 -m torchplace.mutation.generated [--lang cpp,py] [--only ID,...] [--files PATH,...]
      [--sample SEED --budget-s N] [--limit N] [--list | --check] [--scratch DIR] [--out FILE]

Mutant ids are `path:[function:]hash:operator:index` (operators_cpp.Mutant.id): no line number,
so an edit elsewhere in the file keeps them. reports/torchplace/mutation/equivalents lists the
ones that cannot be killed, each with a one-line reason; they are not run. --sample SEED orders
the rest by a hash of the seed and the id (CI: the commit hash, so every submission meets other
mutants); with --budget-s N no mutant starts that would end past N seconds by the longest of its
kind so far (the baseline counts). Python mutants run as pytests.py says: traced and cached
without a budget, every test of the kill set (each killer checked unmutated) with one.
C++ mutants without a budget share one build per file where they can (schema_runs.py).
The ledger (ledger.py) decides which survivors fail the run. --shard K/N runs one N-th of the
set; --from-records FILE,... --write-ledger FILE writes the ledger from the shards' --out files.
Each mutant ends: killed (a selected test failed), timeout (a test ran past its deadline: counted
as detected, listed apart), survived, build_failure (the mutant does not compile: proves
nothing, listed apart, never a kill), not_built (its line is in `#if NAME` and this build does
not define NAME, e.g. CUDA-only code on a CPU host: not run, listed apart, not judged), or
needs_cuda (the ledger records it killed_cuda, killed by a CUDA build's tests on a GPU, and this
host cannot run them: not run, listed apart, not judged), or needs_2x (the same for killed_2x,
killed by a LibTorch 2.x build's tests, on a 1.x build). A C++ kill on a CUDA build with a GPU
is recorded killed_cuda: such a run is for what a CPU build cannot judge (ci/gpu/mutants.sh);
one on a 2.x build (--in-tree a build configured against pip's torch) killed_2x. A ledger
entry `killed_fault NAME` is judged with the catalogue's fault NAME planted (faults.py); --faults
judges the chosen scenario files' untriaged survivors that way (--fault-names NAME,...: under
those faults only).

Exit codes: 0 no survivor the ledger did not expect; 1 one (named); 3 cannot
judge (the unmutated copy fails its kill tests, no mutant was tried, an equivalent names no
mutant, a crash of the tools); 4 the unmutated copy does not build; 64 bad arguments.
"""
import argparse
import functools
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set

from torchplace.mutation import ledger as records_file
from torchplace.mutation import faults, operators_cpp, operators_py, schema_runs, scope
from torchplace.mutation import scratch as scratch_module
from torchplace.mutation.ledger import check_equivalents, load_equivalents, load_ledger
from torchplace.mutation.operators_cpp import BRANCH, Mutant
from torchplace.mutation.run import CannotJudge
from torchplace.mutation.scratch import FIRST_GUESS_S, Scratch, baseline, is_cpp, log, try_mutant
from torchplace.schema import EXIT_BUILD, EXIT_ENV, EXIT_FAIL, EXIT_OK, EXIT_USAGE, ROOT


def generate(langs: Sequence[str] = ("cpp", "py"), files: Optional[Sequence[str]] = None) -> list:
    """Every mutant in scope, in file then line order."""
    mutants = []
    for lang, table, module in (
        ("cpp", scope.CPP, operators_cpp),
        ("py", scope.PYTHON, operators_py),
    ):
        if lang not in langs:
            continue
        for path in table:
            if files and path not in files:
                continue
            source = ROOT / path
            if not source.is_file():
                raise CannotJudge(EXIT_ENV, f"{path} is in scope.py but not in the tree")
            mutants += module.mutants_of(path, source.read_text())
    return mutants


def sample_order(mutants: list, seed: str) -> list:
    return sorted(mutants, key=lambda m: hashlib.sha256(f"{seed}:{m.id}".encode()).hexdigest())


def shard_of(mutants: list, shard: str) -> list:
    """--shard K/N: every N-th mutant of a fixed hash order, from the K-th (0-based); the N
    shards together hold each mutant once (the weekly job runs them side by side)."""
    index, _, count = shard.partition("/")
    if not (index.isdigit() and count.isdigit() and int(index) < int(count)):
        print(f"generated: --shard takes K/N with 0 <= K < N, not {shard!r}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    return sample_order(mutants, "shard")[int(index) :: int(count)]


def summarise(records: list, equivalents_count: int) -> dict:
    states = ("killed", "timeout", "survived", "untriaged", "unmeasured")
    # proves nothing either way here: listed, not judged
    apart = ("build_failure", "not_built", "needs_cuda", "needs_2x")
    counts = {key: 0 for key in states + apart}
    for record in records:
        counts[record["status"]] += 1
    judged = sum(counts[key] for key in states)
    detected = counts["killed"] + counts["timeout"]
    return {
        **counts,
        "tried": len(records),
        "judged": judged,
        "kill_ratio": (detected / judged) if judged else None,
        "equivalents_excluded": equivalents_count,
    }


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python3 -m torchplace.mutation.generated", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--lang", default="cpp,py", help="cpp, py or both (default)")
    parser.add_argument("--only", help="comma-separated mutant ids")
    parser.add_argument("--files", help="comma-separated paths in scope")
    parser.add_argument("--sample", help="seed: run in the order of a hash of seed and id")
    parser.add_argument("--budget-s", type=float, help="start no mutant after this many seconds")
    parser.add_argument("--limit", type=int, help="run at most this many mutants")
    parser.add_argument("--shard", metavar="K/N", help="run the K-th of N disjoint shards")
    parser.add_argument(
        "--from-records",
        metavar="FILE,...",
        help="with --write-ledger: write the ledger from these --out files; run nothing",
    )
    parser.add_argument(
        "--faults",
        action="store_true",
        help="judge the chosen scenario files' untriaged survivors under the catalogue's "
        "faults (faults.py); --write-ledger records the kills",
    )
    parser.add_argument(
        "--fault-names",
        metavar="NAME,...",
        help="with --faults: only these catalogue faults (a name it lacks is an error)",
    )
    parser.add_argument("--list", action="store_true", help="print the mutants and exit")
    parser.add_argument(
        "--check",
        action="store_true",
        help="generate, check the equivalents file, count; build nothing",
    )
    parser.add_argument("--scratch", default=str(ROOT / "build" / "mutate-generated"))
    parser.add_argument(
        "--in-tree",
        metavar="BUILD_DIR",
        help="mutate the checkout itself and rebuild in this configured build "
        "folder (CI: no scratch build); every file is restored after its "
        "mutant, and the checkout must hold no change to the files in scope",
    )
    parser.add_argument(
        "--tests",
        metavar="REGEX",
        help="Python mutants: only these CTest tests (to see one new test kill its mutant)",
    )
    parser.add_argument("--out", help="write every mutant's record here (JSON)")
    parser.add_argument(
        "--write-ledger", metavar="FILE", help="write every mutant's verdict (ledger.py) here"
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    try:
        args = parser.parse_args(argv)
    except SystemExit as error:
        sys.exit(EXIT_OK if error.code == 0 else EXIT_USAGE)
    langs = set(args.lang.split(","))
    if not langs or langs - {"cpp", "py"} or (args.budget_s is not None and args.budget_s <= 0):
        print(
            "generated: --lang takes cpp, py or cpp,py; --budget-s a positive number",
            file=sys.stderr,
        )
        sys.exit(EXIT_USAGE)
    if args.from_records and not args.write_ledger:
        print("generated: --from-records needs --write-ledger FILE", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    if args.shard and args.only:
        print("generated: --shard and --only exclude each other", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    if args.fault_names and not args.faults:
        print("generated: --fault-names needs --faults", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    args.langs = langs
    return args


def select(args: argparse.Namespace, mutants: list, equivalents: dict) -> list:
    if args.only:
        wanted = args.only.split(",")
        by_id = {mutant.id: mutant for mutant in mutants}
        unknown = [ident for ident in wanted if ident not in by_id]
        if unknown:
            print(f"generated: no such mutant: {', '.join(unknown)}", file=sys.stderr)
            sys.exit(EXIT_USAGE)
        return [by_id[ident] for ident in wanted]
    chosen = [mutant for mutant in mutants if mutant.id not in equivalents]
    if args.sample:
        chosen = sample_order(chosen, args.sample)
    if args.shard:
        chosen = shard_of(chosen, args.shard)
    return chosen[: args.limit] if args.limit else chosen


def not_built_record(mutant: Mutant) -> Dict[str, Any]:
    branch = "a branch" if mutant.needs == BRANCH else f"#if {mutant.needs}"
    detail = f"in {branch} this build does not compile (its preprocessor): its line is not built"
    return {"id": mutant.id, "old": mutant.old, "new": mutant.new, "status": "not_built"} | {
        "detail": detail
    }


@functools.lru_cache(maxsize=None)
def gpu_present() -> bool:
    """An NVIDIA GPU this host's driver lists (nvidia-smi -L): a CUDA build without one skips
    its CUDA tests, so its kills would not be CUDA's."""
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and "GPU" in done.stdout


def needs_cuda_record(mutant: Mutant) -> Dict[str, Any]:
    detail = "killed by a CUDA build's tests (ledger: killed_cuda); this build has no CUDA: not run"
    return {"id": mutant.id, "old": mutant.old, "new": mutant.new, "status": "needs_cuda"} | {
        "detail": detail
    }


def needs_2x_record(mutant: Mutant) -> Dict[str, Any]:
    detail = (
        "killed by a LibTorch 2.x build's tests (ledger: killed_2x); this build is 1.x: not run"
    )
    return {"id": mutant.id, "old": mutant.old, "new": mutant.new, "status": "needs_2x"} | {
        "detail": detail
    }


def untriaged_record(mutant: Mutant) -> Dict[str, Any]:
    detail = "a known survivor (ledger: untriaged), not run"
    return {"id": mutant.id, "old": mutant.old, "new": mutant.new, "status": "untriaged"} | {
        "detail": detail
    }


def cuda_judged(scratch: Scratch, binary: str) -> bool:
    """Whether this binary's mutants are judged with CUDA: built with it, and a GPU here."""
    return scratch.defines("TORCHPLACE_WITH_CUDA", binary) and gpu_present()


def skipped(scratch: Scratch, mutant: Mutant, known: bool, ledger: dict) -> Optional[dict]:
    """The record of a mutant this run does not try (a known survivor in a sample, one only a
    CUDA build kills, one in code this build does not compile), or None."""
    if known:
        return untriaged_record(mutant)
    binary = scope.CPP[mutant.path][0] if is_cpp(mutant) else ""
    # before not_built: kept
    if ledger.get(mutant.id) == "killed_cuda" and not (binary and cuda_judged(scratch, binary)):
        return needs_cuda_record(mutant)
    if ledger.get(mutant.id) == "killed_2x" and not (binary and scratch.libtorch_major() >= 2):
        return needs_2x_record(mutant)
    if mutant.needs and not scratch.compiles(mutant):
        return not_built_record(mutant)
    return None


def fault_of(ledger: dict, ident: str) -> str:
    """The fault a `killed_fault NAME` ledger entry names, else ""."""
    state, _, name = ledger.get(ident, "").partition(" ")
    return name if state == faults.STATE else ""


def fault_pass(args: argparse.Namespace, scratch: Scratch, chosen: list, ledger: dict) -> int:
    only = set(args.fault_names.split(",")) if args.fault_names else None
    done = faults.run_pass(scratch, chosen, ledger, args.out, only)
    if args.write_ledger:
        records_file.write_ledger(Path(args.write_ledger), done, ledger, generate())
    return EXIT_OK


def run(args: argparse.Namespace, chosen: list, equivalents: dict, ledger: dict) -> int:
    started = time.monotonic()
    # A CI step cancelled mid-mutant: the `finally` of try_mutant still restores the file.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(EXIT_ENV))
    in_tree = Path(args.in_tree).resolve() if args.in_tree else None
    lazy = args.budget_s is not None
    scratch = Scratch(Path(args.scratch).resolve(), args.jobs, in_tree, lazy)
    skip_known = bool(args.sample) and not args.only
    known = {ident for ident, state in ledger.items() if state == "untriaged"}
    baseline(scratch, [m for m in chosen if not (skip_known and m.id in known)])
    if args.faults:
        return fault_pass(args, scratch, chosen, ledger)
    records: List[Dict[str, Any]] = []
    guess, timed = dict(FIRST_GUESS_S), set()  # type: Dict[str, float], Set[str]
    unrun = {m.id: skipped(scratch, m, skip_known and m.id in known, ledger) for m in chosen}
    # a full measurement (no budget): a file's C++ mutants share one schema build where they can
    # (each file's schema is built when the loop reaches its first mutant: --out keeps it)
    under_fault = {m.id: fault for m in chosen if (fault := fault_of(ledger, m.id))}
    groups = schema_runs.by_file(
        [m for m in chosen if is_cpp(m) and unrun[m.id] is None and m.id not in under_fault]
    )
    schema_records: Dict[str, dict] = {}
    pending = deque(chosen)
    while pending:
        mutant = pending.popleft()
        kind = scope.CPP[mutant.path][0] if is_cpp(mutant) else "py"  # its binary, or py
        not_tried = unrun[mutant.id]
        if not_tried is not None:
            records.append(not_tried)
            continue
        cuda = kind != "py" and cuda_judged(scratch, kind)
        spent = time.monotonic() - started
        # --in-tree: once a C++ mutant ran, the restored checkout's binaries are rebuilt at the
        # end, about one mutant's rebuild each, which the budget keeps room for
        rebuilt = {k for k in timed | {kind} if k != "py"} if in_tree else set()
        restore = sum(guess[k] for k in rebuilt)
        if args.budget_s is not None and spent + guess[kind] + restore > args.budget_s:
            continue  # would end past the budget; a cheaper kind may still fit
        record = {"id": mutant.id, "old": mutant.old, "new": mutant.new}
        if not lazy and mutant.path in groups:
            judged = schema_runs.run_file(scratch, mutant.path, groups.pop(mutant.path))
            schema_records.update(judged)
            pending = schema_runs.judged_first(pending, judged)
        if mutant.id in under_fault:
            record.update(faults.try_under_fault(scratch, mutant, under_fault[mutant.id]))
        else:
            record.update(schema_records.get(mutant.id) or try_mutant(scratch, mutant))
        if cuda:  # a kill here may need CUDA's tests: the ledger says killed_cuda
            record["cuda"] = True
        if kind != "py" and scratch.libtorch_major() >= 2:  # the ledger says killed_2x
            record["torch2"] = True
        if "seconds" in record:  # the longest of its kind so far replaces the first guess
            guess[kind] = (
                max(guess[kind], record["seconds"]) if kind in timed else record["seconds"]
            )
            timed.add(kind)
        if record["status"] == "survived" and ledger.get(mutant.id) in ("untriaged", "unrun"):
            record["status"] = "untriaged" if mutant.id in known else "unmeasured"
        records.append(record)
        print(f"{record['id']}: {record['status']} ({record['detail'][:160]!r})", flush=True)
        if args.out:  # after each mutant: a run stopped midway keeps what it measured
            partial = {"summary": summarise(records, len(equivalents)), "mutants": records}
            Path(args.out).write_text(json.dumps(partial, indent=1))
    if args.budget_s is not None:
        log(f"budget of {args.budget_s:.0f} s: {len(chosen) - len(records)} mutant(s) not tried")
    ran = {r["id"] for r in records if "seconds" in r}
    binaries = {scope.CPP[m.path][0] for m in chosen if is_cpp(m) and m.id in ran}
    if in_tree and binaries:
        ok, output = scratch.build(binaries)  # the restored sources' binaries, not the mutants'
        if not ok:
            raise CannotJudge(EXIT_BUILD, "the restored checkout does not build:\n" + output)
    summary = summarise(records, len(equivalents))
    summary["seconds"] = round(time.monotonic() - started, 1)
    if args.out:
        Path(args.out).write_text(json.dumps({"summary": summary, "mutants": records}, indent=1))
    log(f"summary: {json.dumps(summary)}")
    if args.write_ledger:
        records_file.write_ledger(Path(args.write_ledger), records, ledger, generate())
    if not summary["judged"] - summary["untriaged"]:
        print("generated: cannot judge: no mutant was tried to the end", file=sys.stderr)
        return EXIT_ENV
    if summary["untriaged"] or summary["unmeasured"]:
        log(
            f"{summary['untriaged']} known untriaged survivor(s) and {summary['unmeasured']} "
            f"never measured before (reports/torchplace/mutation/ledger), counted as survived "
            f"in the kill ratio, not failures: "
            + ", ".join(r["id"] for r in records if r["status"] in ("untriaged", "unmeasured"))
        )
    survivors = [record["id"] for record in records if record["status"] == "survived"]
    if survivors:
        print(
            f"generated: {len(survivors)} mutant(s) survived (kill each with a test, or record "
            f"it in reports/torchplace/mutation/equivalents with a reason): "
            f"{', '.join(survivors)}",
            file=sys.stderr,
        )
        return EXIT_FAIL
    return EXIT_OK


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    scratch_module.TESTS_OVERRIDE = args.tests
    try:
        mutants = generate(args.langs, args.files.split(",") if args.files else None)
        equivalents = load_equivalents()
        everything = generate()
        check_equivalents(everything, equivalents)
        ledger = load_ledger()
        stale = sorted(set(ledger) - {mutant.id for mutant in everything})
        if stale:  # its line changed: the new mutant there is judged afresh
            log(f"{len(stale)} ledger id(s) name no mutant now (--write-ledger): {stale[:5]}")
        chosen = select(args, mutants, equivalents)
        if args.from_records:  # the shards' records, merged into one ledger; nothing run
            done = records_file.records_of(args.from_records.split(","))
            records_file.write_ledger(Path(args.write_ledger), done, ledger, everything)
            log(f"{len(done)} record(s) written into {args.write_ledger}")
            return EXIT_OK
        if args.check and args.write_ledger:  # after a merge: new ids unrun, the rest kept
            records_file.write_ledger(Path(args.write_ledger), [], ledger, everything)
        if args.list or args.check:
            for mutant in chosen if args.list else []:
                print(f"{mutant.id}\t{mutant.old.strip()[:60]!r} -> {mutant.new.strip()[:60]!r}")
            log(
                f"{len(mutants)} mutant(s) generated, {len(equivalents)} recorded equivalent, "
                f"{len(chosen)} selected"
            )
            return EXIT_OK
        return run(args, chosen, equivalents, ledger)
    except CannotJudge as error:
        print(f"generated: cannot judge: {error}", file=sys.stderr)
        return error.code


if __name__ == "__main__":
    sys.exit(main())
