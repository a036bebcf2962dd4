// pinned_non_blocking: host-device copies with non_blocking=true, and what they need to be right.
//   h2d_non_blocking              pinned (asserted) host -> device, read after a synchronize.
//   d2h_unsynchronized            broken: device -> pinned host, read before any synchronize; a
//                                 race control: its wrong reads are counted (stale_reads).
//   d2h_event_sync                the fix: wait on an event recorded after the copy: always right.
//   staging_reuse_unsynchronized  broken: one pinned staging buffer overwritten while its previous
//                                 copy is still queued; corrupted copies are counted.
//   staging_reuse_event_wait      the fix: wait on the previous copy's event before overwriting.
// Races are shown, not assumed: a control that goes wrong in none of its trials is reported
// "race_not_shown", never passed. A fixed cell runs its control too (the pair) and counts the
// trials whose copy was still in flight (!event.query()) before its wait; with no race in the
// control or no copy in flight, the fixed cell is "race_not_shown" as well.
//   is_pinned                     is_pinned() holds for pinned memory and only for it.
//   pin_memory_without_cuda       cpu cell: pin_memory(kCUDA) on a host without CUDA raises
//                                 BackendUnavailable (1.13 and 2.x word it differently).
// The copies are made to lag by queueing matrix products ahead of them on the same stream.
#include <gtest/gtest.h>

#include <torchplace/scenario.h>
#include <torchplace/sim/sim.h>

