"""A stand-in for the classifier torchplace_classify (synthetic: it knows two wordings, no
families of harness/message_families.cpp), for the in-process tests of torchplace explain's
command. It answers as the real one does: one verdict (class, family, core) per message, the
Python exception name taken off the core. STANDIN_EXIT and STANDIN_COUNT make it fail."""
import os
import stat
import tempfile
import unittest
from pathlib import Path
from unittest import mock

SCRIPT = r"""#!/usr/bin/python3
import json, os, sys
messages = json.load(sys.stdin)
if os.environ.get("STANDIN_EXIT"):
    sys.stderr.write("synthetic failure\n")
    sys.exit(int(os.environ["STANDIN_EXIT"]))
verdicts = []
for message in messages:
    core = message.strip()
    if core.startswith("RuntimeError: "):
        core = core[len("RuntimeError: "):]
    known = core.startswith(("expected device", "Input, output and indices"))
    family = {"pattern": "synthetic family", "versions": "1.13.1 2.6.0"} if known else None
    verdicts.append({"class": "DeviceMismatch" if known else "Unclassified",
                     "family": family, "core": core})
count = int(os.environ.get("STANDIN_COUNT", len(verdicts)))
json.dump(verdicts[:count], sys.stdout)
"""


class StandIn(unittest.TestCase):
    """Each test runs with $TORCHPLACE_CLASSIFY set to the stand-in."""

    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.folder = Path(folder.name)
        self.classifier = self.folder / "torchplace_classify"
        self.classifier.write_text(SCRIPT, encoding="utf-8")
        self.classifier.chmod(stat.S_IRWXU)
        environ = {k: v for k, v in os.environ.items() if not k.startswith("STANDIN_")}
        environ["TORCHPLACE_CLASSIFY"] = str(self.classifier)
        patch = mock.patch.dict(os.environ, environ, clear=True)
        patch.start()
        self.addCleanup(patch.stop)
