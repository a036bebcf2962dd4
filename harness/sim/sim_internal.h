// Internal to torchplace_sim: the pieces that sim.cpp registers.
#pragma once
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include "sim.h"

namespace tp::sim::detail {

// The boxed fallback for the simulated device: device check, then the CPU kernel.
void checked_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);
// The fallback's device check alone (README "Which operators check") of the operator's arguments
// at the top of `stack`: raises as CUDA would, else returns the arguments' common device.
c10::optional<c10::Device> check_devices(const c10::FunctionSchema& schema,
                                         const torch::jit::Stack& stack);
long long checked_call_count();

// The calling thread's current simulated device, and setting it (refuses an index past the
// count, naming it). Allocations are tagged with it.
c10::DeviceIndex current_index();
void set_current_index(c10::DeviceIndex index);
// Refuses an index outside 0 .. count-1 with a message naming it.
void check_index(int index);

// The transfer log (transfer_log.cpp): a copy a user's code asked for, and an operator call on
// the device (counted when its CUDA kernel synchronises). Neither counts inside a FallbackScope,
// which the fallback holds while it computes on CPU copies of the inputs.
void record_copy(const at::Tensor& src, const at::Tensor& dst, bool non_blocking);
void record_operator(const c10::FunctionSchema& schema, const torch::jit::Stack& stack);
struct FallbackScope {
  FallbackScope();
  ~FallbackScope();
  FallbackScope(const FallbackScope&) = delete;
  FallbackScope& operator=(const FallbackScope&) = delete;
};
bool in_fallback_scope();  // on this thread

// False only under the mutation TORCHPLACE_SIM_MUTATION=no_device_check (ci mutation script).
bool checks_enabled();
// The column of device_checks.inc that the device check reads for this LibTorch, and for
// LibTorch major.minor.
int version_column();
int version_column(int major, int minor);

// Kernels that must not go through the fallback: allocation, copies, views, storage.
void register_kernels();
// The convolutions LibTorch hands to an out-of-tree device (convolution.cpp).
void register_convolution();
// scaled_dot_product_attention's choice of algorithm, the CPU's (2.5+; nothing before).
void register_attention();
// CUDA's autocast cast policy for AutocastPrivateUse1 (2.4+; nothing before).
void register_autocast();
// Allocator, device guard, name and (2.x) hooks.
void register_device();
// The PrivateUse1 hooks interface (2.x; nothing before it existed).
void register_hooks();

}  // namespace tp::sim::detail
