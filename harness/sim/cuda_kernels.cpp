// Where a PrivateUse1 device's default dispatch is not CUDA's, per LibTorch version
// (cuda_kernels.inc, generated from native_functions.yaml by cuda_kernels.py):
// - operators with CPU, CUDA and composite kernels run the sim's fallback (the CPU kernel), not
//   the composite, as CUDA runs its own kernel;
// - operators with a CPU kernel and no CUDA or composite one are refused, as CUDA refuses them.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <string>
#include <unordered_set>

#include "sim_internal.h"

#define TP_SIM_CPU_KERNEL(...)
#define TP_SIM_NO_CUDA_KERNEL(...)
#include "cuda_kernels.inc"
#undef TP_SIM_CPU_KERNEL
#undef TP_SIM_NO_CUDA_KERNEL
#define TP_SIM_NOCHECK(...)
#include "device_checks.inc"  // the version columns
#undef TP_SIM_NOCHECK
static_assert(TP_SIM_CUDA_KERNEL_VERSIONS == TP_SIM_DEVICE_CHECK_VERSIONS,
              "cuda_kernels.inc and device_checks.inc must list the same versions");

namespace tp::sim::detail {
namespace {

struct Row {
  const char* name;
  const char* overload;
  bool present[TP_SIM_DEVICE_CHECK_VERSIONS];  // per column of device_checks.inc
};

#define TP_SIM_CPU_KERNEL(name, overload, ...) {name, overload, {__VA_ARGS__}},
#define TP_SIM_NO_CUDA_KERNEL(...)
constexpr Row kCpuKernelFirst[] = {
#include "cuda_kernels.inc"
};
#undef TP_SIM_CPU_KERNEL
#undef TP_SIM_NO_CUDA_KERNEL

#define TP_SIM_CPU_KERNEL(...)
#define TP_SIM_NO_CUDA_KERNEL(name, overload, ...) {name, overload, {__VA_ARGS__}},
constexpr Row kNoCudaKernel[] = {
#include "cuda_kernels.inc"
};
#undef TP_SIM_CPU_KERNEL
#undef TP_SIM_NO_CUDA_KERNEL

std::string qualified(const Row& row) {
  return std::string(row.name) + (*row.overload ? std::string(".") + row.overload : "");
}

// CPU-only operators the sim runs all the same: its scaled_dot_product_attention takes the CPU's
// fused algorithm (attention.cpp), which reaches it as these, where CUDA runs fused kernels of
// its own, of other names. Called directly, they run on sim:0 and not on CUDA (README).
constexpr const char* kTheSimsAttention[] = {
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention_for_cpu_backward"};

const std::unordered_set<std::string>& no_cuda_kernel() {
  static const auto* names = [] {
    auto* found = new std::unordered_set<std::string>();
    for (const Row& row : kNoCudaKernel) {
      if (row.present[version_column()]) found->insert("aten::" + qualified(row));
    }
    for (const char* name : kTheSimsAttention) found->erase(std::string("aten::") + name);
    return found;
  }();
  return *names;
}

}  // namespace

void refuse_without_cuda_kernel(const c10::FunctionSchema& schema) {
  const std::string name =
      schema.name() + (schema.overload_name().empty() ? "" : "." + schema.overload_name());
  // LibTorch's own words for an operator without a kernel for the device (Dispatcher.cpp).
  TORCH_CHECK_NOT_IMPLEMENTED(no_cuda_kernel().count(name) == 0, "Could not run '", schema.name(),
                              "' with arguments from the '", c10::toString(sim_key()),
                              "' backend. (tp::sim: LibTorch has no CUDA kernel "
                              "for it, native_functions.yaml, so a CUDA device refuses it too.)");
}

void register_cuda_kernels() {
  for (const Row& row : kCpuKernelFirst) {
    if (row.present[version_column()]) register_fallback_kernel(qualified(row));
  }
}

}  // namespace tp::sim::detail
