// tp::sim::enable() and the calls made before it (sim.cpp): they need a process where the sim is
// not registered yet, the child this binary starts (child_run.h). And label() of a device that
// names no index.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <torchplace/sim/sim.h>
#include "child_run.h"

namespace sim_enable_test {  // unity-built with the other harness tests
namespace {

constexpr const char* kChild = "TORCHPLACE_TEST_SIM_ENABLE_CHILD";

// Every warning LibTorch issues while the handler is installed (the interface changed in 2.0).
struct Warnings final : c10::WarningHandler {
#if TORCH_VERSION_MAJOR >= 2
  void process(const c10::Warning& warning) override { seen.push_back(warning.msg()); }
#else
  void process(const c10::SourceLocation&, const std::string& message, bool) override {
    seen.push_back(message);
  }
#endif
  std::vector<std::string> seen;
};

// In the child: enabling registers each of the sim's kernels once. LibTorch takes a second kernel
// for the same operator and key, and warns.
TEST(SimEnableChild, EnablingWarnsNothing) {
  if (std::getenv(kChild) == nullptr)
    GTEST_SKIP() << "runs in the child SimEnable.InAChild starts (the sim not yet enabled)";
  Warnings warnings;
  {
#if TORCH_VERSION_MAJOR >= 2
    const c10::WarningUtils::WarningHandlerGuard guard(&warnings);
#else
    const c10::Warning::WarningHandlerGuard guard(&warnings);
#endif
    tp::sim::enable();
  }
  for (const std::string& warning : warnings.seen) ADD_FAILURE() << "enable() warned: " << warning;
}

// In the child: a count set before anything enabled the sim holds (enabling reads the
// environment's count, TORCHPLACE_SIM_DEVICES or 2, first, then the call sets it).
TEST(SimEnableChild, ACountSetBeforeEnablingHolds) {
  if (std::getenv(kChild) == nullptr)
    GTEST_SKIP() << "runs in the child SimEnable.InAChild starts (the sim not yet enabled)";
  tp::sim::set_device_count(3);
  EXPECT_EQ(tp::sim::device_count(), 3);
  EXPECT_EQ(torch::ones({2}).to(tp::sim::device(2)).device(), tp::sim::device(2));
}

// Starts each child test above in a process of its own.
TEST(SimEnable, InAChild) {
  for (const char* test :
       {"SimEnableChild.EnablingWarnsNothing", "SimEnableChild.ACountSetBeforeEnablingHolds"}) {
    const auto [status, output] = tp_test::run_child(std::string(kChild) + "=1", test);
    EXPECT_EQ(status, 0) << test << ": " << output;
    EXPECT_NE(output.find("[  PASSED  ] 1 test."), std::string::npos) << test << ": " << output;
    EXPECT_EQ(output.find("SKIPPED"), std::string::npos) << test << ": " << output;
  }
}

// A device of the sim's type without an index is the current one's default, index 0: "sim:0".
TEST(SimEnable, LabelOfADeviceWithoutAnIndexIsSimZero) {
  const torch::Device unindexed(tp::sim::device().type());
  ASSERT_FALSE(unindexed.has_index());
  EXPECT_EQ(tp::sim::label(unindexed), "sim:0");
  EXPECT_EQ(tp::sim::label(tp::sim::device(1)), "sim:1");
  EXPECT_EQ(tp::sim::label(torch::Device(torch::kCPU)), "cpu");
}

}  // namespace
}  // namespace sim_enable_test
