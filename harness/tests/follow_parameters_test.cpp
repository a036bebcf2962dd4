// parameter_device() reports where a module's parameters are (else its buffers), on meta as it
// would on a GPU: the self-moving modules of the scenarios move their inputs there.
#include <torchplace/fixes/follow_parameters.h>
#include <torchplace/placement.h>

#include <gtest/gtest.h>

namespace tp::fixes {
namespace {

struct BuffersOnly : torch::nn::Module {
  BuffersOnly() { register_buffer("table", torch::ones({3})); }
};

TEST(ParameterDevice, FollowsTheParametersToMeta) {
  torch::nn::Linear linear(4, 2);
  EXPECT_EQ(parameter_device(*linear), torch::Device(torch::kCPU));
  tp::move_to_meta(*linear);
  EXPECT_EQ(parameter_device(*linear), kMeta);
}

TEST(ParameterDevice, FallsBackToTheBuffersThenTheCpu) {
  BuffersOnly buffers_only;
  tp::move_to_meta(buffers_only);
  EXPECT_EQ(parameter_device(buffers_only), kMeta);
  const torch::nn::Module empty;
  EXPECT_EQ(parameter_device(empty), torch::Device(torch::kCPU));
}

}  // namespace
}  // namespace tp::fixes
