"""A real run's records (reports/reference/) as a test's results.json, its expectations refreshed
from it in a temp folder: the base of the tests that edit one cell and read the gate's verdict
(test_notes.py, test_metrics.py, test_stated.py)."""
import json
import shutil
import tempfile
import unittest
from pathlib import Path

from torchplace.gate import behaviour

REFERENCE = Path(__file__).parents[3] / "reports/reference/debian12-libtorch1.13.1"


class RecordedRun(unittest.TestCase):
    RECORD = ""  # a file name in REFERENCE

    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.dir)
        self.run_doc = json.loads((REFERENCE / self.RECORD).read_text())
        self.expectations = self.dir / "expectations.json"
        self.refresh()

    def write_run(self) -> None:
        (self.dir / "results.json").write_text(json.dumps(self.run_doc))

    def refresh(self) -> None:
        """The expectations rewritten from the run as it stands."""
        self.write_run()
        behaviour.refresh(str(self.dir / "results.json"), str(self.expectations))

    def cell(self, cell_id: str) -> dict:
        return next(c for c in self.run_doc["cells"] if c["id"] == cell_id)

    def regressions(self) -> list:
        """(id, kind, detail) of each regression the gate finds in the run as it stands."""
        self.write_run()
        section = behaviour.compare(str(self.dir / "results.json"), str(self.expectations))
        return [(r["id"], r["kind"], r["detail"]) for r in section["regressions"]]

    def committed(self) -> dict:
        return json.loads(self.expectations.read_text())
