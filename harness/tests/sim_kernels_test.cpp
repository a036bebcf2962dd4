// Operators that the sim registers a kernel for beside its fallback (kernels.cpp), so that they
// compute as the CPU does: bit for bit, and without warnings the CPU does not give.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <torchplace/sim/sim.h>

namespace {

#if TORCH_VERSION_MAJOR < 2
namespace warning_handlers = c10::Warning;
#else
namespace warning_handlers = c10::WarningUtils;  // 2.0 moved them; c10::Warning is a class
#endif

// The warnings raised while it lives (the handler's signature changed in 2.0).
class WarningsSeen : public c10::WarningHandler {
 public:
  WarningsSeen() : previous_(warning_handlers::get_warning_handler()) {
    warning_handlers::set_warning_handler(this);
  }
  ~WarningsSeen() override { warning_handlers::set_warning_handler(previous_); }
#if TORCH_VERSION_MAJOR < 2
  void process(const c10::SourceLocation&, const std::string& message, bool) override {
    messages.push_back(message);
  }
#else
  void process(const c10::Warning& warning) override { messages.push_back(warning.msg()); }
#endif
  std::vector<std::string> messages;

 private:
  c10::WarningHandler* previous_;
};

std::string joined(const std::vector<std::string>& messages) {
  std::string all;
  for (const std::string& message : messages) all += "'" + message + "' ";
  return all;
}

}  // namespace

// Operators with a composite kernel beside their CPU and CUDA ones (kernels.cpp) run the CPU
// kernel on sim:0, bit for bit; before, sim:0 ran the decomposition (1e-7 to 1e-6 off the CPU).
TEST(Sim, OperatorsWithACompositeKernelRunTheCpuKernel) {
  torch::manual_seed(0);
  const torch::Tensor x = torch::randn({2, 8, 5, 5}) * 3 + 1, g = torch::randn({2, 8, 5, 5});
  const torch::Tensor w = torch::randn({8}), b = torch::randn({8}), m = torch::randn({8, 8});
  const auto layer_norm_grad = [&](const torch::Device& d) {
    const torch::Tensor input = x.to(d).requires_grad_();
    const auto out = torch::layer_norm(input.permute({0, 2, 3, 1}), {8}, w.to(d), b.to(d));
    return torch::autograd::grad({out}, {input}, {g.to(d).permute({0, 2, 3, 1})})[0];
  };
  const std::vector<std::pair<std::string, std::function<torch::Tensor(torch::Device)>>> ops = {
      {"layer_norm",
       [&](auto d) { return torch::layer_norm(x.to(d), {5}, w.narrow(0, 0, 5).to(d)); }},
      {"layer_norm backward", layer_norm_grad},
      {"group_norm", [&](auto d) { return torch::group_norm(x.to(d), 2, w.to(d), b.to(d)); }},
      {"addr", [&](auto d) { return torch::addr(m.to(d), w.to(d), b.to(d), 0.7, 1.3); }},
      {"silu_backward", [&](auto d) { return torch::silu_backward(g.to(d), x.to(d)); }},
      {"mish_backward", [&](auto d) { return torch::mish_backward(g.to(d), x.to(d)); }}};
  for (const auto& [name, op] : ops) {
    const torch::Tensor on_sim = op(tp::sim::device()), on_cpu = op(torch::kCPU);
    EXPECT_EQ(on_sim.device(), tp::sim::device()) << name;
    EXPECT_TRUE(torch::equal(on_sim.cpu(), on_cpu))
        << name << ": max difference " << (on_sim.cpu() - on_cpu).abs().max().item<float>();
  }
}

// mse_loss and smooth_l1_loss reduced: on sim:0 LibTorch's generic kernel sized the output to a
// scalar and called the out= variant, whose CPU kernel resized it back to the inputs' shape with
// "An output with one or more elements was resized" (torchvision's detection losses warned on
// every step). The sim runs the CPU's functional kernel instead, as CUDA runs its own.
TEST(Sim, ReducedLossesWarnAsOnTheCpu) {
  torch::manual_seed(0);
  const torch::Tensor a = torch::randn({6, 4}), b = torch::randn({6, 4});
  const std::vector<std::pair<std::string, std::function<torch::Tensor(torch::Device)>>> losses = {
      {"mse_loss sum",
       [&](auto d) { return torch::mse_loss(a.to(d), b.to(d), at::Reduction::Sum); }},
      {"mse_loss mean",
       [&](auto d) { return torch::mse_loss(a.to(d), b.to(d), at::Reduction::Mean); }},
      {"smooth_l1_loss sum",
       [&](auto d) { return torch::smooth_l1_loss(a.to(d), b.to(d), at::Reduction::Sum, 0.1); }}};
  for (const auto& [name, loss] : losses) {
    const torch::Tensor on_cpu = loss(torch::kCPU);
    const WarningsSeen seen;
    const torch::Tensor on_sim = loss(tp::sim::device());
    EXPECT_TRUE(seen.messages.empty()) << name << " on sim:0 warned: " << joined(seen.messages);
    EXPECT_TRUE(torch::equal(on_sim.cpu(), on_cpu)) << name;
    EXPECT_EQ(on_sim.dim(), 0) << name;
  }
}

