// The transfer tests' Google Benchmark reporter: it keeps every run it is given, so that a test
// can read a run's error and counters after RunSpecifiedBenchmarks.
#pragma once
#include <benchmark/benchmark.h>

#include <vector>

namespace tp::bench {

class Collector : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) this->runs.push_back(run);
  }
  std::vector<Run> runs;
};

}  // namespace tp::bench
