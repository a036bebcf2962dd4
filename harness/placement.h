// Placement checks without a GPU, on the meta device that every LibTorch build has:
// Tensor::to(kMeta) and Module::to(kMeta) move placement without data, and a tensor nobody moved
// stays on the CPU exactly as it would beside a CUDA model. Meta proves *where* tensors are, not
// the device-mismatch error itself (most ops mixing meta and CPU run silently).
//
//   tp::expect_placement(cell, {{"input", moved.input, tp::kMeta},
//                               {"target", moved.target, tp::kMeta}});
#pragma once
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "scenario.h"

namespace tp {

inline const torch::Device kMeta(torch::kMeta);

// Module::to(kMeta), which 2.x does itself. 1.13's set_data() refuses a CPU -> meta swap
// ("incompatible tensor type"): then the same swap is made for the same registered parameters
// and buffers that Module::to visits, through the TensorImpl copy set_data() ends in. A plain
// tensor member is not visited, either way.
inline void move_to_meta(torch::nn::Module& module) {
  try {
    module.to(kMeta);
    return;
  } catch (const c10::Error& error) {  // only 1.13's refusal, nothing else
    if (std::string(error.what()).find("incompatible tensor type") == std::string::npos) throw;
  }
  torch::NoGradGuard no_grad;
  for (torch::Tensor& tensor : module.parameters()) {
    tensor.unsafeGetTensorImpl()->shallow_copy_from(tensor.to(kMeta).getIntrusivePtr());
  }
  for (torch::Tensor& tensor : module.buffers()) {
    tensor.unsafeGetTensorImpl()->shallow_copy_from(tensor.to(kMeta).getIntrusivePtr());
  }
}

struct Placed {
  std::string name;
  torch::Tensor tensor;
  torch::Device expected;  // kMeta where a fix must have moved it, kCPU where a mistake left it
};

// Expects each tensor on its device, and records the check in the cell: the note names what was
// checked, the metric meta_placement_checks counts the tensors.
inline void expect_placement(Cell& cell, const std::vector<Placed>& placed) {
  std::string names;
  for (const Placed& item : placed) {
    EXPECT_EQ(item.tensor.device(), item.expected)
        << item.name << " is on " << item.tensor.device() << ", expected on " << item.expected;
    names += (names.empty() ? "" : ", ") + item.name + " on " + item.expected.str();
  }
  cell.note("placement checked on meta: " + names);
  cell.metric("meta_placement_checks", static_cast<double>(placed.size()));
}

}  // namespace tp
