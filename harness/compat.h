// The one place for LibTorch API differences between the versions this suite builds against
// (1.13 on Debian 12, 2.x up to 2.14 in the version matrix). Each entry names the versions on
// either side of the difference. Scenarios call these, never the version-specific names.
#pragma once
#include <ATen/autocast_mode.h>
#include <torch/version.h>

#define TP_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||     \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// c10d's Gloo backend (scenarios/ddp.cpp): LibTorch's CMake target defines USE_C10D_GLOO when
// libtorch_cpu was built with it (Debian 1.13.1: yes), and ProcessGroupGloo.hpp includes <gloo/...>
// headers from a separate package (Debian: libgloo-dev). Either missing: 0, and the ddp cells
// skip with SkipCode::kNoC10dGloo.
#if defined(USE_C10D_GLOO) && __has_include(<torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>) && \
    __has_include(<gloo/config.h>)
#define TP_HAS_C10D_GLOO 1
#else
#define TP_HAS_C10D_GLOO 0
#endif

namespace tp::compat {

// Autocast switches, per device type.
//   1.13 - 2.3: one function per device: at::autocast::set_enabled(bool) is CUDA,
//               set_cpu_enabled(bool) is the CPU; dtypes via set_autocast_gpu_dtype /
//               set_autocast_cpu_dtype; state via is_enabled() / is_cpu_enabled().
//   2.4+:       set_autocast_enabled(DeviceType, bool), set_autocast_dtype(DeviceType, dtype),
//               is_autocast_enabled(DeviceType) (pytorch PR 124359); the old names still compile
//               in 2.14 with a deprecation warning.
// CPU and CUDA everywhere; PrivateUse1 (tp::sim) from 2.4, where the device-type API reaches it.
// Other device types are refused.
inline bool autocast_supported(c10::DeviceType device_type) {
  return device_type == c10::kCPU || device_type == c10::kCUDA ||
         (TP_TORCH_AT_LEAST(2, 4) && device_type == c10::kPrivateUse1);
}

inline void set_autocast_enabled(c10::DeviceType device_type, bool enabled) {
  TORCH_CHECK(autocast_supported(device_type), "tp::compat autocast supports cpu, cuda",
              TP_TORCH_AT_LEAST(2, 4) ? " and privateuseone" : "", ", not ", device_type);
#if TP_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_enabled(device_type, enabled);
#else
  if (device_type == c10::kCPU) {
    at::autocast::set_cpu_enabled(enabled);
  } else {
    at::autocast::set_enabled(enabled);
  }
#endif
}

inline bool autocast_enabled(c10::DeviceType device_type) {
  TORCH_CHECK(autocast_supported(device_type), "tp::compat autocast: unsupported ", device_type);
#if TP_TORCH_AT_LEAST(2, 4)
  return at::autocast::is_autocast_enabled(device_type);
#else
  return device_type == c10::kCPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
#endif
}

inline at::ScalarType autocast_dtype(c10::DeviceType device_type) {
#if TP_TORCH_AT_LEAST(2, 4)
  return at::autocast::get_autocast_dtype(device_type);
#else
  return device_type == c10::kCPU ? at::autocast::get_autocast_cpu_dtype()
                                  : at::autocast::get_autocast_gpu_dtype();
#endif
}

inline void set_autocast_dtype(c10::DeviceType device_type, at::ScalarType dtype) {
#if TP_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_dtype(device_type, dtype);
#else
  if (device_type == c10::kCPU) {
    at::autocast::set_autocast_cpu_dtype(dtype);
  } else {
    at::autocast::set_autocast_gpu_dtype(dtype);
  }
#endif
}

// The C++ counterpart of Python's `with torch.autocast(device_type, dtype):` (same in every
// version, built on the switches above): enables autocast for one device type in this thread,
// and on leaving restores the previous state and dtype and, at the outermost level, drops the
// cast cache as Python does.
class AutocastGuard {
 public:
  AutocastGuard(c10::DeviceType device_type, at::ScalarType dtype)
      : device_type_(device_type),
        was_enabled_(autocast_enabled(device_type)),
        previous_dtype_(autocast_dtype(device_type)) {
    set_autocast_enabled(device_type_, true);
    set_autocast_dtype(device_type_, dtype);
    at::autocast::increment_nesting();
  }
  ~AutocastGuard() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    set_autocast_enabled(device_type_, was_enabled_);
    set_autocast_dtype(device_type_, previous_dtype_);
  }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  c10::DeviceType device_type_;
  bool was_enabled_;
  at::ScalarType previous_dtype_;
};

}  // namespace tp::compat
