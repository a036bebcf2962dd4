"""python3 -m torchplace.report IN_DIR [--out DIR]: a run folder's report (cli.py)."""
import sys

from torchplace import schema

schema.exit_cleanly_on_sigterm()  # before matplotlib is imported: a SIGTERM is never a traceback
try:
    from torchplace.report.cli import main

    code = main(sys.argv[1:])
except schema.Terminated:
    print("torchplace report: stopped by SIGTERM; nothing written (exit 3)", file=sys.stderr)
    code = schema.EXIT_INPUT
sys.exit(code)
