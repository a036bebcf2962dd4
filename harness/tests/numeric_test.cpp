// TP_EXPECT_CLOSE must fail what it cannot call close: a NaN or an inf on either side, a value
// beyond the tolerance, a negative tolerance, and pass a value within it. Its failures are caught
// with GoogleTest's own reporter interception, so that this test sees them without failing itself.
#include <torchplace/numeric.h>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <type_traits>

namespace tp {
namespace {

// The tolerances are typed so that swapping them, or passing a bare number, does not compile.
static_assert(!std::is_convertible_v<Atol, Rtol> && !std::is_convertible_v<Rtol, Atol>);
static_assert(!std::is_convertible_v<double, Rtol> && !std::is_convertible_v<double, Atol>);
static_assert(!std::is_constructible_v<Rtol, Atol> && !std::is_constructible_v<Atol, Rtol>);

constexpr Rtol kRtol{1e-5};
constexpr Atol kAtol{1e-8};
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
  EXPECT_EQ(failures_of(reference() * (1 + kRtol.value / 2), reference()), 0);
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
      [&] {
        TP_EXPECT_CLOSE(torch::tensor(actual), torch::tensor(reference), Rtol{0.5}, Atol{0.0});
      }();
    }
    return results.size();
  };
  EXPECT_EQ(failures(1.1, 2.0), 0);
  EXPECT_EQ(failures(10.0, 1.0), 1);
}

// Beyond by half (a ratio of about 1.5) as well as by far: the bound is 1, not some looser one.
TEST(ExpectClose, FailsBeyondTheTolerance) {
  EXPECT_EQ(failures_of(reference() * (1 + 1.5 * kRtol.value), reference()), 1);
  EXPECT_EQ(failures_of(reference() * (1 + 3 * kRtol.value), reference()), 1);
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
      [&] { TP_EXPECT_CLOSE(torch::tensor(actual), torch::tensor(1.0), Rtol{rtol}, Atol{atol}); }();
    }
    return results.size();
  };
  for (const double actual : {1.0, 5.0}) {
    EXPECT_EQ(failures(-0.9999, 1e-6, actual), 1) << actual;
    EXPECT_EQ(failures(1e-4, -0.999999, actual), 1) << actual;
  }
  EXPECT_EQ(failures(0.0, 1e-6, 1.0), 0);  // zero is a tolerance: an exact answer passes
}

// The bound of a scalar check (EXPECT_NEAR): atol plus rtol times the reference's magnitude.
TEST(ExpectClose, TheBoundIsAtolPlusRtolTimesTheReference) {
  EXPECT_DOUBLE_EQ(bound(Rtol{0.5}, Atol{0.25}, -2.0), 1.25);
  EXPECT_DOUBLE_EQ(bound(Rtol{0.0}, Atol{0.25}, 8.0), 0.25);
}

// The failure message names both tolerances' values.
TEST(ExpectClose, TheMessageNamesTheTolerances) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    [&] { TP_EXPECT_CLOSE(torch::tensor(2.0), torch::tensor(1.0), Rtol{0.125}, Atol{0.5}); }();
  }
  ASSERT_EQ(results.size(), 1);
  const std::string message = results.GetTestPartResult(0).message();
  EXPECT_NE(message.find("beyond rtol=0.125 atol=0.5"), std::string::npos) << message;
}

TEST(ExpectClose, FailsOtherSizes) {
  EXPECT_EQ(failures_of(torch::ones({2}), torch::ones({3})), 1);
}

}  // namespace
}  // namespace tp
