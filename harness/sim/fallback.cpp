// The checking fallback: every operator without a kernel of its own on the simulated device comes
// here. It checks the tensor arguments as LibTorch's CUDA build does for that operator, per
// version (device_checks.inc, README "Which operators check"): the generated wrapper's check
// (c10::impl::check_and_update_common_device on `out` and positional tensors, no exemption)
// unless the operator is `device_check: NoCheck`, where TensorIterator's rule and the kernel's
// launcher as read from the version's source (cuda_rules.cpp, scalar_rules.inc), CPU indices or
// masked_fill's own check apply. Then it runs the CPU kernel
// (at::native::cpu_fallback) and puts fresh outputs on the inputs' simulated device.
#include <ATen/core/op_registration/adaption.h>
#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim_internal.h"

// The table's version list, then its rows as data (as 938 blocks of code it took about 130 s to
// compile at -O2 -g, now about 16 s).
#define TP_SIM_NOCHECK(...)
#include "device_checks.inc"
#undef TP_SIM_NOCHECK

namespace {
struct NoCheckRow {
  const char* name;
  const char* overload;
  const char* comment;                        // the yaml's comment
  int present[TP_SIM_DEVICE_CHECK_VERSIONS];  // 1 where the version lists it, per column
};
#define TP_SIM_NOCHECK(name, overload, comment, ...) {name, overload, comment, {__VA_ARGS__}},
constexpr NoCheckRow kNoCheckRows[] = {
#include "device_checks.inc"
};
#undef TP_SIM_NOCHECK
}  // namespace

namespace tp::sim::detail {

int newest_column(const char* const* versions, int count, int major, int minor) {
  const int wanted = major * 100 + minor;
  int column = 0;
  for (int index = 0; index < count; ++index) {
    int listed_major = 0, listed_minor = 0;
    std::sscanf(versions[index], "%d.%d", &listed_major, &listed_minor);
    if (listed_major * 100 + listed_minor <= wanted) column = index;
  }
  return column;
}

bool same_minor(const char* version, int major, int minor) {
  int listed_major = -1, listed_minor = -1;
  return std::sscanf(version, "%d.%d", &listed_major, &listed_minor) == 2 &&
         listed_major == major && listed_minor == minor;
}

// The column of device_checks.inc for LibTorch major.minor.
int version_column(int major, int minor) {
  static const char* const kVersions[] = {TP_SIM_DEVICE_CHECK_VERSION_LIST};
  return newest_column(kVersions, TP_SIM_DEVICE_CHECK_VERSIONS, major, minor);
}

int version_column() { return version_column(TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR); }

namespace {

std::atomic<long long> calls{0};

// "name.overload" -> the yaml's comment, for the operators whose CUDA wrapper does not check.
const std::unordered_map<std::string, std::string>& nocheck_ops() {
  static const auto* ops = [] {
    auto* found = new std::unordered_map<std::string, std::string>();
    const int column = version_column();
    for (const NoCheckRow& row : kNoCheckRows) {
      if (row.present[column])
        found->emplace(std::string(row.name) + "." + row.overload, row.comment);
    }
    return found;
  }();
  return *ops;
}

std::string key_of(const c10::FunctionSchema& schema) {
  return schema.name().substr(schema.name().find("::") + 2) + "." + schema.overload_name();
}

// How the CUDA build checks an operator's tensor arguments (fallback.cpp's header comment).
enum class Rule {
  kWrapper,         // the generated wrapper: out and positional tensors, no exemption
  kTensorIterator,  // NoCheck: scalar_rules.inc's reading (cuda_rules.cpp), else a 0-dim CPU
                    // input passes as a scalar
  kIndexing,        // NoCheck, as TensorIterator, and CPU indices accepted (moved to the device)
  kMaskedFill,      // NoCheck: the kernel's own check, mask on self's device, value any 0-dim
};

Rule rule_of(const c10::FunctionSchema& schema) {
  const auto& ops = nocheck_ops();
  const std::string key = key_of(schema);
  if (ops.find(key) == ops.end()) return Rule::kWrapper;
  const std::string name = key.substr(0, key.find('.'));
  if (name == "masked_fill_" || name == "masked_fill") return Rule::kMaskedFill;
  if (name == "index" || name == "index_put_" || name == "index_put" ||
      name == "_index_put_impl_" || name == "_index_put_impl") {
    return Rule::kIndexing;
  }
  return Rule::kTensorIterator;  // the yaml's TensorIterator ops, foreach (slow path), the rest
}

bool is_cpu_scalar(const at::Tensor& tensor) {
  return tensor.defined() && tensor.device().is_cpu() && tensor.dim() == 0;
}

// The sim's own wrapper name; as CUDA, CUDA's (wrapper_addmm on 1.13, wrapper_CUDA_addmm on 2.x:
// CUDA_RULES.md "Wrapper names and order").
std::string wrapper_prefix() {
  if (sim_type() != c10::DeviceType::CUDA) return "wrapper_SIM_";
  return TP_SIM_AT_LEAST(2, 0) ? "wrapper_CUDA_" : "wrapper_";
}

class DeviceCheck {
 public:
  DeviceCheck(const c10::FunctionSchema& schema, bool cpu_scalars)
      : cpu_scalars_(cpu_scalars),
        method_(wrapper_prefix() + schema.name().substr(schema.name().find("::") + 2) +
                (schema.overload_name().empty() ? "" : "_" + schema.overload_name())) {}

