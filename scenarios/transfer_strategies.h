// The ways of moving a batch between host and device, as one timed step each, for the transfer
// benchmarks. A step moves the whole batch and ends when it is usable (synchronized): strategies
// with host-side work are timed on the host clock, pure device work with CUDA events. Pinned
// strategies also report their device copy alone (events), to compare with raw cudaMemcpyAsync.
#pragma once
#include "bench_support.h"
#include "fixes/batch_mover.h"
#include "fixes/prefetcher.h"

#if TORCHPLACE_WITH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#endif

namespace tp::bench {

struct StepTimes {
  double step_s = 0;         // the whole step, as the strategy's user waits for it
  double device_copy_s = 0;  // the host<->device copy alone (pinned strategies), else 0
};
using Step = std::function<StepTimes()>;

template <typename Batch>
std::vector<torch::Tensor> flat_tensors(const Batch& batch) {
  std::vector<torch::Tensor> flat;
  tp::fixes::map_tensors(batch, [&](const torch::Tensor& tensor) {
    flat.push_back(tensor);
    return tensor;
  });
  return flat;
}

template <typename Batch>
int64_t batch_bytes(const Batch& batch) {
  int64_t bytes = 0;
  for (const torch::Tensor& tensor : flat_tensors(batch)) bytes += tensor.nbytes();
  return bytes;
}

#if TORCHPLACE_WITH_CUDA
inline void synchronize(const torch::Device& cuda) {
  c10::cuda::getCurrentCUDAStream(cuda.index()).synchronize();
}

inline torch::Tensor pinned_like(const torch::Tensor& tensor) {
  return torch::empty(tensor.sizes(),
                      torch::TensorOptions().dtype(tensor.dtype()).pinned_memory(true));
}

// pageable and pageable_non_blocking: .to() from (or into) pageable memory. For d2h, LibTorch's
// .to(kCPU, non_blocking=true) allocates a pinned destination itself (_to_copy's pin_out), so
// d2h pageable_non_blocking measures what that call costs, pinning included.
template <typename Batch>
Step pageable_step(const Batch& source, torch::Device target, torch::Device cuda,
                   bool non_blocking) {
  return [=] {
    HostTimer timer;
    timer.start();
    const Batch moved = tp::fixes::to_device(source, target, {non_blocking});
    synchronize(cuda);
    return StepTimes{timer.seconds(), 0};
  };
}

// pin_each_time: pin_memory() then a non_blocking copy (h2d); a fresh pinned destination (d2h).
template <typename Batch>
Step pin_each_time_step(const Batch& source, torch::Device target, torch::Device cuda) {
  return [=] {
    HostTimer timer;
    timer.start();
    EventTimer copy_timer(c10::cuda::getCurrentCUDAStream(cuda.index()));
    Batch moved;
    if (target.is_cuda()) {
      const Batch pinned =
          tp::fixes::map_tensors(source, [](const torch::Tensor& t) { return t.pin_memory(); });
      copy_timer.start();
      moved = tp::fixes::to_device(pinned, target, {/*non_blocking=*/true});
    } else {
      copy_timer.start();
      moved = tp::fixes::map_tensors(source, [](const torch::Tensor& t) {
        return pinned_like(t).copy_(t, /*non_blocking=*/true);
      });
    }
    const double copy_s = copy_timer.stop_seconds();
    synchronize(cuda);
    return StepTimes{timer.seconds(), copy_s};
  };
}

// pinned_staging_reuse: one pinned staging batch for every step; the host side waits for the
// previous copy's event before rewriting (h2d) or reading (d2h) it.
template <typename Batch>
Step staging_reuse_step(const Batch& source, torch::Device target, torch::Device cuda) {
  const bool to_device = target.is_cuda();
  const Batch host_side = to_device ? source : tp::fixes::to_device(source, torch::kCPU);
  const Batch staging = tp::fixes::map_tensors(host_side, pinned_like);
  const std::vector<torch::Tensor> from = flat_tensors(source);
  const std::vector<torch::Tensor> into = flat_tensors(staging);
  auto last_copy = std::make_shared<at::cuda::CUDAEvent>();
  return [=] {
    HostTimer timer;
    timer.start();
    const c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream(cuda.index());
    last_copy->synchronize();
    EventTimer copy_timer(stream);
    if (to_device) {
      for (size_t i = 0; i < from.size(); ++i) into[i].copy_(from[i]);
      copy_timer.start();
      const Batch moved = tp::fixes::to_device(staging, target, {/*non_blocking=*/true});
    } else {
      copy_timer.start();
      for (size_t i = 0; i < from.size(); ++i) into[i].copy_(from[i], /*non_blocking=*/true);
    }
    last_copy->record(stream);
    const double copy_s = copy_timer.stop_seconds();
    synchronize(cuda);
    return StepTimes{timer.seconds(), copy_s};
  };
}

// prefetch (h2d): the prefetcher copies the next batch on its side stream while this one is
// used; a step is one next() made usable on the caller's stream.
template <typename Batch>
Step prefetch_step(const Batch& source, torch::Device cuda) {
  auto prefetcher = std::make_shared<tp::fixes::Prefetcher<Batch>>(
      [source]() -> std::optional<Batch> { return source; }, cuda);
  return [=] {
    HostTimer timer;
    timer.start();
    const std::optional<Batch> moved = prefetcher->next();
    synchronize(cuda);
    return StepTimes{timer.seconds(), 0};
  };
}

// device_resident: the data was staged on the device once; a batch is a device-side copy.
template <typename Batch>
Step device_resident_step(const Batch& source, torch::Device cuda) {
  const Batch resident = tp::fixes::to_device(source, cuda);
  return [=] {
    EventTimer timer(c10::cuda::getCurrentCUDAStream(cuda.index()));
    timer.start();
    const Batch batch =
        tp::fixes::map_tensors(resident, [](const torch::Tensor& t) { return t.clone(); });
    return StepTimes{timer.stop_seconds(), 0};
  };
}
#endif

}  // namespace tp::bench
