// transfer_budget: the silent placement mistakes, which raise nothing and cost a copy or a
// synchronisation every step. On sim:0 a tp::sim::TransferLog counts them exactly; each cell
// asserts its counts per step (after one warm-up step) and after the loop, and records them
// (transfer.step.*, transfer.once.*: harness/transfer_metrics.h) for the behaviour gate.
// Every variant trains the same model on the same batch; only its one mistake differs.
//   case=item_every_step   loss.item() every step, for logging: 1 _local_scalar_dense a step
//   case=metric_once       the fix: the loss summed on the device, read once after the loop
//   case=mask_from_host    a constant mask made on the CPU and moved (blocking) every step: one
//                          more host-to-device copy (18 B) and 1 copy_to_device sync a step
//   case=registered_mask   the fix: the mask a registered buffer, moved once by Module::to
//   case=cpu_in_loop       the step's outputs .cpu()'d every step: 1 copy_to_host a step
//   case=cpu_once          the fix: outputs kept on the device, one transfer after the loop
//   case=boolean_index     the padding dropped with boolean-mask indexing: the mask's nonzero
//                          and, in backward, index_put_ with the mask each sync
//   case=masked_fill       the fix: the padding zeroed with masked_fill, no sync
// Every step also makes 4 device-to-device copies (768 B): masked_fill out of place clones its
// input, forward and backward (boolean_index: 3, 672 B, the logits' two and index_put's clone).
// Those are LibTorch's own work and differ by version (2.14.1's index backward makes no clone:
// 2, 576 B), so a cell holds them as a ceiling; host<->device copies and syncs are exact, and so
// is what comes after the loop (an item() and one copy to the host: no device-to-device copy).
// The fix of each pair is the same step (every fix applied). On the CPU there is nothing to
// count (covered by the sim:0 cell); on CUDA the loop runs under the sync-debug mode in error
// mode (c10::cuda::warning_state()): each broken variant must raise, each fix must not.
#include <torchplace/scenario.h>
#include <torchplace/sim/sim.h>
#include <torchplace/sim/transfer_log.h>
#include <torchplace/training.h>
#include <torchplace/transfer_metrics.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#if TORCHPLACE_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace scenarios::transfer_budget {
namespace {

constexpr int kBatch = 4;
constexpr int kLength = 6;  // positions per sample; the last kLength - kValid are padding
constexpr int kValid = 4;
constexpr int kFeatures = 8;
constexpr int kClasses = 3;
constexpr int kSteps = 3;  // measured, after one warm-up step
constexpr double kLearningRate = 0.1;
constexpr tp::Rtol kRtol{1e-6};  // the sim computes with the CPU's kernels
constexpr tp::Atol kAtol{1e-7};

struct Mistakes {
  bool item_every_step = false;
  bool mask_from_host = false;
  bool cpu_in_loop = false;
  bool boolean_index = false;
};

// blocked[position][class]: classes a position may not take (class c from position c on).
torch::Tensor blocked_classes() { return torch::ones({kLength, kClasses}, torch::kBool).triu(1); }

struct NetImpl : torch::nn::Module {
  NetImpl()
      : fc(register_module("fc", torch::nn::Linear(kFeatures, kClasses))),
        blocked(register_buffer("blocked", blocked_classes())),
        valid(register_buffer("valid", torch::arange(kLength) < kValid)) {}

  // Per-position logits [kBatch, kLength, kClasses] of features [kBatch * kLength, kFeatures].
  torch::Tensor forward(const torch::Tensor& features, const torch::Tensor& mask) {
    return fc(features).view({kBatch, kLength, kClasses}).masked_fill(mask, -1e9);
  }

