// The sim as CUDA (harness/sim/README.md "As CUDA"). This binary links the library
// torchplace_sim_cuda and includes nothing of torchplace: the code under "A user's program" is
// written for a GPU machine and picks CUDA with torch::cuda::is_available(), unmodified.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/DeviceGuard.h>

#include <cstdio>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

// ---- A user's program ----------------------------------------------------------------------

torch::Device pick_device() { return torch::cuda::is_available() ? torch::kCUDA : torch::kCPU; }

// One SGD step of a Linear classifier on synthetic data; the loss and the trained weight, on the
// CPU. The bug leaves the labels on the CPU.
std::vector<torch::Tensor> train_step(torch::Device device, bool labels_to_device) {
  torch::manual_seed(0);
  torch::nn::Linear model(4, 3);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  const auto inputs = torch::arange(24, torch::kFloat).reshape({6, 4}) / 24;
  auto labels = torch::tensor({0, 1, 2, 0, 1, 2});
  if (labels_to_device) labels = labels.to(device);
  optimizer.zero_grad();
  auto loss = torch::nn::functional::cross_entropy(model(inputs.to(device)), labels);
  loss.backward();
  optimizer.step();
  return {loss.detach().cpu(), model->weight.detach().cpu()};
}

// ---- The checks ----------------------------------------------------------------------------

std::string message_of_bug(torch::Device device) {
  try {
    train_step(device, false);
  } catch (const c10::Error& error) {
    return error.what_without_backtrace();
  }
  return "(no error)";
}

TEST(SimAsCuda, CudaIsAvailable) {
  EXPECT_TRUE(torch::cuda::is_available());
  EXPECT_EQ(torch::cuda::device_count(), 2u);  // TORCHPLACE_SIM_DEVICES unset: 2
  EXPECT_TRUE(at::globalContext().hasCUDA());
  EXPECT_EQ(pick_device(), torch::Device(torch::kCUDA));
  EXPECT_EQ(torch::ones({2}, torch::kCUDA).device().str(), "cuda:0");
}

// LibTorch's wording: 2.8 changed it (harness/sim/CUDA_RULES.md, the version table).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 8)
constexpr const char* kMismatch =
    "Expected all tensors to be on the same device, but got target is on cpu, different from "
    "other tensors on cuda:0 (when checking argument in method wrapper_CUDA_nll_loss_forward)";
#else
constexpr const char* kMismatch =
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
    "cpu! (when checking argument for argument target in method wrapper_nll_loss_forward)";
#endif

TEST(SimAsCuda, TheBugRaisesAsOnCuda) {
  const std::string message = message_of_bug(pick_device());
  EXPECT_NE(message.find(kMismatch), std::string::npos) << message;
}

TEST(SimAsCuda, TheFixComputesTheCpusResult) {
  ASSERT_TRUE(pick_device().is_cuda());
  const auto on_cuda = train_step(pick_device(), true);
  const auto on_cpu = train_step(torch::kCPU, true);
  for (size_t i = 0; i < on_cpu.size(); ++i) EXPECT_TRUE(torch::equal(on_cuda[i], on_cpu[i]));
}

TEST(SimAsCuda, TwoDevicesRaiseByIndex) {
  const auto a = torch::ones({3}, torch::Device(torch::kCUDA, 0));
  const auto b = torch::ones({3}, torch::Device(torch::kCUDA, 1));
  try {
    (void)(a + b);
    FAIL() << "cuda:0 + cuda:1 did not raise";
  } catch (const c10::Error& error) {
    EXPECT_NE(std::string(error.what()).find("cuda:0 and cuda:1"), std::string::npos)
        << error.what();
  }
}

TEST(SimAsCuda, PinsMemoryFrom2_1) {
#if TORCH_VERSION_MAJOR < 2
  GTEST_SKIP() << "1.13.1's _pin_memory has CUDA and MPS kernels only (harness/sim/README.md)";
#endif
  const auto pageable = torch::arange(4, torch::kFloat);
  const auto pinned = pageable.pin_memory();
  EXPECT_FALSE(pageable.is_pinned());
  EXPECT_TRUE(pinned.is_pinned());
  EXPECT_TRUE(pinned.device().is_cpu());
  EXPECT_TRUE(torch::equal(pinned.to(torch::kCUDA, /*non_blocking=*/true).cpu(), pageable));
}

TEST(SimAsCuda, LoadsToCuda) {
  const std::string path = ::testing::TempDir() + "sim_as_cuda_linear.pt";
  torch::manual_seed(0);
  torch::nn::Linear saved(4, 3);
  torch::save(saved, path);
  torch::nn::Linear loaded(4, 3);
  torch::load(loaded, path, torch::kCUDA);  // map_location
  EXPECT_EQ(loaded->weight.device().str(), "cuda:0");
  EXPECT_TRUE(torch::equal(loaded->weight.cpu(), saved->weight));
  torch::Tensor tensor;
  torch::save(saved->bias, path);
  torch::load(tensor, path, torch::kCUDA);
  EXPECT_EQ(tensor.device().str(), "cuda:0");
  EXPECT_TRUE(torch::equal(tensor.cpu(), saved->bias.detach()));
  std::remove(path.c_str());
}

// What LibTorch asks CUDA's hooks (at::detail::getCUDAHooks(), its call_once; 2.x's
// AcceleratorHooksInterface): a CUDA machine's answers. Each device's context is made (the sim
// has none to make), the current device is the one a guard set, and, where the interface has
// isAvailable (2.14.1's; 2.6.0's has none), CUDA is available.
template <typename Hooks, typename = void>
struct HasIsAvailable : std::false_type {};
template <typename Hooks>
struct HasIsAvailable<Hooks, std::void_t<decltype(std::declval<const Hooks&>().isAvailable())>>
    : std::true_type {};

template <typename Hooks>
void expect_available(const Hooks& hooks) {
  if constexpr (HasIsAvailable<Hooks>::value) EXPECT_TRUE(hooks.isAvailable());
}

TEST(SimAsCuda, HooksAnswerAsCudasDo) {
  const at::CUDAHooksInterface& hooks = at::detail::getCUDAHooks();
  EXPECT_TRUE(hooks.hasPrimaryContext(0));
  EXPECT_TRUE(hooks.hasPrimaryContext(1));
  expect_available(hooks);
  EXPECT_EQ(static_cast<int>(hooks.current_device()), 0);
  {
    const c10::DeviceGuard guard(torch::Device(torch::kCUDA, 1));
    EXPECT_EQ(static_cast<int>(hooks.current_device()), 1);
  }
  EXPECT_EQ(static_cast<int>(hooks.current_device()), 0);
}

}  // namespace
