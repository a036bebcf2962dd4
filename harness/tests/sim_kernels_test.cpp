// The sim's own kernels and dispatch table (cpu_copies.cpp, cuda_kernels.cpp, rnn_cells.cpp,
// kernels.cpp, attention.cpp), each found by PyTorch's op_db and module_db or torchvision's models
// on sim:0 (torchplace.conformance): what failed there before, as a user's C++ would meet it. They
// compute as the CPU does: bit for bit, and without warnings the CPU does not give.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <torchplace/sim/sim.h>
#include "raised_message.h"

namespace {

using tp_test::message_of;

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

// A convolution's forward and backward on sim:0 equal the CPU's (1.13.1 raised
// "convolution_overrideable not implemented" for every convolution: no CNN ran).
TEST(SimKernels, ConvolutionForwardAndBackwardMatchTheCpu) {
  torch::manual_seed(3);
  torch::nn::Conv2d cpu(torch::nn::Conv2dOptions(3, 4, 3).padding(1));
  torch::nn::Conv2d sim(torch::nn::Conv2dOptions(3, 4, 3).padding(1));
  sim->weight.data().copy_(cpu->weight.data());
  sim->bias.data().copy_(cpu->bias.data());
  sim->to(tp::sim::device());
  const torch::Tensor input = torch::randn({2, 3, 5, 5});
  const torch::Tensor on_cpu = cpu(input), on_sim = sim(input.to(tp::sim::device()));
  ASSERT_EQ(on_sim.device(), tp::sim::device());
  EXPECT_TRUE(torch::equal(on_sim.cpu(), on_cpu));
  const torch::Tensor cotangent = torch::randn(on_cpu.sizes());
  on_cpu.backward(cotangent);
  on_sim.backward(cotangent.to(tp::sim::device()));
  // Within float rounding: 1e-6 apart in this process (measured), bit for bit in the Python
  // sweep (torchplace.conformance, nn.functional.conv2d).
  EXPECT_TRUE(torch::allclose(sim->weight.grad().cpu(), cpu->weight.grad(), 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(sim->bias.grad().cpu(), cpu->bias.grad(), 1e-5, 1e-5));
}

// A copy of a conjugate view (complex outputs of eigvals and FFTs) resolves it, rather than
// recursing through LibTorch's conjugate fallback until the stack overflows.
TEST(SimKernels, CopyOfAConjugateViewResolvesIt) {
  const torch::Tensor host = torch::randn({3}, torch::kComplexFloat);
  const torch::Tensor conj = host.to(tp::sim::device()).conj();
  ASSERT_TRUE(conj.is_conj());
  EXPECT_TRUE(torch::equal(conj.cpu().resolve_conj(), host.conj().resolve_conj()));
  EXPECT_TRUE(
      torch::equal(torch::fft::fft(host.to(tp::sim::device())).cpu(), torch::fft::fft(host)));
}

// group_norm takes the CPU kernel on sim:0, as CUDA takes its own, not the composite whose
// batch_norm divides by an empty batch's size (SIGFPE killed the process).
TEST(SimKernels, GroupNormOfAnEmptyBatchRuns) {
  const torch::Tensor input = torch::randn({0, 4, 3});
  const torch::Tensor on_sim = torch::group_norm(input.to(tp::sim::device()), 2);
  EXPECT_EQ(on_sim.sizes(), input.sizes());
  EXPECT_EQ(on_sim.device(), tp::sim::device());
}

// linalg_eigvals computes on the CPU and copies back, as its CUDA branch does.
TEST(SimKernels, EigvalsRunsAndMatchesTheCpu) {
  const torch::Tensor a = torch::randn({4, 4}, torch::kDouble);
  const torch::Tensor on_sim = at::linalg_eigvals(a.to(tp::sim::device()));
  EXPECT_EQ(on_sim.device(), tp::sim::device());
  EXPECT_TRUE(torch::equal(on_sim.cpu(), at::linalg_eigvals(a)));
}

// An operator with a CPU kernel and no CUDA one is refused as CUDA refuses it
// (native_functions.yaml: _add_relu has CPU kernels only in every listed version).
TEST(SimKernels, AnOperatorWithoutACudaKernelIsRefused) {
  const torch::Tensor x = torch::randn({3}).to(tp::sim::device());
  const std::string message = message_of([&] { at::_add_relu(x, x); });
  EXPECT_NE(message.find("Could not run 'aten::_add_relu'"), std::string::npos) << message;
  EXPECT_EQ(message_of([] { at::_add_relu(torch::randn({3}), torch::randn({3})); }), "");
}

// Sparse tensors are not simulated: refused naming that limit.
TEST(SimKernels, SparseTensorsAreRefusedByName) {
  const std::string message = message_of([] { torch::eye(3).to_sparse().to(tp::sim::device()); });
  EXPECT_NE(message.find("sparse tensors are not simulated"), std::string::npos) << message;
}

// Made on the sim from a dense tensor of the sim (the fallback's CPU kernel returns a sparse
// tensor): refused there, naming the limit, not left to fail in a later composite kernel
// (2.14.1: "col_indices expected sparse row compressed tensor layout but got SparseCsr").
TEST(SimKernels, SparseResultsOfTheSimAreRefusedByName) {
  const torch::Tensor dense = torch::eye(3).to(tp::sim::device());
  std::string message = message_of([&] { dense.to_sparse(); });
  EXPECT_NE(message.find("sparse tensors are not simulated"), std::string::npos) << message;
  message = message_of([&] { dense.to_sparse_csr(); });
#if TORCH_VERSION_MAJOR < 2  // 1.13.1 refuses a compressed layout on privateuseone itself
  EXPECT_NE(message.find("Could not run 'new_compressed_tensor'"), std::string::npos) << message;
#else
  EXPECT_NE(message.find("sparse tensors are not simulated"), std::string::npos) << message;
#endif
}

// A factory function given sim:0 returns a tensor on sim:0 (triu_indices has no tensor argument
// for the fallback to go by).
TEST(SimKernels, FactoryFunctionsKeepTheirDevice) {
  const auto options = torch::TensorOptions().dtype(torch::kLong).device(tp::sim::device());
  EXPECT_EQ(torch::triu_indices(3, 3, 0, options).device(), tp::sim::device());
}

// The fused LSTM and GRU cells that 2.x calls for an input on sim:0 (RNN.cpp) compute CUDA's cell
// math, and their gradients flow: the same as the unfused cell on the CPU.
TEST(SimKernels, FusedRnnCellsMatchTheUnfusedCell) {
  torch::manual_seed(5);
  const torch::Tensor input_gates = torch::randn({3, 20}), hidden_gates = torch::randn({3, 20});
  const torch::Tensor cx = torch::randn({3, 5});
  const auto on_cpu = [&](const torch::Tensor& gates) {
    const auto chunks = gates.chunk(4, 1);
    const torch::Tensor cy = chunks[1].sigmoid() * cx + chunks[0].sigmoid() * chunks[2].tanh();
    return std::make_tuple(chunks[3].sigmoid() * cy.tanh(), cy);
  };
  const torch::Tensor leaf = input_gates.clone().requires_grad_();
  const auto [hy, cy] = on_cpu(leaf + hidden_gates);
  (hy.sum() + 2 * cy.sum()).backward();
  const torch::Tensor sim_leaf = input_gates.to(tp::sim::device()).requires_grad_();
  const auto fused = at::_thnn_fused_lstm_cell(sim_leaf, hidden_gates.to(tp::sim::device()),
                                               cx.to(tp::sim::device()));
  EXPECT_TRUE(torch::equal(std::get<0>(fused).cpu(), hy));
  (std::get<0>(fused).sum() + 2 * std::get<1>(fused).sum()).backward();
  EXPECT_TRUE(torch::equal(sim_leaf.grad().cpu(), leaf.grad()));
  const torch::Device sim = tp::sim::device();
  const torch::Tensor hx = cx.to(sim);
  const auto gru =
      at::_thnn_fused_gru_cell(input_gates.narrow(1, 0, 15).to(tp::sim::device()),
                               hidden_gates.narrow(1, 0, 15).to(tp::sim::device()), hx);
  EXPECT_EQ(std::get<0>(gru).sizes(), cx.sizes());
  // Without bias, as nn.LSTM and nn.GRU(bias=False) call them on 2.13.0: undefined bias tensors.
  const auto unbiased = at::_thnn_fused_lstm_cell(sim_leaf.detach(), hidden_gates.to(sim),
                                                  cx.to(sim), at::Tensor(), at::Tensor());
  EXPECT_TRUE(torch::equal(std::get<0>(unbiased).cpu(), hy.detach()));
  const auto gru_unbiased = at::_thnn_fused_gru_cell(input_gates.narrow(1, 0, 15).to(sim),
                                                     hidden_gates.narrow(1, 0, 15).to(sim), hx,
                                                     at::Tensor(), at::Tensor());
  EXPECT_TRUE(torch::equal(std::get<0>(gru_unbiased).cpu(), std::get<0>(gru).cpu()));
}

}  // namespace

// Operators with a composite kernel beside their CPU and CUDA ones (kernels.cpp) run the CPU
// kernel on sim:0, bit for bit; before, sim:0 ran the decomposition (1e-7 to 1e-6 off the CPU).
TEST(SimKernels, OperatorsWithACompositeKernelRunTheCpuKernel) {
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
TEST(SimKernels, ReducedLossesWarnAsOnTheCpu) {
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
TEST(SimKernels, ReductionsOverViewsThatAreNotDenseSumAsOnTheCpu) {
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
TEST(SimKernels, WritesTheSchemaDoesNotDeclareReachTheSimsTensors) {
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
TEST(SimKernels, AttentionTakesTheCpusAlgorithm) {
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
