// What fail_on_error (bench_support.h) does with what a benchmark throws, under Google Benchmark
// itself: a c10::Error, a std::bad_alloc or a std::system_error fails that benchmark with its
// message and is counted, and the run goes on to the next benchmark (a throw that escaped would
// end the process, and with it the run's JSON).
#include <gtest/gtest.h>

#include <new>
#include <string>
#include <system_error>
#include <vector>

#include <torchplace/bench/bench_support.h>
#include "run_collector.h"

namespace tp::bench {
namespace {

// A failed run and its message; Google Benchmark 1.8 renamed both.
bool failed(const benchmark::BenchmarkReporter::Run& run) {
#if TORCHPLACE_BENCHMARK_VERSION_MAJOR > 1 || \
    (TORCHPLACE_BENCHMARK_VERSION_MAJOR == 1 && TORCHPLACE_BENCHMARK_VERSION_MINOR >= 8)
  return run.skipped == benchmark::internal::SkippedWithError;
#else
  return run.error_occurred;
#endif
}

std::string message(const benchmark::BenchmarkReporter::Run& run) {
#if TORCHPLACE_BENCHMARK_VERSION_MAJOR > 1 || \
    (TORCHPLACE_BENCHMARK_VERSION_MAJOR == 1 && TORCHPLACE_BENCHMARK_VERSION_MINOR >= 8)
  return run.skip_message;
#else
  return run.error_message;
#endif
}

template <typename Throw>
void register_thrower(const std::string& name, Throw throw_it) {
  benchmark::RegisterBenchmark(name.c_str(), [throw_it](benchmark::State& state) {
    fail_on_error(state, [&] {
      throw_it();
      for (auto _ : state) {
      }
    });
  })->Iterations(1);
}

TEST(FailOnError, FailsTheBenchmarkAndTheRunGoesOn) {
  register_thrower("throws/c10_error", [] { TORCH_CHECK(false, "a c10 failure"); });
  register_thrower("throws/bad_alloc", [] { throw std::bad_alloc(); });
  register_thrower("throws/system_error", [] {
    throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                            "no thread for the producer");
  });
  benchmark::RegisterBenchmark("runs/after", [](benchmark::State& state) {
    for (auto _ : state) {
    }
  })->Iterations(1);
  const int failed_before = failures();
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);

  ASSERT_EQ(collector.runs.size(), 4u);
  const std::vector<std::string> messages = {"a c10 failure", "std::bad_alloc",
                                             "no thread for the producer"};
  for (size_t i = 0; i < messages.size(); ++i) {
    SCOPED_TRACE(collector.runs[i].benchmark_name());
    EXPECT_TRUE(failed(collector.runs[i]));
    EXPECT_NE(message(collector.runs[i]).find(messages[i]), std::string::npos)
        << message(collector.runs[i]);
    EXPECT_EQ(message(collector.runs[i]).rfind("skip: ", 0), std::string::npos);  // not planned
  }
  EXPECT_FALSE(failed(collector.runs[3]));  // the run went on
  EXPECT_EQ(failures() - failed_before, 3);
}

}  // namespace
}  // namespace tp::bench
