#include "devices.h"

#include <torch/cuda.h>

#include "compat.h"
#include "naming.h"
#include "sim/sim.h"

namespace tp {

std::string Placement::label() const { return naming::devices(devices, naming::Form::kCellId); }

int cuda_device_count() { return static_cast<int>(torch::cuda::device_count()); }

std::vector<Placement> expand(DeviceAxis axis) {
  std::vector<Placement> placements;
  if (axis == DeviceAxis::kEach) {
    placements.push_back({{torch::Device(torch::kCPU)}});
    placements.push_back({{sim::listed(0)}});  // simulated: present on every host
  }
  if (axis == DeviceAxis::kRankPair) placements.push_back({{torch::Device(torch::kCPU)}});
  if (axis == DeviceAxis::kPair || axis == DeviceAxis::kRankPair) {
    placements.push_back({{sim::listed(0), sim::listed(1)}});  // tp::sim has 2 devices or more
  }
  if (axis == DeviceAxis::kCudaPair || axis == DeviceAxis::kPair || axis == DeviceAxis::kRankPair) {
    placements.push_back({{torch::Device(torch::kCUDA, 0), torch::Device(torch::kCUDA, 1)}});
    return placements;
  }
  const int listed = std::max(cuda_device_count(), 1);
  for (int index = 0; index < listed; ++index) {
    placements.push_back({{torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index))}});
  }
  return placements;
}

std::optional<Unmet> needs_libtorch(int major, int minor, std::string why) {
  if (TP_TORCH_AT_LEAST(major, minor)) return std::nullopt;
  return Unmet{SkipCode::kNeedsNewerLibTorch, std::move(why),
               std::to_string(major) + "." + std::to_string(minor)};
}

std::string_view name_of(SkipCode code) {
  switch (code) {
    case SkipCode::kNoCudaBuild:
      return "no_cuda_build";
    case SkipCode::kNoCudaDevice:
      return "no_cuda_device";
    case SkipCode::kTooFewGpus:
      return "too_few_gpus";
    case SkipCode::kNeedsCuda:
      return "needs_cuda";
    case SkipCode::kNeedsNoCuda:
      return "needs_no_cuda";
    case SkipCode::kOtherCell:
      return "covered_by_other_cell";
    case SkipCode::kDeviceUnusable:
      return "device_unusable";
    case SkipCode::kNotOnSim:
      return "not_on_sim";
    case SkipCode::kNoC10dGloo:
      return "no_c10d_gloo";
    case SkipCode::kNeedsNewerLibTorch:
      return "needs_newer_libtorch";
  }
  return "unlisted";
}

std::optional<Unmet> absent(const Placement& placement) {
  int gpus_needed = 0;
  for (const torch::Device& device : placement.devices) {
    if (device.is_cuda()) gpus_needed = std::max(gpus_needed, device.index() + 1);
  }
  if (gpus_needed == 0) return std::nullopt;
  if (!torch::cuda::is_available()) {
    return Unmet{TORCHPLACE_WITH_CUDA ? SkipCode::kNoCudaDevice : SkipCode::kNoCudaBuild,
                 std::string("device absent: ") + placement.label() +
                     " needs CUDA, and this LibTorch or host has no CUDA device"};
  }
  const int present = cuda_device_count();
  if (present < gpus_needed) {
    return Unmet{SkipCode::kTooFewGpus,
                 "device absent: " + placement.label() + " needs " + std::to_string(gpus_needed) +
                     " CUDA devices, this host has " + std::to_string(present)};
  }
  return std::nullopt;
}

std::optional<std::string> absent_reason(const Placement& placement) {
  if (auto unmet = absent(placement)) return unmet->why;
  return std::nullopt;
}

}  // namespace tp
