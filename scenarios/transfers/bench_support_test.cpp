// The benchmarks' support code the other transfer tests do not reach (bench_support.h): the size
// axis and its names, the registrars and finishers bench_main runs, the CUDA device axis, planned
// skips, and when the extra-work counter is reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <torchplace/bench/bench_support.h>
#include <torchplace/devices.h>
#include "run_collector.h"

namespace tp::bench {
namespace bench_support_test {  // unity-built with the other transfer tests

// Read before any test runs (constant-initialised): no benchmark has failed yet.
const int kFailuresAtStart = failures();
int registered = 0;
int finished = 0;

TEST(BenchSupport, NoFailureBeforeABenchmarkFails) { EXPECT_EQ(kFailuresAtStart, 0); }

TEST(BenchSupport, PowersOfFourFromTheFirstUpToTheLastInclusive) {
  EXPECT_EQ(powers_of_4(kKiB, 64 * kKiB), (std::vector<int64_t>{1024, 4096, 16384, 65536}));
  EXPECT_EQ(powers_of_4(4, 15), std::vector<int64_t>{4});
  EXPECT_TRUE(powers_of_4(8, 4).empty());
  EXPECT_EQ(kMiB, int64_t{1} << 20);
  EXPECT_EQ(kGiB, int64_t{1} << 30);
}

TEST(BenchSupport, NumbersAreTheirDecimalText) {
  EXPECT_EQ(as_values({4096, 16}), (std::vector<std::string>{"4096", "16"}));
  EXPECT_TRUE(as_values({}).empty());
}

TEST(BenchSupport, RegistrarsAndFinishersRunOnceEach) {
  EXPECT_TRUE(add_registrar([] { ++registered; }));
  EXPECT_TRUE(add_finisher([] { ++finished; }));
  register_all();
  EXPECT_EQ(std::make_pair(registered, finished), std::make_pair(1, 0));
  finish_all();
  EXPECT_EQ(finished, 1);
  benchmark::ClearRegisteredBenchmarks();  // the bench files' own, registered above
}

TEST(BenchSupport, CudaBenchmarksAreListedForEachGpuOrCuda0) {
  const std::vector<torch::Device> devices = cuda_bench_devices();
  ASSERT_EQ(devices.size(), static_cast<size_t>(std::max(1, tp::cuda_device_count())));
  EXPECT_EQ(devices.front(), torch::Device("cuda:0"));
  // cuda:0 on a host without a GPU says why it cannot run
  EXPECT_EQ(absent_reason(devices.front()).has_value(), tp::cuda_device_count() == 0);
}

// A planned skip: Google Benchmark 1.8 has SkipWithMessage; before, an error "skip: " + why.
TEST(BenchSupport, APlannedSkipSaysWhy) {
  benchmark::RegisterBenchmark("support/skip", [](benchmark::State& state) {
    skip(state, "no GPU");
    for (auto _ : state) {
    }
  })->Iterations(1);
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector, "^support/skip/");
  benchmark::ClearRegisteredBenchmarks();
  ASSERT_EQ(collector.runs.size(), 1u);
#if TORCHPLACE_BENCHMARK_VERSION_MAJOR > 1 || \
    (TORCHPLACE_BENCHMARK_VERSION_MAJOR == 1 && TORCHPLACE_BENCHMARK_VERSION_MINOR >= 8)
  EXPECT_EQ(collector.runs[0].skip_message, "no GPU");
#else
  EXPECT_EQ(collector.runs[0].error_message, "skip: no GPU");
#endif
}

// The ratio is reported for a benchmark that ran steps at a fraction above 0, and counted afresh
// for the next one: a benchmark with no step of its own reports none.
TEST(BenchSupport, TheExtraRatioOnlyForABenchmarkThatRanSteps) {
  set_extra_work(1.0);
  benchmark::RegisterBenchmark("support/one_step", [](benchmark::State& state) {
    for (auto _ : state) with_extra_work(1, [](int64_t) {});
    report_extra_work(state);
  })->Iterations(1);
  benchmark::RegisterBenchmark("support/no_step", [](benchmark::State& state) {
    for (auto _ : state) {
    }
    report_extra_work(state);
  })->Iterations(1);
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector, "^support/(one|no)_step/");
  set_extra_work(0);
  benchmark::ClearRegisteredBenchmarks();
  ASSERT_EQ(collector.runs.size(), 2u);
  ASSERT_EQ(collector.runs[0].counters.count("torchplace_extra_ratio"), 1u);
  EXPECT_DOUBLE_EQ(collector.runs[0].counters.at("torchplace_extra_ratio").value, 1.0);
  EXPECT_EQ(collector.runs[1].counters.count("torchplace_extra_ratio"), 0u);
}

}  // namespace bench_support_test
}  // namespace tp::bench
