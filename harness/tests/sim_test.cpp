// tp::sim as a user meets it: a training step of their own on sim:0, fed by a torch::data loader,
// with Adam, SGD, Module::to, save and load; and the device check with CUDA's exemptions.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <torchplace/compat.h>
#include <torchplace/sim/sim.h>
#include "error_class.h"
#include "internal/expected_error.h"
#include "raised_message.h"

namespace {

constexpr int kSamples = 32;
constexpr int kFeatures = 6;
constexpr int kClasses = 3;

using tp_test::message_of;

// A user's loop: batches come from a loader on the CPU; forget_target leaves the labels there.
std::vector<double> train(const torch::Device& device, bool forget_target) {
  torch::manual_seed(7);
  auto data = torch::data::datasets::TensorDataset(
                  {torch::cat({torch::randn({kSamples, kFeatures}),
                               torch::randint(kClasses, {kSamples, 1}).to(torch::kFloat)},
                              1)})
                  .map(torch::data::transforms::Stack<torch::data::TensorExample>());
  auto loader = torch::data::make_data_loader(std::move(data), /*batch_size=*/8);
  torch::nn::Linear model(kFeatures, kClasses);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(0.05));
  std::vector<double> losses;
  for (auto& batch : *loader) {
    const torch::Tensor input = batch.data.narrow(1, 0, kFeatures);
    torch::Tensor target = batch.data.select(1, kFeatures).to(torch::kLong);
    if (!forget_target) target = target.to(device);
    optimizer.zero_grad();
    const torch::Tensor loss =
        torch::nn::functional::cross_entropy(model(input.to(device)), target);
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item<double>());
  }
  EXPECT_EQ(model->weight.device(), device);
  return losses;
}

TEST(Sim, IsItsOwnDeviceTypeInHostMemory) {
  const torch::Device device = tp::sim::device();
  EXPECT_EQ(device.type(), c10::DeviceType::PrivateUse1);
  EXPECT_EQ(tp::sim::label(device), "sim:0");
  const torch::Tensor host = torch::arange(6, torch::kFloat).reshape({2, 3});
  const torch::Tensor on_sim = host.to(device);
  EXPECT_EQ(on_sim.device(), device);
  EXPECT_TRUE(torch::equal(on_sim.t().contiguous().cpu(), host.t().contiguous()));
}

TEST(Sim, UserTrainingStepCatchesAForgottenTo) {
  const std::string message = message_of([] { train(tp::sim::device(), true); });
  EXPECT_NE(message.find("Expected all tensors to be on the same device"), std::string::npos)
      << "the forgotten target.to(device) ran on sim:0; message: '" << message << "'";
  EXPECT_NE(message.find("target"), std::string::npos) << message;
}

TEST(Sim, FixedTrainingStepMatchesTheCpu) {
  const std::vector<double> on_sim = train(tp::sim::device(), false);
  const std::vector<double> on_cpu = train(torch::kCPU, false);
  ASSERT_EQ(on_sim.size(), on_cpu.size());
  for (size_t step = 0; step < on_cpu.size(); ++step) {
    EXPECT_NEAR(on_sim[step], on_cpu[step], 1e-6) << "step " << step;  // same CPU kernels
  }
}

TEST(Sim, ChecksLikeCudaWithCudasExemptions) {
  const torch::Device device = tp::sim::device();
  const torch::Tensor x = torch::randn({4, 4}).to(device);
  const long long before = tp::sim::checked_calls();
  EXPECT_EQ((torch::tensor(2.0f) * x).device(), device) << "0-dim CPU scalar";
  EXPECT_EQ(x.index({torch::tensor({0, 2})}).device(), device) << "CPU indices in x[idx]";
  EXPECT_GT(tp::sim::checked_calls(), before) << "the checking fallback did not run";
  const std::string mm = message_of([&] { torch::mm(x, torch::randn({4, 2})); });
  // named_argument reads both wordings: "for argument mat2" (1.9-2.7), "but got mat2 is on" (2.8+)
  EXPECT_EQ(tp::named_argument(mm), "mat2") << "mm, CPU mat2: '" << mm << "'";
  const std::string select = message_of([&] { x.index_select(0, torch::tensor({1})); });
  EXPECT_EQ(tp::named_argument(select), "index") << "index_select: '" << select << "'";
  const std::string add = message_of([&] { x + torch::randn({4, 4}); });
  EXPECT_NE(add.find("same device"), std::string::npos) << "add, CPU 4x4: '" << add << "'";
}

// A custom operator with a CPU kernel only (named as a test's, a Tensor?[] argument): on sim:0 it
// reaches the sim's fallback, whose check applies the generated wrapper's rule to it.
at::Tensor add_each(const at::Tensor& self, const c10::List<c10::optional<at::Tensor>>& others) {
  at::Tensor sum = self.clone();
  for (const c10::optional<at::Tensor>& other : others) {
    if (other.has_value()) sum.add_(*other);
  }
  return sum;
}

TORCH_LIBRARY(torchplace_sim_test, m) {
  m.def("add_each(Tensor self, Tensor?[] others) -> Tensor");
}
TORCH_LIBRARY_IMPL(torchplace_sim_test, CPU, m) { m.impl("add_each", add_each); }

