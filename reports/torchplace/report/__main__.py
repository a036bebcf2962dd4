"""python3 -m torchplace.report IN_DIR [--out DIR]: a run folder's report (cli.py)."""
import sys

from torchplace.report.cli import main

sys.exit(main(sys.argv[1:]))
