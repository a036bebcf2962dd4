// Benchmark main: Google Benchmark with the harness fingerprint in the JSON context, so every
// saved run says which LibTorch, GPU and driver produced it.
//
// Own flag: --torchplace_extra_work=FRACTION (default 0) makes every benchmark run FRACTION more
// of its own steps: the gate's calibration injects a genuine slowdown with it (0.2 = 20 %), and
// each benchmark reports the share it ran as counter torchplace_extra_ratio.
// --benchmark_min_time takes seconds with or without an "s" on every Google Benchmark version.
#include <benchmark/benchmark.h>

#include <cstring>
#include <deque>
#include <iostream>
#include <optional>
#include <string>

#include "bench_support.h"
#include "internal/fingerprint.h"

namespace {

constexpr const char* kExtraWorkFlag = "--torchplace_extra_work";
constexpr int kExitUsage = 64;  // as ci/torchplace: 2 means a behaviour regression there

// Reads and removes --torchplace_extra_work[=...] from argv; nothing when a value is malformed.
std::optional<double> take_extra_work(int& argc, char** argv) {
  double fraction = 0.0;
  int kept = 1;
  for (int index = 1; index < argc; ++index) {
    const std::string arg = argv[index];
    if (arg.rfind(kExtraWorkFlag, 0) != 0) {
      argv[kept++] = argv[index];
      continue;
    }
    const std::string value =
        arg.size() > std::strlen(kExtraWorkFlag) && arg[std::strlen(kExtraWorkFlag)] == '='
            ? arg.substr(std::strlen(kExtraWorkFlag) + 1)
            : std::string();
    const std::optional<double> parsed = tp::bench::parse_extra_work(value);
    if (!parsed) {
      std::cerr << "torchplace_bench: " << kExtraWorkFlag
                << "=FRACTION needs a finite number >= 0 (e.g. 0.2 for 20 % more work), got '"
                << arg << "'\n";
      return std::nullopt;
    }
    fraction = *parsed;
  }
  argc = kept;
  argv[argc] = nullptr;
  return fraction;
}

// --benchmark_min_time=SECONDS in the spelling the linked Google Benchmark takes: before 1.8 a
// bare number ("0.1s" stops the run), from 1.8 with its unit ("0.1" is deprecated). Callers
// (ci/torchplace run, the matrix, the GPU runner) may write either.
void normalise_min_time(int argc, char** argv, std::deque<std::string>& storage) {
  constexpr const char* kFlag = "--benchmark_min_time=";
  constexpr bool kWantsUnit =
      TORCHPLACE_BENCHMARK_VERSION_MAJOR > 1 || TORCHPLACE_BENCHMARK_VERSION_MINOR >= 8;
  for (int index = 1; index < argc; ++index) {
    std::string arg = argv[index];
    if (arg.rfind(kFlag, 0) != 0 || arg.size() == std::strlen(kFlag)) continue;
    const bool has_unit = arg.back() == 's' || arg.back() == 'x';  // seconds, or iterations (1.8+)
    if (kWantsUnit && !has_unit) arg += 's';
    if (!kWantsUnit && arg.back() == 's') arg.pop_back();
    storage.push_back(arg);  // a deque: earlier rewritten flags keep their address
    argv[index] = storage.back().data();
  }
}

void add_fingerprint_context() {
  const nlohmann::ordered_json print = tp::fingerprint();
  benchmark::AddCustomContext("torchplace_fingerprint", print.dump());
  benchmark::AddCustomContext("libtorch_version", print["libtorch_version"].get<std::string>());
  const auto& gpus = print["cuda"]["gpus"];
  benchmark::AddCustomContext("gpu", gpus.empty() ? "none" : gpus[0]["name"].get<std::string>());
  const auto& driver = print["cuda"]["driver"];
  benchmark::AddCustomContext("driver", driver.is_null() ? "none" : driver.get<std::string>());
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<double> extra_work = take_extra_work(argc, argv);
  if (!extra_work) return kExitUsage;
  tp::bench::set_extra_work(*extra_work);
  std::deque<std::string> min_time;  // owns rewritten flags while Google Benchmark reads argv
  normalise_min_time(argc, argv, min_time);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return kExitUsage;
  add_fingerprint_context();
  benchmark::AddCustomContext("torchplace_extra_work", std::to_string(*extra_work));
  tp::bench::register_all();
  benchmark::RunSpecifiedBenchmarks();
  tp::bench::finish_all();  // frees cached host buffers while CUDA is still up
  benchmark::Shutdown();
  if (tp::bench::failures() > 0) {
    std::cerr << "torchplace_bench: " << tp::bench::failures() << " benchmark(s) failed\n";
    return 1;
  }
  return 0;
}
