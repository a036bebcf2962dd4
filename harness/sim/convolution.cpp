// Convolutions on the simulated device. LibTorch's `convolution` picks a backend by the input's
// device (aten/src/ATen/native/Convolution.cpp, select_conv_backend, in 1.13.1 and 2.6.0): an
// input that is neither CPU nor CUDA (nor MPS, ...) gets `Overrideable`, and its
// convolution_overrideable and convolution_backward_overrideable raise "not implemented" unless
// the device registers them. The sim does: the fallback's device check (the wrapper's, as
// cudnn_convolution's on CUDA), then the CPU's `convolution` / `convolution_backward` on CPU
// copies, the results on the input's device. Autograd is LibTorch's own formula for the
// overrideable pair (derivatives.yaml), so gradients flow as on CUDA.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include "sim_internal.h"

namespace tp::sim::detail {
namespace {

// Every tensor argument at the top of `stack` (`count` of them) copied to the CPU.
void arguments_to_cpu(torch::jit::Stack& stack, size_t count) {
  for (size_t index = stack.size() - count; index < stack.size(); ++index) {
    if (stack[index].isTensor() && stack[index].toTensor().defined())
      stack[index] = stack[index].toTensor().cpu();
  }
}

void results_to(torch::jit::Stack& stack, size_t count, c10::Device device) {
  for (size_t index = stack.size() - count; index < stack.size(); ++index) {
    if (stack[index].isTensor() && stack[index].toTensor().defined())
      stack[index] = stack[index].toTensor().to(device);
  }
}

// Checks as the fallback does, then calls `target` (the CPU operator with these arguments, and
// `insert` placed before argument `at`) and moves its results to the arguments' device.
void redirect(const c10::OperatorHandle& op, torch::jit::Stack* stack, const char* target,
              size_t at = 0, c10::IValue insert = {}) {
  const c10::FunctionSchema& schema = op.schema();
  const c10::optional<c10::Device> device = check_devices(schema, *stack);
  TORCH_INTERNAL_ASSERT(device.has_value(), "tp::sim: ", schema.name(), " without a device");
  const size_t arguments = schema.arguments().size();
  {
    const FallbackScope own_copies;  // not the user's copies (transfer log)
    arguments_to_cpu(*stack, arguments);
  }
  if (!insert.isNone()) stack->insert(stack->end() - arguments + at, std::move(insert));
  const auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(target, "");
  handle.callBoxed(stack);
  const FallbackScope own_copies;
  results_to(*stack, handle.schema().returns().size(), *device);
}

void convolution(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  redirect(op, stack, "aten::convolution");
}

// convolution_backward takes the bias's sizes (argument 3) where the overrideable one has none:
// the bias, when there is one, has one element per output channel, grad_output's dimension 1.
void convolution_backward(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const size_t first = stack->size() - op.schema().arguments().size();
  const int64_t channels = (*stack)[first].toTensor().size(1);
  redirect(op, stack, "aten::convolution_backward", 3, c10::IValue(std::vector<int64_t>{channels}));
}

}  // namespace

void register_convolution() {
  static auto* aten = new torch::Library(torch::Library::IMPL, "aten",
                                         c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
  aten->impl("convolution_overrideable",
             torch::CppFunction::makeFromBoxedFunction<&convolution>());
  aten->impl("convolution_backward_overrideable",
             torch::CppFunction::makeFromBoxedFunction<&convolution_backward>());
}

}  // namespace tp::sim::detail
