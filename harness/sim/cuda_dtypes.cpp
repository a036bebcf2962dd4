// The dtypes CUDA's kernels refuse, per LibTorch version (cuda_dtypes.inc, generated from each
// version's source by cuda_dtypes.py; README "Dtypes CUDA refuses"). The fallback runs the CPU
// kernel, which takes dtypes CUDA's does not (`"addmm_cuda" not implemented for 'Long'`); here
// the sim refuses them first, in CUDA's words: an AT_DISPATCH's "\"<name>\" not implemented for
// '<dtype>'" (as the installed LibTorch's AT_DISPATCH raises it), or a TORCH_CHECK's own text.
// A row may hold for a >= 1-D argument only (a 0-dim one takes another path: sort's,
// Sorting.cpp:919 @1.13.1), and not when some tensor argument is empty (a kernel returns before
// its dispatch then: addmm's, Blas.cpp:201 @1.13.1).
#include <ATen/Context.h>
#include <ATen/Dispatch.h>
#include <torch/version.h>

#include <bitset>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim_internal.h"

#define TP_SIM_CUDA_DTYPES(...)
#include "cuda_dtypes.inc"  // the version list
#undef TP_SIM_CUDA_DTYPES

namespace tp::sim::detail {
namespace dtypes {  // named: the sim is unity-built, and cuda_kernels.cpp has a Row of its own
namespace {

struct Row {
  const char* name;
  const char* overload;
  const char* argument;  // the argument whose dtype decides, or "return:N"
  const char* dims;      // for which of its ranks: "any", "1+" (>= 1-D), "0"
  const char* empty;     // "1": also when some tensor argument is empty
  const char* kind;      // "dispatch", or the check macro
  const char* message;   // the dispatch's name, or the check's text
  const char* runs;      // the dtypes CUDA runs, comma-separated
  const char* where;     // file:line in that version's source
  bool present[TP_SIM_CUDA_DTYPE_VERSIONS];
};

#define TP_SIM_CUDA_DTYPES(name, overload, argument, dims, empty, kind, message, runs, where, ...) \
  {name, overload, argument, dims, empty, kind, message, runs, where, {__VA_ARGS__}},
constexpr Row kRows[] = {
#include "cuda_dtypes.inc"
};
#undef TP_SIM_CUDA_DTYPES

// The newest listed version not newer than the installed LibTorch (the first for an older one).
int dtype_column() {
  static const char* const kVersions[] = {TP_SIM_CUDA_DTYPE_VERSION_LIST};
  return newest_column(kVersions, TP_SIM_CUDA_DTYPE_VERSIONS, TORCH_VERSION_MAJOR,
                       TORCH_VERSION_MINOR);
}

using DtypeSet = std::bitset<256>;  // indexed by c10::ScalarType

// The dtypes a comma-separated list names (those the installed LibTorch has).
DtypeSet named(const std::string& names) {
  DtypeSet found;
  std::stringstream list(names);
  for (std::string name; std::getline(list, name, ',');) {
    for (int index = 0; index < static_cast<int>(c10::ScalarType::NumOptions); ++index) {
      if (name == c10::toString(static_cast<c10::ScalarType>(index))) found.set(index);
    }
  }
  return found;
}

struct Check {
  const Row* row;
  DtypeSet refused;  // the column's dtypes that CUDA does not run here
};

// "aten::name.overload" -> its checks in the installed version's column.
const std::unordered_map<std::string, std::vector<Check>>& checks_by_operator() {
  static const auto* checks = [] {
    static const char* const kNames[] = {TP_SIM_CUDA_DTYPE_NAMES};
    const DtypeSet universe = named(kNames[dtype_column()]);
    auto* found = new std::unordered_map<std::string, std::vector<Check>>();
    for (const Row& row : kRows) {
      if (row.present[dtype_column()])
        (*found)[std::string("aten::") + row.name + "." + row.overload].push_back(
            {&row, universe & ~named(row.runs)});
    }
    return found;
  }();
  return *checks;
}

const std::vector<Check>* checks_of(const std::string& qualified) {
  const auto& checks = checks_by_operator();
  const auto found = checks.find(qualified);
  return found == checks.end() ? nullptr : &found->second;
}

// Whether the installed LibTorch's AT_DISPATCH raises NotImplementedError (2.14.1's Dispatch.h,
// TORCH_CHECK_NOT_IMPLEMENTED) or c10::Error (1.13.1's and 2.6.0's, AT_ERROR / TORCH_CHECK).
bool dispatch_raises_not_implemented() {
  static const bool raises = [] {
    try {
      AT_DISPATCH_SWITCH(c10::ScalarType::Long, "tp_sim_probe",
                         AT_DISPATCH_CASE(c10::ScalarType::Float, [&] {}));
    } catch (const c10::NotImplementedError&) {
      return true;
    } catch (const c10::Error&) {
    }
    return false;
  }();
  return raises;
}

[[noreturn]] void refuse(const Row& row, c10::ScalarType dtype) {
  const std::string kind = row.kind;
  if (kind == "dispatch") {
    const std::string text =
        std::string("\"") + row.message + "\" not implemented for '" + c10::toString(dtype) + "'";
    TORCH_CHECK_NOT_IMPLEMENTED(!dispatch_raises_not_implemented(), text);
    TORCH_CHECK(false, text);
  }
  TORCH_CHECK_NOT_IMPLEMENTED(kind != "TORCH_CHECK_NOT_IMPLEMENTED", row.message);
  TORCH_CHECK_TYPE(kind != "TORCH_CHECK_TYPE", row.message);
  TORCH_CHECK_VALUE(kind != "TORCH_CHECK_VALUE", row.message);
  TORCH_CHECK_INDEX(kind != "TORCH_CHECK_INDEX", row.message);
  TORCH_CHECK(false, row.message);
}

// `value` an empty tensor, or a tensor list holding none: the one listed operator taking a list,
// _amp_foreach_non_finite_check_and_unscale_, returns before its checks only for an empty list
// (AmpKernels.cu:93 @1.13.1, :92 @2.6.0), not for an empty tensor in it.
bool has_empty_tensor(const c10::IValue& value) {
  if (value.isTensor()) return value.toTensor().defined() && value.toTensor().numel() == 0;
  return value.isTensorList() && value.toTensorList().empty();
}

// The dtype `value` carries where `row` holds for it: a tensor's of the row's ranks, or a
// ScalarType argument's (an int on the stack).
c10::optional<c10::ScalarType> dtype_of(const c10::IValue& value, const c10::Argument& argument,
                                        const Row& row) {
  const std::string dims = row.dims;
  if (value.isTensor() && value.toTensor().defined()) {
    const bool zero_dim = value.toTensor().dim() == 0;
    if (dims == "any" || (dims == "0") == zero_dim) return value.toTensor().scalar_type();
  } else if (value.isInt() && dims == "any" &&
             argument.type()->str().find("ScalarType") != std::string::npos) {
    return static_cast<c10::ScalarType>(value.toInt());
  }
  return c10::nullopt;
}

// Applies the checks whose argument is an input (`results` false) or a result (`results` true)
// to the values at the top of the stack; with `empty` (some argument was), those holding then.
void apply(const std::vector<Check>& checks, const std::vector<c10::Argument>& slots,
           const torch::jit::Stack& stack, bool results, bool empty) {
  const size_t first = stack.size() - slots.size();
  for (const Check& check : checks) {
    const std::string argument = check.row->argument;
    if ((argument.rfind("return:", 0) == 0) != results) continue;
    if (empty && std::string(check.row->empty) != "1") continue;
    for (size_t index = 0; index < slots.size(); ++index) {
      const bool named =
          results ? argument == "return:" + std::to_string(index) : slots[index].name() == argument;
      const auto dtype =
          named ? dtype_of(stack[first + index], slots[index], *check.row) : c10::nullopt;
      if (dtype && check.refused.test(static_cast<size_t>(*dtype))) refuse(*check.row, *dtype);
    }
  }
}

bool any_empty(const torch::jit::Stack& stack, size_t count) {
  for (size_t index = stack.size() - count; index < stack.size(); ++index) {
    if (has_empty_tensor(stack[index])) return true;
  }
  return false;
}

std::string qualified(const c10::FunctionSchema& schema) {
  return schema.name() + "." + schema.overload_name();
}

}  // namespace
}  // namespace dtypes

c10::optional<bool> refuse_cuda_dtype(const c10::FunctionSchema& schema,
                                      const torch::jit::Stack& stack) {
  const auto* checks = dtypes::checks_of(dtypes::qualified(schema));
  if (checks == nullptr) return c10::nullopt;
  const bool empty = dtypes::any_empty(stack, schema.arguments().size());
  dtypes::apply(*checks, schema.arguments(), stack, /*results=*/false, empty);
  return empty;
}

void refuse_cuda_result_dtype(const c10::FunctionSchema& schema, const torch::jit::Stack& stack,
                              bool empty) {
  const auto* checks = dtypes::checks_of(dtypes::qualified(schema));
  if (checks != nullptr) dtypes::apply(*checks, schema.returns(), stack, /*results=*/true, empty);
}

// A convolution's dtype as CUDA refuses it. _select_conv_backend (Convolution.cpp:1112 @1.13.1,
// :1202 @2.6.0) sends a non-empty input (1-d seen as 2-d) to CUDA's depthwise kernels when
// is_depthwise (:318 @1.13.1, :605 @2.6.0) holds and cuDNN's channels-last format does not apply
// (use_cudnn_depthwise; ConvUtils.h cudnn_conv_suggest_memory_format): they dispatch
// (_conv_depthwise2d, conv_depthwise3d: the table's rows). Else to cuDNN, whose use_cudnn tests no
// dtype (:184 @1.13.1, :419 @2.6.0) and whose getCudnnDataTypeFromScalarType throws
// std::runtime_error for a dtype outside kCudnn (cudnn/Types.cpp:7-30 @1.13.1 with cuDNN >= 8.2,
// as PyTorch's wheels; :7-25 @2.6.0). With cuDNN off CUDA takes its slow kernels: not refused here.
void refuse_cuda_convolution_dtype(const c10::FunctionSchema& schema,
                                   const torch::jit::Stack& stack) {
  check_devices(schema, stack);  // CUDA's wrapper checks the devices first
  const size_t first = stack.size() - schema.arguments().size();
  const at::Tensor& input = stack[first].toTensor();
  const at::Tensor& weight = stack[first + 1].toTensor();
  if (input.dim() < 3 || input.size(0) == 0 || input.size(1) == 0 || input.numel() == 0) return;
  const c10::ScalarType dtype = input.scalar_type();
  const int64_t groups = stack[first + 8].toInt();
  const bool depthwise = !stack[first + 6].toBool() && input.dim() <= 5 &&
                         input.size(1) == groups && groups > 1 && weight.size(0) % groups == 0;
  const auto format =
      weight.dim() == 5 ? c10::MemoryFormat::ChannelsLast3d : c10::MemoryFormat::ChannelsLast;
  const bool channels_last =
      dtype != c10::ScalarType::Double && weight.dim() >= 4 &&
      (input.suggest_memory_format() == format || weight.suggest_memory_format() == format);
  if (depthwise && !(channels_last && at::globalContext().userEnabledCuDNN())) {
    const auto* checks = dtypes::checks_of(input.dim() == 5 ? "aten::conv_depthwise3d."
                                                            : "aten::_conv_depthwise2d.");
    for (const dtypes::Check& check : checks != nullptr ? *checks : std::vector<dtypes::Check>{}) {
      if (check.refused.test(static_cast<size_t>(dtype))) dtypes::refuse(*check.row, dtype);
    }
    return;
  }
  static const auto kCudnn = dtypes::named("QInt8,Char,Float,Double,Half,BFloat16,Int,Byte");
  if (at::globalContext().userEnabledCuDNN() && !kCudnn.test(static_cast<size_t>(dtype)))
    throw std::runtime_error(std::string("getCudnnDataTypeFromScalarType() not supported for ") +
                             c10::toString(dtype));
}

}  // namespace tp::sim::detail
