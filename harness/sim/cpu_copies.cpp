// Operators the sim runs on CPU copies itself, rather than through cpu_fallback (fallback.cpp):
//
// - Convolutions. LibTorch's `convolution` picks a backend by the input's device
//   (aten/src/ATen/native/Convolution.cpp, select_conv_backend, 1.13.1 and 2.6.0): an input that
//   is neither CPU nor CUDA (nor MPS, ...) gets `Overrideable`, whose convolution_overrideable and
//   convolution_backward_overrideable raise "not implemented" unless the device registers them.
//   The sim does: the CPU's `convolution` / `convolution_backward` on CPU copies. Autograd is
//   LibTorch's own formula for the overrideable pair (derivatives.yaml).
// - linalg_eigvals.out, whose composite kernel computes into `values` directly unless `values` is
//   CUDA (aten/src/ATen/native/BatchLinearAlgebra.cpp:3135 @1.13.1; 2.6.0 tests !is_cpu()
//   instead, line 3143): on sim:0 it mixed the sim's `values` with its CPU work tensors. The
//   fallback computes it on the CPU and copies the result back, as CUDA's branch does.
// - Sparse tensors: not simulated. Any operator on a sparse tensor of the sim, or making one there,
//   is refused naming that limit (LibTorch's own "Could not run ... 'SparsePrivateUse1' backend"
//   before).
//
// Each first runs the fallback's device check (check_devices), as CUDA's wrapper would.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <string>
#include <utility>
#include <vector>

#include "sim_internal.h"

namespace tp::sim::detail {
namespace {

// Every tensor argument at the top of `stack` (`count` of them) replaced by a CPU copy.
void arguments_to_cpu(torch::jit::Stack& stack, size_t count) {
  const FallbackScope own_copies;  // not the user's copies (transfer log)
  for (size_t index = stack.size() - count; index < stack.size(); ++index) {
    if (stack[index].isTensor() && stack[index].toTensor().defined())
      stack[index] = stack[index].toTensor().cpu();
  }
}

void results_to(torch::jit::Stack& stack, size_t count, c10::Device device) {
  const FallbackScope own_copies;
  for (size_t index = stack.size() - count; index < stack.size(); ++index) {
    if (stack[index].isTensor() && stack[index].toTensor().defined())
      stack[index] = stack[index].toTensor().to(device);
  }
}

c10::Device checked_device(const c10::FunctionSchema& schema, const torch::jit::Stack& stack) {
  const c10::optional<c10::Device> device = check_devices(schema, stack);
  TORCH_INTERNAL_ASSERT(device.has_value(), "tp::sim: ", schema.name(), " without a device");
  return *device;
}

// Checks, then calls `target` (the CPU operator taking these arguments, with `insert` placed
// before argument `at`) and moves its results to the arguments' device.
void redirect(const c10::OperatorHandle& op, torch::jit::Stack* stack, const char* target,
              size_t at = 0, c10::IValue insert = {}) {
  const size_t arguments = op.schema().arguments().size();
  const c10::Device device = checked_device(op.schema(), *stack);
  arguments_to_cpu(*stack, arguments);
  if (!insert.isNone()) stack->insert(stack->end() - arguments + at, std::move(insert));
  const auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(target, "");
  handle.callBoxed(stack);
  results_to(*stack, handle.schema().returns().size(), device);
}

void convolution(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  refuse_cuda_convolution_dtype(op.schema(), *stack);  // as CUDA's backends (cuda_dtypes.cpp)
  redirect(op, stack, "aten::convolution");
}

// convolution_backward takes the bias's sizes (argument 3) where the overrideable one has none:
// the bias, when there is one, has one element per output channel, grad_output's dimension 1.
void convolution_backward(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const size_t first = stack->size() - op.schema().arguments().size();
  const int64_t channels = (*stack)[first].toTensor().size(1);
  redirect(op, stack, "aten::convolution_backward", 3, c10::IValue(std::vector<int64_t>{channels}));
}

[[noreturn]] void refuse_sparse_operator(const c10::OperatorHandle& op, torch::jit::Stack*) {
  refuse_sparse(op.schema().name());
}

template <void (*kernel)(const c10::OperatorHandle&, torch::jit::Stack*)>
torch::CppFunction boxed() {
  return torch::CppFunction::makeFromBoxedFunction<kernel>();
}

}  // namespace

[[noreturn]] void refuse_sparse(const std::string& operator_name) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "tp::sim: sparse tensors are not simulated (", operator_name,
                              " with a sparse tensor on the simulated device): "
                              "densify it first (to_dense()), or test sparse code on the CPU");
}

// 2.14.1 made a CSR tensor on the sim from the CPU kernel's (to_sparse_csr), whose every later use
// failed in LibTorch's composite kernels ("col_indices expected sparse row compressed tensor
// layout but got SparseCsr"): refused where it is made instead.
void refuse_sparse_outputs(const c10::FunctionSchema& schema, const torch::jit::Stack& stack) {
  const size_t count = schema.returns().size();
  for (size_t index = stack.size() - count; index < stack.size(); ++index) {
    const c10::IValue& value = stack[index];
    if (value.isTensor() && value.toTensor().defined() &&
        value.toTensor().layout() != c10::kStrided && is_sim(value.toTensor().device()))
      refuse_sparse(schema.name());
  }
}

void register_cpu_copies() {
  static auto* aten =
      new torch::Library(torch::Library::IMPL, "aten", sim_key(), __FILE__, __LINE__);
  aten->impl("convolution_overrideable", boxed<&convolution>());
  aten->impl("convolution_backward_overrideable", boxed<&convolution_backward>());
  register_fallback_kernel("linalg_eigvals.out");
  static auto* sparse = new torch::Library(
      torch::Library::IMPL, "_", sim_key(c10::DispatchKey::SparsePrivateUse1), __FILE__, __LINE__);
  sparse->fallback(boxed<&refuse_sparse_operator>());
#if TP_SIM_AT_LEAST(2, 6)  // compressed layouts per backend: in 2.6.0's DispatchKey.h, not 1.13.1's
  // (1.13.1 refuses a CSR tensor on privateuseone itself: "Unsupported device type")
  static auto* compressed =
      new torch::Library(torch::Library::IMPL, "_", sim_key(c10::DispatchKey::SparseCsrPrivateUse1),
                         __FILE__, __LINE__);
  compressed->fallback(boxed<&refuse_sparse_operator>());
#endif
}

}  // namespace tp::sim::detail