#if TORCHPLACE_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace scenarios::pinned_non_blocking {
namespace {

constexpr int64_t kElements = 1 << 22;  // 16 MiB of float32 per copy
constexpr int kTrials = 16;             // racing copies per hazard cell
constexpr int64_t kBusySide = 4096;     // a 4096^2 float32 matmul: milliseconds of GPU work

void pin_memory_without_cuda(tp::Cell& cell) {
  const torch::Tensor pageable = torch::ones({4});
  // For CUDA by name: the sim, where registered, is 2.x's accelerator and pins for itself.
  const torch::Tensor pinned =
      cell.under_test("pin_memory", [&] { return pageable.pin_memory(torch::kCUDA); });
  EXPECT_TRUE(pinned.is_pinned());
  cell.note("pin_memory() succeeded: this host has CUDA");
}

#if TORCHPLACE_WITH_CUDA

torch::Tensor pinned_empty(int64_t elements) {
  return torch::empty({elements}, torch::TensorOptions().dtype(torch::kFloat).pinned_memory(true));
}

// Queues GPU work on the current stream so that the copy queued next waits behind it.
void delay_stream(const torch::Device& device) {
  const torch::Tensor a = torch::randn({kBusySide, kBusySide}, device);
  for (int i = 0; i < 3; ++i) (void)torch::mm(a, a);  // only the time it takes matters
}

void h2d_non_blocking(tp::Cell& cell) {
  const torch::Tensor source = pinned_empty(kElements);
  source.copy_(torch::arange(kElements, torch::kFloat));
  delay_stream(cell.device());
  ASSERT_TRUE(source.is_pinned()) << "a pageable source makes non_blocking a synchronous copy";
  const torch::Tensor on_device = source.to(cell.device(), /*non_blocking=*/true);
  c10::cuda::getCurrentCUDAStream(cell.device().index()).synchronize();
  EXPECT_TRUE(torch::equal(on_device.cpu(), source));
}

// Per set of trials: how many went wrong, and how many copies were still in flight
// (!event.query()) just before the wait or the host read.
struct RaceCount {
  int wrong = 0;
  int in_flight = 0;
};

// Counts the trials whose host copy did not hold the device's value when read.
RaceCount d2h_reads(tp::Cell& cell, bool wait_on_event) {
  const auto stream = c10::cuda::getCurrentCUDAStream(cell.device().index());
  const torch::Tensor host = pinned_empty(kElements);
  RaceCount count;
  for (int trial = 0; trial < kTrials; ++trial) {
    host.fill_(-1.0f);
    delay_stream(cell.device());
    const torch::Tensor on_device = torch::full({kElements}, float(trial), cell.device());
    host.copy_(on_device, /*non_blocking=*/true);
    at::cuda::CUDAEvent copied;
    copied.record(stream);
    if (!copied.query()) ++count.in_flight;  // before the wait or the read
    if (wait_on_event) copied.synchronize();
    const bool right = host.eq(float(trial)).all().item<bool>();  // a host read
    if (!right) ++count.wrong;
    stream.synchronize();
  }
  // The race is only about when the host looks: after a synchronize the copy has landed.
  EXPECT_TRUE(host.eq(float(kTrials - 1)).all().item<bool>()) << "the last copy never landed";
  return count;
}

// Sends kTrials batches through one pinned staging buffer; counts the corrupted device copies.
RaceCount staging_copies(tp::Cell& cell, bool wait_on_event) {
  const auto stream = c10::cuda::getCurrentCUDAStream(cell.device().index());
  const torch::Tensor staging = pinned_empty(kElements);
  std::vector<torch::Tensor> on_device;
  at::cuda::CUDAEvent previous_copy;
  RaceCount count;
  for (int batch = 0; batch < kTrials; ++batch) {
    if (batch > 0 && !previous_copy.query()) ++count.in_flight;  // before the wait or overwrite
    if (wait_on_event && batch > 0) previous_copy.synchronize();
    staging.fill_(float(batch));  // the host overwrites the buffer
    delay_stream(cell.device());
    on_device.push_back(staging.to(cell.device(), /*non_blocking=*/true));
    previous_copy.record(stream);
  }
  stream.synchronize();
  // Nothing overwrote the buffer after the last copy was queued: it must be intact either way.
  EXPECT_TRUE(on_device.back().eq(float(kTrials - 1)).all().item<bool>()) << "the last copy";
  for (int batch = 0; batch < kTrials; ++batch) {
    if (!on_device[batch].eq(float(batch)).all().item<bool>()) ++count.wrong;
  }
  return count;
}

void is_pinned(tp::Cell& cell) {
  const torch::Tensor pageable = torch::ones({1024});
  EXPECT_FALSE(pageable.is_pinned());
  EXPECT_TRUE(pageable.pin_memory().is_pinned());
  EXPECT_TRUE(pinned_empty(1024).is_pinned());
  EXPECT_FALSE(pageable.to(cell.device()).cpu().is_pinned()) << "a plain .cpu() is pageable";
}

// A control alone, or a fixed variant with its control (the pair): see the top of the file.
void run_race(tp::Cell& cell, bool d2h, bool fixed) {
  const auto trials = [&](bool wait) {
    return d2h ? d2h_reads(cell, wait) : staging_copies(cell, wait);
  };
  const std::string wrong_name = d2h ? "stale_reads" : "corrupted_copies";
  const std::string trials_text = std::to_string(kTrials) + " trials";
  const RaceCount control = trials(/*wait=*/false);
  cell.metric("trials", kTrials);
  cell.metric(fixed ? "control_" + wrong_name : wrong_name, control.wrong);
  cell.metric(fixed ? "control_in_flight" : "in_flight", control.in_flight);
  if (control.wrong == 0) {
    cell.race_not_shown("the unsynchronised control went wrong in none of " + trials_text);
  }
  if (!fixed) return;
  const RaceCount fix = trials(/*wait=*/true);
  cell.metric(wrong_name, fix.wrong);
  cell.metric("in_flight", fix.in_flight);
  EXPECT_EQ(fix.wrong, 0) << "the synchronized variant must always be right";
  if (fix.in_flight == 0) {
    cell.race_not_shown("no copy was still in flight before the wait in " + trials_text +
                        ": the wait was never needed");
  }
}

void run_cuda(tp::Cell& cell) {
  const std::string& kind = cell.axis("case");
  if (kind == "h2d_non_blocking") return h2d_non_blocking(cell);
  if (kind == "is_pinned") return is_pinned(cell);
  const bool fixed = kind == "d2h_event_sync" || kind == "staging_reuse_event_wait";
  run_race(cell, /*d2h=*/kind.rfind("d2h_", 0) == 0, fixed);
}

#endif  // TORCHPLACE_WITH_CUDA

void run(tp::Cell& cell) {
  if (cell.axis("case") == "pin_memory_without_cuda") return pin_memory_without_cuda(cell);
#if TORCHPLACE_WITH_CUDA
  run_cuda(cell);
#else
  FAIL() << "a CUDA cell ran in a build without CUDA";  // absent_reason skips these first
#endif
}

tp::Expect expectation(const tp::CellSpec& cell) {
  if (tp::sim::is_sim(cell.device())) {
    return tp::Expect::skip(
        "sim:0 has no pinned memory, streams or asynchronous copies "
        "(harness/sim/README.md): these cells need CUDA");
  }
  const bool on_cpu_cell = !cell.device().is_cuda();
  const std::string& kind = cell.axis("case");
  if (kind == "pin_memory_without_cuda") {
    if (!on_cpu_cell) {
      return tp::Expect::skip("runs in the cpu cell: pin_memory() needs no particular GPU");
    }
    return tp::Expect::error(tp::ErrorClass::kBackendUnavailable);
  }
  if (on_cpu_cell) {
    return tp::Expect::skip("a host-device copy: needs a CUDA device, the cpu cell has none");
  }
  if (kind == "d2h_unsynchronized" || kind == "staging_reuse_unsynchronized") {
    return tp::Expect::race_control(
        "a race: it must go wrong in at least one trial; the last copy is asserted intact");
  }
  return tp::Expect::success();
}

// Never on a CUDA cell: it always has CUDA (its expectation, a skip, covers it), and the gate
// accepts needs_no_cuda on no CUDA cell (reports/torchplace/gate/skips.py).
std::optional<tp::Unmet> needs(const tp::CellSpec& cell) {
  if (cell.axis("case") == "pin_memory_without_cuda" && !cell.device().is_cuda() &&
      torch::cuda::is_available()) {
    return tp::Unmet{tp::SkipCode::kNeedsNoCuda,
                     "needs a LibTorch or host without CUDA: here pin_memory() works"};
  }
  return std::nullopt;
}

}  // namespace

TP_SCENARIO(pinned_non_blocking)
    .axis("case", {"h2d_non_blocking", "d2h_unsynchronized", "d2h_event_sync",
                   "staging_reuse_unsynchronized", "staging_reuse_event_wait", "is_pinned",
                   "pin_memory_without_cuda"})
    .on(tp::DeviceAxis::kEach)
    .expect(expectation)
    .needs(needs)
    .run(run);

}  // namespace scenarios::pinned_non_blocking