// The fallback's CPU copy of a tensor that is not dense keeps its strides (kernels.cpp, to_copy):
// the CPU kernel reads the layout it reads on the CPU. Before, the copy was dense (channels-last
// for the permuted view below) and the sums were 2e-7 to 2e-5 off the CPU's. A user's .cpu() of
// such a tensor is dense, as CUDA's.
TEST(Sim, ReductionsOverViewsThatAreNotDenseSumAsOnTheCpu) {
  torch::manual_seed(0);
  const torch::Tensor buffer = torch::randn({2, 135}), column = torch::randn({3, 1, 50});
  const auto gaps = [&](const torch::Tensor& t) {  // a detection head's gradient, per level
    return t.narrow(1, 0, 60).view({2, 2, 2, 15}).permute({0, 3, 1, 2});
  };
  const auto expanded = [&](const torch::Tensor& t) { return t.expand({3, 33, 50}); };
  const torch::Device sim = tp::sim::device();
  EXPECT_TRUE(torch::equal(gaps(buffer.to(sim)).sum({0, 2, 3}).cpu(), gaps(buffer).sum({0, 2, 3})));
  EXPECT_TRUE(torch::equal(expanded(column.to(sim)).sum().cpu(), expanded(column).sum()));
  const torch::Tensor users = gaps(buffer.to(sim)).cpu();
  EXPECT_TRUE(users.is_non_overlapping_and_dense()) << users.strides();
  EXPECT_TRUE(torch::equal(users, gaps(buffer)));
}

// Writes the schema does not declare (fallback.cpp, hidden_writes): native_batch_norm's running
// statistics (1.13.1 and 2.x) and rrelu_with_noise's noise (1.13.1) reach the sim's tensors.
// Before, a BatchNorm in train mode on sim:0 kept its running mean at 0 and its variance at 1.
TEST(Sim, WritesTheSchemaDoesNotDeclareReachTheSimsTensors) {
  const auto step = [](const torch::Device& device) {
    torch::manual_seed(0);
    torch::nn::BatchNorm2d norm(3);
    norm->to(device);
    norm->train();
    norm->forward(torch::randn({4, 3, 5, 5}).add(2).to(device));
    torch::Tensor noise = torch::zeros({4, 6}).to(device);  // 2.x takes it as Tensor&
    torch::rrelu_with_noise(torch::randn({4, 6}).to(device), noise, 0.1, 0.3, true);
    return std::vector<torch::Tensor>{norm->running_mean, norm->running_var, noise};
  };
  const std::vector<torch::Tensor> on_cpu = step(torch::kCPU), on_sim = step(tp::sim::device());
  EXPECT_FALSE(torch::equal(on_cpu[0], torch::zeros({3}))) << "the CPU's mean did not move";
  for (size_t index = 0; index < on_cpu.size(); ++index) {
    EXPECT_EQ(on_sim[index].device(), tp::sim::device()) << index;
    EXPECT_TRUE(torch::equal(on_sim[index].cpu(), on_cpu[index]))
        << index << ": " << on_sim[index].cpu() << " on the sim, " << on_cpu[index]
        << " on the CPU";
  }
}

// scaled_dot_product_attention takes the CPU's algorithm on sim:0 (attention.cpp): the fused
// flash kernel, forward and backward, bit for bit. Before, sim:0 took the unfused math (1e-7 off
// the CPU forward, 1e-6 in ViT's gradients). Skipped before 2.5, which keeps the math path.
TEST(Sim, AttentionTakesTheCpusAlgorithm) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
  torch::manual_seed(0);
  const torch::Tensor q = torch::randn({2, 12, 5, 64}), k = torch::randn({2, 12, 5, 64}),
                      v = torch::randn({2, 12, 5, 64}), g = torch::randn({2, 12, 5, 64});
  const auto attend = [&](const torch::Device& d) {
    std::vector<torch::Tensor> inputs = {q.to(d).requires_grad_(), k.to(d).requires_grad_(),
                                         v.to(d).requires_grad_()};
    const torch::Tensor out = at::scaled_dot_product_attention(inputs[0], inputs[1], inputs[2]);
    std::vector<torch::Tensor> grads = torch::autograd::grad({out}, inputs, {g.to(d)});
    grads.insert(grads.begin(), out);
    return grads;
  };
  const std::vector<torch::Tensor> on_cpu = attend(torch::kCPU), on_sim = attend(tp::sim::device());
  for (size_t index = 0; index < on_cpu.size(); ++index) {  // the output, then dq, dk, dv
    EXPECT_EQ(on_sim[index].device(), tp::sim::device()) << index;
    EXPECT_TRUE(torch::equal(on_sim[index].cpu(), on_cpu[index]))
        << index << ": max difference "
        << (on_sim[index].cpu() - on_cpu[index]).abs().max().item<float>();
  }
#else
  GTEST_SKIP() << "scaled_dot_product_attention's choice through a device's DispatchStub: 2.5+";
#endif
}
