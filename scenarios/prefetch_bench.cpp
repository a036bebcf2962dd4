// prefetch_overlap: does the prefetcher hide the copy behind the compute? A training-like step
// takes the next batch (64 MiB, pageable on the host) from tp::fixes::Prefetcher and runs a
// compute on the device sized to last about as long as the copy. Name:
//   prefetch_overlap/device:cuda:0
// Counters: copy_ms (a step of the prefetcher alone), compute_ms (the compute alone, CUDA
// events), step_ms (both, host clock + synchronize) and overlap_ratio = step / max(compute,
// copy): 1 means a fully hidden copy, 2 none at all (target <= 1.1).
#include "transfer_strategies.h"

namespace tp::bench {
namespace {

constexpr int64_t kBatchBytes = 64 * kMiB;
constexpr int64_t kMatrix = 2048;  // the compute: products of 2048 x 2048 float matrices
constexpr int kSamples = 10;       // steps averaged for copy_ms and compute_ms

#if TORCHPLACE_WITH_CUDA
// Mean seconds of `timed` over kSamples runs, after one warm-up run.
double mean_seconds(const std::function<double()>& timed) {
  timed();
  double total = 0;
  for (int sample = 0; sample < kSamples; ++sample) total += timed();
  return total / kSamples;
}

struct Compute {
  torch::Tensor matrix;  // on the device, scaled so that repeated products stay finite
  int64_t products = 1;  // per step, chosen so that the compute lasts about as long as the copy

  void operator()(const torch::Tensor& batch) const {
    torch::Tensor result = batch.sum();  // the step reads its batch
    with_extra_work(products, [&](int64_t count) {
      torch::Tensor chain = matrix;
      for (int64_t product = 0; product < count; ++product) chain = torch::mm(matrix, chain);
      result = result + chain.sum();
    });
  }
};

void time_overlap(benchmark::State& state, const torch::Device& cuda) {
  c10::cuda::CUDAGuard guard(cuda);
  const torch::Tensor host = torch::rand({kBatchBytes / static_cast<int64_t>(sizeof(float))});
  tp::fixes::Prefetcher<torch::Tensor> prefetcher(
      [host]() -> std::optional<torch::Tensor> { return host; }, cuda);
  auto timed_step = [&](const Compute* compute) {
    HostTimer timer;
    timer.start();
    const torch::Tensor batch = *prefetcher.next();
    if (compute) (*compute)(batch);
    synchronize(cuda);
    return timer.seconds();
  };
  const double copy_s = mean_seconds([&] { return timed_step(nullptr); });
  Compute compute{torch::rand({kMatrix, kMatrix}, torch::device(cuda)) / kMatrix};
  const torch::Tensor resident = *prefetcher.next();
  auto timed_compute = [&] {
    EventTimer timer(c10::cuda::getCurrentCUDAStream(cuda.index()));
    timer.start();
    compute(resident);
    return timer.stop_seconds();
  };
  compute.products = std::max<int64_t>(1, std::llround(copy_s / mean_seconds(timed_compute)));
  const double compute_s = mean_seconds(timed_compute);
  double steps_s = 0;
  for (auto _ : state) {
    const double step_s = timed_step(&compute);
    state.SetIterationTime(step_s);
    steps_s += step_s;
  }
  const double step_s = steps_s / static_cast<double>(state.iterations());
  state.SetBytesProcessed(state.iterations() * kBatchBytes);
  state.counters["copy_ms"] = copy_s * 1e3;
  state.counters["compute_ms"] = compute_s * 1e3;
  state.counters["step_ms"] = step_s * 1e3;
  state.counters["overlap_ratio"] = step_s / std::max(copy_s, compute_s);
  state.counters["matrix_products"] = static_cast<double>(compute.products);
}
#endif

void run_overlap(benchmark::State& state, const torch::Device& cuda) {
  if (const auto reason = absent_reason(cuda)) return skip(state, *reason);
#if TORCHPLACE_WITH_CUDA
  // the source, 3 batches queued or in use, and the compute's matrices
  if (const auto reason = lacks_memory(cuda, 5 * kBatchBytes)) return skip(state, *reason);
  fail_on_error(state, [&] { time_overlap(state, cuda); });
#endif
}

void register_overlap() {
  for (const torch::Device& device : cuda_bench_devices()) {
    const std::string name = "prefetch_overlap/" + device_part(device);
    benchmark::RegisterBenchmark(name.c_str(), run_overlap, device)->UseManualTime();
  }
}

const bool registered = add_registrar(register_overlap);

}  // namespace
}  // namespace tp::bench
