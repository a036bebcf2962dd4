// The transfer benchmarks' host cache: a batch is made once per shape, one shape is alive at a
// time (the previous one freed before the next is made), and the pinned block holds the
// pageable values back to back. Blocks come from a counting maker, so this runs without CUDA.
#include "host_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

namespace tp::bench {
namespace {

struct Blocks {
  int live = 0;       // blocks not yet freed
  int most_live = 0;  // the most alive at once
};

// Plain host blocks that count themselves alive.
BlockMaker counting_maker(const std::shared_ptr<Blocks>& blocks) {
  return [blocks](int64_t bytes) {
    blocks->most_live = std::max(blocks->most_live, ++blocks->live);
    return torch::from_blob(
        new uint8_t[bytes], {bytes},
        [blocks](void* memory) {
          --blocks->live;
          delete[] static_cast<uint8_t*>(memory);
        },
        torch::kUInt8);
  };
}

TEST(HostCache, MakesEachShapeOnceAndReusesIt) {
  auto blocks = std::make_shared<Blocks>();
  HostCache cache(counting_maker(blocks));
  const void* first = cache.get(1, 4096).pageable.at(0).data_ptr();
  EXPECT_EQ(cache.get(1, 4096).pageable.at(0).data_ptr(), first);
  EXPECT_EQ(cache.batches_made(), 1);
  EXPECT_EQ(blocks->live, 1);
}

TEST(HostCache, FreesThePreviousShapeBeforeMakingTheNext) {
  auto blocks = std::make_shared<Blocks>();
  HostCache cache(counting_maker(blocks));
  cache.get(1, 4096);
  cache.get(1, 16384);
  cache.get(4, 4096);
  EXPECT_EQ(cache.batches_made(), 3);
  EXPECT_EQ(blocks->most_live, 1);  // never two shapes' blocks at once
  cache.clear();
  EXPECT_EQ(blocks->live, 0);
}

TEST(HostCache, PinnedBlockHoldsThePageableValuesBackToBack) {
  HostCache cache(counting_maker(std::make_shared<Blocks>()));
  const HostBatch& batch = cache.get(3, 1024);  // 3 tensors of 256 floats
  ASSERT_EQ(batch.pageable.size(), 3u);
  ASSERT_EQ(batch.pinned.size(), 3u);
  const auto* start = static_cast<const char*>(batch.pinned[0].data_ptr());
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(batch.pageable[i].numel(), 256);
    EXPECT_TRUE(torch::equal(batch.pinned[i], batch.pageable[i])) << i;
    EXPECT_EQ(static_cast<const char*>(batch.pinned[i].data_ptr()), start + i * 1024) << i;
  }
  EXPECT_FALSE(torch::equal(batch.pageable[0], batch.pageable[1]));  // random, not a constant
}

TEST(HostCache, RefusesAShapeOfNoWholeFloats) {
  HostCache cache(counting_maker(std::make_shared<Blocks>()));
  EXPECT_THROW(cache.get(1, 6), c10::Error);
  EXPECT_THROW(cache.get(0, 4096), c10::Error);
}

TEST(HostCache, TakesTensorsOfOneFloat) {  // the smallest whole number of float32
  HostCache cache(counting_maker(std::make_shared<Blocks>()));
  const HostBatch& batch = cache.get(2, 4);
  ASSERT_EQ(batch.pinned.size(), 2u);
  EXPECT_EQ(batch.pinned[1].numel(), 1);
  EXPECT_TRUE(torch::equal(batch.pinned[1], batch.pageable[1]));
}

// A maker that returns a block of another size is refused by name, before the block is used.
TEST(HostCache, RefusesAPinnedBlockOfTheWrongSize) {
  const BlockMaker maker = counting_maker(std::make_shared<Blocks>());
  HostCache cache([maker](int64_t bytes) { return maker(bytes + 4); });
  try {
    cache.get(2, 16);
    ADD_FAILURE() << "a 36-byte block for 32 bytes was taken";
  } catch (const c10::Error& error) {
    EXPECT_NE(std::string(error.what()).find("the pinned maker returned 36 bytes, wanted 32"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace tp::bench
