// The scenarios' shared training helpers (training.h): train_sgd is plain SGD that records each
// step's loss before its update, and copy_state gives the twin the source's very parameters and
// buffers in the twin's dtype.
#include <torchplace/training.h>

#include <gtest/gtest.h>

#include <vector>

namespace tp {
namespace {

// loss = w^2 with w = 3 and a learning rate of 1/4: each step halves w (w - 2w/4), exactly in
// binary floating point, so the losses before each update are 9, 2.25, 0.5625 and w ends 0.375.
TEST(TrainSgd, RecordsEachStepsLossBeforeItsUpdate) {
  torch::Tensor w = torch::tensor({3.0}, torch::kFloat64).requires_grad_();
  const std::vector<double> losses = train_sgd({w}, 3, 0.25, [&] { return (w * w).sum(); });
  EXPECT_EQ(losses, (std::vector<double>{9.0, 2.25, 0.5625}));
  EXPECT_EQ(w.item<double>(), 0.375);  // three updates, each from a fresh gradient
}

TEST(TrainSgd, ZeroStepsLeaveTheParameters) {
  torch::Tensor w = torch::tensor({3.0}, torch::kFloat64).requires_grad_();
  EXPECT_TRUE(train_sgd({w}, 0, 0.25, [&] { return (w * w).sum(); }).empty());
  EXPECT_EQ(w.item<double>(), 3.0);
}

TEST(CopyState, CopiesParametersAndBuffersIntoTheTwinsDtype) {
  torch::nn::BatchNorm1d source(3);
  torch::nn::BatchNorm1d twin(3);
  {
    torch::NoGradGuard no_grad;
    source->weight.copy_(torch::tensor({0.5, 1.5, 2.5}));
    source->bias.copy_(torch::tensor({-1.0, 0.0, 1.0}));
    source->running_mean.copy_(torch::tensor({0.25, 0.5, 0.75}));
    source->running_var.copy_(torch::tensor({2.0, 3.0, 4.0}));
  }
  twin->to(torch::kFloat64);
  copy_state(*source, *twin);
  EXPECT_EQ(twin->weight.scalar_type(), torch::kFloat64);
  EXPECT_TRUE(torch::equal(twin->weight, source->weight.to(torch::kFloat64)));
  EXPECT_TRUE(torch::equal(twin->bias, source->bias.to(torch::kFloat64)));
  EXPECT_TRUE(torch::equal(twin->running_mean, source->running_mean.to(torch::kFloat64)));
  EXPECT_TRUE(torch::equal(twin->running_var, source->running_var.to(torch::kFloat64)));
}

}  // namespace
}  // namespace tp
