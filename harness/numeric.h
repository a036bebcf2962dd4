// Numerical checks for fixed variants: compare against a float64 CPU reference within a stated
// tolerance. Macros, so that a failure points at the scenario's own line.
#pragma once
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

namespace tp {

// max |actual - reference| / (atol + rtol * |reference|), both taken to float64 on the CPU;
// <= 1 means within tolerance. NaN in either gives NaN, which fails every comparison; so does a
// negative tolerance, whose negative bound would pass any answer (seen: a slipped sign).
inline double tolerance_ratio(const torch::Tensor& actual, const torch::Tensor& reference,
                              double rtol, double atol) {
  if (!(rtol >= 0 && atol >= 0)) return std::numeric_limits<double>::quiet_NaN();
  const auto a = actual.detach().to(torch::kCPU, torch::kFloat64);
  const auto r = reference.detach().to(torch::kCPU, torch::kFloat64);
  return ((a - r).abs() / (atol + rtol * r.abs())).max().item<double>();
}

}  // namespace tp

// Fails the cell unless actual matches reference elementwise within rtol/atol.
#define TP_EXPECT_CLOSE(actual, reference, rtol, atol)                                       \
  do {                                                                                       \
    const auto tp_actual_ = (actual);                                                        \
    const auto tp_reference_ = (reference);                                                  \
    ASSERT_EQ(tp_actual_.sizes(), tp_reference_.sizes()) << #actual << " vs " << #reference; \
    const double tp_ratio_ = ::tp::tolerance_ratio(tp_actual_, tp_reference_, rtol, atol);   \
    EXPECT_LE(tp_ratio_, 1.0) << #actual << " differs from " << #reference                   \
                              << " beyond rtol=" << (rtol) << " atol=" << (atol);            \
  } while (0)
