"""The note a cell's expectation states, held to its committed entry (issue 45): why a cell
skips ("needs two devices of one kind: the CPU is one"), why a mistake stays latent, what a silent
success asserts ("silent: no error; the loaded output differs (asserted)"). It is what the code
claims about the cell (results.json expected.note, tp::Expect::note), so a note changed, lost or
added is a regression, expected_note_changed, whether the cell ran or skipped: a skip's reason
is its expectation's note. An expectation is a function of the cell alone (a host's devices
decide only its needs() and device-absence skips), so every cell under its own entry keeps one,
"" included; a cuda:1..N cell, judged by its cuda:0 entry, keeps none. Held on the LibTorch the
expectations were refreshed on only (notes.held): a note may name a device, which 2.x prints
otherwise. An entry without "expected_note" holds none."""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from torchplace.schema import JsonObject, typed

KEY = "expected_note"


def check_entry(expected: JsonObject, where: str) -> None:
    """An entry's optional "expected_note": a string."""
    typed(expected, KEY, (str,), where, optional=True)


def problem(committed: JsonObject, cell: JsonObject) -> Optional[Tuple[str, str]]:
    """('expected_note_changed', text) when the cell's expectation states another note than its
    entry (a record without one states None)."""
    if KEY not in committed:
        return None
    want, got = committed[KEY], cell["expected"].get("note")
    if got == want:
        return None
    return (
        "expected_note_changed",
        f"the code's expectation states {got!r}, committed {want!r}",
    )


def entries(cells: Dict[str, Any], kind_of: Any) -> Dict[str, str]:
    """{id: expected note} of the cells under their own entry, skipped or not (for a refresh)."""
    return {
        cell_id: cell["expected"]["note"]
        for cell_id, cell in sorted(cells.items())
        if kind_of(cell_id) == cell_id and isinstance(cell["expected"].get("note"), str)
    }
