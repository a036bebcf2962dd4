// The team's model and training step: production code that links torchplace::fixes only.
// Each carries one device-placement mistake behind a flag, so that its scenario can show the
// mistake raising and the fix passing side by side:
//   register_weights=false  the class weights stay a plain member: Module::to() leaves them on
//                           the CPU (the unregistered-buffer mistake)
//   move_labels=false       only the features go to the device (the forgotten-label mistake)
#pragma once
#include <torch/torch.h>
#include <torchplace/fixes/batch_mover.h>

namespace toy {

constexpr int kFeatures = 6;
constexpr int kClasses = 3;

struct NetImpl : torch::nn::Module {
  explicit NetImpl(bool register_weights = true)
      : fc(register_module("fc", torch::nn::Linear(kFeatures, kClasses))),
        class_weights(torch::linspace(0.5, 1.5, kClasses)) {
    if (register_weights) class_weights = register_buffer("class_weights", class_weights);
  }

  torch::Tensor forward(const torch::Tensor& features) { return fc(features) * class_weights; }

  torch::nn::Linear fc;
  torch::Tensor class_weights;  // constant per-class scale of the logits
};
TORCH_MODULE(Net);

using Batch = torch::data::Example<>;  // features [N, kFeatures], labels [N]

// One SGD step on `device` (where the model already is); returns the loss before the update.
inline double train_step(Net& net, torch::optim::Optimizer& optimizer, const Batch& batch,
                         torch::Device device, bool move_labels = true) {
  const Batch placed = move_labels ? tp::fixes::to_device(batch, device)
                                   : Batch{batch.data.to(device), batch.target};
  optimizer.zero_grad();
  torch::Tensor loss = torch::nn::functional::cross_entropy(net(placed.data), placed.target);
  loss.backward();
  optimizer.step();
  return loss.item<double>();
}

inline Batch make_batch(int samples) {
  return {torch::randn({samples, kFeatures}), torch::randint(kClasses, {samples})};
}

}  // namespace toy
