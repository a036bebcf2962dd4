// tp::sim::TransferLog — a transfer budget for a training step, counted on the simulated device.
//
// Every copy between the host and a simulated device goes through the sim's `_copy_from`, and
// every operator on a simulated tensor through its kernels, so the sim can count, exactly and
// without a GPU, what a CUDA step would move and where it would wait:
//
//   tp::sim::TransferLog log;          // records from here ...
//   train_step(model, optimizer, batch, tp::sim::device());
//   log.stop();                        // ... to here (or to its destruction)
//   EXPECT_LE(log.host_to_device().bytes, 4096);
//   EXPECT_EQ(log.syncs("_local_scalar_dense"), 0) << log.summary();  // no .item() in the step
//
// Not log.syncs() == 0: each blocking .to(device) of the batch is a wait too (copy_to_device).
//
// Copies: per direction, every `_copy_from` a user's code asks for (to(), cpu(), copy_(),
// clone() on the device), with its bytes (the source's numel x element size) and whether it was
// asked non_blocking. The sim's own internal copies (its fallback computes each operator on CPU
// copies of its inputs) are not counted.
//
// Synchronisations: the operators whose CUDA kernel makes the host wait for the device, i.e.
// what CUDA's sync-debug mode (c10::cuda::warning_state(), torch.cuda.set_sync_debug_mode) warns
// or errors on; the list and its sources are sync_operators() in transfer_log.cpp and
// harness/sim/TRANSFER_LOG.md.
//
// Scope: a log counts every event of the whole process (every thread: backward runs on the
// autograd engine's device thread) from its construction to stop() or its destruction. Logs
// nest: each live log counts every event, so an inner log's counts are part of the outer one's.
// Two logs alive at once on unrelated threads see each other's events too: measure one step at
// a time. Thread-safe. Calls tp::sim::enable().
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tp::sim {

struct TransferSink;  // transfer_log.cpp

// One direction's copies: how many, their bytes, and how many were asked non_blocking.
struct CopyCount {
  std::int64_t copies = 0;
  std::int64_t bytes = 0;
  std::int64_t non_blocking = 0;
};

// The counts a log holds (a snapshot: TransferLog::counts()).
struct TransferCounts {
  CopyCount host_to_device;
  CopyCount device_to_host;
  CopyCount device_to_device;  // between or within simulated devices (clone, .to(dtype) too)
  std::map<std::string, std::int64_t> syncs;  // operator -> forced synchronisations
};

// Where a log's events came from (TransferLog::call_sites()).
struct CallSite {
  std::string event;  // a sync_operators() key, or "h2d", "d2h", "d2d" (a copy)
  std::string call;   // as a user writes it: ".item()", ".to(device)", ".cpu()", "x[mask]"...
  std::string where;  // "at train.cpp:42 in toy::train_step" (-g), "in toy::train_step", or ""
  std::int64_t count = 0;
};

class TransferLog {
 public:
  TransferLog();
  ~TransferLog();
  TransferLog(const TransferLog&) = delete;
  TransferLog& operator=(const TransferLog&) = delete;

  // Stops recording (idempotent); the counts stay readable.
  void stop();

  CopyCount host_to_device() const;
  CopyCount device_to_host() const;
  CopyCount device_to_device() const;
  // All forced synchronisations, or those of one operator (a key of sync_operators()).
  std::int64_t syncs() const;
  std::int64_t syncs(const std::string& op) const;
  std::map<std::string, std::int64_t> syncs_by_operator() const;
  TransferCounts counts() const;
  // The first frame of the user's code (outside LibTorch, the runtimes, GoogleTest and
  // torchplace) of each event, by event and place: symbolized here, not while recording.
  std::vector<CallSite> call_sites() const;
  // "h2d 2 copies 96 B (0 non_blocking; .to(device) at train.cpp:40 in toy::train_step); d2h 0
  // copies 0 B (0 non_blocking); d2d 0 copies 0 B (0 non_blocking); syncs: 2 x copy_to_device
  // (.to(device) at train.cpp:40 in toy::train_step)", each site's count where there are several.
  std::string summary() const;

 private:
  std::shared_ptr<TransferSink> sink_;
};

// The operators the log counts as forced synchronisations, each with why CUDA synchronises
// there (the CUDA source that calls c10::cuda::memcpy_and_sync or stream_synchronize).
const std::map<std::string, std::string>& sync_operators();

}  // namespace tp::sim
