// The PrivateUse1 hooks: how device-generic LibTorch code (the autograd engine, pinned memory,
// generators) asks about the simulated device. They exist from 2.1; 1.13 has none to register.
#include <torch/version.h>

#include "sim_internal.h"

#if TP_SIM_AT_LEAST(2, 1)
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#endif

namespace tp::sim::detail {

#if TP_SIM_AT_LEAST(2, 1)
namespace {

// The interface changes from version to version (2.1: two methods; 2.2+ derives from
// AcceleratorHooksInterface; later ones add isAvailable, isBuilt, ...). These are declared
// without `override` so that each overrides where the version has it and is inert where not.
struct Hooks final : at::PrivateUse1HooksInterface {
  // Where a pointer lives is not recorded: the current device (an approximation, README).
  at::Device getDeviceFromPtr(void*) const { return device(current_index()); }
  bool hasPrimaryContext(c10::DeviceIndex) const { return true; }
  bool isAvailable() const { return true; }
  bool isBuilt() const { return true; }
  c10::DeviceIndex deviceCount() const { return static_cast<c10::DeviceIndex>(device_count()); }
  c10::DeviceIndex getCurrentDevice() const { return current_index(); }
  void setCurrentDevice(c10::DeviceIndex index) const { set_current_index(index); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex index) const {
    const c10::DeviceIndex previous = current_index();
    set_current_index(index);
    return previous;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex index) const {
    return exchangeDevice(index);
  }
  void init() const {}
  // torch::manual_seed seeds every registered device's generator: sim tensors live in CPU
  // memory and its kernels are the CPU's, so its generator is the CPU's.
  const at::Generator& getDefaultGenerator(c10::DeviceIndex) const {
    return at::detail::getDefaultCPUGenerator();
  }
};

}  // namespace

void register_hooks() {
  static auto* hooks = new Hooks();
  at::RegisterPrivateUse1HooksInterface(hooks);
}
#else
void register_hooks() {}
#endif

}  // namespace tp::sim::detail