  torch::nn::Linear fc;
  torch::Tensor blocked;
  torch::Tensor valid;  // [kLength]: true where the position is not padding
};
TORCH_MODULE(Net);

// The mean loss over the valid positions.
torch::Tensor loss_of(const torch::Tensor& logits, const torch::Tensor& labels,
                      const torch::Tensor& valid, bool boolean_index) {
  namespace F = torch::nn::functional;
  const torch::Tensor each = F::cross_entropy(logits.reshape({-1, kClasses}), labels.reshape({-1}),
                                              F::CrossEntropyFuncOptions().reduction(torch::kNone))
                                 .view({kBatch, kLength});
  if (boolean_index) return each.index({torch::indexing::Slice(), valid}).mean();
  return each.masked_fill(valid.logical_not(), 0.0).sum() / (valid.sum() * kBatch);
}

struct Run {
  Net net;
  torch::Tensor features = torch::randn({kBatch * kLength, kFeatures});  // host batch
  torch::Tensor labels = torch::minimum(torch::randint(kClasses, {kBatch, kLength}, torch::kLong),
                                        torch::arange(kLength));  // never a blocked class
  std::vector<torch::Tensor> outputs;  // each step's logits, kept for the caller
  torch::Tensor loss_sum;              // on the device (the fix)
  double logged = 0;                   // read every step (item_every_step)
};

void step(Run& run, torch::optim::Optimizer& optimizer, torch::Device device, Mistakes mistakes) {
  const torch::Tensor features = run.features.to(device, /*non_blocking=*/true);
  const torch::Tensor labels = run.labels.to(device, /*non_blocking=*/true);
  const torch::Tensor mask =
      mistakes.mask_from_host ? blocked_classes().to(device) : run.net->blocked;
  optimizer.zero_grad();
  const torch::Tensor logits = run.net(features, mask);
  const torch::Tensor loss = loss_of(logits, labels, run.net->valid, mistakes.boolean_index);
  loss.backward();
  optimizer.step();
  if (mistakes.item_every_step) {
    run.logged += loss.item<double>();
  } else {
    run.loss_sum = run.loss_sum + loss.detach();
  }
  run.outputs.push_back(mistakes.cpu_in_loop ? logits.detach().cpu() : logits.detach());
}

// After the loop: the logged loss and all outputs, on the host.
std::pair<double, torch::Tensor> finish(Run& run, Mistakes mistakes) {
  const double loss = mistakes.item_every_step ? run.logged : run.loss_sum.item<double>();
  return {loss, torch::cat(run.outputs).cpu()};
}

using Counts = tp::sim::TransferCounts;
constexpr int kSeed = 7;
constexpr std::int64_t kBatchBytes = kBatch * kLength * (kFeatures * 4 + 8);  // 960: x, labels
constexpr std::int64_t kMaskBytes = kLength * kClasses;                       // 18: bool
constexpr std::int64_t kOutputBytes = kBatch * kLength * kClasses * 4;        // 288 a step

struct Result {
  double loss = 0;
  torch::Tensor outputs, weight;  // on the host
  torch::Tensor initial;          // the weight before the loop, on the host
  std::vector<Counts> steps;      // each measured step's counts
  Counts once;                    // after the loop
};

Result train(torch::Device device, Mistakes mistakes) {
  torch::manual_seed(kSeed);
  Run run;
  run.net->to(device);
  run.loss_sum = torch::zeros({}, torch::TensorOptions().device(device));
  torch::optim::SGD optimizer(run.net->parameters(), torch::optim::SGDOptions(kLearningRate));
  Result result;
  result.initial = run.net->fc->weight.detach().cpu().clone();
  step(run, optimizer, device, mistakes);  // warm-up: the first step may allocate gradients
  for (int index = 0; index < kSteps; ++index) {
    tp::sim::TransferLog log;
    step(run, optimizer, device, mistakes);
    log.stop();
    result.steps.push_back(log.counts());
  }
  tp::sim::TransferLog log;
  std::tie(result.loss, result.outputs) = finish(run, mistakes);
  log.stop();
  result.once = log.counts();
  result.weight = run.net->fc->weight.detach().cpu();
  return result;
}

// "h2d 2/960 B/2nb d2h 0/0 B/0nb d2d 0/0 B/0nb syncs: 1 _local_scalar_dense": exact, readable;
// without d2d (with_d2d false), what a cell asserts exactly.
std::string describe(const Counts& counts, bool with_d2d = true) {
  std::ostringstream out;
  const auto direction = [&](const char* name, const tp::sim::CopyCount& count) {
    out << name << " " << count.copies << "/" << count.bytes << " B/" << count.non_blocking
        << "nb ";
  };
  direction("h2d", counts.host_to_device);
  direction("d2h", counts.device_to_host);
  if (with_d2d) direction("d2d", counts.device_to_device);
  out << "syncs:";
  for (const auto& [op, count] : counts.syncs) {
    if (count != 0) out << " " << count << " " << op;
  }
  return out.str();
}

Counts counts(tp::sim::CopyCount h2d, tp::sim::CopyCount d2h, tp::sim::CopyCount d2d,
              std::map<std::string, std::int64_t> syncs) {
  return {h2d, d2h, d2d, std::move(syncs)};
}

// Device-to-device copies of a step: masked_fill out of place clones its input (logits 288 B,
// the per-position loss 96 B), forward and backward. boolean_index's loss does not masked_fill;
// its backward index_put clones the zero gradient of the per-position loss (96 B).
const tp::sim::CopyCount kMaskedFillCopies{4, 2 * (kOutputBytes + kBatch * kLength * 4), 0};
const tp::sim::CopyCount kIndexCopies{3, 2 * kOutputBytes + kBatch* kLength * 4, 0};

// What each case must count, per measured step and after the loop (the header's table).
struct Budget {
  Counts step, once;
};
const Counts kFixedStep = counts({2, kBatchBytes, 2}, {}, kMaskedFillCopies, {});
const Counts kFixedOnce = counts({}, {1, (kSteps + 1) * kOutputBytes, 0}, {},
                                 {{"_local_scalar_dense", 1}, {"copy_to_host", 1}});

// Device-to-device copies at most the ceiling (LibTorch's own clones, fewer on newer versions);
// its non_blocking ones exactly as many as listed.
void expect_within(const tp::sim::CopyCount& seen, const tp::sim::CopyCount& ceiling) {
  EXPECT_LE(seen.copies, ceiling.copies) << "device-to-device copies";
  EXPECT_LE(seen.bytes, ceiling.bytes) << "device-to-device bytes";
  EXPECT_EQ(seen.non_blocking, ceiling.non_blocking) << "device-to-device non_blocking copies";
}

// describe, which the exact checks and the note read, in its format (the example above).
void expect_described_in_format() {
  EXPECT_EQ(describe(kFixedOnce) + "; " + describe(kFixedStep, false),
            "h2d 0/0 B/0nb d2h 1/1152 B/0nb d2d 0/0 B/0nb syncs: 1 _local_scalar_dense 1 "
            "copy_to_host; h2d 2/960 B/2nb d2h 0/0 B/0nb syncs:");
}

// The mistake costs transfers only: on the CPU the variant logs the loss the fix logs.
void expect_logs_as_the_fix(const Result& cpu) {
  const Result fix = train(torch::kCPU, Mistakes{});
  EXPECT_NEAR(cpu.loss, fix.loss, tp::bound(kRtol, kAtol, fix.loss)) << "the logged loss";
}

// Each step is one plain SGD step on its own loss: the weight tp::train_sgd reaches from the same
// start, on the same batch and loss, over as many steps (the warm-up's too).
void expect_plain_sgd(const Result& cpu, Mistakes mistakes) {
  torch::manual_seed(kSeed);
  Run run;  // the same draws as train's: the same start, batch and labels
  tp::train_sgd(run.net->parameters(), kSteps + 1, kLearningRate, [&] {
    const torch::Tensor logits = run.net(run.features, run.net->blocked);
    return loss_of(logits, run.labels, run.net->valid, mistakes.boolean_index);
  });
  EXPECT_TRUE(torch::equal(run.net->fc->weight, cpu.weight)) << "not the plain SGD's weight";
}

void on_sim(tp::Cell& cell, Mistakes mistakes, const Budget& budget) {
  const Result cpu = train(torch::kCPU, mistakes);
  const Result sim = cell.under_test("train", [&] { return train(cell.device(), mistakes); });
  for (const Counts& each : sim.steps) {
    EXPECT_EQ(describe(each, false), describe(budget.step, false));
    expect_within(each.device_to_device, budget.step.device_to_device);
  }
  EXPECT_EQ(describe(sim.once), describe(budget.once));  // no device-to-device copy after it
  tp::record_transfers(cell, "step", sim.steps.front());
  tp::record_transfers(cell, "once", sim.once);
  expect_described_in_format();
  cell.note("per step: " + describe(sim.steps.front()) + "; after the loop: " + describe(sim.once));
  // The sim computes with the CPU's kernels, in the same order: its results are the CPU's, bit
  // for bit.
  EXPECT_EQ(sim.loss, cpu.loss) << "the logged loss";
  EXPECT_TRUE(torch::equal(sim.outputs, cpu.outputs)) << "the outputs";
  EXPECT_TRUE(torch::equal(sim.weight, cpu.weight)) << "the trained weight";
  EXPECT_FALSE(torch::equal(cpu.weight, cpu.initial)) << "the loop never trained its weight";
  expect_logs_as_the_fix(cpu);
  expect_plain_sgd(cpu, mistakes);
}

#if TORCHPLACE_WITH_CUDA
// CUDA's sync-debug mode in error mode for a scope (c10/cuda/CUDAFunctions.h, 1.10+).
struct SyncDebugError {
  SyncDebugError() {
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
  }
  ~SyncDebugError() {
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
  }
};
#endif

// On CUDA: one step under the sync-debug mode's error mode must raise for a broken variant
// ("called a synchronizing CUDA operation", c10/cuda/CUDAFunctions.cpp) and not for a fix.
void on_cuda(tp::Cell& cell, Mistakes mistakes, bool broken) {
#if TORCHPLACE_WITH_CUDA
  torch::manual_seed(kSeed);
  Run run;
  run.net->to(cell.device());
  run.loss_sum = torch::zeros({}, torch::TensorOptions().device(cell.device()));
  torch::optim::SGD optimizer(run.net->parameters(), torch::optim::SGDOptions(kLearningRate));
  step(run, optimizer, cell.device(), mistakes);  // warm-up, outside the mode
  std::string raised;
  try {
    const SyncDebugError mode;
    step(run, optimizer, cell.device(), mistakes);
  } catch (const c10::Error& error) {
    raised = error.what_without_backtrace();
  }
  if (broken) {
    EXPECT_NE(raised.find("called a synchronizing CUDA operation"), std::string::npos) << raised;
  } else {
    EXPECT_EQ(raised, "");
  }
#else
  (void)mistakes, (void)broken;
  FAIL() << cell.id() << ": a CUDA cell ran in a LibTorch built without CUDA";
#endif
}

void run_case(tp::Cell& cell, Mistakes mistakes, const Budget& budget) {
  const bool broken = mistakes.item_every_step || mistakes.mask_from_host || mistakes.cpu_in_loop ||
                      mistakes.boolean_index;
  if (tp::sim::is_sim(cell.device())) return on_sim(cell, mistakes, budget);
  on_cuda(cell, mistakes, broken);
}

Mistakes only(bool Mistakes::*mistake) {
  Mistakes mistakes;
  mistakes.*mistake = true;
  return mistakes;
}

void item_every_step(tp::Cell& cell) {
  Counts step = kFixedStep;
  step.syncs = {{"_local_scalar_dense", 1}};
  run_case(cell, only(&Mistakes::item_every_step),
           {step, counts({}, {1, (kSteps + 1) * kOutputBytes, 0}, {}, {{"copy_to_host", 1}})});
}
void mask_from_host(tp::Cell& cell) {
  run_case(
      cell, only(&Mistakes::mask_from_host),
      {counts({3, kBatchBytes + kMaskBytes, 2}, {}, kMaskedFillCopies, {{"copy_to_device", 1}}),
       kFixedOnce});
}
void cpu_in_loop(tp::Cell& cell) {
  run_case(
      cell, only(&Mistakes::cpu_in_loop),
      {counts({2, kBatchBytes, 2}, {1, kOutputBytes, 0}, kMaskedFillCopies, {{"copy_to_host", 1}}),
       counts({}, {}, {}, {{"_local_scalar_dense", 1}})});
}
void boolean_index(tp::Cell& cell) {
  Counts step = kFixedStep;
  step.device_to_device = kIndexCopies;
  step.syncs = {{"index_put_bool_mask", 1}, {"nonzero", 1}};
  run_case(cell, only(&Mistakes::boolean_index), {step, kFixedOnce});
}
void fixed(tp::Cell& cell) { run_case(cell, Mistakes{}, {kFixedStep, kFixedOnce}); }

tp::Expect expectation(const tp::CellSpec& cell) {
  if (cell.device().is_cpu()) {
    return tp::Expect::skip(
        "the CPU is the host: this step has no transfers to count; its sim:0 cell counts them");
  }
  return tp::Expect::success();
}

}  // namespace

TP_SCENARIO(transfer_budget)
    .cases("case", {{"item_every_step", item_every_step, expectation},
                    {"metric_once", fixed, expectation},
                    {"mask_from_host", mask_from_host, expectation},
                    {"registered_mask", fixed, expectation},
                    {"cpu_in_loop", cpu_in_loop, expectation},
                    {"cpu_once", fixed, expectation},
                    {"boolean_index", boolean_index, expectation},
                    {"masked_fill", fixed, expectation}})
    .on(tp::DeviceAxis::kEach);

}  // namespace scenarios::transfer_budget
