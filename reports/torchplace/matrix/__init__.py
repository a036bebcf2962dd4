"""The version matrix's Python side: merge the columns (merge), gate them (gate), check they are
all ok (status), fold observed messages into the corpus (corpus), the Markdown view (summary).
Each runs as python3 -m torchplace.matrix.<name>; the shell that builds the columns stays in
ci/matrix/. Standard library only."""
