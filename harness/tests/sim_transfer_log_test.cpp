// tp::sim::TransferLog: each direction's copies, bytes and non_blocking; the forced
// synchronisations by operator; the sim's own fallback copies left out; nesting, stop() and
// other threads (transfer_log.h's scope rules).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <thread>
#include <type_traits>
#include <vector>

#include <torchplace/sim/sim.h>
#include <torchplace/sim/transfer_log.h>
#include "child_run.h"
#include "raised_message.h"
#include "sim/sim_internal.h"

namespace sim_transfer_log_test {  // unity-built with the other harness tests
namespace {

constexpr std::int64_t kBytes = 3 * 4 * 4;  // a float32 [3, 4] tensor

void expect_copies(const tp::sim::CopyCount& count, std::int64_t copies, std::int64_t bytes,
                   std::int64_t non_blocking) {
  EXPECT_EQ(count.copies, copies);
  EXPECT_EQ(count.bytes, bytes);
  EXPECT_EQ(count.non_blocking, non_blocking);
}

// How many of the log's events named `event` were kept with their stack (call_sites(): the
// where of each, empty here when no frame is a user's).
std::int64_t sited(const tp::sim::TransferLog& log, const std::string& event) {
  std::int64_t total = 0;
  for (const auto& site : log.call_sites()) total += site.event == event ? site.count : 0;
  return total;
}

TEST(SimTransferLog, CountsEachDirectionApart) {
  const torch::Tensor host = torch::randn({3, 4});
  tp::sim::TransferLog log;
  const torch::Tensor device = host.to(tp::sim::device(), /*non_blocking=*/true);
  expect_copies(log.host_to_device(), 1, kBytes, 1);
  const torch::Tensor back = device.cpu();
  expect_copies(log.device_to_host(), 1, kBytes, 0);
  const torch::Tensor twin = device.clone();
  const torch::Tensor other = device.to(tp::sim::device(1));
  expect_copies(log.device_to_device(), 2, 2 * kBytes, 0);
  expect_copies(log.host_to_device(), 1, kBytes, 1);  // nothing else moved
  EXPECT_EQ(log.syncs(), 1) << log.summary();         // the blocking .cpu()
  EXPECT_EQ(log.syncs("copy_to_host"), 1);
  EXPECT_EQ(sited(log, "copy_to_host"), 1);  // the sync is placed, not only counted
  EXPECT_EQ(sited(log, "copy_to_device"), 0);
  EXPECT_EQ(sited(log, "d2d"), 2);
  EXPECT_TRUE(torch::equal(back, host));
  EXPECT_TRUE(torch::equal(twin.cpu(), other.cpu()));
}

TEST(SimTransferLog, BlockingHostToDeviceCopyIsASync) {
  const torch::Tensor host = torch::randn({3, 4});
  tp::sim::TransferLog log;
  const torch::Tensor device = host.to(tp::sim::device());
  expect_copies(log.host_to_device(), 1, kBytes, 0);
  EXPECT_EQ(log.syncs_by_operator(), (std::map<std::string, std::int64_t>{{"copy_to_device", 1}}));
  EXPECT_EQ(sited(log, "copy_to_device"), 1);  // the sync is placed, not only counted
  EXPECT_EQ(sited(log, "h2d"), 1);
}

TEST(SimTransferLog, TheFallbacksOwnCopiesAreNotCounted) {
  const torch::Tensor device = torch::randn({3, 4}).to(tp::sim::device());
  tp::sim::TransferLog log;
  const long long calls = tp::sim::checked_calls();
  const torch::Tensor sum = (device * 2 + 1).sum(1);
  EXPECT_GT(tp::sim::checked_calls(), calls);  // it went through the fallback ...
  const tp::sim::TransferCounts counts = log.counts();
  expect_copies(counts.host_to_device, 0, 0, 0);  // ... whose CPU round trip is not a transfer
  expect_copies(counts.device_to_host, 0, 0, 0);
  expect_copies(counts.device_to_device, 0, 0, 0);
  EXPECT_EQ(log.syncs(), 0) << log.summary();
  EXPECT_TRUE(tp::sim::is_sim(sum.device()));
}

TEST(SimTransferLog, ForcedSynchronisationsByOperator) {
  const torch::Tensor x = torch::arange(6, torch::kFloat).to(tp::sim::device());
  const torch::Tensor mask = x > 2;
  tp::sim::TransferLog log;
  EXPECT_EQ(x.sum().item<float>(), 15.0f);
  EXPECT_EQ(x.nonzero().size(0), 5);
  EXPECT_EQ(x.masked_select(mask).size(0), 3);
  EXPECT_EQ(x.index({mask}).size(0), 3);
  EXPECT_EQ(std::get<0>(torch::_unique(x)).size(0), 6);
  EXPECT_EQ(x.masked_fill(mask, 0.0).size(0), 6);  // masked_fill: no sync
  EXPECT_EQ(log.syncs_by_operator(),
            (std::map<std::string, std::int64_t>{{"_local_scalar_dense", 1},  // item()
                                                 {"masked_select", 1},
                                                 {"nonzero", 2},  // x.nonzero() and x[mask]
                                                 {"unique", 1}}))
      << log.summary();
  EXPECT_EQ(log.syncs(), 5) << "the total over operators";
  EXPECT_EQ(log.syncs("copy_to_device"), 0) << "an operator not seen counts none";
}

// Every unique operator synchronises (the output's size): torch.unique's _unique2, unique_dim
// and unique_consecutive, each counted as "unique".
TEST(SimTransferLog, EveryUniqueIsASync) {
  const torch::Tensor x = torch::tensor({1.0f, 1.0f, 2.0f}).to(tp::sim::device());
  tp::sim::TransferLog log;
  EXPECT_EQ(std::get<0>(torch::_unique2(x)).size(0), 2);
  EXPECT_EQ(std::get<0>(torch::unique_dim(x, 0)).size(0), 2);
  EXPECT_EQ(std::get<0>(torch::unique_consecutive(x)).size(0), 2);
  EXPECT_EQ(log.syncs_by_operator(), (std::map<std::string, std::int64_t>{{"unique", 3}}))
      << log.summary();
}

// index_put_ with integer indices needs no mask turned into indices: no sync.
TEST(SimTransferLog, AnIntegerIndexPutIsNoSync) {
  torch::Tensor x = torch::zeros({6}).to(tp::sim::device());
  const torch::Tensor indices = torch::tensor({0, 2}).to(tp::sim::device());
  const torch::Tensor one = torch::ones({}).to(tp::sim::device());
  tp::sim::TransferLog log;
  x.index_put_({indices}, one);
  EXPECT_EQ(log.syncs(), 0) << log.summary();
  EXPECT_TRUE(torch::equal(x.cpu(), torch::tensor({1.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f})));
}

// A non_blocking copy to the host is counted as a copy, and as no sync.
TEST(SimTransferLog, ANonBlockingCopyToTheHostIsNoSync) {
  const torch::Tensor device = torch::randn({3, 4}).to(tp::sim::device());
  tp::sim::TransferLog log;
  const torch::Tensor host = device.to(torch::kCPU, /*non_blocking=*/true);
  expect_copies(log.device_to_host(), 1, kBytes, 1);
  EXPECT_EQ(log.syncs(), 0) << log.summary();
}

TEST(SimTransferLog, BooleanIndexBackwardIsIndexPut) {
  const torch::Tensor x = torch::randn({6}).to(tp::sim::device()).requires_grad_();
  const torch::Tensor mask = torch::arange(6).to(tp::sim::device()) < 4;
  tp::sim::TransferLog log;
  x.index({mask}).sum().backward();
  EXPECT_EQ(log.syncs("nonzero"), 1) << log.summary();  // forward: index's mask to indices
  EXPECT_EQ(log.syncs("index_put_bool_mask"), 1) << log.summary();
}

// A uint8 mask is a boolean mask to index_put where LibTorch still takes one (1.13, deprecated):
// the same synchronising kernel, counted as one. Newer versions refuse it on the CPU as well
// (2.13: "masked_fill_ only supports boolean masks"), and then the sim refuses it too.
TEST(SimTransferLog, AByteMaskIsABooleanIndexToo) {
  const torch::Tensor byte_mask = (torch::arange(6) < 4).to(torch::kByte);
  const std::string refused =
      tp_test::message_of([&] { torch::zeros({6}).index_put_({byte_mask}, torch::ones({})); });
  if (!refused.empty()) {
    torch::Tensor on_sim = torch::zeros({6}).to(tp::sim::device());
    const std::string sim_refused = tp_test::message_of([&] {
      on_sim.index_put_({byte_mask.to(tp::sim::device())}, torch::ones({}).to(tp::sim::device()));
    });
    EXPECT_NE(sim_refused.find(refused.substr(0, refused.find('\n'))), std::string::npos)
        << "CPU: " << refused << "\nsim: " << sim_refused;
    return;
  }
  torch::Tensor x = torch::zeros({6}).to(tp::sim::device());
  const torch::Tensor mask = byte_mask.to(tp::sim::device());
  tp::sim::TransferLog log;
  x.index_put_({mask}, torch::ones({}).to(tp::sim::device()));
  EXPECT_EQ(log.syncs("index_put_bool_mask"), 1) << log.summary();
  EXPECT_EQ(x.cpu().sum().item<float>(), 4.0f);
}

TEST(SimTransferLog, NestedLogsEachCountAndStopStops) {
  const torch::Tensor host = torch::randn({3, 4});
  tp::sim::TransferLog outer;
  const torch::Tensor first = host.to(tp::sim::device(), true);
  {
    tp::sim::TransferLog inner;
    const torch::Tensor second = host.to(tp::sim::device(), true);
    EXPECT_EQ(inner.host_to_device().copies, 1);
  }
  EXPECT_EQ(outer.host_to_device().copies, 2);
  outer.stop();
  const torch::Tensor third = host.to(tp::sim::device(), true);
  EXPECT_EQ(outer.host_to_device().copies, 2);
}

// Stopping one of two live logs, the first or the last made, stops that one only.
TEST(SimTransferLog, StoppingOneOfTwoStopsThatOne) {
  const torch::Tensor host = torch::randn({3, 4});
  for (const bool stop_first : {true, false}) {
    tp::sim::TransferLog first, second;
    (stop_first ? first : second).stop();
    const torch::Tensor copied = host.to(tp::sim::device(), true);
    EXPECT_EQ(first.host_to_device().copies, stop_first ? 0 : 1) << "stopped the first made";
    EXPECT_EQ(second.host_to_device().copies, stop_first ? 1 : 0) << "stopped the last made";
  }
}

// The same in a process of its own, where the two are the first logs made: none that an earlier
// test stopped (or failed to) sits before them in the registry.
TEST(SimTransferLog, StoppingTheFirstLogOfAProcessStopsIt) {
  const auto [status, output] =
      tp_test::run_child("", "SimTransferLog.StoppingOneOfTwoStopsThatOne");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("[  PASSED  ] 1 test."), std::string::npos) << output;
}

TEST(SimTransferLog, CountsOtherThreads) {
  const torch::Tensor host = torch::randn({3, 4});
  tp::sim::TransferLog log;
  std::thread worker([&] { (void)host.to(tp::sim::device(), true); });
  worker.join();
  EXPECT_EQ(log.host_to_device().copies, 1);
}

// The summary, whole: each direction with its copies, bytes, non_blocking and calls, then the
// syncs by operator, or none. Every call here has one place, this test's body (with -g, its line:
// sim_where_test.cpp), or none where the build cannot name it.
TEST(SimTransferLog, TheSummaryNamesEveryCount) {
  const torch::Tensor host = torch::randn({3, 4});
  tp::sim::TransferLog log;
  EXPECT_EQ(log.summary(),
            "h2d 0 copies 0 B (0 non_blocking); d2h 0 copies 0 B (0 non_blocking); "
            "d2d 0 copies 0 B (0 non_blocking); syncs: none");
  const torch::Tensor device = host.to(tp::sim::device(), /*non_blocking=*/true);
  const torch::Tensor back = device.to(tp::sim::device(1)).cpu();
  (void)back.sum().item<float>();  // on the CPU: no sync
  (void)device.sum().item<float>();
  const std::vector<tp::sim::CallSite> sites = log.call_sites();
  ASSERT_FALSE(sites.empty());
  const std::string where = sites.front().where;
  for (const auto& site : sites) EXPECT_EQ(site.where, where) << site.event;
  const auto at = [&](const std::string& lead, const std::string& call) {
    return where.empty() ? std::string() : lead + call + " " + where;
  };
  EXPECT_EQ(log.summary(), "h2d 1 copies 48 B (1 non_blocking" + at("; ", ".to(device)") +
                               "); d2h 1 copies 48 B (0 non_blocking" + at("; ", ".cpu()") +
                               "); d2d 1 copies 48 B (0 non_blocking" + at("; ", ".to()/.clone()") +
                               "); syncs: 1 x _local_scalar_dense" + at(" (", ".item()") +
                               (where.empty() ? "" : ")") + " 1 x copy_to_host" +
                               at(" (", ".cpu()") + (where.empty() ? "" : ")"));
}

// Frames off (a Python process, sim_internal.h set_user_frames): no place, each count alone.
TEST(SimTransferLog, WithoutFramesTheSummaryNamesNoPlace) {
  const torch::Tensor device = torch::randn({3, 4}).to(tp::sim::device());
  tp::sim::detail::set_user_frames(false);
  tp::sim::TransferLog log;
  (void)device.sum().item<float>();
  log.stop();
  tp::sim::detail::set_user_frames(true);
  EXPECT_EQ(log.summary(),
            "h2d 0 copies 0 B (0 non_blocking); d2h 0 copies 0 B (0 non_blocking); "
            "d2d 0 copies 0 B (0 non_blocking); syncs: 1 x _local_scalar_dense");
}

// A copy would share the log's sink, and each copy's destructor would stop it (transfer_log.h).
TEST(SimTransferLog, IsNeitherCopiedNorAssigned) {
  EXPECT_FALSE(std::is_copy_constructible_v<tp::sim::TransferLog>);
  EXPECT_FALSE(std::is_copy_assignable_v<tp::sim::TransferLog>);
}

TEST(SimTransferLog, RefusesAnOperatorItDoesNotCount) {
  tp::sim::TransferLog log;
  EXPECT_THROW((void)log.syncs("cudaDeviceSynchronize"), c10::Error);
  EXPECT_EQ(tp::sim::sync_operators().count("_local_scalar_dense"), 1u);
}

}  // namespace
}  // namespace sim_transfer_log_test