  // `written`: an in-place self or an out= argument, which CUDA's TensorIterator never takes as
  // a CPU scalar (TensorIterator.cpp, compute_types: `!op.is_output`).
  void tensor(const at::Tensor& tensor, const std::string& argument, bool written) {
    if (!tensor.defined() || (cpu_scalars_ && !written && is_cpu_scalar(tensor))) return;
    c10::impl::check_and_update_common_device(common_, tensor, method_.c_str(), argument.c_str());
  }

  void value(const c10::IValue& value, const c10::Argument& argument) {
    const bool written = argument.alias_info() != nullptr && argument.alias_info()->isWrite();
    if (value.isTensor()) {
      tensor(value.toTensor(), argument.name(), written);
    } else if (value.isTensorList()) {
      for (const at::Tensor& each : value.toTensorVector()) tensor(each, argument.name(), written);
    } else if (value.isList()) {  // Tensor?[] (indices)
      for (const c10::IValue& each : value.toListRef()) {
        if (each.isTensor()) tensor(each.toTensor(), argument.name(), written);
      }
    }
  }

  c10::optional<c10::Device> common() const { return common_; }

 private:
  bool cpu_scalars_;
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

// CUDA's masked_fill_ kernel (aten/src/ATen/native/cuda/Indexing.cu, masked_fill__cuda): the
// mask on self's device; the Tensor overload's value is a 0-dim tensor, read with item().
void check_masked_fill(const torch::jit::Stack& stack, size_t first) {
  const at::Tensor& self = stack[first].toTensor();
  const at::Tensor& mask = stack[first + 1].toTensor();
  TORCH_CHECK(self.device() == mask.device(),
              "expected self and mask to be on the same device, but got mask on ", mask.device(),
              " and self on ", self.device());
}

void check(const c10::FunctionSchema& schema, const torch::jit::Stack& stack, DeviceCheck& check) {
  const auto& arguments = schema.arguments();
  const size_t first = stack.size() - arguments.size();
  const Rule rule = rule_of(schema);
  if (rule == Rule::kMaskedFill) return check_masked_fill(stack, first);
  // Schema order: positional, then `out` (torchgen checks `out` first; the sim sees structured
  // operators as the out= variant their generic kernel calls, where CUDA checks the functional
  // one, so the positional arguments decide which one the message names, as on CUDA). The
  // wrapper does not check keyword-only arguments; the other rules check every tensor.
  for (size_t index = 0; index < arguments.size(); ++index) {
    const c10::Argument& argument = arguments[index];
    if (rule == Rule::kWrapper && argument.kwarg_only() && !argument.is_out()) continue;
    if (rule == Rule::kIndexing && argument.name() == "indices") continue;
    check.value(stack[first + index], argument);
  }
}

// 1.13's cpu_fallback moves Tensor and Tensor[] arguments to the CPU but not Tensor?[] (index's
// and index_put_'s indices), so a mask on the device reached the CPU kernel ("indices should be
// either on cpu or on the same device as the indexed tensor"). Move those to the CPU first.
void optional_tensor_lists_to_cpu(const c10::FunctionSchema& schema, torch::jit::Stack& stack) {
  const size_t count = schema.arguments().size();
  for (size_t index = stack.size() - count; index < stack.size(); ++index) {
    c10::IValue& value = stack[index];
    if (!value.isList() || value.isTensorList()) continue;
    const auto elements = value.toListRef();
    const bool on_sim = std::any_of(elements.begin(), elements.end(), [](const c10::IValue& each) {
      return each.isTensor() && each.toTensor().defined() && is_sim(each.toTensor().device());
    });
    if (!on_sim) continue;
    c10::List<c10::optional<at::Tensor>> moved;
    for (const c10::IValue& each : elements) {
      const bool defined = each.isTensor() && each.toTensor().defined();  // else None, a slice
      moved.push_back(defined ? c10::optional<at::Tensor>(each.toTensor().cpu()) : c10::nullopt);
    }
    value = c10::IValue(moved);
  }
}

// Arguments that an operator's CPU kernel writes into though its schema does not say so (no
// `(a!)`), by argument name: cpu_fallback copies back only what the schema marks, so the writes
// were lost on sim:0 (BatchNorm's running statistics never moved on 1.13.1; 2.x marks noise).
const std::unordered_map<std::string, std::vector<std::string>>& hidden_writes() {
  static const auto* table = new std::unordered_map<std::string, std::vector<std::string>>{
      {"native_batch_norm", {"running_mean", "running_var"}}, {"rrelu_with_noise", {"noise"}}};
  return *table;
}

// Each sim tensor such an argument holds, swapped for a CPU copy that the kernel writes into:
// the (sim tensor, CPU copy) pairs, to copy back after it ran.
std::vector<std::pair<at::Tensor, at::Tensor>> hidden_writes_to_cpu(
    const c10::FunctionSchema& schema, torch::jit::Stack& stack) {
  std::vector<std::pair<at::Tensor, at::Tensor>> written;
  const auto found = hidden_writes().find(schema.name().substr(schema.name().find("::") + 2));
  if (found == hidden_writes().end()) return written;
  const auto& arguments = schema.arguments();
  const size_t first = stack.size() - arguments.size();
  for (size_t index = 0; index < arguments.size(); ++index) {
    const auto& names = found->second;
    if (arguments[index].alias_info() != nullptr ||  // marked: cpu_fallback copies it back
        std::find(names.begin(), names.end(), arguments[index].name()) == names.end()) {
      continue;
    }
    c10::IValue& value = stack[first + index];
    if (!value.isTensor() || !value.toTensor().defined() || !is_sim(value.toTensor().device())) {
      continue;
    }
    written.emplace_back(value.toTensor(), value.toTensor().cpu());
    value = written.back().second;
  }
  return written;
}

c10::optional<c10::Device> check_as_cuda(const c10::FunctionSchema& schema,
                                         const torch::jit::Stack& stack) {
  const Rule rule = rule_of(schema);
  if (!checks_enabled()) return DeviceCheck(schema, false).common();
  c10::optional<c10::Device> common;
  const ScalarRule scalar = rule == Rule::kTensorIterator
                                ? scalar_rule(key_of(schema))
                                : ScalarRule{IteratorRule::kUndecided, ""};
  if (scalar.rule != IteratorRule::kUndecided) {  // as read from the version's source
    common = check_iterator(schema, stack, scalar);
  } else {
    DeviceCheck device_check(schema, rule != Rule::kWrapper);
    check(schema, stack, device_check);
    common = device_check.common();
  }
  check_own(schema, stack);  // the kernel's own, after the wrapper's
  return common;
}

}  // namespace

c10::optional<c10::Device> check_devices(const c10::FunctionSchema& schema,
                                         const torch::jit::Stack& stack) {
  ++calls;
  try {
    return check_as_cuda(schema, stack);
  } catch (c10::Error& error) {
    add_place(error, schema, "");  // after LibTorch's text: the operator, the user's line
    throw;
  }
}

// A factory function's `device=` (triu_indices and the like have no tensor argument to go by).
c10::optional<c10::Device> device_argument(const c10::FunctionSchema& schema,
                                           const torch::jit::Stack& stack) {
  const size_t first = stack.size() - schema.arguments().size();
  for (size_t index = 0; index < schema.arguments().size(); ++index) {
    const c10::IValue& value = stack[first + index];
    if (schema.arguments()[index].name() == "device" && value.isDevice()) return value.toDevice();
  }
  return c10::nullopt;
}

void checked_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  refuse_without_cuda_kernel(schema);
  c10::optional<c10::Device> common = check_devices(schema, *stack);
  if (!common) common = device_argument(schema, *stack);
  const auto empty_argument = refuse_cuda_dtype(schema, *stack);  // cuda_dtypes.cpp
  record_operator(schema, *stack);  // a forced synchronisation, for the transfer log
  const FallbackScope own_copies;   // the CPU round trip below is the sim's, not the user's
  optional_tensor_lists_to_cpu(schema, *stack);
  const auto written = hidden_writes_to_cpu(schema, *stack);
  at::native::cpu_fallback(op, stack);
  refuse_sparse_outputs(schema, *stack);  // cpu_copies.cpp
  if (empty_argument) refuse_cuda_result_dtype(schema, *stack, *empty_argument);
  for (const auto& [on_sim, on_cpu] : written) on_sim.copy_(on_cpu);
  place_outputs(schema, *stack, common);
}

void register_fallback_kernel(const std::string& qualified) {
  static auto* aten =
      new torch::Library(torch::Library::IMPL, "aten", sim_key(), __FILE__, __LINE__);
  static auto* registered = new std::set<std::string>();  // enable() runs once: no lock
  if (registered->insert(qualified).second)
    aten->impl(qualified.c_str(), torch::CppFunction::makeFromBoxedFunction<&checked_fallback>());
}

long long checked_call_count() { return calls.load(); }

}  // namespace tp::sim::detail
