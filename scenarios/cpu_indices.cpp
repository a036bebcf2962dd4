// cpu_indices: an Embedding (or a bare index_select) whose weight is on the device while the
// indices stay on the CPU. On CUDA the lookup raises DeviceMismatch; on the CPU the mistake is
// latent. Each fix must train with a falling loss and match a float64 CPU reference.
#include "fixes/batch_mover.h"
#include "fixes/follow_parameters.h"
#include "numeric.h"
#include "scenario.h"
#include "training.h"

namespace {

constexpr int kVocabulary = 50;
constexpr int kDim = 8;
constexpr int kLookups = 32;
constexpr int kSteps = 5;
constexpr double kLearningRate = 5.0;  // mean over 8 dims and 32 rows: each row's grad is small
constexpr double kRtol = 1e-4;
constexpr double kAtol = 1e-6;

struct TableImpl : torch::nn::Module {
  TableImpl() : embedding(register_module("embedding", torch::nn::Embedding(kVocabulary, kDim))) {}

  torch::Tensor lookup(const std::string& op, const torch::Tensor& indices) {
    if (op == "index_select") return torch::index_select(embedding->weight, 0, indices);
    return embedding(indices);
  }

  // The self-moving fix: indices follow the table's weight.
  torch::Tensor lookup_anywhere(const std::string& op, const torch::Tensor& indices) {
    return lookup(op, indices.to(tp::fixes::parameter_device(*this)));
  }

  torch::nn::Embedding embedding;
};
TORCH_MODULE(Table);

// The looked-up rows, with indices moved (or forgotten) as the variant does it; the target is
// always moved, so that the indices are the only mistake.
torch::Tensor variant_loss(const tp::CellSpec& cell, Table& table, const torch::Tensor& indices,
                           const torch::Tensor& target) {
  const std::string& variant = cell.axis("variant");
  const std::string& op = cell.axis("op");
  const torch::Device device = cell.device();
  torch::Tensor rows;
  if (variant == "broken") {
    rows = table->lookup(op, indices);
  } else if (variant == "manual_to") {
    rows = table->lookup(op, indices.to(device));
  } else if (variant == "batch_mover") {
    const auto moved =
        tp::fixes::to_device(std::map<std::string, torch::Tensor>{{"indices", indices}}, device);
    rows = table->lookup(op, moved.at("indices"));
  } else {
    rows = table->lookup_anywhere(op, indices);  // self_moving_module
  }
  return torch::mse_loss(rows, target.to(device));
}

void run(tp::Cell& cell) {
  const torch::Tensor indices = torch::randint(kVocabulary, {kLookups}, torch::kLong);  // CPU
  const torch::Tensor target = torch::randn({kLookups, kDim});
  Table table;
  Table reference;
  tp::copy_state(*table, *reference);
  reference->to(torch::kFloat64);
  table->to(cell.device());

  const auto losses = tp::train_sgd(table->parameters(), kSteps, kLearningRate,
                                    [&] { return variant_loss(cell, table, indices, target); });
  const auto reference_losses = tp::train_sgd(reference->parameters(), kSteps, kLearningRate, [&] {
    return torch::mse_loss(reference->lookup(cell.axis("op"), indices), target.to(torch::kFloat64));
  });
  cell.metric("first_loss", losses.front());
  cell.metric("final_loss", losses.back());
  EXPECT_LT(losses.back(), losses.front()) << "the loss did not fall";
  TP_EXPECT_CLOSE(torch::tensor(losses), torch::tensor(reference_losses), kRtol, kAtol);
  TP_EXPECT_CLOSE(table->embedding->weight, reference->embedding->weight, kRtol, kAtol);
}

tp::Expect expectation(const tp::CellSpec& cell) {
  const std::string why = "the weight and the indices already share a device";
  if (cell.axis("variant") != "broken") return tp::cross_device_fix(cell, why);
  return tp::cross_device_mistake(cell, why);
}

}  // namespace

TP_SCENARIO(cpu_indices)
    .axis("op", {"embedding", "index_select"})
    .axis("variant", {"broken", "manual_to", "batch_mover", "self_moving_module"})
    .on(tp::DeviceAxis::kEach)
    .expect(expectation)
    .run(run);
