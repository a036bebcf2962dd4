// How the transfer benchmarks time their work, so that a benchmark file in scenarios/ says only
// what is moved and how. Every step is timed as its user waits for it: the host clock from the
// call until the device's current stream is idle (synchronize). A step may mark its
// host<->device copy with a CopyWindow; the device time inside the window (CUDA events) is
// reported beside the step as the copy alone (counter device_copy_bytes_per_second). The window
// opens when the step is about to call the copy, so it also holds LibTorch's host-side dispatch
// of the copy (allocation, checks, one launch per tensor) while the stream waits: at small sizes
// and for batches of many small tensors that dominates; read it at >= 1 MiB per tensor.
#pragma once
#include <benchmark/benchmark.h>
#include <torch/types.h>

#include <chrono>
#include <cstdint>
#include <functional>

#if TORCHPLACE_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace tp::bench {

// Host wall clock.
class HostTimer {
 public:
  void start() { start_ = std::chrono::steady_clock::now(); }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

#if TORCHPLACE_WITH_CUDA
c10::cuda::CUDAStream current_stream(const torch::Device& cuda);

// Host seconds from the call until `cuda`'s current stream is idle (synchronize).
double seconds_until_idle(const std::function<void()>& work, const torch::Device& cuda);

// Device time between open() and close() on one stream (a pair of CUDA events).
class CopyWindow {
 public:
  explicit CopyWindow(c10::cuda::CUDAStream stream) : stream_(stream) {}
  void open();
  void close();
  double seconds();  // waits for close(); 0 when the window was never opened

 private:
  c10::cuda::CUDAStream stream_;
  at::cuda::CUDAEvent begin_{cudaEventDefault};
  at::cuda::CUDAEvent end_{cudaEventDefault};
  bool opened_ = false;
  bool closed_ = false;
};

// One step: moves its batch, marking the copy itself with the window when it has one.
using TransferStep = std::function<void(CopyWindow& copy)>;
// Makes the step that moves `bytes` (the batch; the extra work repeats that step).
using StepMaker = std::function<TransferStep(int64_t bytes)>;

struct StepTimes {
  double step_s = 0;         // host clock, call to idle device
  double device_copy_s = 0;  // inside the copy window, 0 without one
};

// Times one step on `cuda`'s current stream. Keep `copy` from step to step: its events are
// created on first use, which the timed steps then do not pay for.
StepTimes time_step(const TransferStep& step, CopyWindow& copy, const torch::Device& cuda);

// The loop of a transfer benchmark (UseManualTime): two untimed warm-up iterations, then per
// iteration one step of `bytes` plus the extra work (--torchplace_extra_work: the same step
// again, FRACTION of the iterations), the step made once by `make_step`. Sets the iteration time,
// bytes processed and, when the steps mark their copy, device_copy_bytes_per_second.
void run_transfer_loop(benchmark::State& state, int64_t bytes, const StepMaker& make_step,
                       const torch::Device& cuda);

// A producer that copies batches ahead, and a consumer's compute: does the copy hide?
struct OverlapWork {
  std::function<torch::Tensor()> take;  // the next batch, usable on the current stream
  std::function<void(const torch::Tensor& batch, int64_t units)> use;  // grows with units
  int queued = 0;  // batches the producer may hold ready (taken untimed before each phase)
};

// The loop of an overlap benchmark (UseManualTime). Measures take() alone (copy_ms), sizes the
// compute to last about as long (compute_units) and times it alone (compute_ms), then times
// take() + use() per iteration (step_ms), all on the host clock until the stream is idle.
// overlap_ratio = step / max(copy, compute): 1 means a fully hidden copy, 2 none at all.
void run_overlap_loop(benchmark::State& state, const OverlapWork& work, int64_t batch_bytes,
                      const torch::Device& cuda);
#endif

}  // namespace tp::bench
