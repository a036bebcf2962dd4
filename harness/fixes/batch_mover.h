// The batch mover: moves a nested batch (tensors inside vectors, tuples, pairs, string-keyed maps
// and torch::data::Example) to a device in one call, the C++ counterpart of a device-moving
// data-loader wrapper. Non-tensor leaves (strings, numbers) pass through unchanged; a type it does
// not know is a compile error, never a tensor silently left behind.
#pragma once
#include <torch/torch.h>

#include "map_tensors.h"

namespace tp::fixes {

struct MoveOptions {
  bool non_blocking = false;  // only asynchronous from pinned host memory
};

template <typename Batch>
Batch to_device(const Batch& batch, torch::Device device, MoveOptions options = {}) {
  return map_tensors(
      batch, [&](const torch::Tensor& tensor) { return tensor.to(device, options.non_blocking); });
}

}  // namespace tp::fixes
