// The GradScaler's logic, on the CPU with injected gradients: a step with an inf or NaN
// gradient is skipped and backs the scale off; good steps unscale exactly and, after
// growth_interval of them in a row, grow the scale.
#include <torchplace/fixes/grad_scaler.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace tp::fixes {
namespace {

constexpr double kLearningRate = 0.1;

struct Fixture {
  torch::Tensor weight = torch::ones({3}, torch::requires_grad());
  torch::optim::SGD optimizer{{weight}, torch::optim::SGDOptions(kLearningRate)};

  // Sets the gradient to `grad` times the scale, as a backward of a scaled loss would.
  void inject(const GradScaler& scaler, const torch::Tensor& grad) {
    weight.mutable_grad() = grad * scaler.current_scale();
  }
};

TEST(GradScaler, ScalesTheLossByTheCurrentScale) {
  GradScaler scaler(GradScalerOptions{/*init_scale=*/1024.0});
  EXPECT_EQ(scaler.scale(torch::tensor(0.5)).item<double>(), 512.0);
}

TEST(GradScaler, GoodStepUnscalesAndSteps) {
  Fixture f;
  GradScaler scaler;
  f.inject(scaler, torch::tensor({1.0f, 2.0f, 3.0f}));
  EXPECT_TRUE(scaler.step(f.optimizer));
  scaler.update();
  // weight - lr * grad, with the grad unscaled back to {1, 2, 3}
  EXPECT_TRUE(torch::allclose(f.weight, torch::tensor({0.9f, 0.8f, 0.7f})));
  EXPECT_EQ(scaler.current_scale(), 65536.0);
  EXPECT_EQ(scaler.good_steps(), 1);
}

TEST(GradScaler, InfOrNanGradientSkipsTheStepAndReducesTheScale) {
  for (const float bad :
       {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    Fixture f;
    GradScaler scaler;
    f.inject(scaler, torch::tensor({1.0f, bad, 3.0f}));
    EXPECT_FALSE(scaler.step(f.optimizer)) << bad;
    scaler.update();
    EXPECT_TRUE(torch::equal(f.weight, torch::ones({3}))) << "the weight moved on " << bad;
    EXPECT_EQ(scaler.current_scale(), 32768.0) << bad;
    EXPECT_EQ(scaler.good_steps(), 0) << bad;
  }
}

// Several parameters, in two groups: an inf or NaN in any one of them (the first, a middle one,
// the last) skips the step for all and backs the scale off, whatever the others hold.
TEST(GradScaler, AnInfInAnyOneOfSeveralParametersSkipsTheStep) {
  constexpr int kParameters = 4;
  for (const float bad :
       {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    for (int at = 0; at < kParameters; ++at) {
      std::vector<torch::Tensor> weights;
      for (int index = 0; index < kParameters; ++index) {
        weights.push_back(torch::ones({2}, torch::requires_grad()));
      }
      torch::optim::SGD optimizer(
          std::vector<torch::optim::OptimizerParamGroup>{
              torch::optim::OptimizerParamGroup({weights[0], weights[1]}),
              torch::optim::OptimizerParamGroup({weights[2], weights[3]})},
          torch::optim::SGDOptions(kLearningRate));
      GradScaler scaler;
      for (int index = 0; index < kParameters; ++index) {
        const float value = index == at ? bad : 1.0f;
        weights[index].mutable_grad() = torch::full({2}, value) * scaler.current_scale();
      }
      EXPECT_FALSE(scaler.step(optimizer)) << bad << " in parameter " << at;
      scaler.update();
      for (int index = 0; index < kParameters; ++index) {
        EXPECT_TRUE(torch::equal(weights[index].detach(), torch::ones({2})))
            << "parameter " << index << " moved with " << bad << " in parameter " << at;
      }
      EXPECT_EQ(scaler.current_scale(), 32768.0) << bad << " in parameter " << at;
    }
  }
}

TEST(GradScaler, GrowsAfterGrowthIntervalGoodStepsAndAnInfResetsTheCount) {
  Fixture f;
  GradScaler scaler(GradScalerOptions{/*init_scale=*/8.0, 2.0, 0.5, /*growth_interval=*/3});
  const auto good_step = [&] {
    f.inject(scaler, torch::full({3}, 0.01f));
    ASSERT_TRUE(scaler.step(f.optimizer));
    scaler.update();
  };
  good_step();
  good_step();
  f.inject(scaler, torch::full({3}, std::numeric_limits<float>::infinity()));
  EXPECT_FALSE(scaler.step(f.optimizer));
  scaler.update();
  EXPECT_EQ(scaler.current_scale(), 4.0);  // backed off; the two good steps no longer count
  good_step();
  good_step();
  EXPECT_EQ(scaler.current_scale(), 4.0);
  good_step();
  EXPECT_EQ(scaler.current_scale(), 8.0);  // third good step in a row
  EXPECT_EQ(scaler.good_steps(), 0);
}

// The smallest interval, 1, is allowed (0 is refused below): the scale grows after every good step.
TEST(GradScaler, AnIntervalOfOneGrowsAfterEveryGoodStep) {
  Fixture f;
  GradScaler scaler(GradScalerOptions{/*init_scale=*/8.0, 2.0, 0.5, /*growth_interval=*/1});
  for (const double grown : {16.0, 32.0}) {
    f.inject(scaler, torch::full({3}, 0.01f));
    ASSERT_TRUE(scaler.step(f.optimizer));
    scaler.update();
    EXPECT_EQ(scaler.current_scale(), grown);
  }
}

// A parameter that took no part in the loss has no gradient: it is left alone (no gradient made
// for it, its value unchanged), and the others unscale and step as usual.
TEST(GradScaler, AParameterWithoutAGradientIsLeftAlone) {
  Fixture f;
  const torch::Tensor unused = torch::ones({2}, torch::requires_grad());
  f.optimizer.add_param_group(torch::optim::OptimizerParamGroup({unused}));
  GradScaler scaler;
  f.inject(scaler, torch::tensor({1.0f, 2.0f, 3.0f}));
  EXPECT_TRUE(scaler.step(f.optimizer));
  scaler.update();
  EXPECT_TRUE(torch::allclose(f.weight, torch::tensor({0.9f, 0.8f, 0.7f})));
  EXPECT_FALSE(unused.grad().defined());
  EXPECT_TRUE(torch::equal(unused.detach(), torch::ones({2})));
}

// The defaults are PyTorch's (torch/cuda/amp/grad_scaler.py: init_scale 2^16, growth_factor 2.0,
// backoff_factor 0.5, growth_interval 2000): the scale doubles on the 2000th good step in a row.
TEST(GradScaler, DefaultsDoubleTheScaleOnThe2000thGoodStep) {
  Fixture f;
  GradScaler scaler;
  const auto good_step = [&] {
    f.inject(scaler, torch::full({3}, 0.01f));
    ASSERT_TRUE(scaler.step(f.optimizer));
    scaler.update();
  };
  for (int step = 1; step < 2000; ++step) good_step();
  EXPECT_EQ(scaler.current_scale(), 65536.0);  // 1999 good steps: not yet
  good_step();
  EXPECT_EQ(scaler.current_scale(), 131072.0);
}

// loss = c * (w * a * b) with the product in fp16, a = b = 1e-3 and c = 1e-2 in fp32: its
// gradient c * a * b = 1e-8 is below fp16's smallest subnormal (6e-8) and flushes to zero
// without a scale; at the default 2^16 the fp16 gradients stay normal (655, 0.66, 6.6e-4) and
// unscale() in fp32 gives 1e-8 back. Plain CPU ops, no autocast: the same in every version.
constexpr double kFp16Factor = 1e-3;
constexpr double kLossFactor = 1e-2;

double fp16_gradient(GradScaler& scaler) {
  const torch::Tensor weight = torch::ones({1}, torch::requires_grad());
  torch::optim::SGD optimizer({weight}, torch::optim::SGDOptions(kLearningRate));
  const torch::Tensor factor = torch::full({1}, kFp16Factor, torch::kHalf);
  const torch::Tensor product = weight.to(torch::kHalf) * factor * factor;
  const torch::Tensor loss = product.to(torch::kFloat).sum() * kLossFactor;
  scaler.scale(loss).backward();
  scaler.unscale(optimizer);
  return weight.grad().item<double>();
}

TEST(GradScaler, KeepsSmallFp16GradientsFromFlushingToZero) {
  GradScaler unscaled(GradScalerOptions{/*init_scale=*/1.0});
  EXPECT_EQ(fp16_gradient(unscaled), 0.0) << "at scale 1 the fp16 gradient should underflow";
  GradScaler scaler;  // the default scale
  const double factor = torch::full({1}, kFp16Factor, torch::kHalf).item<double>();
  EXPECT_NEAR(fp16_gradient(scaler) / (kLossFactor * factor * factor), 1.0, 1e-2);
}

// Each bound at its edge is refused: a scale of 0 would zero every gradient, a growth factor of
// 1 never grows, a backoff of 1 never backs off, of 0 zeroes the scale, an interval of 0 grows
// on every step.
TEST(GradScaler, RefusesEachOptionAtTheEdgeOfItsRange) {
  EXPECT_NO_THROW(GradScaler{GradScalerOptions{}});
  const std::vector<std::pair<const char*, void (*)(GradScalerOptions&)>> edges = {
      {"init_scale 0", [](GradScalerOptions& o) { o.init_scale = 0.0; }},
      {"growth_factor 1", [](GradScalerOptions& o) { o.growth_factor = 1.0; }},
      {"backoff_factor 1", [](GradScalerOptions& o) { o.backoff_factor = 1.0; }},
      {"backoff_factor 0", [](GradScalerOptions& o) { o.backoff_factor = 0.0; }},
      {"growth_interval 0", [](GradScalerOptions& o) { o.growth_interval = 0; }},
  };
  for (const auto& [what, edit] : edges) {
    GradScalerOptions options;
    edit(options);
    EXPECT_THROW(GradScaler{options}, c10::Error) << what;
  }
}

// Python's pattern for clipping: unscale(), clip the true gradients, then step(), which does not
// unscale a second time.
TEST(GradScaler, StepAfterUnscaleDoesNotUnscaleAgain) {
  Fixture f;
  GradScaler scaler;
  f.inject(scaler, torch::tensor({1.0f, 2.0f, 3.0f}));
  scaler.unscale(f.optimizer);
  EXPECT_TRUE(torch::allclose(f.weight.grad(), torch::tensor({1.0f, 2.0f, 3.0f})));
  EXPECT_TRUE(scaler.step(f.optimizer));
  EXPECT_TRUE(torch::allclose(f.weight, torch::tensor({0.9f, 0.8f, 0.7f})));
}

TEST(GradScaler, RefusesASecondUnscaleAndAnUpdateWithoutAStep) {
  Fixture f;
  GradScaler scaler;
  EXPECT_THROW(scaler.update(), c10::Error);
  f.inject(scaler, torch::ones({3}));
  scaler.unscale(f.optimizer);
  EXPECT_THROW(scaler.unscale(f.optimizer), c10::Error);
}

// As Python's GradScaler ("step() has already been called since the last update()"): a second
// step would apply the same unscaled gradients twice.
TEST(GradScaler, StepTwiceBeforeUpdateRaisesAndDoesNotStepAgain) {
  Fixture f;
  GradScaler scaler;
  f.inject(scaler, torch::ones({3}));
  ASSERT_TRUE(scaler.step(f.optimizer));
  const torch::Tensor after_one_step = f.weight.detach().clone();
  EXPECT_THROW(scaler.step(f.optimizer), c10::Error);
  EXPECT_TRUE(torch::equal(f.weight.detach(), after_one_step)) << "the second step() stepped";
  scaler.update();
  f.inject(scaler, torch::ones({3}));
  EXPECT_TRUE(scaler.step(f.optimizer)) << "after update() a step is allowed again";
}

}  // namespace
}  // namespace tp::fixes
