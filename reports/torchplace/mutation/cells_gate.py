"""The scenario cells a kill set ran, held to ci/gate/expectations.json as CTest's gate.own_cells
holds all of them (ci/gate/tests/test_own_cells.py): a mutant that changes a cell's transfer
counts, outcome, class or category, with every gtest check still passing, fails CTest, so it is
killed here too. Only the expected cells the run's gtest filter selects are compared."""
import fnmatch
import functools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, Optional

from torchplace.gate import behaviour
from torchplace.mutation.run import CannotJudge
from torchplace import schema
from torchplace.schema import EXIT_ENV, EXIT_INPUT, EXIT_OK, EXIT_REGRESSION, ROOT

BINARY = "torchplace_scenarios"  # the binary whose every test is a cell (its records: the gate)
ENV = "TORCHPLACE_RESULTS_DIR"  # where each cell's record goes (harness/internal/gtest_main.cpp)
GATE_TIMEOUT_S = 120


def gtest_name(cell_id: str) -> str:
    """A cell's gtest name from its id: "amp/variant=x/device=sim:0" -> "amp.variant=x/device=sim0"
    (one naming function in the harness; every committed id maps to a listed test)."""
    return cell_id.replace("/", ".", 1).replace(":", "")


def selects(pattern: str, name: str) -> bool:
    """gtest's --gtest_filter: positive patterns, then `-` and negative ones, each `:`-separated."""
    positive, _, negative = pattern.partition("-")
    chosen = any(fnmatch.fnmatchcase(name, p) for p in (positive or "*").split(":") if p)
    return chosen and not any(fnmatch.fnmatchcase(name, p) for p in negative.split(":") if p)


@functools.lru_cache(maxsize=None)
def committed(path: str) -> str:
    """The committed expectations' text, read once a process (a kill set runs per mutant)."""
    return (ROOT / path).read_text()


def expected_for(pattern: str, path: str = behaviour.DEFAULT_EXPECTATIONS) -> Dict:
    """The committed expectations, cut to the cells the filter selects."""
    document = json.loads(committed(path))
    cells = document["cells"]
    document["cells"] = {k: v for k, v in cells.items() if selects(pattern, gtest_name(k))}
    return document


def judge(cells_dir: Path, pattern: str) -> Optional[str]:
    """None where the cells pass the behaviour gate, else why not (a kill). The committed
    expectations passed unmutated (the engine's baseline), so records the gate cannot read are
    the mutant's, and fail CTest's gate.own_cells as well: a kill. A gate that fails otherwise
    (its process) cannot judge: an error, never a kill."""
    try:
        document = schema.merge_results(cells_dir)
    except schema.InputError as error:
        return f"gate.own_cells: a cell record the gate cannot read: {error}"[:400]
    expected = expected_for(pattern)
    if not expected["cells"]:
        raise CannotJudge(EXIT_ENV, f"--gtest_filter={pattern} selects no committed cell")
    with tempfile.TemporaryDirectory() as work:
        run_dir, expectations = Path(work, "run"), Path(work, "expectations.json")
        run_dir.mkdir()
        (run_dir / "results.json").write_text(json.dumps(document))
        expectations.write_text(json.dumps(expected))
        command = [sys.executable, "-m", "torchplace.gate", "--results", str(run_dir)]
        command += ["--expectations", str(expectations)]
        paths = [str(ROOT / "reports"), os.environ.get("PYTHONPATH", "")]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p))
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=GATE_TIMEOUT_S, cwd=ROOT, env=env
        )
    if done.returncode == EXIT_OK:
        return None
    if done.returncode == EXIT_REGRESSION:  # its table's first row: a cell and its regression
        rows = [line for line in done.stdout.splitlines() if line.startswith("| `")]
        return "gate.own_cells: " + (rows[0] if rows else done.stdout[:300])
    if done.returncode == EXIT_INPUT:  # the mutant's records, as above
        return "gate.own_cells: " + (done.stdout + done.stderr).strip()[-300:]
    raise CannotJudge(
        EXIT_ENV, f"the behaviour gate could not judge the cells: {done.stderr[-600:]}"
    )
