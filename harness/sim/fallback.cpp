// The checking fallback: every operator without a kernel of its own on the simulated device comes
// here. It checks the tensor arguments with LibTorch's own check (the one its generated CUDA
// wrappers call), with CUDA's exemptions, then runs the CPU kernel (at::native::cpu_fallback) and
// puts fresh outputs on the simulated device.
#include <ATen/core/op_registration/adaption.h>
#include <ATen/native/CPUFallback.h>

#include <atomic>

#include "sim_internal.h"

namespace tp::sim::detail {
namespace {

std::atomic<long long> calls{0};

// CUDA exemption 1: TensorIterator (element-wise) ops accept a 0-dim CPU tensor as a scalar.
// The sim applies it to every op; CUDA's wrapper-checked ops (mm, index_select, nll_loss, ...)
// would refuse one (listed in the README).
bool is_cpu_scalar(const at::Tensor& tensor) {
  return tensor.defined() && tensor.device().is_cpu() && tensor.dim() == 0;
}

// CUDA exemption 2: advanced indexing takes CPU indices (index.Tensor and index_put_ have
// device_check: NoCheck and move the indices to the device).
bool cpu_indices_allowed(const c10::FunctionSchema& schema, const std::string& argument) {
  static const char* const kOps[] = {"aten::index", "aten::index_put", "aten::index_put_",
                                     "aten::_index_put_impl", "aten::_index_put_impl_"};
  if (argument != "indices") return false;
  for (const char* op : kOps) {
    if (schema.name() == op) return true;
  }
  return false;
}

class DeviceCheck {
 public:
  explicit DeviceCheck(const c10::FunctionSchema& schema)
      : method_("wrapper_SIM_" + schema.name().substr(schema.name().find("::") + 2) +
                (schema.overload_name().empty() ? "" : "_" + schema.overload_name())) {}

  void tensor(const at::Tensor& tensor, const std::string& argument) {
    if (!tensor.defined() || is_cpu_scalar(tensor)) return;
    c10::impl::check_and_update_common_device(common_, tensor, method_.c_str(), argument.c_str());
  }

  void value(const c10::IValue& value, const std::string& argument) {
    if (value.isTensor()) {
      tensor(value.toTensor(), argument);
    } else if (value.isTensorList()) {
      for (const at::Tensor& each : value.toTensorVector()) tensor(each, argument);
    } else if (value.isList()) {  // Tensor?[] (indices)
      for (const c10::IValue& each : value.toListRef()) {
        if (each.isTensor()) tensor(each.toTensor(), argument);
      }
    }
  }

  c10::optional<c10::Device> common() const { return common_; }

 private:
  std::string method_;
  c10::optional<c10::Device> common_;
};

// cpu_fallback puts outputs on the device of the first tensor argument; when that is a CPU
// scalar (2 * x written as a tensor op), move the fresh outputs to the simulated device.
void place_outputs(const c10::FunctionSchema& schema, torch::jit::Stack& stack,
                   const c10::optional<c10::Device>& common) {
  if (!common || !is_sim(*common)) return;
  const size_t count = schema.returns().size();
  for (size_t index = 0; index < count; ++index) {
    if (schema.returns()[index].alias_info() != nullptr) continue;  // in-place or out=: as given
    c10::IValue& value = stack[stack.size() - count + index];
    if (value.isTensor() && value.toTensor().defined() && value.toTensor().device().is_cpu()) {
      value = value.toTensor().to(*common);
    }
  }
}

}  // namespace

void checked_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  ++calls;
  const c10::FunctionSchema& schema = op.schema();
  const auto& arguments = schema.arguments();
  DeviceCheck check(schema);
  const size_t first = stack->size() - arguments.size();
  for (size_t index = 0; index < arguments.size(); ++index) {
    if (!checks_enabled() || cpu_indices_allowed(schema, arguments[index].name())) continue;
    check.value((*stack)[first + index], arguments[index].name());
  }
  at::native::cpu_fallback(op, stack);
  place_outputs(schema, *stack, check.common());
}

long long checked_call_count() { return calls.load(); }

}  // namespace tp::sim::detail
