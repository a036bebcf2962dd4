// The extra-work knob the gate's calibration injects (bench_support.h): FRACTION more whole
// steps of the same size, counted in torchplace_extra_ratio; 0 runs nothing extra; the flag's
// value is a finite number >= 0 or refused.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <torchplace/bench/bench_support.h>
#include "run_collector.h"

namespace tp::bench {
namespace extra_work_test {  // unity-built with the other transfer tests

// The units each call of `work` was given over `steps` steps at `fraction`, on a fresh thread
// (the accumulator is per thread).
std::vector<int64_t> calls(double fraction, int steps, int64_t units) {
  std::vector<int64_t> seen;
  set_extra_work(fraction);
  std::thread([&] {
    for (int step = 0; step < steps; ++step)
      with_extra_work(units, [&](int64_t given) { seen.push_back(given); });
  }).join();
  set_extra_work(0);
  return seen;
}

// Read before any test sets it (the fraction is constant-initialised): a benchmark does no
// extra work unless the gate's calibration asks for it.
const double kUnset = extra_work();

TEST(ExtraWork, NoneUnlessAsked) { EXPECT_EQ(kUnset, 0.0); }

TEST(ExtraWork, NothingExtraAtZero) { EXPECT_EQ(calls(0, 10, 3), std::vector<int64_t>(10, 3)); }

TEST(ExtraWork, AFractionAddsThatShareOfWholeSteps) {
  EXPECT_EQ(calls(0.2, 10, 7), std::vector<int64_t>(12, 7));  // one extra step in every five
  EXPECT_EQ(calls(0.5, 4, 1).size(), 6u);
  EXPECT_EQ(calls(1.0, 3, 1).size(), 6u);
  EXPECT_EQ(calls(1.5, 4, 2), std::vector<int64_t>(10, 2));
}

TEST(ExtraWork, TheRatioCounterIsTheInjectedShare) {
  set_extra_work(0.25);
  benchmark::RegisterBenchmark("extra_work/ratio", [](benchmark::State& state) {
    for (auto _ : state) with_extra_work(1, [](int64_t) {});
    report_extra_work(state);
  })->Iterations(8);
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector, "^extra_work/");
  set_extra_work(0);
  benchmark::ClearRegisteredBenchmarks();
  ASSERT_EQ(collector.runs.size(), 1u);
  const auto& counters = collector.runs[0].counters;
  ASSERT_EQ(counters.count("torchplace_extra_ratio"), 1u);
  EXPECT_DOUBLE_EQ(counters.at("torchplace_extra_ratio").value, 0.25);
}

TEST(ExtraWork, TheFlagTakesAFiniteNumberAtLeastZero) {
  EXPECT_EQ(parse_extra_work("0.2"), 0.2);
  EXPECT_EQ(parse_extra_work("0"), 0.0);
  EXPECT_EQ(parse_extra_work("3"), 3.0);
  for (const std::string bad : {"", "-0.1", "x", "0.2x", "inf", "nan"})
    EXPECT_FALSE(parse_extra_work(bad).has_value()) << "'" << bad << "'";
}

}  // namespace extra_work_test
}  // namespace tp::bench