// README: a custom operator is checked as a generated wrapper would check it (CUDA checks none):
// each tensor of its Tensor?[] too, a CPU one refused naming the argument. Called through
// autograd, which it has no kernel for: 1.13.1 raised "Could not run ... with arguments from the
// 'AutogradPrivateUse1' backend" before the sim registered the fallthrough CUDA has.
TEST(Sim, ACustomOperatorIsCheckedAsAWrapperWould) {
  const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("torchplace_sim_test::add_each", "")
          .typed<at::Tensor(const at::Tensor&, const c10::List<c10::optional<at::Tensor>>&)>();
  const torch::Tensor x = torch::ones({2}).to(tp::sim::device());
  c10::List<c10::optional<at::Tensor>> on_sim;
  on_sim.push_back(x);
  on_sim.push_back(c10::nullopt);
  EXPECT_TRUE(torch::equal(op.call(x, on_sim).cpu(), torch::full({2}, 2.0f)));
  c10::List<c10::optional<at::Tensor>> with_cpu;
  with_cpu.push_back(c10::optional<at::Tensor>(torch::ones({2})));
  const std::string message = message_of([&] { op.call(x, with_cpu); });
  EXPECT_EQ(tp::classify(message), tp::ErrorClass::kDeviceMismatch) << message;
  EXPECT_EQ(tp::named_argument(message), "others") << message;
}

// The catalogue's switch (TORCHPLACE_SIM_MUTATION=no_device_check, ci/torchplace mutate) turns the
// check off: this binary's own mismatch test passes in a child without it and fails in one with
// it. The child runs that one test, unsharded, whatever this process was given.
TEST(Sim, TheCataloguesSwitchTurnsTheCheckOff) {
  char self[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", self, sizeof self - 1), 0);
  const std::string child = std::string(
                                " env -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX -u GTEST_OUTPUT"
                                " timeout -k 5 120 '") +
                            self +
                            "' --gtest_filter=SimDevices.ModelOnZeroInputOnOneRaisesDeviceMismatch"
                            " > /dev/null 2>&1";
  for (const auto& [env, exit_code] :
       {std::pair{"", 0}, {"TORCHPLACE_SIM_MUTATION=no_device_check", 1}}) {
    const int status = std::system((std::string(env) + child).c_str());
    ASSERT_TRUE(WIFEXITED(status)) << env << ": " << status;
    EXPECT_EQ(WEXITSTATUS(status), exit_code) << "'" << env << "'";
  }
}

TEST(Sim, ModuleToAndSgdRoundTrip) {
  torch::nn::Linear model(3, 2);
  model->to(tp::sim::device());
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  model(torch::ones({1, 3}).to(tp::sim::device())).sum().backward();
  optimizer.step();
  EXPECT_EQ(model->weight.grad().device(), tp::sim::device());
  model->to(torch::kCPU);
  EXPECT_TRUE(model->weight.device().is_cpu());
}

// torch::save of a module on sim:0, then torch::load into a model on sim:0 (2.x), or onto the CPU
// and .to(sim:0) (1.13: its unpickler refuses a PrivateUse1 map_location).
TEST(Sim, SaveAndLoad) {
  const torch::Device device = tp::sim::device();
  torch::nn::Linear saved(3, 2);
  saved->to(device);
  std::stringstream stream;
  torch::save(saved, stream);
  torch::nn::Linear loaded(3, 2);
#if TP_TORCH_AT_LEAST(2, 0)
  loaded->to(device);
  torch::load(loaded, stream, device);
#else
  std::stringstream copy(stream.str());
  const std::string message = message_of([&] { torch::load(loaded, copy, device); });
  EXPECT_NE(message.find("supported devices include CPU, CUDA and HPU"), std::string::npos)
      << "1.13 loaded onto sim:0 after all: '" << message << "'";
  torch::load(loaded, stream, torch::kCPU);
  loaded->to(device);
#endif
  EXPECT_EQ(loaded->weight.device(), device);
  EXPECT_TRUE(torch::equal(loaded->weight.cpu(), saved->weight.cpu()));
  std::stringstream tensor_stream;
  torch::save(saved->bias.detach(), tensor_stream);
  torch::Tensor bias;
#if TP_TORCH_AT_LEAST(2, 0)
  torch::load(bias, tensor_stream);
  EXPECT_EQ(bias.device(), device);
#else
  torch::load(bias, tensor_stream, torch::kCPU);
#endif
  EXPECT_TRUE(torch::equal(bias.cpu(), saved->bias.cpu()));
}

// From 2.4, CUDA's autocast policy on sim:0: linear in fp16, log_softmax and the loss in fp32,
// and a CPU target is neither cast nor let through. Before 2.4 autocast cannot be switched on for
// PrivateUse1: tp::compat refuses it. One test on every version, so that the matrix sees it run.
TEST(Sim, AutocastCastsLikeCudaFrom2_4) {
#if TP_TORCH_AT_LEAST(2, 4)
  const torch::Device device = tp::sim::device();
  torch::nn::Linear model(kFeatures, kClasses);
  model->to(device);
  const torch::Tensor input = torch::randn({4, kFeatures}).to(device);
  const torch::Tensor target = torch::randint(kClasses, {4}, torch::kLong);
  const tp::compat::AutocastGuard autocast(c10::kPrivateUse1, torch::kHalf);
  const torch::Tensor logits = model(input);
  EXPECT_EQ(logits.scalar_type(), torch::kHalf) << "linear was not autocast";
  EXPECT_EQ(logits.device(), device);
  const torch::Tensor log_probs = torch::log_softmax(logits, 1);
  EXPECT_EQ(log_probs.scalar_type(), torch::kFloat) << "log_softmax is fp32 under CUDA's policy";
  const std::string message = message_of([&] { torch::nll_loss(log_probs, target); });
  EXPECT_NE(message.find("same device"), std::string::npos) << "'" << message << "'";
  EXPECT_EQ(torch::nll_loss(log_probs, target.to(device)).scalar_type(), torch::kFloat);
#else
  EXPECT_FALSE(tp::compat::autocast_supported(c10::kPrivateUse1));
  EXPECT_THROW(tp::compat::AutocastGuard guard(c10::kPrivateUse1, torch::kHalf), c10::Error);
#endif
}

}  // namespace
