// toy_model: the team's own model under torchplace. Each mistake of toy/model.h, broken and
// fixed, on every device here: the CPU, the simulated accelerator sim:0, and each GPU.
//   broken  raises DeviceMismatch from the training step where devices differ (sim:0, CUDA);
//           on the CPU the mistake is latent, which is why it reaches production
//   fixed   trains, and its weights match a float64 CPU twin trained on the same batch
#include <torchplace/numeric.h>
#include <torchplace/scenario.h>
#include <torchplace/training.h>

#include "toy/model.h"

namespace {

constexpr int kSamples = 32;
constexpr int kSteps = 3;
constexpr double kLearningRate = 0.1;
constexpr tp::Rtol kRtol{1e-4};  // float32 on the device against float64 on the CPU
constexpr tp::Atol kAtol{1e-5};

bool broken(const tp::CellSpec& cell) { return cell.axis("variant") == "broken"; }
bool labels(const tp::CellSpec& cell) { return cell.axis("mistake") == "forgotten_label"; }

// The float64 CPU twin of `net` after the same steps: the reference for the fixed variant.
toy::Net reference(const toy::Net& net, const toy::Batch& batch) {
  toy::Net twin;
  tp::copy_state(*net, *twin);
  twin->to(torch::kFloat64);
  torch::optim::SGD optimizer(twin->parameters(), torch::optim::SGDOptions(kLearningRate));
  const toy::Batch wide{batch.data.to(torch::kFloat64), batch.target};
  for (int step = 0; step < kSteps; ++step) {
    toy::train_step(twin, optimizer, wide, torch::kCPU);
  }
  return twin;
}

void run(tp::Cell& cell) {
  const toy::Batch batch = toy::make_batch(kSamples);
  toy::Net net(/*register_weights=*/!(broken(cell) && !labels(cell)));
  const toy::Net twin = broken(cell) ? toy::Net() : reference(net, batch);
  net->to(cell.device());
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(kLearningRate));
  const bool move_labels = !(broken(cell) && labels(cell));
  for (int step = 0; step < kSteps; ++step) {
    cell.under_test("train_step", [&] {
      return toy::train_step(net, optimizer, batch, cell.device(), move_labels);
    });
  }
  if (broken(cell)) return;  // latent here (the expectation says where): it ran
  TP_EXPECT_CLOSE(net->fc->weight.cpu().to(torch::kFloat64), twin->fc->weight, kRtol, kAtol);
}

tp::Expect expectation(const tp::CellSpec& cell) {
  const std::string latent = "on the CPU the model, features and labels share one device";
  if (!broken(cell)) return tp::cross_device_fix(cell, latent);
  const tp::Expect mistake = tp::cross_device_mistake(cell, latent);
  return labels(cell) ? mistake.naming("target") : mistake;
}

}  // namespace

TP_SCENARIO(toy_model)
    .axis("mistake", {"forgotten_label", "unregistered_buffer"})
    .axis("variant", {"broken", "fixed"})
    .on(tp::DeviceAxis::kEach)
    .expect(expectation)
    .run(run);
