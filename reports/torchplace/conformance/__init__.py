"""Conformance sweeps: the simulated device judged by PyTorch's own test databases.

Each sweep runs a database entry twice, once on the CPU and once with every tensor on sim:0, and
compares what happened (raised or not, the outputs' values and devices, the gradients):

  values      comparing two runs: moving samples, flattening outputs, the verdict of a pair
  ops         op_db (torch.testing._internal.common_methods_invocations), per OpInfo
  modules     module_db (torch.testing._internal.common_modules), per ModuleInfo
  models      torchvision's models, a training step each (random weights, no download)
  torchscript those models scripted and saved for the C++ test (harness/tests/sim_models_test.cpp)
  isolate     each entry in a worker process: a crash or a hang is that entry's named failure
  command     `torchplace conformance`: the sweeps, their JSON and their summary
"""
