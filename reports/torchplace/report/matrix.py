"""The scenario outcome matrix: rows are scenario + variant, columns are device (and version).

Each cell falls into one of the outcome categories of results.json ("category", labelled as in
torchplace.schema.CATEGORIES; "failed" is shown as "unexpected"), coloured the same in the PNG and
the page. Only the first three are evidence; the unexercised ones ran without proving anything.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Tuple

from torchplace import schema as data

EXPECTED_ERROR, PASSED, RACE_SHOWN = "expected error", "passed", "race shown"
UNEXERCISED = data.CATEGORIES["ran_unexercised"]
LATENT = data.CATEGORIES["latent_unexercised"]
RACE_NOT_SHOWN = "race not shown"
SKIPPED, UNEXPECTED = "skipped", "unexpected"
CATEGORIES = (
    EXPECTED_ERROR,
    PASSED,
    RACE_SHOWN,
    UNEXERCISED,
    LATENT,
    RACE_NOT_SHOWN,
    SKIPPED,
    UNEXPECTED,
)
BY_MACHINE_VALUE = {
    "expected_error": EXPECTED_ERROR,
    "passed": PASSED,
    "race_shown": RACE_SHOWN,
    "ran_unexercised": UNEXERCISED,
    "latent_unexercised": LATENT,
    "race_not_shown": RACE_NOT_SHOWN,
    "skipped": SKIPPED,
    "failed": UNEXPECTED,
    data.NOT_RUN: UNEXPECTED,
}
# Colour-blind-safe (Paul Tol's bright and light schemes): blue, green and cyan are evidence;
# sand and pale yellow ran without proving; purple is a race not shown; grey skipped; red failed.
COLOURS = {
    EXPECTED_ERROR: "#4477AA",
    PASSED: "#228833",
    RACE_SHOWN: "#66CCEE",
    UNEXERCISED: "#CCBB44",
    LATENT: "#EEDD88",
    RACE_NOT_SHOWN: "#AA3377",
    SKIPPED: "#BBBBBB",
    UNEXPECTED: "#EE6677",
}
SHORT = {UNEXERCISED: "ran, unexercised", LATENT: "latent, unexercised"}  # marks in the grid
LEGEND = {
    EXPECTED_ERROR: "the broken variant raised its expected error class (the mistake is caught)",
    PASSED: "ran and proved its claim: the fix works where the mistake shows, or a CPU check "
    "(dtype, save/load, the CUDA-tagged archive) that can fail here",
    RACE_SHOWN: "an unsynchronised control went wrong in at least one trial",
    UNEXERCISED: "a fix that ran where its mistake cannot show: it proves only that the code runs",
    LATENT: "a broken variant that ran as expected because its mistake cannot show on this device",
    RACE_NOT_SHOWN: "a race control that never went wrong, or a fixed variant whose copy was "
    "never in flight: not evidence",
    SKIPPED: "not run; the reason is on hover and in the footnotes",
    UNEXPECTED: "failed: the outcome or error class differs from the expectation",
}


@dataclass
class Cell:
    category: str
    detail: str  # the skip reason, the failure text or the error class: the hover text
    cell_id: str


@dataclass
class Grid:
    title: str
    rows: List[str]  # row labels, in first-seen order
    columns: List[str]
    cells: Dict[Tuple[str, str], Cell]  # (row, column) -> Cell

    def footnotes(self) -> Dict[str, int]:
        """Distinct skip reasons, numbered from 1: {reason: number}."""
        numbers: Dict[str, int] = {}
        for row in self.rows:
            for column in self.columns:
                cell = self.cells.get((row, column))
                if cell and cell.category == SKIPPED and cell.detail not in numbers:
                    numbers[cell.detail] = len(numbers) + 1
        return numbers

    def counts(self) -> Dict[str, int]:
        counts = dict.fromkeys(CATEGORIES, 0)
        for cell in self.cells.values():
            counts[cell.category] += 1
        return counts

    def evidence(self) -> Tuple[int, int]:
        """(cells that proved something, cells that ran): the headline of the page and summary."""
        counts = self.counts()
        proved = sum(counts[c] for c in (EXPECTED_ERROR, PASSED, RACE_SHOWN))
        return proved, proved + sum(counts[c] for c in (UNEXERCISED, LATENT, RACE_NOT_SHOWN))


def row_label(scenario: str, axes: Dict[str, str]) -> str:
    """'forgotten_labels · loss=nll · variant=broken' (the variant last)."""
    parts = [f"{key}={value}" for key, value in axes.items() if key != "variant"]
    if "variant" in axes:
        parts.append(f"variant={axes['variant']}")
    return " · ".join([scenario] + parts)


def categorise(category: str, status: str, detail: str, cell_id: str) -> Cell:
    """The grid cell of one machine category; the hover text says what it rests on."""
    label = BY_MACHINE_VALUE[category]
    if label == SKIPPED:
        return Cell(SKIPPED, detail or "skipped (no reason given)", cell_id)
    if label == UNEXPECTED:
        return Cell(UNEXPECTED, detail or f"status {status!r}", cell_id)
    return Cell(label, detail, cell_id)


def from_results(results: data.JsonObject) -> Grid:
    """The grid of one run: columns are the devices."""
    rows: List[str] = []
    columns: List[str] = []
    cells: Dict[Tuple[str, str], Cell] = {}
    for cell in results["cells"]:
        row, column = row_label(cell["scenario"], cell["axes"]), device_column(cell["device"])
        _add_unique(rows, row)
        _add_unique(columns, column)
        observed = cell["observed"]
        detail = (
            cell["reason"]
            or observed.get("error_class")
            or "; ".join([cell["expected"].get("note", "")] + cell.get("notes", [])).strip("; ")
        )
        cells[(row, column)] = categorise(cell["category"], cell["status"], detail, cell["id"])
    return Grid("Scenario outcomes, this run", rows, sorted(columns, key=_device_key), cells)


def from_version_matrix(matrix: data.JsonObject) -> Grid:
    """The grid across LibTorch versions: columns are 'version · device'."""
    versions = {v["version"]: v for v in matrix["versions"]}
    rows: List[str] = []
    cells: Dict[Tuple[str, str], Cell] = {}
    devices = sorted({device_column(cell["device"]) for cell in matrix["cells"]}, key=_device_key)
    columns = [f"{version} · {device}" for version in versions for device in devices]
    for cell in matrix["cells"]:
        row = row_label(cell["scenario"], cell["axes"])
        _add_unique(rows, row)
        for version, info in versions.items():
            column = f"{version} · {device_column(cell['device'])}"
            entry = cell["by_version"].get(version)
            if entry is None:
                reason = f"LibTorch {version}: {info['status']}"
                if info.get("first_error"):
                    reason += f" ({info['first_error']})"
                cells[(row, column)] = Cell(SKIPPED, reason, cell["id"])
                continue
            detail = entry.get("message") or entry.get("observed_class") or ""
            cells[(row, column)] = categorise(
                entry["category"], entry["status"], detail, cell["id"]
            )
    return Grid("Scenario outcomes by LibTorch version", rows, columns, cells)


def _add_unique(items: List[str], item: str) -> None:
    if item not in items:
        items.append(item)


def device_column(device: str) -> str:
    """A device's column title: the simulated device (harness/sim/) is labelled as such."""
    return f"{device} (simulated)" if device.startswith("sim:") else device


def _device_key(device: str) -> Tuple[bool, bool, bool, str]:
    """cpu first, then the simulated device, then cuda:0, cuda:1, then pairs."""
    return (device != "cpu", not device.startswith("sim:"), "+" in device, device)
