// tp::late_ranks, cause_of, peers_of and explained (harness/ranks.h) from constructed outcomes.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>

#include "ranks.h"

namespace tp {
namespace {

constexpr auto kTimeout = ErrorClass::kCollectiveTimeout;
constexpr auto kMismatch = ErrorClass::kDeviceMismatch;
constexpr auto kNotFound = ErrorClass::kFileNotFound;

TEST(Ranks, CauseIsTheFirstRankThatDidNotTimeOut) {
  EXPECT_EQ(cause_of({std::nullopt, std::nullopt}), std::nullopt);
  EXPECT_EQ(cause_of({kMismatch, kTimeout}), 0);
  EXPECT_EQ(cause_of({kTimeout, kMismatch}), 1);
  EXPECT_EQ(cause_of({kMismatch, kMismatch}), 0);
  EXPECT_EQ(cause_of({kTimeout, kTimeout}), 0);
  EXPECT_EQ(cause_of({std::nullopt, kTimeout}), 1);
}

TEST(Ranks, PeersAreTheOtherFailedRanks) {
  EXPECT_EQ(peers_of({kMismatch, kTimeout}, 0), std::vector<int>{1});
  EXPECT_EQ(peers_of({kTimeout, kMismatch}, 1), std::vector<int>{0});
  EXPECT_EQ(peers_of({std::nullopt, kNotFound}, 1), std::vector<int>{});
  EXPECT_EQ(peers_of({kMismatch, std::nullopt}, 0), std::vector<int>{});
}

TEST(Ranks, APeerIsExplainedByATimeoutOrTheCausesClass) {
  EXPECT_TRUE(explained({kMismatch, kTimeout}, 0, 1));
  EXPECT_TRUE(explained({kMismatch, kMismatch}, 0, 1));
  EXPECT_FALSE(explained({kMismatch, kNotFound}, 0, 1));
  EXPECT_FALSE(explained({kNotFound, kMismatch}, 1, 0));
}

TEST(Ranks, ARankPastTheWatchdogIsLate) {
  auto release = std::make_shared<std::promise<void>>();
  const std::shared_future<void> released = release->get_future().share();
  const auto rank0_ran = std::make_shared<std::atomic<int>>(0);
  const auto body = [released, rank0_ran](int rank) {
    if (rank == 0) ++*rank0_ran;
    if (rank == 1) released.wait();
  };
  EXPECT_EQ(late_ranks(2, body, std::chrono::milliseconds(50)), std::vector<int>{1});
  EXPECT_EQ(*rank0_ran, 1);
  release->set_value();
  EXPECT_EQ(late_ranks(2, body, std::chrono::milliseconds(5000)), std::vector<int>{});
  EXPECT_EQ(*rank0_ran, 2);
}

}  // namespace
}  // namespace tp
