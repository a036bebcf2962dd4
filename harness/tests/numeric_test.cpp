// TP_EXPECT_CLOSE must fail what it cannot call close: a NaN or an inf on either side, a value
// beyond the tolerance, a negative tolerance, and pass a value within it. Its failures are caught
// with GoogleTest's own reporter interception, so that this test sees them without failing itself.
#include <torchplace/numeric.h>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <limits>

namespace tp {
namespace {

constexpr double kRtol = 1e-5;
constexpr double kAtol = 1e-8;
const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// How many failures TP_EXPECT_CLOSE(actual, reference) reports.
int failures_of(const torch::Tensor& actual, const torch::Tensor& reference) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    [&] { TP_EXPECT_CLOSE(actual, reference, kRtol, kAtol); }();
  }
  int failed = 0;
  for (int index = 0; index < results.size(); ++index) {
    if (results.GetTestPartResult(index).failed()) ++failed;
  }
  return failed;
}

torch::Tensor reference() { return torch::tensor({1.0, 2.0, 3.0}, torch::kFloat64); }

TEST(ExpectClose, PassesWithinTheTolerance) {
  EXPECT_EQ(failures_of(reference() * (1 + kRtol / 2), reference()), 0);
  EXPECT_EQ(failures_of(reference().to(torch::kFloat32), reference()), 0);
}

// The tolerance scales with the reference, not the output: at rtol 0.5, 1.1 is within 2's
// (|0.9| <= 0.5 * 2) and 10 is not within 1's.
TEST(ExpectClose, TheRelativeToleranceScalesWithTheReference) {
  const auto failures = [](double actual, double reference) {
    ::testing::TestPartResultArray results;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
      [&] { TP_EXPECT_CLOSE(torch::tensor(actual), torch::tensor(reference), 0.5, 0.0); }();
    }
    return results.size();
  };
  EXPECT_EQ(failures(1.1, 2.0), 0);
  EXPECT_EQ(failures(10.0, 1.0), 1);
}

// Beyond by half (a ratio of about 1.5) as well as by far: the bound is 1, not some looser one.
TEST(ExpectClose, FailsBeyondTheTolerance) {
  EXPECT_EQ(failures_of(reference() * (1 + 1.5 * kRtol), reference()), 1);
  EXPECT_EQ(failures_of(reference() * (1 + 3 * kRtol), reference()), 1);
}

TEST(ExpectClose, FailsANanOutput) {
  EXPECT_EQ(failures_of(torch::tensor({1.0, kNan, 3.0}, torch::kFloat64), reference()), 1);
  EXPECT_EQ(failures_of(torch::full({3}, kNan, torch::kFloat32), reference()), 1);
}

TEST(ExpectClose, FailsAnInfOutputOfEitherSign) {
  for (const double inf : {kInf, -kInf}) {
    EXPECT_EQ(failures_of(torch::tensor({1.0, 2.0, inf}, torch::kFloat64), reference()), 1) << inf;
  }
}

TEST(ExpectClose, FailsANanOrInfReference) {
  EXPECT_EQ(failures_of(reference(), torch::tensor({kNan, 2.0, 3.0}, torch::kFloat64)), 1);
  // inf against inf: their difference is NaN, never "close"
  const torch::Tensor infs = torch::tensor({kInf, 2.0, 3.0}, torch::kFloat64);
  EXPECT_EQ(failures_of(infs, infs), 1);
}

// A negative tolerance makes the bound negative, under which any difference's ratio is <= 1: the
// check must fail instead (an exact answer as well as a wrong one).
TEST(ExpectClose, FailsANegativeTolerance) {
  const auto failures = [](double rtol, double atol, double actual) {
    ::testing::TestPartResultArray results;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
      [&] { TP_EXPECT_CLOSE(torch::tensor(actual), torch::tensor(1.0), rtol, atol); }();
    }
    return results.size();
  };
  for (const double actual : {1.0, 5.0}) {
    EXPECT_EQ(failures(-0.9999, 1e-6, actual), 1) << actual;
    EXPECT_EQ(failures(1e-4, -0.999999, actual), 1) << actual;
  }
  EXPECT_EQ(failures(0.0, 1e-6, 1.0), 0);  // zero is a tolerance: an exact answer passes
}

TEST(ExpectClose, FailsOtherSizes) {
  EXPECT_EQ(failures_of(torch::ones({2}), torch::ones({3})), 1);
}

}  // namespace
}  // namespace tp
