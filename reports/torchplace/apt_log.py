"""Names the cause of a failed apt-get or debootstrap run from its log, as found in the log.

Each cause is recognised by apt's (or debootstrap's) own wording, quoted from a captured log in
ci/lib/tests/apt_logs/. A log that matches none is "no known cause": this never guesses.

usage: python3 -m torchplace.apt_log [--names] LOG
  prints one line: the causes found, each with the log line that shows it (--names: the causes
  alone, one a line)
exit: 0 a cause was found, 1 none was, 3 the log cannot be read, 64 bad arguments
"""
from __future__ import annotations

import re
import sys
from typing import List, Pattern, Tuple

from torchplace.schema import EXIT_FAIL, EXIT_INPUT, EXIT_OK, EXIT_USAGE

# (cause, pattern): apt's wording, oldest first in each alternation.
CAUSES: List[Tuple[str, Pattern[str]]] = [
    (
        "expired Release file (the snapshot mirror's Valid-Until date has passed; "
        "apt needs -o Acquire::Check-Valid-Until=false)",
        re.compile(r"Release file for \S+ is expired"),
    ),
    (
        "Release file not valid yet (the clock is behind the mirror's Date)",
        re.compile(r"Release file for \S+ is not valid yet"),
    ),
    (
        "mirror unreachable",
        re.compile(
            r"Could not resolve|Temporary failure resolving|Could not connect to|"
            r"Connection timed out|Connection refused|Network is unreachable|"
            r"No route to host|Unable to connect to|unable to resolve host"
        ),
    ),
    (
        "debootstrap could not fetch the suite's Release file",
        re.compile(r"Failed getting release file"),
    ),
    (
        "suite or component absent on the mirror",
        re.compile(r"does not have a Release file|404\s+Not Found|Invalid Release file"),
    ),
    (
        "signature check failed",
        re.compile(
            r"NO_PUBKEY|EXPKEYSIG|signatures couldn't be verified|is not signed|"
            r"BADSIG|Release signed by unknown key"
        ),
    ),
    (
        "missing package",
        re.compile(
            r"Unable to locate package \S+|Package '?\S+?'? has no installation candidate|"
            r"Couldn't find any package by|Couldn't find package"
        ),
    ),
    ("no space left on device", re.compile(r"No space left on device")),
    (
        "a package's install script failed",
        re.compile(r"Sub-process /usr/bin/dpkg returned an error code|dpkg: error processing"),
    ),
]


def causes(text: str) -> List[Tuple[str, str]]:
    """[(cause, first line showing it)] in CAUSES order; empty when nothing is recognised."""
    found = []
    lines = text.splitlines()
    for cause, pattern in CAUSES:
        line = next((line.strip() for line in lines if pattern.search(line)), None)
        if line is not None:
            found.append((cause, line))
    return found


def describe(text: str) -> str:
    found = causes(text)
    if not found:
        return "no known cause in the log"
    return "; ".join(f"{cause} ({line[:200]})" for cause, line in found)


def main(argv: List[str]) -> int:
    names = argv[1:2] == ["--names"]
    args = argv[2:] if names else argv[1:]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return EXIT_USAGE
    try:
        with open(args[0], encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError as error:
        print(f"cannot read {args[0]}: {error.strerror}")
        return EXIT_INPUT
    found = causes(text)
    print("\n".join(cause for cause, _ in found) if names else describe(text))
    return EXIT_OK if found else EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main(sys.argv))
