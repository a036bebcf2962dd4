// forgotten_labels: the model and its logits are on the device, the targets stay on the CPU.
// On CUDA the loss raises DeviceMismatch about `target`. On the CPU the mistake is latent:
// everything already shares one device, which is why it survives CPU-only development. Each fix
// must train with a falling loss and match a float64 CPU reference. Every cell also places its
// input and target for a model on the meta device: each fix must put both there, while the
// broken variant leaves the target on the CPU (harness/placement.h).
#include <torchplace/fixes/batch_mover.h>
#include <torchplace/fixes/follow_parameters.h>
#include <torchplace/numeric.h>
#include <torchplace/placement.h>
#include <torchplace/scenario.h>
#include <torchplace/training.h>

namespace scenarios::forgotten_labels {
namespace {

constexpr int kSamples = 64;
constexpr int kFeatures = 16;
constexpr int kClasses = 5;
constexpr int kSteps = 5;
constexpr double kLearningRate = 0.5;
constexpr tp::Rtol kRtol{1e-4};  // float32 against float64 over 5 steps
constexpr tp::Atol kAtol{1e-5};

torch::Tensor loss_of(const std::string& loss, const torch::Tensor& logits,
                      const torch::Tensor& target) {
  if (loss == "nll") return torch::nll_loss(torch::log_softmax(logits, 1), target);
  return torch::nn::functional::cross_entropy(logits, target);
}

struct Operands {
  torch::Tensor input;   // as handed to the model
  torch::Tensor target;  // as handed to the loss
};

struct ClassifierImpl : torch::nn::Module {
  ClassifierImpl() : linear(register_module("linear", torch::nn::Linear(kFeatures, kClasses))) {}

  torch::Tensor forward(const torch::Tensor& input) { return linear(input); }

  // The self-moving fix: input and target follow the parameters, wherever the caller left them.
  Operands follow(const torch::Tensor& input, const torch::Tensor& target) const {
    const torch::Device device = tp::fixes::parameter_device(*this);
    return {input.to(device), target.to(device)};
  }

  torch::nn::Linear linear;
};
TORCH_MODULE(Classifier);

// The input and target, moved (or forgotten) the way the variant does it, for a model on `device`.
Operands place(const std::string& variant, const Classifier& model, const torch::Tensor& input,
               const torch::Tensor& target, torch::Device device) {
  if (variant == "broken") return {input.to(device), target};
  if (variant == "manual_to") return {input.to(device), target.to(device)};
  if (variant == "batch_mover") {
    const auto [moved_input, moved_target] =
        tp::fixes::to_device(std::make_tuple(input, target), device);
    return {moved_input, moved_target};
  }
  return model->follow(input, target);  // self_moving_module
}

// One step's loss; only the loss itself is the statement under test.
torch::Tensor variant_loss(tp::Cell& cell, Classifier& model, const torch::Tensor& input,
                           const torch::Tensor& target) {
  const std::string& kind = cell.axis("loss");
  const Operands operands = place(cell.axis("variant"), model, input, target, cell.device());
  const torch::Tensor logits = model(operands.input);
  return cell.under_test(kind == "nll" ? "nll_loss" : "cross_entropy",
                         [&] { return loss_of(kind, logits, operands.target); });
}

// The same placement for a model on meta: what a fix moves lands there, a forgotten target stays.
void check_placement_on_meta(tp::Cell& cell, const torch::Tensor& input,
                             const torch::Tensor& target) {
  Classifier model;
  tp::move_to_meta(*model);
  const std::string& variant = cell.axis("variant");
  const Operands operands = place(variant, model, input, target, tp::kMeta);
  const torch::Device target_device = variant == "broken" ? torch::kCPU : tp::kMeta;
  tp::expect_placement(
      cell, {{"input", operands.input, tp::kMeta}, {"target", operands.target, target_device}});
}

void run(tp::Cell& cell) {
  const torch::Tensor input = torch::randn({kSamples, kFeatures});  // as a loader yields: CPU
  const torch::Tensor target = torch::randint(kClasses, {kSamples}, torch::kLong);
  Classifier model;
  Classifier reference;
  tp::copy_state(*model, *reference);
  reference->to(torch::kFloat64);
  model->to(cell.device());
  check_placement_on_meta(cell, input, target);

  const auto losses = tp::train_sgd(model->parameters(), kSteps, kLearningRate,
                                    [&] { return variant_loss(cell, model, input, target); });
  // The reference is cross entropy itself, which nll_loss of log_softmax over the classes is: a
  // slip in loss_of cannot hide in a reference that shares it.
  const auto reference_losses = tp::train_sgd(reference->parameters(), kSteps, kLearningRate, [&] {
    return torch::nn::functional::cross_entropy(reference(input.to(torch::kFloat64)), target);
  });
  cell.metric("first_loss", losses.front());
  cell.metric("final_loss", losses.back());
  EXPECT_LT(losses.back(), losses.front()) << "the loss did not fall";
  TP_EXPECT_CLOSE(torch::tensor(losses), torch::tensor(reference_losses), kRtol, kAtol);
  TP_EXPECT_CLOSE(model->linear->weight, reference->linear->weight, kRtol, kAtol);
}

tp::Expect expectation(const tp::CellSpec& cell) {
  // A fix checks its placement on meta as well (placement.h): it proves its claim on every device.
  if (cell.axis("variant") != "broken") return tp::Expect::success();
  return tp::cross_device_mistake(cell, "logits and targets already share a device")
      .naming("target");
}

}  // namespace

TP_SCENARIO(forgotten_labels)
    .axis("loss", {"cross_entropy", "nll"})
    .axis("variant", {"broken", "manual_to", "batch_mover", "self_moving_module"})
    .on(tp::DeviceAxis::kEach)
    .expect(expectation)
    .run(run);

}  // namespace scenarios::forgotten_labels
