// A cell's transfer budget in results.json: what a tp::sim::TransferLog counted, as metrics
// the behaviour gate compares with the committed expectation (a count above it is a regression
// naming the direction or the operator: reports/torchplace/gate/behaviour.py).
//
//   tp::sim::TransferLog log;
//   train_step(model, optimizer, batch, tp::sim::device());
//   log.stop();
//   tp::record_transfers(cell, "step", log.counts());
//
// writes, for phase "step":
//   transfer.step.{h2d,d2h,d2d}.{copies,bytes,non_blocking}
//   transfer.step.sync.<operator>   every operator of tp::sim::sync_operators(), zeros included
// so that a count that was 0 is a recorded 0, never a missing metric.
#pragma once
#include <string>

#include "scenario.h"
#include "sim/transfer_log.h"

namespace tp {

inline constexpr const char* kTransferMetricPrefix = "transfer.";

inline void record_transfers(Cell& cell, const std::string& phase,
                             const sim::TransferCounts& counts) {
  const std::string prefix = kTransferMetricPrefix + phase + ".";
  const auto direction = [&](const char* name, const sim::CopyCount& count) {
    cell.metric(prefix + name + ".copies", static_cast<double>(count.copies));
    cell.metric(prefix + name + ".bytes", static_cast<double>(count.bytes));
    cell.metric(prefix + name + ".non_blocking", static_cast<double>(count.non_blocking));
  };
  direction("h2d", counts.host_to_device);
  direction("d2h", counts.device_to_host);
  direction("d2d", counts.device_to_device);
  for (const auto& [op, why] : sim::sync_operators()) {
    const auto found = counts.syncs.find(op);
    cell.metric(prefix + "sync." + op,
                found == counts.syncs.end() ? 0.0 : static_cast<double>(found->second));
  }
}

}  // namespace tp
