// record_transfers (transfer_metrics.h): a step's counts as the cell's metrics, which the
// behaviour gate holds to a committed budget: each direction's copies, bytes and non_blocking
// copies, and every operator of sim::sync_operators(), 0 where the step forced none. The counts
// are synthetic: the names and the numbers are what is checked.
#include <torchplace/transfer_metrics.h>

#include <gtest/gtest.h>

#include <string>

#include "internal/results.h"

namespace transfer_metrics_test {
namespace {

TEST(TransferMetrics, EachCountIsAMetricAndAnAbsentSyncIsZero) {
  tp::CellRecord record(tp::CellSpec("synthetic", {}, tp::Placement{{torch::kCPU}}),
                        tp::Expect::success());
  tp::Cell cell(record.spec, record);
  tp::sim::TransferCounts counts;
  counts.host_to_device = {2, 64, 1};
  counts.device_to_host = {1, 16, 0};
  counts.device_to_device = {3, 48, 2};
  const std::string forced = tp::sim::sync_operators().begin()->first;
  counts.syncs[forced] = 5;
  tp::record_transfers(cell, "step", counts);
  const auto& metrics = record.metrics;
  const std::map<std::string, double> copies = {
      {"h2d.copies", 2}, {"h2d.bytes", 64}, {"h2d.non_blocking", 1},
      {"d2h.copies", 1}, {"d2h.bytes", 16}, {"d2h.non_blocking", 0},
      {"d2d.copies", 3}, {"d2d.bytes", 48}, {"d2d.non_blocking", 2}};
  for (const auto& [name, value] : copies) EXPECT_EQ(metrics.at("transfer.step." + name), value);
  for (const auto& [op, why] : tp::sim::sync_operators())
    EXPECT_EQ(metrics.at("transfer.step.sync." + op), op == forced ? 5.0 : 0.0) << op;
  EXPECT_EQ(metrics.size(), copies.size() + tp::sim::sync_operators().size());
}

}  // namespace
}  // namespace transfer_metrics_test
