// Autocast on the simulated device: CUDA's cast policy, registered for AutocastPrivateUse1.
//
// LibTorch registers autocast kernels for CUDA, CPU, XPU and MPS only; a PrivateUse1 backend
// brings its own. tp::sim registers exactly CUDA's lists (autocast_mode.h's AT_FORALL_* macros,
// as aten/src/ATen/autocast_mode.cpp does for the Autocast key), so that under
// `AutocastGuard(kPrivateUse1, kHalf)` linear and matmul compute in fp16, losses and softmax in
// fp32, and CPU tensors are left uncast, as on CUDA. The cast ops then dispatch to the sim's
// checking fallback, which raises on a forgotten .to(device).
//
// From LibTorch 2.4: enabling autocast for a device type other than CPU or CUDA needs the
// device-type API (set_autocast_enabled(DeviceType, bool), pytorch PR 124359). 1.13 has no
// AutocastPrivateUse1 key at all. Before 2.4 this registers nothing.
#include <torch/library.h>
#include <torch/version.h>

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#include <ATen/autocast_mode.h>
#define TP_SIM_HAS_AUTOCAST 1
#else
#define TP_SIM_HAS_AUTOCAST 0
#endif

#include "sim_internal.h"

namespace tp::sim::detail {

#if TP_SIM_HAS_AUTOCAST
namespace {

// CUDA's answer to binary_cross_entropy under autocast (its kernel is not in the public header).
at::Tensor binary_cross_entropy_banned(const at::Tensor&, const at::Tensor&,
                                       const std::optional<at::Tensor>&, int64_t) {
  TORCH_CHECK(false,
              "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
              "autocast (tp::sim applies CUDA's autocast policy). Use "
              "binary_cross_entropy_with_logits or BCEWithLogitsLoss, which are safe to autocast.");
}

}  // namespace

void register_autocast() {
  if (sim_type() == c10::DeviceType::CUDA) return;  // as CUDA, LibTorch's own AutocastCUDA applies
  using namespace at;  // the AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE list names Tensor, Scalar
  // Held for the life of the process, like the kernels' Library (kernels.cpp).
  static auto* fallthrough = new torch::Library(
      torch::Library::IMPL, "_", c10::DispatchKey::AutocastPrivateUse1, __FILE__, __LINE__);
  fallthrough->fallback(torch::CppFunction::makeFallthrough());
  static auto* library = new torch::Library(
      torch::Library::IMPL, "aten", c10::DispatchKey::AutocastPrivateUse1, __FILE__, __LINE__);
  torch::Library& m = *library;  // the KERNEL macros register through `m`
#define TP_SIM_LOWER(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define TP_SIM_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define TP_SIM_FP32_OPT(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define TP_SIM_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(TP_SIM_LOWER)
  AT_FORALL_FP32(TP_SIM_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(TP_SIM_FP32_OPT)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(TP_SIM_PROMOTE)
#undef TP_SIM_LOWER
#undef TP_SIM_FP32
#undef TP_SIM_FP32_OPT
#undef TP_SIM_PROMOTE
  m.impl(TORCH_SELECTIVE_NAME("aten::binary_cross_entropy"), TORCH_FN(binary_cross_entropy_banned));
}
#else
void register_autocast() {}
#endif

}  // namespace tp::sim::detail
