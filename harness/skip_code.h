// Why a cell does not run here, from a closed set. results.json writes it as "skip_code"; the
// behaviour gate (reports/torchplace/gate/behaviour.py, SKIP_CODES) accepts a committed cell
// skipped only for a code it lists. A skip that the harness did not code (a GTEST_SKIP in a body)
// is "unlisted".
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace tp {

enum class SkipCode {
  kNoCudaBuild,     // "no_cuda_build": the cell needs CUDA, this LibTorch is built without it
  kNoCudaDevice,    // "no_cuda_device": a CUDA LibTorch, but no CUDA device on this host
  kTooFewGpus,      // "too_few_gpus": the cell needs cuda:N, the host has N or fewer GPUs
  kNeedsCuda,       // "needs_cuda": a cpu cell whose check needs a CUDA LibTorch and device
  kNeedsNoCuda,     // "needs_no_cuda": a check that needs a LibTorch or host without CUDA
  kOtherCell,       // "covered_by_other_cell": the expectation itself says skip (Expect::skip)
  kDeviceUnusable,  // "device_unusable": a sticky CUDA error in an earlier cell broke the device
  kNotOnSim,        // "not_on_sim": sim:0 lacks what the cell needs (harness/sim/README.md)
  kNoC10dGloo,      // "no_c10d_gloo": this LibTorch lacks c10d's Gloo backend, or its headers
  kNeedsNewerLibTorch,  // "needs_newer_libtorch": the check needs Unmet::needs_libtorch or newer
};

std::string_view name_of(SkipCode code);

// An unmet need: its code, and the reason in words.
struct Unmet {
  SkipCode code;
  std::string why;
  std::string needs_libtorch = {};  // "2.0" for kNeedsNewerLibTorch (results.json, the gate)
};

// The need for LibTorch major.minor or newer: nullopt on such a build, else a
// kNeedsNewerLibTorch skip that names the version, so that the gate refuses it on a run at that
// version or newer (a 2.x run that stops running a cell only 1.13 skips).
std::optional<Unmet> needs_libtorch(int major, int minor, std::string why);

}  // namespace tp
