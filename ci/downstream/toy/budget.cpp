// toy_budget: the team's own training step (toy::train_step) under a transfer budget, counted on
// the simulated accelerator by tp::sim::TransferLog. A step that starts copying or waiting more
// fails here, and its counts (results.json metrics transfer.step.*) are gated by `torchplace gate`
// against the committed "transfers" of this cell. On the CPU there is nothing to count; on CUDA
// the counts are the sim:0 cell's.
#include <gtest/gtest.h>
#include <torchplace/scenario.h>
#include <torchplace/sim/transfer_log.h>
#include <torchplace/transfer_metrics.h>

#include "toy/model.h"

namespace {

constexpr int kSamples = 32;
constexpr double kLearningRate = 0.1;
// The budget of one step, after a warm-up step:
constexpr std::int64_t kCopiesToDevice = 2;                                   // features, labels
constexpr std::int64_t kBytesToDevice = kSamples * (toy::kFeatures * 4 + 8);  // 1024 B
constexpr std::int64_t kCopiesToHost = 0;
// tp::fixes::to_device copies blocking (2 copy_to_device) and train_step returns the loss
// (1 _local_scalar_dense, its item()).
constexpr std::int64_t kSyncs = 3;

void run(tp::Cell& cell) {
  const toy::Batch batch = toy::make_batch(kSamples);
  toy::Net net;
  net->to(cell.device());
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(kLearningRate));
  toy::train_step(net, optimizer, batch, cell.device());  // warm-up: gradients allocated
  tp::sim::TransferLog log;
  cell.under_test("train_step",
                  [&] { return toy::train_step(net, optimizer, batch, cell.device()); });
  log.stop();
  tp::record_transfers(cell, "step", log.counts());
  EXPECT_LE(log.host_to_device().copies, kCopiesToDevice) << log.summary();
  EXPECT_LE(log.host_to_device().bytes, kBytesToDevice) << log.summary();
  EXPECT_LE(log.device_to_host().copies, kCopiesToHost) << log.summary();
  EXPECT_LE(log.syncs(), kSyncs) << "over budget: " << log.summary();
}

tp::Expect expectation(const tp::CellSpec& cell) {
  if (cell.device().is_cpu()) return tp::Expect::skip("on the CPU a step has no transfers");
  if (cell.device().is_cuda()) return tp::Expect::skip("counted on sim:0 (tp::sim::TransferLog)");
  return tp::Expect::success();
}

}  // namespace

TP_SCENARIO(toy_budget).on(tp::DeviceAxis::kEach).expect(expectation).run(run);
