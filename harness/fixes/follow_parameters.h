// The self-moving module fix: a module that moves what it is given to the device of its own
// parameters, so callers cannot forget. parameter_device() is what such a forward() asks.
#pragma once
#include <torch/torch.h>

namespace tp::fixes {

// The device of a module's first parameter, else its first buffer, else the CPU.
inline torch::Device parameter_device(const torch::nn::Module& module) {
  for (const torch::Tensor& parameter : module.parameters()) return parameter.device();
  for (const torch::Tensor& buffer : module.buffers()) return buffer.device();
  return torch::Device(torch::kCPU);
}

}  // namespace tp::fixes
