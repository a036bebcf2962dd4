"""python3 -m torchplace.explain: see torchplace.explain."""
import sys

from torchplace.explain.command import main

sys.exit(main(sys.argv[1:]))
