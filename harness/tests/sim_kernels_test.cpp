// The sim's own kernels and dispatch table (cpu_copies.cpp, cuda_kernels.cpp), each found by
// PyTorch's op_db and module_db on sim:0 (torchplace.conformance): what failed there before, as a
// user's C++ would meet it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include <torchplace/sim/sim.h>
#include "raised_message.h"

namespace {

using tp_test::message_of;

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

// BatchNorm's running statistics move on sim:0 as on the CPU: native_batch_norm writes them
// although its schema does not say so, and the sim copies them back.
TEST(SimKernels, BatchNormRunningStatisticsMove) {
  torch::nn::BatchNorm2d cpu(3), sim(3);
  sim->to(tp::sim::device());
  const torch::Tensor input = torch::randn({4, 3, 2, 2});
  cpu(input);
  sim(input.to(tp::sim::device()));
  EXPECT_GT(cpu->running_mean.abs().sum().item<float>(), 0.0f);
  EXPECT_TRUE(torch::equal(sim->running_mean.cpu(), cpu->running_mean));
  EXPECT_TRUE(torch::equal(sim->running_var.cpu(), cpu->running_var));
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
  const torch::Tensor on_sim = torch::linalg::eigvals(a.to(tp::sim::device()));
  EXPECT_EQ(on_sim.device(), tp::sim::device());
  EXPECT_TRUE(torch::equal(on_sim.cpu(), torch::linalg::eigvals(a)));
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
  const torch::Tensor hx = cx.to(tp::sim::device());
  const auto gru =
      at::_thnn_fused_gru_cell(input_gates.narrow(1, 0, 15).to(tp::sim::device()),
                               hidden_gates.narrow(1, 0, 15).to(tp::sim::device()), hx);
  EXPECT_EQ(std::get<0>(gru).sizes(), cx.sizes());
}

}  // namespace
