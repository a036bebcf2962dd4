// The transfer strategies' batch flattening (strategies.h flat_tensors): every tensor of a nested
// batch, in the batch's own order, the very tensors (the strategies copy into and from them).
#include "strategies.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace tp::bench {
namespace {

TEST(Strategies, FlatTensorsListsEveryTensorOfABatchInItsOrder) {
  const torch::Tensor a = torch::ones({2});
  const torch::Tensor b = torch::zeros({3});
  const torch::Tensor c = torch::arange(4);
  const std::pair<torch::Tensor, std::vector<torch::Tensor>> batch{a, {b, c}};
  const std::vector<torch::Tensor> flat = flat_tensors(batch);
  ASSERT_EQ(flat.size(), 3u);
  EXPECT_TRUE(flat[0].is_same(a));
  EXPECT_TRUE(flat[1].is_same(b));
  EXPECT_TRUE(flat[2].is_same(c));
}

}  // namespace
}  // namespace tp::bench
