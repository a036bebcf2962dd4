// The PrivateUse1 hooks: how device-generic LibTorch code (the autograd engine, pinned memory,
// generators) asks about the simulated device. They exist from 2.1; 1.13 has none to register.
#include <torch/version.h>

#include "sim_internal.h"

#if TP_SIM_AT_LEAST(2, 1)
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#endif

namespace tp::sim::detail {

#if TP_SIM_AT_LEAST(2, 1)
namespace {

// Pinned host memory, for Tensor::pin_memory() where the sim is the accelerator. Nothing is
// page-locked: a block is "pinned" because this allocator made it, as a cudaHostAlloc block is
// for CUDA, so is_pinned() tells a pinned source from a pageable one (harness/sim/README.md).
std::mutex pinned_mutex;
std::map<const char*, size_t>& pinned_blocks() {  // start -> bytes, while alive
  static auto* blocks = new std::map<const char*, size_t>();
  return *blocks;
}

void free_pinned(void* data) {
  {
    const std::lock_guard<std::mutex> lock(pinned_mutex);
    pinned_blocks().erase(static_cast<const char*>(data));
  }
  std::free(data);
}

}  // namespace

bool is_pinned_address(const void* data) {
  const auto* address = static_cast<const char*>(data);
  const std::lock_guard<std::mutex> lock(pinned_mutex);
  auto after = pinned_blocks().upper_bound(address);
  if (after == pinned_blocks().begin()) return false;
  --after;  // the block starting at or before the address
  return address < after->first + std::max<size_t>(after->second, 1);
}

namespace {

struct PinnedAllocator final : c10::Allocator {
#if TP_SIM_AT_LEAST(2, 3)
  c10::DataPtr allocate(size_t bytes) override {
#else
  c10::DataPtr allocate(size_t bytes) const override {
#endif
    void* data = std::malloc(std::max<size_t>(bytes, 1));
    TORCH_CHECK(data != nullptr, "sim: out of host memory pinning ", bytes, " bytes");
    {
      const std::lock_guard<std::mutex> lock(pinned_mutex);
      pinned_blocks()[static_cast<const char*>(data)] = bytes;
    }
    return {data, data, &free_pinned, at::Device(at::kCPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &free_pinned; }
#if TP_SIM_AT_LEAST(2, 3)
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
#endif
};

}  // namespace

at::Allocator* pinned_allocator() {
  static auto* allocator = new PinnedAllocator();
  return allocator;
}

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
  bool isPinnedPtr(const void* data) const { return is_pinned_address(data); }
  at::Allocator* getPinnedMemoryAllocator() const { return pinned_allocator(); }
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
