// scaled_dot_product_attention on the simulated device (2.5+). LibTorch picks its algorithm by
// the query's device type through a DispatchStub (aten/src/ATen/native/transformers/attention.cpp,
// `_fused_sdp_choice_stub.is_device_supported`), not through the dispatcher: a device without a
// choice of its own gets the unfused math (bmm, softmax, bmm), where the CPU runs its flash
// kernel and CUDA its own fused one. ViT's gradients on sim:0 were 1e-6 off the CPU's on 2.14.1.
// The sim makes the CPU's choice; the fused operator it leads to reaches the fallback, i.e. the
// CPU kernel, forward and backward. 2.0-2.4 (no version of the matrix) have another signature
// and keep the math path; 1.13 has no scaled_dot_product_attention.
#include <torch/version.h>

#include "sim_internal.h"

#define TP_SIM_ATTENTION TP_SIM_AT_LEAST(2, 5)
#if TP_SIM_ATTENTION
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/_fused_sdp_choice_native.h>
#endif

namespace tp::sim::detail {

void register_attention() {
#if TP_SIM_ATTENTION
  at::native::_fused_sdp_choice_stub.set_privateuse1_dispatch_ptr(
      &at::native::_fused_sdp_choice_cpp);
#endif
}

}  // namespace tp::sim::detail
