#include "bench_support.h"

#include <atomic>
#include <cmath>
#include <cstdlib>

#include <torchplace/devices.h>

#if TORCHPLACE_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#endif

namespace tp::bench {

namespace {
std::atomic<int> failed_benchmarks{0};
}  // namespace

void note_failure() { ++failed_benchmarks; }
int failures() { return failed_benchmarks.load(); }

namespace {

std::vector<Registrar>& registrars() {
  static std::vector<Registrar> all;  // filled during static initialisation
  return all;
}

std::vector<Registrar>& finishers() {
  static std::vector<Registrar> all;  // filled during static initialisation
  return all;
}

double extra_work_fraction = 0.0;

}  // namespace

bool add_registrar(Registrar registrar) {
  registrars().push_back(registrar);
  return true;
}

void register_all() {
  for (Registrar registrar : registrars()) registrar();
}

bool add_finisher(Registrar finisher) {
  finishers().push_back(finisher);
  return true;
}

void finish_all() {
  for (Registrar finisher : finishers()) finisher();
}

std::vector<torch::Device> cuda_bench_devices() {
  std::vector<torch::Device> devices;
  for (const Placement& placement : expand(DeviceAxis::kCudaOnly)) {
    devices.push_back(placement.primary());
  }
  return devices;
}

std::optional<std::string> absent_reason(const torch::Device& device) {
  return tp::absent_reason(Placement{{device}});
}

void skip(benchmark::State& state, const std::string& reason) {
#if TORCHPLACE_BENCHMARK_VERSION_MAJOR > 1 || \
    (TORCHPLACE_BENCHMARK_VERSION_MAJOR == 1 && TORCHPLACE_BENCHMARK_VERSION_MINOR >= 8)
  state.SkipWithMessage(reason);
#else
  state.SkipWithError(("skip: " + reason).c_str());
#endif
}

void set_extra_work(double fraction) { extra_work_fraction = fraction; }

double extra_work() { return extra_work_fraction; }

std::optional<double> parse_extra_work(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

namespace {
struct ExtraCount {
  double credit = 0;  // extra steps owed (fractional)
  int64_t steps = 0;  // steps run by with_extra_work
  int64_t extra = 0;  // extra steps among them
};
thread_local ExtraCount extra_count;
}  // namespace

void with_extra_work(int64_t units, const std::function<void(int64_t)>& work) {
  work(units);
  const double fraction = extra_work();
  if (fraction <= 0) return;
  ++extra_count.steps;
  extra_count.credit += fraction;
  while (extra_count.credit >= 1.0) {
    work(units);
    extra_count.credit -= 1.0;
    ++extra_count.extra;
  }
}

void report_extra_work(benchmark::State& state) {
  if (extra_work() > 0 && extra_count.steps > 0) {
    state.counters["torchplace_extra_ratio"] =
        static_cast<double>(extra_count.extra) / static_cast<double>(extra_count.steps);
  }
  extra_count = ExtraCount{};
}

std::vector<int64_t> powers_of_4(int64_t from, int64_t to) {
  std::vector<int64_t> sizes;
  for (int64_t bytes = from; bytes <= to; bytes *= 4) sizes.push_back(bytes);
  return sizes;
}

std::vector<std::string> as_values(const std::vector<int64_t>& numbers) {
  std::vector<std::string> values;
  for (const int64_t number : numbers) values.push_back(std::to_string(number));
  return values;
}

#if TORCHPLACE_WITH_CUDA
int64_t free_device_bytes(const torch::Device& device) {
  c10::cuda::CUDAGuard guard(device);
  c10::cuda::CUDACachingAllocator::emptyCache();
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  C10_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return static_cast<int64_t>(free_bytes);
}

std::optional<std::string> lacks_memory(const torch::Device& device, int64_t bytes_needed) {
  const int64_t free_bytes = free_device_bytes(device);
  if (bytes_needed + bytes_needed / 10 <= free_bytes) return std::nullopt;
  return "too little device memory: needs " + std::to_string(bytes_needed) + " bytes (+10 %), " +
         device.str() + " has " + std::to_string(free_bytes) + " free";
}
#endif

}  // namespace tp::bench
