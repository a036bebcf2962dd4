"""python3 -m torchplace.report IN_DIR [--out DIR]: the report of a run folder (torchplace.report.cli)."""
import sys

from torchplace.report.cli import main

sys.exit(main(sys.argv[1:]))
