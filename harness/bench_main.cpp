// Benchmark main: Google Benchmark with the harness fingerprint in the JSON context, so every
// saved run says which LibTorch, GPU and driver produced it.
#include <benchmark/benchmark.h>

#include "fingerprint.h"

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  const nlohmann::ordered_json print = tp::fingerprint();
  benchmark::AddCustomContext("torchplace_fingerprint", print.dump());
  benchmark::AddCustomContext("libtorch_version", print["libtorch_version"].get<std::string>());
  const auto& gpus = print["cuda"]["gpus"];
  benchmark::AddCustomContext("gpu", gpus.empty() ? "none" : gpus[0]["name"].get<std::string>());
  const auto& driver = print["cuda"]["driver"];
  benchmark::AddCustomContext("driver", driver.is_null() ? "none" : driver.get<std::string>());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
