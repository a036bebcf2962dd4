// tp::sim: the device itself (allocator and guard), its name, and enable().
#include <c10/core/Allocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/version.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "sim_internal.h"

#define TP_SIM_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||   \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace tp::sim {
namespace detail {
namespace {

constexpr c10::DeviceType kType = c10::DeviceType::PrivateUse1;
const c10::Device kDevice(kType, 0);

// Host memory from LibTorch's CPU allocator, tagged with the simulated device. No pinning.
struct HostAllocator final : c10::Allocator {
#if TP_SIM_AT_LEAST(2, 3)
  c10::DataPtr allocate(size_t bytes) override {
#else
  c10::DataPtr allocate(size_t bytes) const override {
#endif
    void* data = c10::alloc_cpu(bytes);
    return {data, data, &c10::free_cpu, kDevice};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &c10::free_cpu; }
#if TP_SIM_AT_LEAST(2, 3)
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
#endif
};

// One device, index 0, no streams: every stream is the default stream, events are no-ops.
struct Guard final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kType; }
  c10::Device exchangeDevice(c10::Device) const override { return kDevice; }
  c10::Device getDevice() const override { return kDevice; }
  void setDevice(c10::Device device) const override {
    TORCH_CHECK(device.index() <= 0, "tp::sim has one device, index 0; got ", device);
  }
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, kDevice);
  }
  c10::Stream exchangeStream(c10::Stream) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, kDevice);
  }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }
  void record(void**, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag)
      const override {}
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
};

HostAllocator allocator;
C10_REGISTER_GUARD_IMPL(PrivateUse1, Guard);

}  // namespace

bool checks_enabled() {
  static const bool enabled = [] {
    const char* mutation = std::getenv("TORCHPLACE_SIM_MUTATION");
    return mutation == nullptr || std::strcmp(mutation, "no_device_check") != 0;
  }();
  return enabled;
}

void register_device() {
  c10::SetAllocator(kType, &allocator);
#if TP_SIM_AT_LEAST(2, 0)
  c10::register_privateuse1_backend("sim");
#endif
  register_hooks();
}

}  // namespace detail

void enable() {
  static std::once_flag once;
  std::call_once(once, [] {
    detail::register_device();
    detail::register_kernels();
    detail::register_autocast();
  });
}

torch::Device device() {
  enable();
  return detail::kDevice;
}

bool is_sim(const torch::Device& device) { return device.type() == detail::kType; }

std::string label(const torch::Device& device) {
  if (!is_sim(device)) return device.str();
  return "sim:" + std::to_string(device.has_index() ? device.index() : 0);
}

long long checked_calls() { return detail::checked_call_count(); }

}  // namespace tp::sim
