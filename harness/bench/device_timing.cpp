#include "device_timing.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "bench_support.h"

#if TORCHPLACE_WITH_CUDA
#include <c10/cuda/CUDAGuard.h>
#endif

namespace tp::bench {

#if TORCHPLACE_WITH_CUDA
namespace {

constexpr int kWarmUps = 2;   // untimed iterations before a loop
constexpr int kSamples = 10;  // runs averaged for the overlap's copy and compute alone

// Mean of `timed` over kSamples runs, after one untimed run.
double mean_seconds(const std::function<double()>& timed) {
  timed();
  double total = 0;
  for (int sample = 0; sample < kSamples; ++sample) total += timed();
  return total / kSamples;
}

}  // namespace

c10::cuda::CUDAStream current_stream(const torch::Device& cuda) {
  return c10::cuda::getCurrentCUDAStream(cuda.index());
}

double seconds_until_idle(const std::function<void()>& work, const torch::Device& cuda) {
  HostTimer timer;
  timer.start();
  work();
  current_stream(cuda).synchronize();
  return timer.seconds();
}

void CopyWindow::open() {
  begin_.record(stream_);
  opened_ = true;
}

void CopyWindow::close() {
  end_.record(stream_);
  closed_ = true;
}

double CopyWindow::seconds() {
  if (!opened_) return 0;
  TORCH_CHECK(closed_, "CopyWindow: the step opened its copy window and never closed it");
  end_.synchronize();
  return begin_.elapsed_time(end_) / 1000.0;  // elapsed_time is in ms
}

StepTimes time_step(const TransferStep& step, CopyWindow& copy, const torch::Device& cuda) {
  const double step_s = seconds_until_idle([&] { step(copy); }, cuda);
  return StepTimes{step_s, copy.seconds()};
}

void run_transfer_loop(benchmark::State& state, int64_t bytes, const StepMaker& make_step,
                       const torch::Device& cuda) {
  c10::cuda::CUDAGuard guard(cuda);
  struct Timed {
    TransferStep step;
    CopyWindow copy;
  };
  std::map<int64_t, Timed> steps;  // by bytes: the batch's (the extra work repeats it)
  StepTimes total;
  auto run_part = [&](int64_t part) {
    auto found = steps.find(part);
    if (found == steps.end()) {
      found = steps.emplace(part, Timed{make_step(part), CopyWindow(current_stream(cuda))}).first;
    }
    const StepTimes times = time_step(found->second.step, found->second.copy, cuda);
    total.step_s += times.step_s;
    total.device_copy_s += times.device_copy_s;
  };
  for (int warm_up = 0; warm_up < kWarmUps; ++warm_up) with_extra_work(bytes, run_part);
  double device_copy_s = 0;
  for (auto _ : state) {
    total = StepTimes{};
    with_extra_work(bytes, run_part);
    state.SetIterationTime(total.step_s);
    device_copy_s += total.device_copy_s;
  }
  report_extra_work(state);
  const auto moved_bytes = static_cast<double>(state.iterations() * bytes);
  state.SetBytesProcessed(state.iterations() * bytes);
  if (device_copy_s > 0) {
    state.counters["device_copy_bytes_per_second"] =
        benchmark::Counter(moved_bytes / device_copy_s);
  }
}

namespace {

// The phases of an overlap benchmark, sharing the compute's size.
class OverlapRun {
 public:
  OverlapRun(const OverlapWork& work, const torch::Device& cuda) : work_(work), cuda_(cuda) {}

  // Measures the copy alone, then sizes the compute to last about as long.
  void calibrate() {
    drain_queue(false);
    copy_s = mean_seconds([&] { return step_seconds(false); });
    const torch::Tensor resident = work_.take();
    units = std::max<int64_t>(
        1, std::llround(copy_s / mean_seconds([&] { return compute_seconds(resident); })));
    compute_s = mean_seconds([&] { return compute_seconds(resident); });
    drain_queue(true);
  }

  double step_seconds(bool with_compute) {
    return seconds_until_idle(
        [&] {
          const torch::Tensor batch = work_.take();
          if (with_compute) compute(batch);
        },
        cuda_);
  }

  double copy_s = 0;
  double compute_s = 0;
  int64_t units = 1;

 private:
  void compute(const torch::Tensor& batch) {
    with_extra_work(units, [&](int64_t part) { work_.use(batch, part); });
  }

  // On the same clock as the steps: host time until the stream is idle.
  double compute_seconds(const torch::Tensor& batch) {
    return seconds_until_idle([&] { compute(batch); }, cuda_);
  }

  // Batches queued while the caller was busy elsewhere come for free: take them untimed.
  void drain_queue(bool with_compute) {
    for (int batch = 0; batch < work_.queued; ++batch) step_seconds(with_compute);
  }

  const OverlapWork& work_;
  torch::Device cuda_;
};

}  // namespace

void run_overlap_loop(benchmark::State& state, const OverlapWork& work, int64_t batch_bytes,
                      const torch::Device& cuda) {
  c10::cuda::CUDAGuard guard(cuda);
  OverlapRun run(work, cuda);
  run.calibrate();
  double steps_s = 0;
  for (auto _ : state) {
    const double step_s = run.step_seconds(true);
    state.SetIterationTime(step_s);
    steps_s += step_s;
  }
  const double step_s = steps_s / static_cast<double>(state.iterations());
  state.SetBytesProcessed(state.iterations() * batch_bytes);
  state.counters["copy_ms"] = run.copy_s * 1e3;
  state.counters["compute_ms"] = run.compute_s * 1e3;
  state.counters["step_ms"] = step_s * 1e3;
  state.counters["overlap_ratio"] = step_s / std::max(run.copy_s, run.compute_s);
  state.counters["compute_units"] = static_cast<double>(run.units);
}
#endif

}  // namespace tp::bench
