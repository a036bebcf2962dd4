// scalar_operands: 0-dim CPU tensors and CPU masks next to device tensors, where LibTorch's rule
// depends on the operator (harness/sim/CUDA_RULES.md "Which operators check"):
//   case=label_cross_entropy  broken: a per-sample loop whose label is a 0-dim CPU tensor
//                             (torch::tensor(k)) into cross_entropy. nll_loss_forward's CUDA
//                             wrapper checks `target` and exempts nothing: DeviceMismatch naming
//                             target. Latent on the CPU.
//   case=label_nll_loss       the same label into nll_loss.
//   case=label_moved          the fix: the label moved to the logits' device; matches the CPU.
//   case=scalar_in_add        a 0-dim CPU tensor added to a device tensor: add is NoCheck and its
//                             TensorIterator takes it as a scalar, on CUDA as here. Succeeds.
//   case=mask_on_cpu          broken: scores.masked_fill(mask, -inf) with the mask left on the
//                             CPU. masked_fill_ is NoCheck; CUDA's kernel refuses the mask with
//                             its own message ("expected self and mask to be on the same device").
//   case=mask_moved           the fix: the mask on the scores' device; matches the CPU.
#include <torchplace/numeric.h>
#include <torchplace/scenario.h>

namespace scenarios::scalar_operands {
namespace {

constexpr int kClasses = 5;
constexpr int kSamples = 4;
constexpr int kLength = 6;       // a causal mask over 6 positions
constexpr tp::Rtol kRtol{1e-6};  // the same float32 ops on the same values
constexpr tp::Atol kAtol{1e-7};

// The summed per-sample loss, each label a 0-dim tensor on the CPU or moved to the logits.
torch::Tensor per_sample_loss(const torch::Tensor& logits, const torch::Tensor& labels, bool nll,
                              bool move_label) {
  torch::Tensor total = torch::zeros({}, logits.options());
  for (int sample = 0; sample < kSamples; ++sample) {
    torch::Tensor label = labels[sample];  // 0-dim, CPU
    if (move_label) label = label.to(logits.device());
    const torch::Tensor row = logits[sample];
    total = total + (nll ? torch::nll_loss(torch::log_softmax(row, 0), label)
                         : torch::nn::functional::cross_entropy(row, label));
  }
  return total;
}

void label_loop(tp::Cell& cell, bool nll, bool move_label) {
  const torch::Tensor logits = torch::randn({kSamples, kClasses});
  const torch::Tensor labels = torch::randint(kClasses, {kSamples}, torch::kLong);
  namespace F = torch::nn::functional;  // the batch's summed loss, in float32 as the loop
  const torch::Tensor reference =
      F::cross_entropy(logits, labels, F::CrossEntropyFuncOptions().reduction(torch::kSum));
  const torch::Tensor on_device = logits.to(cell.device());
  const torch::Tensor loss = cell.under_test(nll ? "nll_loss" : "cross_entropy", [&] {
    return per_sample_loss(on_device, labels, nll, move_label);
  });
  EXPECT_EQ(loss.device(), cell.device());
  TP_EXPECT_CLOSE(loss, reference, kRtol, kAtol);
}

void label_cross_entropy(tp::Cell& cell) { label_loop(cell, false, false); }
void label_nll_loss(tp::Cell& cell) { label_loop(cell, true, false); }
void label_moved(tp::Cell& cell) { label_loop(cell, false, true); }

void scalar_in_add(tp::Cell& cell) {
  const torch::Tensor x = torch::randn({kSamples, kClasses});
  const torch::Tensor shift = torch::tensor(0.5f);  // 0-dim, CPU
  const torch::Tensor on_device = x.to(cell.device());
  const torch::Tensor sum = cell.under_test("add", [&] { return on_device + shift; });
  EXPECT_EQ(sum.device(), cell.device());
  EXPECT_TRUE(torch::equal(sum.cpu(), x + shift));  // one correctly rounded add, as on the CPU
}

void causal_fill(tp::Cell& cell, bool move_mask) {
  const torch::Tensor scores = torch::randn({kLength, kLength});
  const torch::Tensor mask = torch::ones({kLength, kLength}, torch::kBool).triu(1);  // CPU
  const torch::Tensor reference = scores.masked_fill(mask, -1e9);
  const torch::Tensor on_device = scores.to(cell.device());
  const torch::Tensor used = move_mask ? mask.to(cell.device()) : mask;
  const torch::Tensor filled =
      cell.under_test("masked_fill", [&] { return on_device.masked_fill(used, -1e9); });
  EXPECT_EQ(filled.device(), cell.device());
  EXPECT_TRUE(torch::equal(filled.cpu(), reference));  // copies and -1e9: exact everywhere
}

void mask_on_cpu(tp::Cell& cell) { causal_fill(cell, false); }
void mask_moved(tp::Cell& cell) { causal_fill(cell, true); }

constexpr const char* kShared = "the labels, masks and logits already share the CPU";
tp::Expect label_mistake(const tp::CellSpec& cell) {
  return tp::cross_device_mistake(cell, kShared).naming("target");
}
tp::Expect mask_mistake(const tp::CellSpec& cell) {
  return tp::cross_device_mistake(cell, kShared);
}
tp::Expect fix(const tp::CellSpec& cell) { return tp::cross_device_fix(cell, kShared); }
tp::Expect succeeds(const tp::CellSpec&) { return tp::Expect::success(); }

}  // namespace

TP_SCENARIO(scalar_operands)
    .cases("case", {{"label_cross_entropy", label_cross_entropy, label_mistake},
                    {"label_nll_loss", label_nll_loss, label_mistake},
                    {"label_moved", label_moved, fix},
                    {"scalar_in_add", scalar_in_add, succeeds},
                    {"mask_on_cpu", mask_on_cpu, mask_mistake},
                    {"mask_moved", mask_moved, fix}})
    .on(tp::DeviceAxis::kEach);

}  // namespace scenarios::scalar_operands
