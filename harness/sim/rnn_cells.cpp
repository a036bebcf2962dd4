// The fused RNN cells, which LibTorch has for CUDA only and from 2.x also calls for a PrivateUse1
// input (aten/src/ATen/native/RNN.cpp, LSTMCell and GRUCell: `input.is_cuda() || input.is_xpu()
// || input.is_privateuseone()`, 2.6.0 lines 732 and 768; 1.13.1 asks is_cuda() only). Without
// them an LSTM or GRU on sim:0 raised "Could not run 'aten::_thnn_fused_lstm_cell' ... 'CPU'
// backend" on 2.x. The sim computes CUDA's cell math (cuda/RNN.cu) with ATen operators on the
// device; its workspace holds what its backward needs, which LibTorch's differentiable cell
// backward (a composite) then differentiates:
//   LSTM: the gates before their activations (4 hidden);
//   GRU: input gates + input bias, hidden gates + hidden bias, hx (3 + 3 + 1 hidden).
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <torch/library.h>

#include "sim_internal.h"

namespace tp::sim::detail {
namespace {

// A cell without bias (bias=False) passes its biases as None, or as undefined tensors (2.13.0's
// nn.GRU and nn.LSTM: "Found type undefined input tensor" in the sum before this check).
at::Tensor plus(const at::Tensor& gates, const c10::IValue& bias) {
  return bias.isNone() || !bias.toTensor().defined() ? gates : gates + bias.toTensor();
}

void lstm_cell(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  check_devices(op.schema(), *stack);
  const auto args = torch::jit::last(*stack, 5);
  const at::Tensor gates = plus(plus(args[0].toTensor() + args[1].toTensor(), args[3]), args[4]);
  const at::Tensor cx = args[2].toTensor();
  const auto chunks = gates.chunk(4, 1);
  const at::Tensor cy = chunks[1].sigmoid() * cx + chunks[0].sigmoid() * chunks[2].tanh();
  const at::Tensor hy = chunks[3].sigmoid() * cy.tanh();
  torch::jit::drop(*stack, 5);
  torch::jit::push(*stack, hy, cy, gates);
}

// (grad_hy, grad_cy, cx, cy, workspace, has_bias) -> (grad_gates, grad_cx, grad_bias)
void lstm_cell_backward(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  check_devices(op.schema(), *stack);
  const auto args = torch::jit::last(*stack, 6);
  const at::Tensor gates = args[4].toTensor();
  const auto grads = at::_thnn_differentiable_lstm_cell_backward(
      args[0].toOptional<at::Tensor>(), args[1].toOptional<at::Tensor>(), gates,
      at::zeros_like(gates), {}, {}, args[2].toTensor(), args[3].toTensor());
  const at::Tensor grad_gates = std::get<0>(grads);
  const at::Tensor grad_bias = args[5].toBool() ? grad_gates.sum(0) : at::Tensor();
  torch::jit::drop(*stack, 6);
  torch::jit::push(*stack, grad_gates, std::get<2>(grads), grad_bias);
}

void gru_cell(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  check_devices(op.schema(), *stack);
  const auto args = torch::jit::last(*stack, 5);
  const at::Tensor input_gates = plus(args[0].toTensor(), args[3]);
  const at::Tensor hidden_gates = plus(args[1].toTensor(), args[4]);
  const at::Tensor hx = args[2].toTensor();
  const auto in = input_gates.chunk(3, 1), hidden = hidden_gates.chunk(3, 1);
  const at::Tensor reset = (in[0] + hidden[0]).sigmoid(), update = (in[1] + hidden[1]).sigmoid();
  const at::Tensor fresh = (in[2] + reset * hidden[2]).tanh();
  const at::Tensor hy = (hx - fresh) * update + fresh;
  torch::jit::drop(*stack, 5);
  torch::jit::push(*stack, hy, at::cat({input_gates, hidden_gates, hx}, 1));
}

// (grad_hy, workspace, has_bias) -> (grad_input_gates, grad_hidden_gates, grad_hx,
// grad_input_bias, grad_hidden_bias)
void gru_cell_backward(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  check_devices(op.schema(), *stack);
  const auto args = torch::jit::last(*stack, 3);
  const at::Tensor workspace = args[1].toTensor();
  const int64_t hidden = workspace.size(1) / 7;
  const auto grads = at::_thnn_differentiable_gru_cell_backward(
      args[0].toTensor(), workspace.narrow(1, 0, 3 * hidden),
      workspace.narrow(1, 3 * hidden, 3 * hidden), workspace.narrow(1, 6 * hidden, hidden), {}, {});
  const bool bias = args[2].toBool();
  const at::Tensor input = std::get<0>(grads), hidden_grad = std::get<1>(grads);
  torch::jit::drop(*stack, 3);
  torch::jit::push(*stack, input, hidden_grad, std::get<2>(grads),
                   bias ? input.sum(0) : at::Tensor(), bias ? hidden_grad.sum(0) : at::Tensor());
}

}  // namespace

void register_rnn_cells() {
  static auto* aten =
      new torch::Library(torch::Library::IMPL, "aten", sim_key(), __FILE__, __LINE__);
  aten->impl("_thnn_fused_lstm_cell", torch::CppFunction::makeFromBoxedFunction<&lstm_cell>());
  aten->impl("_thnn_fused_lstm_cell_backward_impl",
             torch::CppFunction::makeFromBoxedFunction<&lstm_cell_backward>());
  aten->impl("_thnn_fused_gru_cell", torch::CppFunction::makeFromBoxedFunction<&gru_cell>());
  aten->impl("_thnn_fused_gru_cell_backward",
             torch::CppFunction::makeFromBoxedFunction<&gru_cell_backward>());
}

}  // namespace tp::sim::detail
