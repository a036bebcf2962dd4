// CUDA's hooks for the sim as CUDA (enable_as_cuda): what torch::cuda::is_available(),
// device_count(), at::globalContext().hasCUDA() and torch::manual_seed ask about CUDA.
//
// LibTorch makes its hooks once, on the first call of at::detail::getCUDAHooks(), from the
// registry entry "CUDAHooks" (a call_once: ATen/detail/CUDAHooksInterface.cpp:38-44 in 1.13.1,
// the same in 2.6.0), and keeps them: a registration after that first call is never seen.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/detail/CUDAHooksInterface.h>

#include <memory>
#include <utility>

#include "sim_internal.h"

namespace tp::sim::detail {
namespace {

// The interface changes between versions (2.x renames getNumGPUs to deviceCount, adds
// isAvailable, ...): declared without `override`, so each overrides where the version has it.
struct CudaHooks final : at::CUDAHooksInterface {
  explicit CudaHooks(at::CUDAHooksArgs) {}
  void initCUDA() const {}
  void init() const {}
  bool hasCUDA() const { return true; }
  bool isAvailable() const { return true; }
  bool isBuilt() const { return true; }
  int getNumGPUs() const { return device_count(); }
  c10::DeviceIndex deviceCount() const { return static_cast<c10::DeviceIndex>(device_count()); }
  // int64_t on 1.13.1, DeviceIndex on 2.x: whichever the version declares.
  decltype(std::declval<const at::CUDAHooksInterface&>().current_device()) current_device() const {
    return current_index();
  }
  c10::DeviceIndex getCurrentDevice() const { return current_index(); }
  bool hasPrimaryContext(int64_t) const { return true; }
  bool hasPrimaryContext(c10::DeviceIndex) const { return true; }
  // Where a pointer lives is not recorded: the current device, as the PrivateUse1 hooks say.
  at::Device getDeviceFromPtr(void*) const { return device(current_index()); }
#if TP_SIM_AT_LEAST(2, 1)  // pin_memory() asks the hooks (2.x); 1.13.1 has no kernel (README)
  bool isPinnedPtr(const void* data) const { return is_pinned_address(data); }
  at::Allocator* getPinnedMemoryAllocator() const { return pinned_allocator(); }
#endif
  void deviceSynchronize(int64_t) const {}
  void deviceSynchronize(c10::DeviceIndex) const {}
  std::string showConfig() const { return "  - tp::sim as CUDA (simulated, CPU kernels)\n"; }
  // Sim tensors compute with CPU kernels: their generator is the CPU's (hooks.cpp says why).
  const at::Generator& getDefaultCUDAGenerator(c10::DeviceIndex) const {
    return at::detail::getDefaultCPUGenerator();
  }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex) const {
    return at::detail::getDefaultCPUGenerator();
  }
};

bool ours(const at::CUDAHooksInterface& hooks) {
  return dynamic_cast<const CudaHooks*>(&hooks) != nullptr;
}

}  // namespace

void register_cuda_hooks() {
  TORCH_CHECK(!at::CUDAHooksRegistry()->Has("CUDAHooks"),
              "tp::sim::enable_as_cuda: this LibTorch is built with CUDA (it registers "
              "CUDAHooks); the sim can stand in for CUDA only in a CPU-only LibTorch");
  at::CUDAHooksRegistry()->Register(
      "CUDAHooks", [](at::CUDAHooksArgs args) { return std::make_unique<CudaHooks>(args); });
  TORCH_CHECK(ours(at::detail::getCUDAHooks()),
              "tp::sim::enable_as_cuda: LibTorch read CUDA's hooks before it (something asked "
              "about CUDA first: torch::cuda::is_available(), torch::manual_seed, ...) and keeps "
              "that first answer (at::detail::getCUDAHooks, a call_once). Call enable_as_cuda() "
              "first in main, or load the library torchplace_sim_cuda");
}

}  // namespace tp::sim::detail
