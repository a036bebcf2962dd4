"""The torchplace report: plots, the outcome matrix, index.html and summary.md from the JSON."""
