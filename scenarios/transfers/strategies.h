// The ways of moving a batch between host and device, as one step each, for the transfer
// benchmarks. A step moves the whole batch; the harness (device_timing.h) times it until the
// device is idle and, where the step marks its host<->device copy, that copy alone.
#pragma once
#include <memory>
#include <numeric>

#include <torchplace/bench/bench_support.h>
#include <torchplace/bench/device_timing.h>
#include <torchplace/fixes/batch_mover.h>
#include <torchplace/fixes/prefetcher.h>
#include "host_cache.h"

#if TORCHPLACE_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace tp::bench {

template <typename Batch>
std::vector<torch::Tensor> flat_tensors(const Batch& batch) {
  std::vector<torch::Tensor> flat;
  tp::fixes::map_tensors(batch, [&](const torch::Tensor& tensor) {
    flat.push_back(tensor);
    return tensor;
  });
  return flat;
}

#if TORCHPLACE_WITH_CUDA
// An empty pinned host tensor of `tensor`'s shape and dtype (`tensor` may be on the device).
inline torch::Tensor pinned_like(const torch::Tensor& tensor) {
  return torch::empty(tensor.sizes(),
                      torch::TensorOptions().dtype(tensor.dtype()).pinned_memory(true));
}

// into[i].copy_(from[i]) for every tensor of a batch.
inline void copy_each(const std::vector<torch::Tensor>& into,
                      const std::vector<torch::Tensor>& from, bool non_blocking) {
  for (size_t i = 0; i < from.size(); ++i) into[i].copy_(from[i], non_blocking);
}

// pageable and pageable_non_blocking: .to() from (or into) pageable memory. For d2h, LibTorch's
// .to(kCPU, non_blocking=true) allocates a pinned destination itself (_to_copy's pin_out), so
// d2h pageable_non_blocking measures what that call costs, pinning included.
template <typename Batch>
TransferStep pageable_step(const Batch& source, torch::Device target, bool non_blocking) {
  return [=](CopyWindow&) { tp::fixes::to_device(source, target, {non_blocking}); };
}

// pinned_resident: the batch already sits in pinned memory, as a DataLoader with pin_memory
// delivers it (h2d), or lands in a pinned buffer allocated once (d2h); a non_blocking copy.
// `pinned` is shaped as `source` (h2d: holding its values; host_cache.h makes both once).
template <typename Batch>
TransferStep pinned_resident_step(const Batch& source, const Batch& pinned, torch::Device target) {
  if (target.is_cuda()) {
    return [=](CopyWindow& copy) {
      copy.open();
      tp::fixes::to_device(pinned, target, {/*non_blocking=*/true});
      copy.close();
    };
  }
  const std::vector<torch::Tensor> from = flat_tensors(source);
  const std::vector<torch::Tensor> into = flat_tensors(pinned);
  return [=](CopyWindow& copy) {
    copy.open();
    copy_each(into, from, /*non_blocking=*/true);
    copy.close();
  };
}

// pin_each_time: t.pin_memory() then a non_blocking copy (h2d); a fresh pinned destination
// (d2h). LibTorch's CachingHostAllocator hands back a cached pinned block after the first
// steps, so this is a host copy into pinned memory plus the transfer, as users get it.
template <typename Batch>
TransferStep pin_each_time_step(const Batch& source, torch::Device target) {
  if (target.is_cuda()) {
    return [=](CopyWindow& copy) {
      const Batch pinned =
          tp::fixes::map_tensors(source, [](const torch::Tensor& t) { return t.pin_memory(); });
      copy.open();
      tp::fixes::to_device(pinned, target, {/*non_blocking=*/true});
      copy.close();
    };
  }
  const std::vector<torch::Tensor> from = flat_tensors(source);
  return [=](CopyWindow& copy) {
    std::vector<torch::Tensor> into;
    for (const torch::Tensor& tensor : from) into.push_back(pinned_like(tensor));
    copy.open();
    copy_each(into, from, /*non_blocking=*/true);
    copy.close();
  };
}

