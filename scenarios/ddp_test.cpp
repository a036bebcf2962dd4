// ddp's own unit tests: which rank's error is the cell's, and the watchdog, from constructed
// outcomes (in the cells rank 1 always fails first, so they cannot tell these rules apart). The
// suite is ddp's, so the cells' kill set (`ddp.*`) runs them.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>

#include "ddp.h"

namespace scenarios::ddp_test {
namespace {

using scenarios::ddp::cause_of;
using scenarios::ddp::explained;
using scenarios::ddp::peers_of;
using scenarios::ddp::run_ranks;
constexpr auto kTimeout = tp::ErrorClass::kCollectiveTimeout;
constexpr auto kMismatch = tp::ErrorClass::kDeviceMismatch;
constexpr auto kNotFound = tp::ErrorClass::kFileNotFound;

TEST(ddp, CauseIsTheFirstRankThatDidNotTimeOut) {
  EXPECT_EQ(cause_of({std::nullopt, std::nullopt}), std::nullopt);
  EXPECT_EQ(cause_of({kMismatch, kTimeout}), 0);
  EXPECT_EQ(cause_of({kTimeout, kMismatch}), 1);
  EXPECT_EQ(cause_of({kMismatch, kMismatch}), 0);
  EXPECT_EQ(cause_of({kTimeout, kTimeout}), 0);
  EXPECT_EQ(cause_of({std::nullopt, kTimeout}), 1);
}

TEST(ddp, PeersAreTheOtherFailedRanks) {
  EXPECT_EQ(peers_of({kMismatch, kTimeout}, 0), std::vector<int>{1});
  EXPECT_EQ(peers_of({kTimeout, kMismatch}, 1), std::vector<int>{0});
  EXPECT_EQ(peers_of({std::nullopt, kNotFound}, 1), std::vector<int>{});
  EXPECT_EQ(peers_of({kMismatch, std::nullopt}, 0), std::vector<int>{});
}

TEST(ddp, APeerIsExplainedByATimeoutOrTheCausesClass) {
  EXPECT_TRUE(explained({kMismatch, kTimeout}, 0, 1));
  EXPECT_TRUE(explained({kMismatch, kMismatch}, 0, 1));
  EXPECT_FALSE(explained({kMismatch, kNotFound}, 0, 1));
  EXPECT_FALSE(explained({kNotFound, kMismatch}, 1, 0));
}

TEST(ddp, ARankPastTheWatchdogFailsTheRunNamed) {
  auto release = std::make_shared<std::promise<void>>();
  const std::shared_future<void> released = release->get_future().share();
  const auto body = [released](int rank) {
    if (rank == 1) released.wait();
  };
  try {
    run_ranks(body, std::chrono::milliseconds(50));
    ADD_FAILURE() << "rank 1 never returned and the run went on";
  } catch (const c10::Error& error) {
    EXPECT_NE(std::string(error.what()).find("CollectiveTimeout: rank 1 of 2 still running"),
              std::string::npos)
        << error.what();
  }
  release->set_value();
  EXPECT_NO_THROW(run_ranks(body, std::chrono::milliseconds(50)));
}

}  // namespace
}  // namespace scenarios::ddp_test
