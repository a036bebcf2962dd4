// The sim as CUDA (README "As CUDA") answers copy_ itself (kernels.cpp copy_as_cuda): LibTorch's
// copy_ would call CUDA's copy kernel, which a CPU-only build lacks. enable_as_cuda() needs a
// process where nothing asked about CUDA yet: the child this binary starts (child_run.h).
#include <ATen/detail/CUDAHooksInterface.h>
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <dlfcn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include <torchplace/sim/sim.h>
#include <torchplace/sim/transfer_log.h>
#include "child_run.h"
#include "raised_message.h"

namespace sim_as_cuda_child_test {  // unity-built with the other harness tests
namespace {

constexpr const char* kChild = "TORCHPLACE_TEST_SIM_AS_CUDA_CHILD";

// In the child: copy_ between the CPU and cuda:0 both ways, and within cuda:0, as on CUDA.
TEST(SimAsCudaChild, CopyMovesTheValues) {
  if (std::getenv(kChild) == nullptr)
    GTEST_SKIP() << "runs in the child SimAsCudaCopy.InAChild starts (the sim as CUDA)";
  tp::sim::enable_as_cuda();
  const torch::Tensor values = torch::arange(4, torch::kFloat);
  const torch::Tensor source = values.clone();
  torch::Tensor on_cuda = torch::zeros({4}, torch::kCUDA);
  on_cuda.copy_(source);
  EXPECT_TRUE(torch::equal(source, values)) << "the source was written";
  torch::Tensor doubled = torch::zeros({4}, torch::kCUDA);
  doubled.copy_(on_cuda * 2);
  torch::Tensor back = torch::zeros({4});
  back.copy_(doubled);
  EXPECT_TRUE(torch::equal(back, values * 2)) << back;
  EXPECT_TRUE(torch::equal(on_cuda.cpu(), values));
}

// In the child: a tensor copied onto itself moves nothing (copy_impl returns first, Copy.cpp).
TEST(SimAsCudaChild, CopyOntoItselfMovesNothing) {
  if (std::getenv(kChild) == nullptr)
    GTEST_SKIP() << "runs in the child SimAsCudaCopy.InAChild starts (the sim as CUDA)";
  tp::sim::enable_as_cuda();
  torch::Tensor on_cuda = torch::arange(4, torch::TensorOptions(torch::kCUDA).dtype(torch::kFloat));
  tp::sim::TransferLog log;
  on_cuda.copy_(on_cuda);
  log.stop();
  EXPECT_EQ(log.device_to_device().copies, 0) << log.summary();
  EXPECT_TRUE(torch::equal(on_cuda.cpu(), torch::arange(4, torch::kFloat)));
}

// In the child: a copy out of a meta tensor is refused, in copy_'s words (copy_impl, Copy.cpp
// @1.13.1), as on CUDA.
TEST(SimAsCudaChild, CopyOutOfAMetaTensorIsRefused) {
  if (std::getenv(kChild) == nullptr)
    GTEST_SKIP() << "runs in the child SimAsCudaCopy.InAChild starts (the sim as CUDA)";
  tp::sim::enable_as_cuda();
  torch::Tensor on_cuda = torch::zeros({2}, torch::kCUDA);
  const std::string raised =
      tp_test::message_of([&] { on_cuda.copy_(torch::empty({2}, torch::kMeta)); });
  EXPECT_NE(raised.find("Cannot copy out of meta tensor"), std::string::npos)
      << "copied out of a meta tensor: " << raised;
}

// In the child: a mismatch names CUDA's generated wrapper, as CUDA does: `wrapper_mm` on 1.13,
// `wrapper_CUDA_mm` on 2.x (harness/sim/CUDA_RULES.md "Wrapper names and order"; SimAsCuda's
// nll_loss_forward message, sim_as_cuda_test.cpp), not the sim's own `wrapper_SIM_mm`.
TEST(SimAsCudaChild, AMismatchNamesCudasWrapper) {
  if (std::getenv(kChild) == nullptr)
    GTEST_SKIP() << "runs in the child SimAsCudaCopy.InAChild starts (the sim as CUDA)";
  tp::sim::enable_as_cuda();
  const torch::Tensor on_cuda = torch::ones({2, 2}, torch::kCUDA), on_cpu = torch::ones({2, 2});
  const std::string raised = tp_test::message_of([&] { torch::mm(on_cuda, on_cpu); });
#if TORCH_VERSION_MAJOR >= 2
  const std::string wrapper = "in method wrapper_CUDA_mm)";
#else
  const std::string wrapper = "in method wrapper_mm)";
#endif
  EXPECT_NE(raised.find(wrapper), std::string::npos) << raised;
}

// Starts the children above with the sim as CUDA.
TEST(SimAsCudaCopy, InAChild) {
  const auto [status, output] = tp_test::run_child(std::string(kChild) + "=1", "SimAsCudaChild.*");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("[  PASSED  ] 4 tests."), std::string::npos) << output;
  EXPECT_EQ(output.find("SKIPPED"), std::string::npos) << output;
}

constexpr const char* kLateChild = "TORCHPLACE_TEST_SIM_CUDA_LATE_CHILD";

// In the child: CUDA is asked about first, then the library torchplace_sim_cuda is loaded. Its
// enable_as_cuda() refuses (cuda_hooks.cpp: LibTorch keeps its first answer), and the library
// ends the process, exit 3 (cuda_entry.cpp), before dlopen returns.
TEST(SimCudaLibraryChild, LoadedLateItRefuses) {
  if (std::getenv(kLateChild) == nullptr)
    GTEST_SKIP() << "runs in the child SimCudaLibrary.LoadedLateExitsThree starts";
  EXPECT_FALSE(torch::cuda::is_available());
  void* library = dlopen(TORCHPLACE_SIM_CUDA_LIBRARY, RTLD_NOW);
  ADD_FAILURE() << "loaded after CUDA was asked about, and the process went on: "
                << (library == nullptr ? dlerror() : "the library loaded");
}

// The refusal, as a program that loads the library too late sees it: exit 3, and why.
TEST(SimCudaLibrary, LoadedLateExitsThree) {
  if (at::CUDAHooksRegistry()->Has("CUDAHooks"))  // asks nothing about CUDA (cuda_hooks.cpp)
    GTEST_SKIP() << "a LibTorch built with CUDA: the library refuses it for that, whenever loaded";
  const auto [status, output] =
      tp_test::run_child(std::string(kLateChild) + "=1", "SimCudaLibraryChild.*");
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 3) << output;
  EXPECT_NE(output.find("torchplace_sim_cuda: tp::sim::enable_as_cuda: LibTorch read CUDA's "
                        "hooks before it"),
            std::string::npos)
      << output;
}

}  // namespace
}  // namespace sim_as_cuda_child_test
