"""The mutation check of the C++ tests (`ci/torchplace mutate`, ci/mutation/README.md): run.py
applies each mutation of mutations.py to a scratch copy of the tree and expects a test to fail."""
