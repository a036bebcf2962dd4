// Numerical checks for fixed variants: compare against a float64 CPU reference within a stated
// tolerance. Macros, so that a failure points at the scenario's own line.
#pragma once
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>

namespace tp {

// The two tolerances as distinct types, built explicitly only (tp::Rtol{1e-5}), so that a call
// with them swapped, or with a bare number, does not compile; as absl::Duration does for units.
struct Rtol {
  constexpr explicit Rtol(double v) : value(v) {}
  double value;
};
struct Atol {
  constexpr explicit Atol(double v) : value(v) {}
  double value;
};

// The bound |actual - reference| must stay within: atol + rtol * |reference|.
inline double bound(Rtol rtol, Atol atol, double reference) {
  return atol.value + rtol.value * std::abs(reference);
}

// max |actual - reference| / (atol + rtol * |reference|), both taken to float64 on the CPU;
// <= 1 means within tolerance. NaN in either gives NaN, which fails every comparison; so does a
// negative tolerance, whose negative bound would pass any answer (seen: a slipped sign).
inline double tolerance_ratio(const torch::Tensor& actual, const torch::Tensor& reference,
                              Rtol rtol, Atol atol) {
  if (!(rtol.value >= 0 && atol.value >= 0)) return std::numeric_limits<double>::quiet_NaN();
  const auto a = actual.detach().to(torch::kCPU, torch::kFloat64);
  const auto r = reference.detach().to(torch::kCPU, torch::kFloat64);
  return ((a - r).abs() / (atol.value + rtol.value * r.abs())).max().item<double>();
}

}  // namespace tp

// Fails the cell unless actual matches reference elementwise within rtol (a tp::Rtol) and atol
// (a tp::Atol).
#define TP_EXPECT_CLOSE(actual, reference, rtol, atol)                                             \
  do {                                                                                             \
    const auto tp_actual_ = (actual);                                                              \
    const auto tp_reference_ = (reference);                                                        \
    const ::tp::Rtol tp_rtol_ = (rtol);                                                            \
    const ::tp::Atol tp_atol_ = (atol);                                                            \
    ASSERT_EQ(tp_actual_.sizes(), tp_reference_.sizes()) << #actual << " vs " << #reference;       \
    const double tp_ratio_ = ::tp::tolerance_ratio(tp_actual_, tp_reference_, tp_rtol_, tp_atol_); \
    EXPECT_LE(tp_ratio_, 1.0) << #actual << " differs from " << #reference                         \
                              << " beyond rtol=" << tp_rtol_.value << " atol=" << tp_atol_.value;  \
  } while (0)
