"""python3 -m torchplace.gate: the regression gate's command line (torchplace.gate.cli)."""
import sys

from torchplace import schema

schema.exit_cleanly_on_sigterm()  # before the rest is imported: a SIGTERM is never a traceback
try:
    from torchplace.gate.cli import run
except schema.Terminated:  # stopped while starting: nothing judged, nothing written
    print(
        "torchplace gate: stopped by SIGTERM while starting; nothing judged (exit 3)",
        file=sys.stderr,
    )
    sys.exit(schema.EXIT_INPUT)

run()
