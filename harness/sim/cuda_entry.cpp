// The library torchplace_sim_cuda: loading it (linked, or LD_PRELOAD) makes the sim answer as
// CUDA (tp::sim::enable_as_cuda) before main runs, so that a program's unmodified CUDA path runs
// on it. A refusal (a LibTorch built with CUDA, say) is printed and ends the process, exit 3.
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "sim.h"

namespace {

[[maybe_unused]] const bool enabled = [] {
  try {
    tp::sim::enable_as_cuda();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "torchplace_sim_cuda: %s\n", error.what());
    std::_Exit(3);  // an environment error (reports/torchplace/schema.py EXIT_CODES)
  }
  return true;
}();

}  // namespace
