// The sim as a shared library for a Python process (the `torchplace.sim` module loads it with
// ctypes): a C entry point that enables it, since Python can call no C++ function by name.
// Built as libtorchplace_sim_python.so against the same LibTorch as the Python's torch.
#include <torch/version.h>

#include <exception>
#include <string>

#include "sim_internal.h"

namespace {
thread_local std::string last_error;  // what the last failed call raised
}  // namespace

extern "C" {

// Registers the simulated device (tp::sim::enable()). 0 on success; 1 with the reason kept for
// torchplace_sim_error().
__attribute__((visibility("default"))) int torchplace_sim_enable() noexcept {
  try {
    tp::sim::enable();
    return 0;
  } catch (const std::exception& error) {
    last_error = error.what();
    return 1;
  }
}

// tp::sim::device_count(), or -1 with the reason kept (a bad TORCHPLACE_SIM_DEVICES).
__attribute__((visibility("default"))) int torchplace_sim_device_count() noexcept {
  try {
    return tp::sim::device_count();
  } catch (const std::exception& error) {
    last_error = error.what();
    return -1;
  }
}

// The LibTorch version this library was built against ("1.13.0", "2.14.1"): a Python whose torch
// is another version must not enable it.
__attribute__((visibility("default"))) const char* torchplace_sim_torch_version() noexcept {
  return TORCH_VERSION;
}

// The calling thread's current simulated device (a device guard sets it, as CUDA's does).
__attribute__((visibility("default"))) int torchplace_sim_current_device() noexcept {
  return tp::sim::detail::current_index();
}

// Why the last call on this thread failed.
__attribute__((visibility("default"))) const char* torchplace_sim_error() noexcept {
  return last_error.c_str();
}

}  // extern "C"
