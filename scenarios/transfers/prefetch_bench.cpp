// prefetch_overlap: does the prefetcher hide the copy behind the compute? A training-like step
// takes the next batch (64 MiB, pageable on the host) from tp::fixes::Prefetcher and runs a
// compute on the device (products of 2048 x 2048 matrices) that the harness sizes to last about
// as long as the copy (device_timing.h: run_overlap_loop). Name:
//   prefetch_overlap/device:cuda:0
// Counters: copy_ms, compute_ms, step_ms, compute_units (matrix products per step) and
// overlap_ratio = step / max(compute, copy): 1 means a fully hidden copy, 2 none (target <= 1.1).
#include "strategies.h"

namespace tp::bench {
namespace {

constexpr int64_t kBatchBytes = 64 * kMiB;
constexpr int64_t kMatrix = 2048;  // the compute: products of 2048 x 2048 float matrices

#if TORCHPLACE_WITH_CUDA
void time_overlap(benchmark::State& state, const torch::Device& cuda) {
  c10::cuda::CUDAGuard guard(cuda);
  const torch::Tensor host = host_cache().get(1, kBatchBytes).pageable[0];  // made once
  const tp::fixes::PrefetchOptions options;
  tp::fixes::Prefetcher<torch::Tensor> prefetcher(
      [host]() -> std::optional<torch::Tensor> { return host; }, cuda, options);
  // scaled so that repeated products stay finite
  const torch::Tensor matrix = torch::rand({kMatrix, kMatrix}, torch::device(cuda)) / kMatrix;
  OverlapWork work;
  work.take = [&] { return *prefetcher.next(); };
  work.use = [&](const torch::Tensor& batch, int64_t products) {
    torch::Tensor result = batch.sum();  // the step reads its batch
    torch::Tensor chain = matrix;
    for (int64_t product = 0; product < products; ++product) chain = torch::mm(matrix, chain);
    result = result + chain.sum();
  };
  work.queued = options.depth;
  run_overlap_loop(state, work, kBatchBytes, cuda);
}
#endif

void run_overlap(benchmark::State& state, const torch::Device& cuda) {
  if (const auto reason = absent_reason(cuda)) return skip(state, *reason);
#if TORCHPLACE_WITH_CUDA
  fail_on_error(state, [&] {  // a CUDA error in the memory query, too, fails this one only
    // the source, 3 batches queued or in use, and the compute's matrices
    if (const auto reason = lacks_memory(cuda, 5 * kBatchBytes)) return skip(state, *reason);
    time_overlap(state, cuda);
  });
#else
  skip(state, "built without CUDA: this LibTorch has no CUDA support, so " + cuda.str() +
                  " cannot be timed");
#endif
}

void register_overlap() {
  for (const torch::Device& device : cuda_bench_devices()) {
    const std::string name =
        naming::name("prefetch_overlap", {}, {device}, naming::Form::kBenchmark);
    benchmark::RegisterBenchmark(name.c_str(), run_overlap, device)->UseManualTime();
  }
}

const bool registered_overlap = add_registrar(register_overlap);

}  // namespace
}  // namespace tp::bench
