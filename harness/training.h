// Small training helpers that fixed variants share: a few SGD steps that record the loss, and a
// float64 CPU twin of a module for the reference run.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <vector>

namespace tp {

// Runs `steps` SGD steps of loss_fn over parameters; returns each step's loss before its update.
inline std::vector<double> train_sgd(const std::vector<torch::Tensor>& parameters, int steps,
                                     double learning_rate,
                                     const std::function<torch::Tensor()>& loss_fn) {
  torch::optim::SGD optimizer(parameters, torch::optim::SGDOptions(learning_rate));
  std::vector<double> losses;
  for (int step = 0; step < steps; ++step) {
    optimizer.zero_grad();
    torch::Tensor loss = loss_fn();
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item<double>());
  }
  return losses;
}

// Copies every parameter and buffer of `source` into `twin` (same architecture), converting to
// the twin's dtype and device: the reference starts from the very weights under test.
inline void copy_state(const torch::nn::Module& source, torch::nn::Module& twin) {
  torch::NoGradGuard no_grad;
  const auto from = source.named_parameters();
  for (auto& item : twin.named_parameters()) item.value().copy_(from[item.key()]);
  const auto from_buffers = source.named_buffers();
  for (auto& item : twin.named_buffers()) item.value().copy_(from_buffers[item.key()]);
}

}  // namespace tp
