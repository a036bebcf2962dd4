// CUDA's checks past the generated wrapper, for the NoCheck operators: TensorIterator's CPU-scalar
// rule (aten/src/ATen/TensorIterator.cpp, compute_types) and the kernel launchers that refuse a
// CPU operand (aten/src/ATen/native/cuda/Loops.cuh, gpu_kernel), per operator and version as
// scalar_rules.py read them from each version's source (scalar_rules.inc); and searchsorted's own
// sorter check (BucketizationUtils.h). README "Which operators check".
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <torch/version.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "sim_internal.h"

#include "scalar_rules.inc"  // the version list only: the rows are under #ifdef

namespace {
struct ScalarCell {
  const char* verdict;   // accept, iterator, kernel, undecided, or "" (no such operator)
  const char* launcher;  // for kernel: the launcher whose assert refuses
  const char* why;       // the source sites, file:line
};
struct ScalarRuleRow {
  const char* name;
  const char* overload;
  ScalarCell at[TP_SIM_SCALAR_RULE_VERSIONS];
};
struct LauncherCell {
  const char* condition;  // TORCH_INTERNAL_ASSERT's condition, as written
  const char* site;       // file:line of the assert
  const char* message;    // its message, {arg} and {iter.device(arg)} to fill; "" when none
};
struct LauncherRow {
  const char* name;
  LauncherCell at[TP_SIM_SCALAR_RULE_VERSIONS];
};
#define TP_SIM_SCALAR_RULE(name, overload, ...) {name, overload, {__VA_ARGS__}},
constexpr ScalarRuleRow kScalarRuleRows[] = {
#include "scalar_rules.inc"
};
#undef TP_SIM_SCALAR_RULE
#define TP_SIM_SCALAR_LAUNCHER(name, ...) {name, {__VA_ARGS__}},
constexpr LauncherRow kLauncherRows[] = {
#include "scalar_rules.inc"
};
#undef TP_SIM_SCALAR_LAUNCHER
struct AsCalledRow {
  const char* name;
  const char* overload;
  int present[TP_SIM_SCALAR_RULE_VERSIONS];
};
#define TP_SIM_AS_CALLED(name, overload, ...) {name, overload, {__VA_ARGS__}},
constexpr AsCalledRow kAsCalledRows[] = {
#include "scalar_rules.inc"
};
#undef TP_SIM_AS_CALLED
#define TP_SIM_META_CHECKED(name, overload, ...) {name, overload, {__VA_ARGS__}},
constexpr AsCalledRow kMetaCheckedRows[] = {
#include "scalar_rules.inc"
};
#undef TP_SIM_META_CHECKED
}  // namespace

