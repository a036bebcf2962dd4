// The PrivateUse1 hooks: how device-generic LibTorch code (the autograd engine, pinned memory,
// generators) asks about the simulated device. They exist from 2.1; 1.13 has none to register.
#include <torch/version.h>

#include "sim_internal.h"

#define TP_SIM_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||   \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

#if TP_SIM_AT_LEAST(2, 1)
#include <ATen/detail/PrivateUse1HooksInterface.h>
#endif

namespace tp::sim::detail {

#if TP_SIM_AT_LEAST(2, 1)
namespace {

struct Hooks final : at::PrivateUse1HooksInterface {
  at::Device getDeviceFromPtr(void*) const override { return device(); }
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
