// Devices as values. A cell runs on a placement: one device, or two for multi-GPU cells.
// Placements are listed whether or not the device exists here, so that an absent device shows
// up as a skipped cell with its reason instead of vanishing.
#pragma once
#include <torch/types.h>

#include <optional>
#include <string>
#include <vector>

#include "skip_code.h"

namespace tp {

enum class DeviceAxis {
  kEach,      // cpu, sim:0 (simulated, harness/sim/), then cuda:0 .. cuda:N-1 (cuda:0 listed
              // even when N == 0)
  kCudaOnly,  // cuda:0 .. cuda:N-1 (cuda:0 listed even when N == 0)
  kCudaPair,  // (cuda:0, cuda:1): cells that need two GPUs
  kPair,      // (sim:0, sim:1) (simulated, present on every host), then (cuda:0, cuda:1)
  kRankPair,  // two ranks' devices: cpu (both ranks on the CPU), then kPair's pairs
};

struct Placement {
  std::vector<torch::Device> devices;  // first is the cell's main device

  torch::Device primary() const { return devices.front(); }
  std::string label() const;  // "cpu", "sim:0", "cuda:0", "cuda:0+cuda:1", "sim:0+sim:1" (naming.h)
};

int cuda_device_count();  // 0 on CPU-only builds and hosts
std::vector<Placement> expand(DeviceAxis axis);

// Why a placement cannot run here (no_cuda_build, no_cuda_device, too_few_gpus), or nothing.
std::optional<Unmet> absent(const Placement& placement);
std::optional<std::string> absent_reason(const Placement& placement);  // absent()'s words

}  // namespace tp
