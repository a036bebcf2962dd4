"""python3 -m torchplace.gate: the regression gate's command line (torchplace.gate.cli)."""
from torchplace.gate.cli import run

run()
