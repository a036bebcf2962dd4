"""The scenario outcome matrix: rows are scenario + variant, columns are device (and version).

Each cell falls into one of four categories, coloured the same in the PNG and the page.
"""
from dataclasses import dataclass

EXPECTED_ERROR, PASSED = "expected error", "fix passed"
SKIPPED, UNEXPECTED = "skipped", "unexpected"
CATEGORIES = (EXPECTED_ERROR, PASSED, SKIPPED, UNEXPECTED)
# Colour-blind-safe (Paul Tol's bright scheme); grey for skipped.
COLOURS = {EXPECTED_ERROR: "#4477AA", PASSED: "#228833", SKIPPED: "#BBBBBB", UNEXPECTED: "#EE6677"}
LEGEND = {
    EXPECTED_ERROR: "the expected error was raised (the mistake is caught)",
    PASSED: "ran to the end as expected: the fix works, or (marked latent) the broken variant's "
            "mistake cannot show on this device",
    SKIPPED: "not run; the reason is on hover and in the footnotes",
    UNEXPECTED: "the outcome or error class differs from the expectation",
}


@dataclass
class Cell:
    category: str
    detail: str  # the skip reason, the failure text or the error class: the hover text
    cell_id: str
    latent: bool = False  # a mistake expected to run cleanly here (it cannot show on this device)


@dataclass
class Grid:
    title: str
    rows: list  # row labels, in first-seen order
    columns: list
    cells: dict  # (row, column) -> Cell

    def footnotes(self):
        """Distinct skip reasons, numbered from 1: {reason: number}."""
        numbers = {}
        for row in self.rows:
            for column in self.columns:
                cell = self.cells.get((row, column))
                if cell and cell.category == SKIPPED and cell.detail not in numbers:
                    numbers[cell.detail] = len(numbers) + 1
        return numbers

    def counts(self):
        counts = dict.fromkeys(CATEGORIES, 0)
        for cell in self.cells.values():
            counts[cell.category] += 1
        return counts


def row_label(scenario, axes):
    """'forgotten_labels · loss=nll · variant=broken' (the variant last)."""
    parts = [f"{key}={value}" for key, value in axes.items() if key != "variant"]
    if "variant" in axes:
        parts.append(f"variant={axes['variant']}")
    return " · ".join([scenario] + parts)


def categorise(status, observed_outcome, detail, cell_id, latent):
    if status == "skip":
        return Cell(SKIPPED, detail or "skipped (no reason given)", cell_id)
    if status == "pass":
        if observed_outcome == "error":
            return Cell(EXPECTED_ERROR, detail, cell_id)
        return Cell(PASSED, detail, cell_id, latent=latent)
    return Cell(UNEXPECTED, detail or f"status {status!r}", cell_id)


def from_results(results):
    """The grid of one run: columns are the devices."""
    rows, columns, cells = [], [], {}
    for cell in results["cells"]:
        row, column = row_label(cell["scenario"], cell["axes"]), device_column(cell["device"])
        _add_unique(rows, row)
        _add_unique(columns, column)
        observed = cell["observed"]
        detail = cell["reason"] or observed.get("error_class") or ""
        cells[(row, column)] = categorise(cell["status"], observed.get("outcome"), detail,
                                          cell["id"], cell["expected"].get("latent", False))
    return Grid("Scenario outcomes, this run", rows, sorted(columns, key=_device_key), cells)


def from_version_matrix(matrix):
    """The grid across LibTorch versions: columns are 'version · device'."""
    versions = {v["version"]: v for v in matrix["versions"]}
    rows, cells = [], {}
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
            outcome = entry.get("observed_outcome")
            cells[(row, column)] = categorise(entry["status"], outcome, detail, cell["id"],
                                              entry.get("latent", False))
    return Grid("Scenario outcomes by LibTorch version", rows, columns, cells)


def _add_unique(items, item):
    if item not in items:
        items.append(item)


def device_column(device):
    """A device's column title: the simulated device (harness/sim/) is labelled as such."""
    return f"{device} (simulated)" if device.startswith("sim:") else device


def _device_key(device):
    """cpu first, then the simulated device, then cuda:0, cuda:1, then pairs."""
    return (device != "cpu", not device.startswith("sim:"), "+" in device, device)