// pinned_staging_reuse: one pinned staging batch for every step; the host waits for the
// previous copy's event before rewriting (h2d: pageable -> staging -> device) or reading (d2h) it.
// Each timed step ends synchronized, so here that wait is free: what differs from
// pinned_resident is the host copy into the staging buffer (h2d).
// `staging` is a pinned batch shaped as `source`, reused from step to step.
template <typename Batch>
TransferStep staging_reuse_step(const Batch& source, const Batch& staging, torch::Device target,
                                torch::Device cuda) {
  const bool to_device = target.is_cuda();
  const std::vector<torch::Tensor> from = flat_tensors(source);
  const std::vector<torch::Tensor> into = flat_tensors(staging);
  auto last_copy = std::make_shared<at::cuda::CUDAEvent>();
  return [=](CopyWindow& copy) {
    last_copy->synchronize();
    if (to_device) {
      copy_each(into, from, /*non_blocking=*/false);
      copy.open();
      tp::fixes::to_device(staging, target, {/*non_blocking=*/true});
    } else {
      copy.open();
      copy_each(into, from, /*non_blocking=*/true);
    }
    copy.close();
    last_copy->record(current_stream(cuda));
  };
}

// prefetch (h2d): the prefetcher copies the next batch on its side stream while this one is
// used; a step is one next() made usable on the caller's stream.
template <typename Batch>
TransferStep prefetch_step(const Batch& source, torch::Device cuda) {
  auto prefetcher = std::make_shared<tp::fixes::Prefetcher<Batch>>(
      [source]() -> std::optional<Batch> { return source; }, cuda);
  return [=](CopyWindow&) { prefetcher->next(); };
}

// device_resident: the data was staged on the device once; a batch is a device-side copy.
template <typename Batch>
TransferStep device_resident_step(const Batch& source, torch::Device cuda) {
  const Batch resident = tp::fixes::to_device(source, cuda);
  return [=](CopyWindow&) {
    tp::fixes::map_tensors(resident, [](const torch::Tensor& t) { return t.clone(); });
  };
}

// raw_cudamemcpy, the ceiling: cudaMemcpyAsync per tensor between page-locked memory and the
// device, with no LibTorch in the way. `pinned` holds the batch's tensors back to back in one
// block (host_cache.h); the device side starts as a copy of it, so d2h writes the same values.
inline TransferStep raw_memcpy_step(const std::vector<int64_t>& tensor_bytes,
                                    const std::vector<torch::Tensor>& pinned, bool to_device,
                                    torch::Device cuda) {
  const int64_t total = std::accumulate(tensor_bytes.begin(), tensor_bytes.end(), int64_t{0});
  TORCH_CHECK(!pinned.empty() && pinned.front().storage().nbytes() >= static_cast<size_t>(total),
              "raw_cudamemcpy: the pinned block holds fewer than ", total, " bytes");
  const torch::Tensor device_memory =
      torch::empty({total}, torch::dtype(torch::kUInt8).device(cuda));
  C10_CUDA_CHECK(cudaMemcpy(device_memory.data_ptr(), pinned.front().data_ptr(),
                            static_cast<size_t>(total), cudaMemcpyHostToDevice));
  const cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  return [=](CopyWindow& copy) {  // `pinned` captured: keeps the block alive
    auto* host_bytes = static_cast<char*>(pinned.front().data_ptr());
    auto* device_bytes = static_cast<char*>(device_memory.data_ptr());
    const c10::cuda::CUDAStream stream = current_stream(cuda);
    copy.open();
    int64_t offset = 0;
    for (const int64_t bytes : tensor_bytes) {
      char* destination = (to_device ? device_bytes : host_bytes) + offset;
      const char* from = (to_device ? host_bytes : device_bytes) + offset;
      C10_CUDA_CHECK(cudaMemcpyAsync(destination, from, static_cast<size_t>(bytes), kind, stream));
      offset += bytes;
    }
    copy.close();
  };
}

// A page-locked host block of `bytes` (uint8), freed with cudaFreeHost when its last tensor goes.
inline torch::Tensor pinned_block(int64_t bytes) {
  void* memory = nullptr;
  C10_CUDA_CHECK(cudaHostAlloc(&memory, static_cast<size_t>(bytes), cudaHostAllocDefault));
  return torch::from_blob(
      memory, {bytes}, [](void* block) { (void)cudaFreeHost(block); }, torch::dtype(torch::kUInt8));
}

// The transfer benchmarks' host batches, one size at a time (freed by bench_main at the end).
inline HostCache& host_cache() {
  static HostCache cache(pinned_block);
  return cache;
}
#endif

}  // namespace tp::bench
