// enable_as_cuda's refusals (harness/sim/README.md "As CUDA"), in a process of their own: LibTorch
// keeps the first answer about CUDA's hooks, and the sim is one device type per process.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "sim/sim.h"

namespace {

std::string refusal() {
  try {
    tp::sim::enable_as_cuda();
  } catch (const c10::Error& error) {
    return error.what_without_backtrace();
  }
  return "(no error)";
}

// One test: the second refusal needs the process the first one leaves.
TEST(SimAsCudaLate, RefusedOnceCudaWasAskedAboutOrEnableRan) {
  ASSERT_FALSE(torch::cuda::is_available());  // LibTorch reads (and keeps) its CUDA hooks here
  EXPECT_NE(refusal().find("LibTorch read CUDA's hooks before it"), std::string::npos) << refusal();
  EXPECT_FALSE(torch::cuda::is_available());
  tp::sim::enable();  // the sim as PrivateUse1, as before
  EXPECT_EQ(tp::sim::device().type(), c10::DeviceType::PrivateUse1);
  EXPECT_NE(refusal().find("tp::sim::enable() ran first"), std::string::npos) << refusal();
}

}  // namespace
