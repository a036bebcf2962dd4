"""python3 -m torchplace COMMAND [options]: the suite's one command (torchplace.command)."""

import sys

from torchplace.command.cli import main

sys.exit(main(sys.argv[1:]))
