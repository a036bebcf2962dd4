// The suite's one classifier (tp::classify, harness/message_families.cpp) for a Python process:
// the pytest plugin (reports/torchplace/pytest_plugin.py) names the class of what a test raised,
// as the C++ runner does for a cell. Built into libtorchplace_sim_python.so beside the sim.
#include <string>

#include "error_class.h"

namespace {
thread_local std::string last_class;  // what torchplace_classify returned last on this thread
}

// The class of a message ("DeviceMismatch", ..., "Unclassified"); valid until the next call on
// this thread.
extern "C" __attribute__((visibility("default"))) const char* torchplace_classify(
    const char* message) noexcept {
  last_class = std::string(tp::name_of(tp::classify(message == nullptr ? "" : message)));
  return last_class.c_str();
}
