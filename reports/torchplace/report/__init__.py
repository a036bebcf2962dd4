"""The torchplace report: plots, the outcome matrix, index.html and summary.md from the JSON.
Run it as python3 -m torchplace.report IN_DIR [--out DIR] (cli.py). The one part of the package
that imports matplotlib (plots, matrix_figure; only when drawing) and numpy."""
