// tp::sim: the device itself (allocator and guard), its name, and enable().
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/version.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "sim_internal.h"

namespace tp::sim {
namespace detail {
namespace {

constexpr int kMaxDevices = 16;
constexpr int kDefaultDevices = 2;

std::atomic<int> count{kDefaultDevices};
// PrivateUse1, or CUDA after enable_as_cuda(): set once, before anything is registered.
std::atomic<c10::DeviceType> type{c10::DeviceType::PrivateUse1};
thread_local c10::DeviceIndex current = 0;  // this thread's current device, as CUDA keeps one

c10::Device at_index(c10::DeviceIndex index) { return c10::Device(type.load(), index); }

// Host memory (guarded_memory.cpp: behind an address that host code cannot read), tagged with
// the current simulated device (the kernels that allocate set it first with a device guard, as
// CUDA's wrappers do). No pinning.
struct HostAllocator final : c10::Allocator {
#if TP_SIM_AT_LEAST(2, 3)
  c10::DataPtr allocate(size_t bytes) override {
#else
  c10::DataPtr allocate(size_t bytes) const override {
#endif
    const c10::DeviceIndex index = current_index();
    void* data = allocate_device_bytes(bytes, index);
    return {data, data, &free_device_bytes, at_index(index)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &free_device_bytes; }
#if TP_SIM_AT_LEAST(2, 3)
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    copy_device_bytes(dest, src, count);  // Allocator::clone (copy-on-write storage)
  }
#endif
};

// N devices, a current one per thread, no streams: every stream is its device's default
// stream, events are no-ops. One per device type it answers for.
template <c10::DeviceType kType>
struct Guard final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kType; }
  c10::Device exchangeDevice(c10::Device device) const override {
    const c10::Device previous = getDevice();
    setDevice(device);
    return previous;
  }
  c10::Device getDevice() const override { return c10::Device(kType, current_index()); }
  void setDevice(c10::Device device) const override { set_current_index(device.index()); }
  void uncheckedSetDevice(c10::Device device) const noexcept override {
    if (device.index() >= 0 && device.index() < count.load()) current = device.index();
  }
  c10::Stream getStream(c10::Device device) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, device);
  }
  c10::Stream exchangeStream(c10::Stream stream) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, stream.device());
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    return static_cast<c10::DeviceIndex>(count.load());
  }
  void record(void**, const c10::Stream&, const c10::DeviceIndex,
              const c10::EventFlag) const override {}
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
};

int count_from_environment() {
  const char* text = std::getenv("TORCHPLACE_SIM_DEVICES");
  if (text == nullptr || *text == '\0') return kDefaultDevices;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  TORCH_CHECK(*end == '\0' && value >= 1 && value <= kMaxDevices,
              "TORCHPLACE_SIM_DEVICES must be a whole number from 1 to ", kMaxDevices, "; got '",
              text, "'");
  return static_cast<int>(value);
}

HostAllocator allocator;
using PrivateUse1Guard = Guard<c10::DeviceType::PrivateUse1>;
C10_REGISTER_GUARD_IMPL(PrivateUse1, PrivateUse1Guard);

// As CUDA (enable_as_cuda): the device guard, which a CPU-only LibTorch leaves unregistered.
void register_as_cuda() {
  register_cuda_hooks();  // cuda_hooks.cpp: first, as it refuses (nothing registered then)
  static c10::impl::DeviceGuardImplRegistrar guard(c10::DeviceType::CUDA,
                                                   new Guard<c10::DeviceType::CUDA>());
}

}  // namespace

void check_index(int index) {
  const int devices = count.load();
  TORCH_CHECK(index >= 0 && index < devices, "tp::sim: no simulated device sim:", int(index),
              "; there are ", devices, " (sim:0 .. sim:", devices - 1,
              "; TORCHPLACE_SIM_DEVICES or tp::sim::set_device_count sets how many)");
}

c10::DeviceIndex current_index() { return current; }

void set_current_index(c10::DeviceIndex index) {
  check_index(index);
  current = index;
}

bool checks_enabled() {
  static const bool enabled = [] {
    const char* mutation = std::getenv("TORCHPLACE_SIM_MUTATION");
    return mutation == nullptr || std::strcmp(mutation, "no_device_check") != 0;
  }();
  return enabled;
}

c10::DeviceType sim_type() { return type.load(); }

c10::DispatchKey sim_key(c10::DispatchKey key) {
  if (type.load() != c10::DeviceType::CUDA) return key;
  switch (key) {
    case c10::DispatchKey::PrivateUse1:
      return c10::DispatchKey::CUDA;
    case c10::DispatchKey::AutogradPrivateUse1:
      return c10::DispatchKey::AutogradCUDA;
    case c10::DispatchKey::SparsePrivateUse1:
      return c10::DispatchKey::SparseCUDA;
#if TP_SIM_AT_LEAST(2, 6)
    case c10::DispatchKey::SparseCsrPrivateUse1:
      return c10::DispatchKey::SparseCsrCUDA;
#endif
    default:
      TORCH_CHECK(false, "tp::sim: no CUDA counterpart for ", c10::toString(key));
  }
}

void register_device(c10::DeviceType as) {
  if (as == c10::DeviceType::CUDA) register_as_cuda();
  type.store(as);
  count.store(count_from_environment());
  configure_device_memory();  // TORCHPLACE_SIM_HOST_READS, before the first allocation
  c10::SetAllocator(as, &allocator);
  if (as == c10::DeviceType::CUDA) return;  // no PrivateUse1 backend: one accelerator, CUDA
#if TP_SIM_AT_LEAST(2, 0)
  c10::register_privateuse1_backend("sim");
#endif
  register_hooks();
}

}  // namespace detail

namespace {

std::once_flag once;

void register_all(c10::DeviceType as) {
  detail::register_device(as);
  detail::register_kernels();
  detail::register_cpu_copies();
  detail::register_cuda_kernels();
  detail::register_rnn_cells();
  detail::register_attention();
  detail::register_autocast();
}

}  // namespace

void enable() { std::call_once(once, register_all, c10::DeviceType::PrivateUse1); }

void enable_as_cuda() {
  std::call_once(once, register_all, c10::DeviceType::CUDA);
  TORCH_CHECK(detail::sim_type() == c10::DeviceType::CUDA,
              "tp::sim::enable_as_cuda: tp::sim::enable() ran first, and the sim is PrivateUse1 "
              "for the rest of the process; call enable_as_cuda() before anything else");
}

torch::Device device(int index) {
  enable();
  detail::check_index(index);
  return detail::at_index(static_cast<c10::DeviceIndex>(index));
}

torch::Device listed(int index) { return detail::at_index(static_cast<c10::DeviceIndex>(index)); }

int device_count() {
  enable();
  return detail::count.load();
}

void set_device_count(int devices) {
  enable();
  TORCH_CHECK(devices >= 1 && devices <= detail::kMaxDevices,
              "tp::sim::set_device_count: from 1 to ", detail::kMaxDevices, "; got ", devices);
  detail::count.store(devices);
}

bool is_sim(const torch::Device& device) { return device.type() == detail::sim_type(); }

std::string label(const torch::Device& device) {
  if (!is_sim(device)) return device.str();
  return "sim:" + std::to_string(device.has_index() ? device.index() : 0);
}

bool host_reads_guarded() {
  enable();
  return detail::host_reads_guarded();
}

long long checked_calls() { return detail::checked_call_count(); }

}  // namespace tp::sim
