// The sim as a shared library for a Python process (the `torchplace.sim` module loads it with
// ctypes): a C entry point that enables it, since Python can call no C++ function by name.
// Built as libtorchplace_sim_python.so against the same LibTorch as the Python's torch.
#include <torch/version.h>

#include <exception>
#include <sstream>
#include <string>

#include "sim_internal.h"
#include "transfer_log.h"

// The version, findable in the file's bytes: torchplace.sim reads it before loading the library,
// since loading one built against another LibTorch can crash the process.
extern "C" __attribute__((used, visibility("default")))
const char torchplace_sim_torch_version_marker[] =
    "torchplace-sim-torch-version=" TORCH_VERSION ";";

namespace {
thread_local std::string last_error;  // what the last failed call raised
thread_local std::string last_json;   // what torchplace_sim_log_json returned last

void copies_json(std::ostream& out, const char* name, const tp::sim::CopyCount& count) {
  out << '"' << name << "\": {\"copies\": " << count.copies << ", \"bytes\": " << count.bytes
      << ", \"non_blocking\": " << count.non_blocking << "}, ";
}
}  // namespace

extern "C" {

// Registers the simulated device (tp::sim::enable()). 0 on success; 1 with the reason kept for
// torchplace_sim_error().
__attribute__((visibility("default"))) int torchplace_sim_enable() noexcept {
  try {
    tp::sim::detail::set_user_frames(false);  // Python's traceback gives the line
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

// A transfer log (tp::sim::TransferLog) for Python: counts from here until stopped or freed.
__attribute__((visibility("default"))) void* torchplace_sim_log_start() noexcept {
  try {
    return new tp::sim::TransferLog();
  } catch (const std::exception& error) {
    last_error = error.what();
    return nullptr;
  }
}

__attribute__((visibility("default"))) void torchplace_sim_log_stop(void* log) noexcept {
  static_cast<tp::sim::TransferLog*>(log)->stop();
}

__attribute__((visibility("default"))) void torchplace_sim_log_free(void* log) noexcept {
  delete static_cast<tp::sim::TransferLog*>(log);
}

// The log's counts as JSON: {"host_to_device": {"copies", "bytes", "non_blocking"},
// "device_to_host": ..., "device_to_device": ..., "syncs": {operator: count}}. Valid until the
// thread's next call.
__attribute__((visibility("default"))) const char* torchplace_sim_log_json(void* log) noexcept {
  const tp::sim::TransferCounts counts = static_cast<tp::sim::TransferLog*>(log)->counts();
  std::ostringstream out;
  out << '{';
  copies_json(out, "host_to_device", counts.host_to_device);
  copies_json(out, "device_to_host", counts.device_to_host);
  copies_json(out, "device_to_device", counts.device_to_device);
  out << "\"syncs\": {";
  const char* separator = "";
  for (const auto& [op, count] : counts.syncs) {
    out << separator << '"' << op << "\": " << count;  // operator names: identifiers
    separator = ", ";
  }
  out << "}}";
  last_json = out.str();
  return last_json.c_str();
}

// Why the last call on this thread failed.
__attribute__((visibility("default"))) const char* torchplace_sim_error() noexcept {
  return last_error.c_str();
}

}  // extern "C"
