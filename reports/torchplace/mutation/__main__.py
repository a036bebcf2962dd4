"""python3 -m torchplace.mutation: the mutation check (run.py; ci/mutation/README.md)."""
import sys

from torchplace.mutation.run import main

sys.exit(main())
