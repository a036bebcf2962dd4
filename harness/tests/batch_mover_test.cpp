// The batch mover keeps the shape of a nested batch and moves every tensor in it. On meta, which
// every build has, each container kind it supports shows that its tensors moved (targets too).
#include <torchplace/fixes/batch_mover.h>
#include <torchplace/placement.h>  // tp::kMeta
#include <torchplace/sim/sim.h>
#include <torchplace/sim/transfer_log.h>

#include <gtest/gtest.h>

#include <unordered_map>

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

// Moved to meta: the device, and the shape and dtype kept (meta holds no values).
::testing::AssertionResult on_meta(const torch::Tensor& moved, const torch::Tensor& source) {
  if (moved.device() != kMeta) return ::testing::AssertionFailure() << "on " << moved.device();
  if (moved.sizes() != source.sizes() || moved.dtype() != source.dtype()) {
    return ::testing::AssertionFailure() << "shape or dtype changed";
  }
  return ::testing::AssertionSuccess();
}

TEST(BatchMover, MovesTensorsInVectorsPairsAndTuplesToMeta) {
  const std::vector<torch::Tensor> vector{torch::ones({2}), torch::arange(3)};
  const auto moved_vector = to_device(vector, kMeta);
  ASSERT_EQ(moved_vector.size(), 2u);
  EXPECT_TRUE(on_meta(moved_vector[0], vector[0]));
  EXPECT_TRUE(on_meta(moved_vector[1], vector[1]));
  const std::pair<torch::Tensor, torch::Tensor> pair{torch::ones({2}), torch::zeros({3})};
  const auto moved_pair = to_device(pair, kMeta);
  EXPECT_TRUE(on_meta(moved_pair.first, pair.first)) << "pair.first";
  EXPECT_TRUE(on_meta(moved_pair.second, pair.second)) << "pair.second";
  const std::tuple<torch::Tensor, int, torch::Tensor> tuple{torch::ones({2}), 7, torch::ones({4})};
  const auto moved_tuple = to_device(tuple, kMeta);
  EXPECT_TRUE(on_meta(std::get<0>(moved_tuple), std::get<0>(tuple))) << "tuple 0";
  EXPECT_EQ(std::get<1>(moved_tuple), 7);
  EXPECT_TRUE(on_meta(std::get<2>(moved_tuple), std::get<2>(tuple))) << "tuple 2";
}

TEST(BatchMover, MovesTensorsInStringKeyedMapsToMeta) {
  const std::map<std::string, torch::Tensor> map{{"input", torch::ones({2})},
                                                 {"target", torch::tensor({1, 0})}};
  const auto moved_map = to_device(map, kMeta);
  for (const auto& [key, tensor] : map) EXPECT_TRUE(on_meta(moved_map.at(key), tensor)) << key;
  const std::unordered_map<std::string, torch::Tensor> hashed{{"input", torch::ones({2})},
                                                              {"target", torch::tensor({1, 0})}};
  const auto moved_hashed = to_device(hashed, kMeta);
  for (const auto& [key, tensor] : hashed) {
    EXPECT_TRUE(on_meta(moved_hashed.at(key), tensor)) << "unordered_map " << key;
  }
}

// What a DataLoader yields: a vector of Examples, data and target each; and a TensorDataset's
// target-less Example.
TEST(BatchMover, MovesExamplesDataAndTargetsToMeta) {
  const std::vector<torch::data::Example<>> batch{{torch::ones({3}), torch::tensor(1)},
                                                  {torch::zeros({3}), torch::tensor(0)}};
  const auto moved = to_device(batch, kMeta);
  ASSERT_EQ(moved.size(), 2u);
  for (size_t i = 0; i < batch.size(); ++i) {
    EXPECT_TRUE(on_meta(moved[i].data, batch[i].data)) << "data " << i;
    EXPECT_TRUE(on_meta(moved[i].target, batch[i].target)) << "target " << i;
  }
  const torch::data::TensorExample unlabelled{torch::arange(4)};
  EXPECT_TRUE(on_meta(to_device(unlabelled, kMeta).data, unlabelled.data)) << "TensorExample";
}

// A tuple inside a container: map_tensors declares the tuple's overload before the containers'
// bodies, which find it there (neither the tuple of LibTorch and std types nor a caller's own
// function, this lambda, brings the tp::fixes overloads by argument-dependent lookup).
TEST(MapTensors, ReachesTheTuplesInsideAContainer) {
  const std::vector<std::tuple<torch::Tensor, int>> batch{{torch::ones({2}), 7},
                                                          {torch::ones({3}), 8}};
  const auto to_meta = [](const torch::Tensor& tensor) { return tensor.to(kMeta); };
  const auto moved = map_tensors(batch, to_meta);
  ASSERT_EQ(moved.size(), 2u);
  for (size_t i = 0; i < batch.size(); ++i) {
    EXPECT_TRUE(on_meta(std::get<0>(moved[i]), std::get<0>(batch[i]))) << "tuple " << i;
    EXPECT_EQ(std::get<1>(moved[i]), std::get<1>(batch[i]));
  }
}

// A move blocks unless asked (pageable host memory copies synchronously anyway): the sim's transfer
// log counts each copy's non_blocking flag.
TEST(BatchMover, BlocksByDefaultAndOnRequestDoesNot) {
  const std::vector<torch::Tensor> batch{torch::ones({3}), torch::zeros({2})};
  tp::sim::TransferLog log;
  const auto blocking = to_device(batch, tp::sim::device());
  EXPECT_EQ(log.host_to_device().copies, 2);
  EXPECT_EQ(log.host_to_device().non_blocking, 0) << log.summary();
  const auto asynchronous = to_device(batch, tp::sim::device(), {/*non_blocking=*/true});
  EXPECT_EQ(log.host_to_device().copies, 4);
  EXPECT_EQ(log.host_to_device().non_blocking, 2) << log.summary();
}

}  // namespace
}  // namespace tp::fixes
