// The sim's kernels on paths sim_kernels_test.cpp does not take: the fused GRU cell's backward
// (rnn_cells.cpp), convolution_backward_overrideable with and without a bias (cpu_copies.cpp), a
// batch norm without running statistics (fallback.cpp, hidden_writes), a view the fallback copies
// with its strides (kernels.cpp, to_copy) and an output into a conjugate view (kernels.cpp). Each
// against the CPU.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include <torchplace/sim/sim.h>
#include "sim_gradients.h"

namespace sim_kernel_paths_test {  // unity-built with the other harness tests
namespace {

// The inputs of a GRU cell, gradients wanted: input gates, hidden gates, hx, input and hidden bias.
std::vector<torch::Tensor> gru_leaves(const torch::Device& device) {
  torch::manual_seed(7);
  const std::vector<torch::Tensor> values = {torch::randn({3, 12}), torch::randn({3, 12}),
                                             torch::randn({3, 4}), torch::randn({12}),
                                             torch::randn({12})};
  std::vector<torch::Tensor> leaves;
  for (const torch::Tensor& value : values) leaves.push_back(value.to(device).requires_grad_());
  return leaves;
}

// CUDA's GRU cell math (cuda/RNN.cu), unfused, as on the CPU.
torch::Tensor unfused_gru_cell(const std::vector<torch::Tensor>& in) {
  const auto input = (in[0] + in[3]).chunk(3, 1), hidden = (in[1] + in[4]).chunk(3, 1);
  const torch::Tensor reset = (input[0] + hidden[0]).sigmoid();
  const torch::Tensor update = (input[1] + hidden[1]).sigmoid();
  const torch::Tensor fresh = (input[2] + reset * hidden[2]).tanh();
  return (in[2] - fresh) * update + fresh;
}

// _thnn_fused_gru_cell's backward (_thnn_fused_gru_cell_backward, which 2.x calls for an input on
// sim:0) gives each of the five inputs the unfused cell's gradient on the CPU.
TEST(SimKernels, FusedGruCellBackwardMatchesTheUnfusedCell) {
  const std::vector<torch::Tensor> cpu = gru_leaves(torch::kCPU);
  const std::vector<torch::Tensor> sim = gru_leaves(tp::sim::device());
  const torch::Tensor cotangent = torch::randn({3, 4});
  const torch::Tensor hy = unfused_gru_cell(cpu);
  hy.backward(cotangent);
  const auto fused = at::_thnn_fused_gru_cell(sim[0], sim[1], sim[2], sim[3], sim[4]);
  ASSERT_TRUE(torch::allclose(std::get<0>(fused).cpu(), hy, 1e-6, 1e-6));
  std::get<0>(fused).backward(cotangent.to(tp::sim::device()));
  const char* const names[] = {"input_gates", "hidden_gates", "hx", "input_bias", "hidden_bias"};
  tp_test::expect_same_gradients(sim, cpu, names);
}

// convolution_overrideable's autograd (derivatives.yaml) calls convolution_backward_overrideable,
// which the sim answers with the CPU's convolution_backward, the bias's sizes added: the input's,
// the weight's and the bias's gradients equal the CPU's.
TEST(SimKernels, OverrideableConvolutionBackwardWithABiasMatchesTheCpu) {
  torch::manual_seed(11);
  const torch::Tensor input = torch::randn({2, 3, 6, 6}), weight = torch::randn({5, 3, 3, 3});
  const torch::Tensor bias = torch::randn({5}), cotangent = torch::randn({2, 5, 4, 4});
  const std::vector<int64_t> ones = {1, 1}, zeros = {0, 0};
  std::vector<torch::Tensor> cpu = {input.requires_grad_(), weight.requires_grad_(),
                                    bias.requires_grad_()};
  at::convolution(cpu[0], cpu[1], cpu[2], ones, zeros, ones, false, zeros, 1).backward(cotangent);
  std::vector<torch::Tensor> sim;
  for (const torch::Tensor& leaf : cpu)
    sim.push_back(leaf.detach().to(tp::sim::device()).requires_grad_());
  const torch::Tensor out =
      at::convolution_overrideable(sim[0], sim[1], sim[2], ones, zeros, ones, false, zeros, 1);
  out.backward(cotangent.to(tp::sim::device()));
  const char* const names[] = {"input", "weight", "bias"};
  for (size_t index = 0; index < cpu.size(); ++index) {
    ASSERT_TRUE(sim[index].grad().defined()) << names[index];
    EXPECT_EQ(sim[index].grad().device(), tp::sim::device()) << names[index];
    EXPECT_TRUE(torch::allclose(sim[index].grad().cpu(), cpu[index].grad(), 1e-5, 1e-5))
        << names[index];
  }
}

// Without a bias, convolution_backward_overrideable is asked for no bias gradient: the CPU's
// convolution_backward leaves that result undefined, and the sim returns it so (an undefined
// tensor has no device to move to), with the input's and the weight's gradients the CPU's.
TEST(SimKernels, OverrideableConvolutionBackwardWithoutABiasMatchesTheCpu) {
  torch::manual_seed(12);
  const torch::Tensor input = torch::randn({2, 3, 6, 6}), weight = torch::randn({5, 3, 3, 3});
  const torch::Tensor cotangent = torch::randn({2, 5, 4, 4});
  const std::vector<int64_t> ones = {1, 1}, zeros = {0, 0};
  std::vector<torch::Tensor> cpu = {input.requires_grad_(), weight.requires_grad_()};
  at::convolution(cpu[0], cpu[1], {}, ones, zeros, ones, false, zeros, 1).backward(cotangent);
  std::vector<torch::Tensor> sim;
  for (const torch::Tensor& leaf : cpu)
    sim.push_back(leaf.detach().to(tp::sim::device()).requires_grad_());
  const torch::Tensor out =
      at::convolution_overrideable(sim[0], sim[1], {}, ones, zeros, ones, false, zeros, 1);
  out.backward(cotangent.to(tp::sim::device()));
  const char* const names[] = {"input", "weight"};
  for (size_t index = 0; index < cpu.size(); ++index) {
    ASSERT_TRUE(sim[index].grad().defined()) << names[index];
    EXPECT_EQ(sim[index].grad().device(), tp::sim::device()) << names[index];
    EXPECT_TRUE(torch::allclose(sim[index].grad().cpu(), cpu[index].grad(), 1e-5, 1e-5))
        << names[index];
  }
}

// A view with gaps whose size-1 dimension has a huge stride (as_strided allows any: that
// dimension reaches no second element). The fallback's CPU copy keeps the view's strides and
// copies only the elements from its first to its last (to_copy's span): the one dimension of
// size 1 adds none, where counting its stride would ask for 2^50 elements.
TEST(SimKernels, AViewsSizeOneDimensionAddsNothingToItsCopy) {
  const torch::Tensor base = torch::arange(4.0);
  const auto view = [](const torch::Tensor& tensor) {
    return tensor.as_strided({2, 1}, {2, int64_t{1} << 50});
  };
  ASSERT_FALSE(view(base).is_non_overlapping_and_dense());
  EXPECT_TRUE(torch::equal(view(base.to(tp::sim::device())).sum().cpu(), view(base).sum()));
}

// An out= operator writing into a conjugate view of a sim tensor: the fallback computes on the
// CPU and copies the result back into the view with _copy_from_and_resize, which resolves the
// conjugate bit itself (kernels.cpp); LibTorch's conjugate fallback would copy into a resolved
// clone and leave the output unwritten. mm.out lets a conjugate view through
// (ConjugateFallback.cpp), and the CPU writes it: so does CUDA.
TEST(SimKernels, AnOutputIntoAConjugateViewIsWritten) {
  torch::manual_seed(13);
  const torch::Tensor a = torch::randn({2, 3}, torch::kComplexFloat);
  const torch::Tensor b = torch::randn({3, 2}, torch::kComplexFloat);
  const auto product_into_conjugate = [&](const torch::Device& device) {
    const torch::Tensor out = torch::zeros({2, 2}, torch::kComplexFloat).to(device);
    torch::Tensor view = out.conj();
    at::mm_out(view, a.to(device), b.to(device));
    return out.cpu();
  };
  const torch::Tensor on_cpu = product_into_conjugate(torch::kCPU);
  ASSERT_TRUE(torch::allclose(on_cpu.conj(), torch::mm(a, b)));
  EXPECT_TRUE(torch::equal(product_into_conjugate(tp::sim::device()), on_cpu));
}

// A batch norm that tracks no running statistics passes undefined tensors (nn::BatchNorm2d) or
// None (an empty optional) where native_batch_norm's hidden writes go (fallback.cpp,
// hidden_writes): it runs, as on the CPU, with nothing to copy back.
TEST(SimKernels, BatchNormWithoutRunningStatisticsMatchesTheCpu) {
  const auto normed = [](const torch::Device& device) {
    torch::manual_seed(0);
    torch::nn::BatchNorm2d norm(torch::nn::BatchNorm2dOptions(3).track_running_stats(false));
    norm->to(device);
    const torch::Tensor input = torch::randn({4, 3, 5, 5}).add(2).to(device);
    const auto none = at::native_batch_norm(input, norm->weight, norm->bias, c10::nullopt,
                                            c10::nullopt, true, 0.1, 1e-5);
    return std::vector<torch::Tensor>{norm->forward(input), std::get<0>(none)};
  };
  const std::vector<torch::Tensor> on_cpu = normed(torch::kCPU), on_sim = normed(tp::sim::device());
  for (size_t index = 0; index < on_cpu.size(); ++index) {  // the module's, then None's
    EXPECT_EQ(on_sim[index].device(), tp::sim::device()) << index;
    EXPECT_TRUE(torch::equal(on_sim[index].cpu(), on_cpu[index])) << index;
  }
}

}  // namespace
}  // namespace sim_kernel_paths_test
