// cpu_indices: an Embedding (or a bare index_select) whose weight is on the device while the
// indices stay on the CPU. On CUDA the lookup raises DeviceMismatch; on the CPU the mistake is
// latent. Each fix must train with a falling loss and match a float64 CPU reference. Every cell
// also places its indices for a table on the meta device: each fix must put them there, the
// broken variant leaves them on the CPU (harness/placement.h).
#include <torchplace/fixes/batch_mover.h>
#include <torchplace/fixes/follow_parameters.h>
#include <torchplace/numeric.h>
#include <torchplace/placement.h>
#include <torchplace/scenario.h>
#include <torchplace/training.h>

namespace scenarios::cpu_indices {
namespace {

constexpr int kVocabulary = 50;
constexpr int kDim = 8;
constexpr int kLookups = 32;
constexpr int kSteps = 5;
constexpr double kLearningRate = 5.0;  // mean over 8 dims and 32 rows: each row's grad is small
constexpr tp::Rtol kRtol{1e-4};
constexpr tp::Atol kAtol{1e-6};

struct TableImpl : torch::nn::Module {
  TableImpl() : embedding(register_module("embedding", torch::nn::Embedding(kVocabulary, kDim))) {}

  torch::Tensor lookup(const std::string& op, const torch::Tensor& indices) {
    if (op == "index_select") return torch::index_select(embedding->weight, 0, indices);
    return embedding(indices);
  }

  // The self-moving fix: indices follow the table's weight.
  torch::Tensor follow(const torch::Tensor& indices) const {
    return indices.to(tp::fixes::parameter_device(*this));
  }

  torch::nn::Embedding embedding;
};
TORCH_MODULE(Table);

// The indices, moved (or forgotten) the way the variant does it, for a table on `device`.
torch::Tensor place(const std::string& variant, const Table& table, const torch::Tensor& indices,
                    torch::Device device) {
  if (variant == "broken") return indices;
  if (variant == "manual_to") return indices.to(device);
  if (variant == "batch_mover") {
    return tp::fixes::to_device(std::map<std::string, torch::Tensor>{{"indices", indices}}, device)
        .at("indices");
  }
  return table->follow(indices);  // self_moving_module
}

// One step's loss; only the lookup is the statement under test. The target is always moved, so
// that the indices are the only mistake.
torch::Tensor variant_loss(tp::Cell& cell, Table& table, const torch::Tensor& indices,
                           const torch::Tensor& target) {
  const std::string& op = cell.axis("op");
  const torch::Tensor placed = place(cell.axis("variant"), table, indices, cell.device());
  const torch::Tensor rows = cell.under_test(op, [&] { return table->lookup(op, placed); });
  return torch::mse_loss(rows, target.to(cell.device()));
}

// The same placement for a table on meta (whose lookups have no meta kernel, so only where the
// indices land is checked): what a fix moves lands there, forgotten indices stay on the CPU.
void check_placement_on_meta(tp::Cell& cell, const torch::Tensor& indices) {
  Table table;
  tp::move_to_meta(*table);
  const std::string& variant = cell.axis("variant");
  tp::expect_placement(cell, {{"indices", place(variant, table, indices, tp::kMeta),
                               variant == "broken" ? torch::Device(torch::kCPU) : tp::kMeta}});
}

// Both lookups give the same rows, so only autograd's node tells which op ran: the one named.
void check_lookup_op(tp::Cell& cell, Table& table, const torch::Tensor& indices) {
  const std::string& op = cell.axis("op");
  const std::string node = op == "embedding" ? "EmbeddingBackward0" : "IndexSelectBackward0";
  EXPECT_EQ(table->lookup(op, indices).grad_fn()->name(), node) << "the lookup is not " << op;
}

void run(tp::Cell& cell) {
  const torch::Tensor indices = torch::randint(kVocabulary, {kLookups}, torch::kLong);  // CPU
  const torch::Tensor target = torch::randn({kLookups, kDim});
  Table table;
  Table reference;
  tp::copy_state(*table, *reference);
  reference->to(torch::kFloat64);
  table->to(cell.device());
  check_placement_on_meta(cell, indices);
  check_lookup_op(cell, reference, indices);

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
  // A fix checks its placement on meta as well (placement.h): it proves its claim on every device.
  if (cell.axis("variant") != "broken") return tp::Expect::success();
  return tp::cross_device_mistake(cell, "the weight and the indices already share a device")
      .naming("index");
}

}  // namespace

TP_SCENARIO(cpu_indices)
    .axis("op", {"embedding", "index_select"})
    .axis("variant", {"broken", "manual_to", "batch_mover", "self_moving_module"})
    .on(tp::DeviceAxis::kEach)
    .expect(expectation)
    .run(run);

}  // namespace scenarios::cpu_indices