namespace tp::sim::detail {
namespace {

int scalar_column() {
  static const char* const kVersions[] = {TP_SIM_SCALAR_RULE_VERSION_LIST};
  return newest_column(kVersions, TP_SIM_SCALAR_RULE_VERSIONS, TORCH_VERSION_MAJOR,
                       TORCH_VERSION_MINOR);
}

// Whether the column read is the installed LibTorch's own major.minor (2.14.1 reads 2.6.0's).
bool exact_column() {
  static const char* const kVersions[] = {TP_SIM_SCALAR_RULE_VERSION_LIST};
  return same_minor(kVersions[scalar_column()], TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR);
}

// A structured iterator operator's `iterator` verdict from an older column is not applied: its
// meta function, which the generic structured kernel runs on the sim, is the installed version's
// own (2.6.0's addcmul refuses a CPU tensor2; 2.13.0's meta device takes it).
bool stale_iterator(const char* name, const char* overload, IteratorRule rule) {
  if (rule != IteratorRule::kIterator || exact_column()) return false;
  for (const AsCalledRow& row : kMetaCheckedRows) {
    if (std::string(row.name) == name && std::string(row.overload) == overload)
      return row.present[scalar_column()] != 0;
  }
  return false;
}

IteratorRule parse(const std::string& verdict) {
  if (verdict == "accept") return IteratorRule::kAccept;
  if (verdict == "iterator") return IteratorRule::kIterator;
  if (verdict == "kernel") return IteratorRule::kKernel;
  return IteratorRule::kUndecided;  // undecided, or no such TensorIterator operator
}

// One operand of the emulated TensorIterator: outputs (written arguments) first, then inputs.
struct Operand {
  at::Tensor tensor;
  bool is_output;
  std::string argument;  // its name in the schema
};

std::vector<Operand> operands_of(const c10::FunctionSchema& schema,
                                 const torch::jit::Stack& stack) {
  const auto& arguments = schema.arguments();
  const size_t first = stack.size() - arguments.size();
  std::vector<Operand> outputs, inputs;
  for (size_t index = 0; index < arguments.size(); ++index) {
    const c10::IValue& value = stack[first + index];
    if (!value.isTensor()) continue;  // lists, scalars, None: not an iterator's operand
    const auto* alias = arguments[index].alias_info();
    const bool written = alias != nullptr && alias->isWrite();
    const std::string& name = arguments[index].name();
    if (written) outputs.push_back({value.toTensor(), true, name});
    if (!arguments[index].is_out()) inputs.push_back({value.toTensor(), false, name});
  }
  // A functional form (a structured operator's own kernel, as for mse_loss) writes into outputs
  // its iterator makes: operands still, undefined here, ahead of the inputs.
  if (outputs.empty()) {
    for (const c10::Argument& result : schema.returns()) {
      if (result.alias_info() == nullptr) outputs.push_back({at::Tensor(), true, result.name()});
    }
  }
  outputs.insert(outputs.end(), inputs.begin(), inputs.end());
  return outputs;
}

// gpu_kernel & co refuse an operand not on the device (Loops.cuh, JitLoops.cuh): CUDA's message,
// TORCH_INTERNAL_ASSERT's form (c10/util/Exception.h) with the assert's source file and line.
[[noreturn]] void kernel_refuses(const char* launcher, size_t arg, const c10::Device& device) {
  LauncherCell cell{"", "", ""};
  for (const LauncherRow& row : kLauncherRows) {
    if (std::string(row.name) == launcher) cell = row.at[scalar_column()];
  }
  const std::string site = cell.site;
  std::string message = cell.message;
  const auto fill = [&](const std::string& field, const std::string& text) {
    const size_t at = message.find(field);
    if (at != std::string::npos) message.replace(at, field.size(), text);
  };
  fill("{arg}", std::to_string(arg));
  fill("{iter.device(arg)}", device.str());
  TORCH_CHECK(false, cell.condition, " INTERNAL ASSERT FAILED at \"",
              site.substr(0, site.rfind(':')), "\":", site.substr(site.rfind(':') + 1),
              ", please report a bug to PyTorch. ", message);
}

}  // namespace

ScalarRule scalar_rule(const std::string& key) {
  static const auto* rules = [] {
    auto* found = new std::unordered_map<std::string, ScalarRule>();
    for (const ScalarRuleRow& row : kScalarRuleRows) {
      const ScalarCell& cell = row.at[scalar_column()];
      IteratorRule rule = parse(cell.verdict);
      if (stale_iterator(row.name, row.overload, rule)) rule = IteratorRule::kUndecided;
      found->emplace(std::string(row.name) + "." + row.overload, ScalarRule{rule, cell.launcher});
    }
    return found;
  }();
  const auto found = rules->find(key);
  return found == rules->end() ? ScalarRule{IteratorRule::kUndecided, ""} : found->second;
}

// TensorIterator.cpp compute_types (1.13.1 lines 376-378 and 450-485, 2.6.0 lines 395-397 and
// 469-504): the common device is the first operand not on the CPU; a CPU operand passes only if
// the iterator allows CPU scalars, it is an input of 0 dimensions, and it is the first such.
c10::optional<c10::Device> check_iterator(const c10::FunctionSchema& schema,
                                          const torch::jit::Stack& stack, ScalarRule rule) {
  const std::vector<Operand> operands = operands_of(schema, stack);
  c10::optional<c10::Device> common;
  for (const Operand& op : operands) {
    if (!common && op.tensor.defined() && !op.tensor.device().is_cpu()) common = op.tensor.device();
  }
  if (!common) return common;
  const IteratorRule verdict = rule.rule;
  const bool allow = verdict == IteratorRule::kAccept || verdict == IteratorRule::kKernel;
  c10::optional<size_t> scalar;
  std::string refused;  // the argument named after CUDA's message, which names none
  try {
    for (size_t index = 0; index < operands.size(); ++index) {
      const at::Tensor& tensor = operands[index].tensor;
      if (!tensor.defined()) continue;
      refused = operands[index].argument;
      if (allow && !operands[index].is_output && tensor.dim() == 0 && tensor.device().is_cpu()) {
        TORCH_CHECK(!scalar, "Trying to pass too many CPU scalars to non-CPU kernel!");
        scalar = index;
      } else if (tensor.device() != *common) {
        TORCH_CHECK(false,
                    "Expected all tensors to be on the same device, but found at least two "
                    "devices, ",
                    *common, " and ", tensor.device(), "!");
      }
    }
    if (scalar) refused = operands[*scalar].argument;
    if (scalar && verdict == IteratorRule::kKernel)
      kernel_refuses(rule.launcher, *scalar, c10::kCPU);
  } catch (c10::Error& error) {
    add_place(error, schema, refused);
    throw;
  }
  return common;
}

// searchsorted's sorter is keyword-only (the wrapper skips it); CUDA's kernel checks it against
// the boundaries (BucketizationUtils.h searchsorted_pre_check: 1.13.1 line 128, 2.6.0 line 127).
void check_own(const c10::FunctionSchema& schema, const torch::jit::Stack& stack) {
  if (schema.name() != "aten::searchsorted") return;
  const size_t first = stack.size() - schema.arguments().size();
  const auto sorted = schema.argumentIndexWithName("sorted_sequence");
  const auto sorter = schema.argumentIndexWithName("sorter");
  if (!sorted || !sorter || !stack[first + *sorter].isTensor()) return;
  const at::Tensor& boundaries = stack[first + *sorted].toTensor();
  const at::Tensor& order = stack[first + *sorter].toTensor();
  TORCH_CHECK(order.device() == boundaries.device(),
              "torch.searchsorted(): sorter and boundary "
              "tensors should have same device type, but got sorter tensor device type ",
              order.device(), " and input value tensor device type ", boundaries.device());
}

// A structured operator's functional and in-place forms reach the sim as the out= form their
// generic kernel calls, after its meta function's iterator; an operator with a CUDA kernel and a
// CompositeExplicitAutograd one, as its decomposition. Where CUDA's wrapper of the form called
// checks (scalar_rules.inc TP_SIM_AS_CALLED), the fallback is that form's kernel, so that the
// wrapper's check comes first, as on CUDA: clamp_min.Tensor's refuses a 0-dim CPU min that
// clamp_min.Tensor_out's iterator would take.
void register_as_called() {
  for (const AsCalledRow& row : kAsCalledRows) {
    if (!row.present[scalar_column()]) continue;
    const c10::OperatorName name(std::string("aten::") + row.name, row.overload);
    if (!c10::Dispatcher::singleton().findSchema(name)) continue;  // not in this LibTorch
    const std::string qualified = std::string(row.name) + (*row.overload ? "." : "") + row.overload;
    register_fallback_kernel(qualified);
  }
}

}  // namespace tp::sim::detail
