// The batch mover keeps the shape of a nested batch and moves every tensor in it.
#include "fixes/batch_mover.h"

#include <gtest/gtest.h>

namespace tp::fixes {
namespace {

using Nested = std::tuple<std::vector<torch::Tensor>, std::map<std::string, torch::Tensor>,
                          std::pair<torch::Tensor, std::string>>;

Nested make_batch() {
  return {{torch::arange(3), torch::ones({2, 2})},
          {{"input", torch::rand({4})}, {"target", torch::tensor({1, 0})}},
          {torch::zeros({1}), "label-name"}};
}

void expect_same_values_on(const Nested& moved, const Nested& source, torch::Device device) {
  for (size_t i = 0; i < std::get<0>(source).size(); ++i) {
    EXPECT_EQ(std::get<0>(moved)[i].device(), device);
    EXPECT_TRUE(torch::equal(std::get<0>(moved)[i].cpu(), std::get<0>(source)[i]));
  }
  for (const auto& [key, tensor] : std::get<1>(source)) {
    EXPECT_EQ(std::get<1>(moved).at(key).device(), device) << key;
    EXPECT_TRUE(torch::equal(std::get<1>(moved).at(key).cpu(), tensor)) << key;
  }
  EXPECT_EQ(std::get<2>(moved).first.device(), device);
  EXPECT_EQ(std::get<2>(moved).second, "label-name");
}

TEST(BatchMover, KeepsStructureAndValuesOnCpu) {
  const Nested source = make_batch();
  expect_same_values_on(to_device(source, torch::kCPU), source, torch::kCPU);
}

TEST(BatchMover, MovesEveryTensor_CUDA) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "device absent: needs cuda:0";
  const Nested source = make_batch();
  const torch::Device cuda(torch::kCUDA, 0);
  expect_same_values_on(to_device(source, cuda), source, cuda);
}

TEST(BatchMover, MovesExamplesAndLeavesUndefinedTensorsUndefined) {
  const torch::data::Example<> example{torch::ones({2}), torch::Tensor()};
  const auto moved = to_device(example, torch::kCPU);
  EXPECT_TRUE(torch::equal(moved.data, example.data));
  EXPECT_FALSE(moved.target.defined());
  const torch::data::TensorExample unlabelled{torch::arange(4)};  // what TensorDataset yields
  EXPECT_TRUE(torch::equal(to_device(unlabelled, torch::kCPU).data, unlabelled.data));
}

}  // namespace
}  // namespace tp::fixes
