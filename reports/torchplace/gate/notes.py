"""A cell's notes, held to its committed entry (issue 45, item 4): what a cell tells its reader
("placement checked on meta: input on meta, target on cpu", a step's transfers, each DDP rank's
class) is part of what it proves, so a note that changes, vanishes or appears is a regression,
notes_changed. Durations ("after 2029 ms") vary run to run: each "<digits> ms" is compared as
"<n> ms". Notes are held only on the LibTorch the expectations were refreshed on (their
generated.libtorch_version): another version's notes name its own devices and counts (2.x prints
the sim as sim:0 where 1.13 prints privateuseone:0), which its matrix column compares instead.
An entry without "notes" (refreshed from a skip, or before notes were kept) holds none."""
from __future__ import annotations

import re
from collections import Counter
from typing import Any, Dict, List, Optional, Tuple

from torchplace.schema import InputError, JsonObject, typed

DURATION = re.compile(r"\b\d+ ms\b")


def normalised(notes: List[str]) -> List[str]:
    """The notes as compared: every duration made "<n> ms"."""
    return [DURATION.sub("<n> ms", note) for note in notes]


def check_entry(expected: JsonObject, where: str) -> None:
    """An entry's optional "notes": a list of strings."""
    notes = typed(expected, "notes", (list,), where, optional=True) or []
    for index, note in enumerate(notes):
        if not isinstance(note, str):
            raise InputError(f"{where}: notes[{index}] must be str, found {type(note).__name__}")


def held(expectations: JsonObject, fingerprint: JsonObject) -> bool:
    """Whether the run's notes are compared: its LibTorch is the one the entries were written on."""
    generated = expectations.get("generated")
    version = generated.get("libtorch_version") if isinstance(generated, dict) else None
    return version is not None and version == fingerprint.get("libtorch_version")


def problem(committed: JsonObject, cell: JsonObject) -> Optional[Tuple[str, str]]:
    """('notes_changed', text) when a cell that ran (the gate lists a skipped one before this)
    notes other things than its committed entry."""
    if "notes" not in committed:
        return None
    want, got = normalised(committed["notes"]), normalised(cell.get("notes") or [])
    if want == got:
        return None
    lost = (Counter(want) - Counter(got)).elements()
    new = (Counter(got) - Counter(want)).elements()
    detail = "; ".join([f"lost {note!r}" for note in lost] + [f"new {note!r}" for note in new])
    return "notes_changed", detail or f"the same notes in another order: {got}"


def entries(cells: Dict[str, Any], kind_of: Any) -> Dict[str, List[str]]:
    """{id: notes} of the cells that ran under their own entry (for a refresh; a cuda:K cell, judged
    by its cuda:0 entry, names its own device), durations kept as they were seen."""
    return {
        cell_id: list(cell.get("notes") or [])
        for cell_id, cell in sorted(cells.items())
        if cell["status"] != "skip" and kind_of(cell_id) == cell_id
    }
