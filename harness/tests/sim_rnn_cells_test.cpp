// The fused RNN cells (rnn_cells.cpp) on paths sim_kernels_test.cpp does not take: two distinct
// biases, every input's gradient (cx and the biases too), a hidden size that 7 does not divide
// back to itself as 6 would, and the device check CUDA's generated wrapper makes (the cells are
// not `device_check: NoCheck`: device_checks.inc has no row for them). Beside them, a fallback
// path: a batch norm over an expanded input (fallback.cpp, hidden_writes). Each against the CPU.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

#include <torchplace/sim/sim.h>
#include "raised_message.h"
#include "sim_gradients.h"

namespace sim_rnn_cells_test {  // unity-built with the other harness tests
namespace {

using tp_test::expect_same_gradients;
using tp_test::message_of;

std::vector<torch::Tensor> leaves(const std::vector<torch::Tensor>& values,
                                  const torch::Device& device) {
  std::vector<torch::Tensor> found;
  for (const torch::Tensor& value : values)
    found.push_back(value.detach().to(device).requires_grad_());
  return found;
}

// _thnn_fused_lstm_cell with an input and a hidden bias that differ: CUDA's cell math (cuda/RNN.cu,
// gates = input gates + hidden gates + both biases) and, through its backward
// (_thnn_fused_lstm_cell_backward_impl), each of the five inputs' gradient, as the unfused cell's.
TEST(SimRnnCells, FusedLstmCellWithTwoBiasesMatchesTheUnfusedCell) {
  torch::manual_seed(3);
  const std::vector<torch::Tensor> values = {torch::randn({3, 20}), torch::randn({3, 20}),
                                             torch::randn({3, 5}), torch::randn({20}),
                                             torch::randn({20}) * 3};
  const std::vector<torch::Tensor> cpu = leaves(values, torch::kCPU);
  const std::vector<torch::Tensor> sim = leaves(values, tp::sim::device());
  const auto chunks = (cpu[0] + cpu[1] + cpu[3] + cpu[4]).chunk(4, 1);
  const torch::Tensor cy = chunks[1].sigmoid() * cpu[2] + chunks[0].sigmoid() * chunks[2].tanh();
  const torch::Tensor hy = chunks[3].sigmoid() * cy.tanh();
  (hy.sum() + 2 * cy.sum()).backward();
  const auto fused = at::_thnn_fused_lstm_cell(sim[0], sim[1], sim[2], sim[3], sim[4]);
  EXPECT_TRUE(torch::allclose(std::get<0>(fused).cpu(), hy, 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(std::get<1>(fused).cpu(), cy, 1e-6, 1e-6));
  (std::get<0>(fused).sum() + 2 * std::get<1>(fused).sum()).backward();
  const char* const names[] = {"input_gates", "hidden_gates", "cx", "input_bias", "hidden_bias"};
  expect_same_gradients(sim, cpu, names);
}

// _thnn_fused_gru_cell's backward with a hidden size of 8: the workspace holds 7 hidden-sized
// blocks (input gates, hidden gates, hx), which the backward splits again.
TEST(SimRnnCells, FusedGruCellBackwardSplitsAWideWorkspace) {
  torch::manual_seed(9);
  const std::vector<torch::Tensor> values = {torch::randn({2, 24}), torch::randn({2, 24}),
                                             torch::randn({2, 8}), torch::randn({24}),
                                             torch::randn({24})};
  const std::vector<torch::Tensor> cpu = leaves(values, torch::kCPU);
  const std::vector<torch::Tensor> sim = leaves(values, tp::sim::device());
  const auto input = (cpu[0] + cpu[3]).chunk(3, 1), hidden = (cpu[1] + cpu[4]).chunk(3, 1);
  const torch::Tensor reset = (input[0] + hidden[0]).sigmoid();
  const torch::Tensor update = (input[1] + hidden[1]).sigmoid();
  const torch::Tensor fresh = (input[2] + reset * hidden[2]).tanh();
  ((cpu[2] - fresh) * update + fresh).sum().backward();
  std::get<0>(at::_thnn_fused_gru_cell(sim[0], sim[1], sim[2], sim[3], sim[4])).sum().backward();
  const char* const names[] = {"input_gates", "hidden_gates", "hx", "input_bias", "hidden_bias"};
  expect_same_gradients(sim, cpu, names);
}

// A CPU tensor among sim:0 ones is refused by the cell operator itself, naming the operator and
// the argument, as CUDA's generated wrapper's check_and_update_common_device does (on CUDA, 1.13.1:
// "... (when checking argument for argument cx in method wrapper___thnn_fused_lstm_cell)"), not
// by whichever operator inside the cell meets it first.
TEST(SimRnnCells, TheFusedCellsCheckTheirArgumentsAsCudasWrapperDoes) {
  const torch::Device sim = tp::sim::device();
  const torch::Tensor gates = torch::randn({2, 12}, sim), cpu_state = torch::randn({2, 3});
  const torch::Tensor state = cpu_state.to(sim), workspace = torch::randn({2, 21}, sim);
  const std::vector<std::pair<std::string, std::function<void()>>> calls = {
      {"_thnn_fused_lstm_cell", [&] { at::_thnn_fused_lstm_cell(gates, gates, cpu_state); }},
      {"_thnn_fused_lstm_cell_backward_impl",
       [&] {
         at::_thnn_fused_lstm_cell_backward_impl(state, state, cpu_state, state, gates, false);
       }},
      {"_thnn_fused_gru_cell",
       [&] { at::_thnn_fused_gru_cell(gates.narrow(1, 0, 9), gates.narrow(1, 0, 9), cpu_state); }},
      {"_thnn_fused_gru_cell_backward",
       [&] { at::_thnn_fused_gru_cell_backward(cpu_state, workspace, false); }},
  };
  for (const auto& [name, call] : calls) {
    const std::string message = message_of(call);
    EXPECT_NE(message.find("Expected all tensors to be on the same device"), std::string::npos)
        << name << ": " << message;
    EXPECT_NE(message.find("in method wrapper_SIM_" + name + ")"), std::string::npos)
        << name << ": " << message;
  }
}

// A batch norm in train mode over an expanded input (one sample broadcast to a batch), as
// BatchNorm2d calls it: the sim computes the CPU's output and running statistics, and only reads
// the input (a write into it would be refused: its elements share memory).
TEST(SimRnnCells, BatchNormOverAnExpandedInputMatchesTheCpu) {
  const auto normed = [](const torch::Device& device) {
    torch::manual_seed(6);
    const torch::Tensor sample = torch::randn({1, 3, 4, 4}).to(device);
    const torch::Tensor weight = torch::rand({3}).to(device), bias = torch::randn({3}).to(device);
    const torch::Tensor mean = torch::zeros({3}).to(device), var = torch::ones({3}).to(device);
    const auto out = at::native_batch_norm(sample.expand({5, 3, 4, 4}), weight, bias, mean, var,
                                           /*training=*/true, 0.1, 1e-5);
    return std::vector<torch::Tensor>{std::get<0>(out).cpu(), mean.cpu(), var.cpu()};
  };
  const std::vector<torch::Tensor> on_cpu = normed(torch::kCPU), on_sim = normed(tp::sim::device());
  const char* const names[] = {"output", "running_mean", "running_var"};
  for (size_t index = 0; index < on_cpu.size(); ++index)
    EXPECT_TRUE(torch::equal(on_sim[index], on_cpu[index])) << names[index];
}

}  // namespace
}  // namespace sim_rnn_cells_test
