// The prefetcher: what LibTorch's C++ DataLoader lacks (no pin_memory, no prefetch). It wraps any
// batch source (a callable returning std::optional<Batch>, an iterator range, a DataLoader) of
// the nested batches the batch mover supports, and hands out batches already on the device.
//
// CUDA target: a producer thread pulls batch i+1 from the source while the caller works on batch
// i, copies it into pinned staging buffers it keeps and reuses (a slot is rewritten only after
// the event of its previous copy completed), and queues a non_blocking copy on a side stream.
// next() makes the caller's current stream wait on that copy's event and records the caller's
// stream on every tensor handed out, so the caching allocator never reuses their memory early.
// The source is called on the producer thread only: it must not be touched elsewhere meanwhile.
//
// Its source must give host (CPU) tensors: the copy runs on the side stream, which does not
// wait for the caller's stream, so a batch already on a device is refused (check_host_batch),
// never copied out of order.
//
// CPU target: a pass-through. next() calls the source on the caller's thread and returns the
// batch through to_device(batch, kCPU): CPU tensors come back as they are (no copy, no pinning,
// no thread), as there is no transfer to overlap.
#pragma once
#include <torch/torch.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "batch_mover.h"
#include "map_tensors.h"

#if TORCHPLACE_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace tp::fixes {

struct PrefetchOptions {
  // Batches copied ahead of the caller, each with its own pinned staging slot. Default 2: two
  // slots of pinned host memory, each the size of one batch.
  int depth = 2;
  // Called on the producer thread, side stream current, after a batch is staged and before its
  // copy is queued. Tests delay the copy with it, so that a staging buffer rewritten too early
  // would show.
  std::function<void()> before_copy;
};

// Throws (c10::Error) unless every tensor of `batch` is on the CPU: what the CUDA target's
// producer checks before it copies a batch on its side stream.
template <typename Batch>
void check_host_batch(const Batch& batch, const torch::Device& target) {
  map_tensors(batch, [&](const torch::Tensor& tensor) {
    TORCH_CHECK(tensor.is_cpu(), "Prefetcher: a source for ", target.str(),
                " must give host (CPU) tensors, got one on ", tensor.device().str(),
                ": its copy would not wait for the caller's stream. Use that batch directly, "
                "or a CPU target (a pass-through)");
    return tensor;
  });
}

template <typename Batch>
class Prefetcher {
 public:
  using Source = std::function<std::optional<Batch>()>;

  Prefetcher(Source source, torch::Device device, PrefetchOptions options = {})
      : source_(std::move(source)), device_(device), options_(options) {
    TORCH_CHECK(options_.depth >= 1, "Prefetcher: depth must be >= 1, got ", options_.depth);
    TORCH_CHECK(device_.is_cpu() || device_.is_cuda(), "Prefetcher: target ", device_.str(),
                " is neither the CPU nor a CUDA device");
    if (device_.is_cuda()) start_cuda();
  }

  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  ~Prefetcher() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    space_.notify_all();
    if (producer_.joinable()) producer_.join();
  }

  // The next batch on the device, or nothing once the source is exhausted. Rethrows, on the
  // caller's thread, an exception the source or a copy threw.
  std::optional<Batch> next() {
    if (device_.is_cpu()) {
      std::optional<Batch> batch = source_();
      if (!batch) return std::nullopt;
      return to_device(*batch, device_);
    }
    return next_cuda();
  }

  // Pinned staging tensors allocated so far: stays at depth x tensors-per-batch while the
  // batches keep their shapes (the buffers are reused).
  int64_t staging_allocations() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return staging_allocations_;
  }

 private:
#if TORCHPLACE_WITH_CUDA
  struct InFlight {
    Batch batch;                                  // on the device, copy queued on the side stream
    std::shared_ptr<at::cuda::CUDAEvent> copied;  // recorded after the batch's copies
  };
  struct Slot {
    std::vector<torch::Tensor> pinned;  // staging buffers, in the batch's tensor order
    std::shared_ptr<at::cuda::CUDAEvent> last_copy;
  };

  void start_cuda() {
    if (!device_.has_index()) device_ = torch::Device(torch::kCUDA, 0);
    TORCH_CHECK(torch::cuda::is_available() &&
                    device_.index() < static_cast<int>(torch::cuda::device_count()),
                "Prefetcher: target ", device_.str(), " is not a CUDA device present here");
    side_stream_ = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device_.index());
    slots_.resize(static_cast<size_t>(options_.depth));
    producer_ = std::thread([this] { produce(); });
  }

  void produce() {
    try {
      c10::cuda::CUDAGuard device_guard(device_);
      c10::cuda::CUDAStreamGuard stream_guard(*side_stream_);
      for (size_t index = 0;; ++index) {
        if (!wait_for_space()) return;
        std::optional<Batch> host = source_();
        if (!host) break;
        push(copy_ahead(*host, slots_[index % slots_.size()]));
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
    }
    finish();
  }

  // Stages `host` in the slot's pinned buffers and queues their copy to the device.
  InFlight copy_ahead(const Batch& host, Slot& slot) {
    check_host_batch(host, device_);
    if (slot.last_copy) slot.last_copy->synchronize();  // no reuse before its copy completed
    size_t position = 0;
    const Batch staged = map_tensors(host, [&](const torch::Tensor& source) {
      torch::Tensor& buffer = claim_buffer(slot, position++, source);
      buffer.copy_(source);
      return buffer;
    });
    if (options_.before_copy) options_.before_copy();
    InFlight item{to_device(staged, device_, {/*non_blocking=*/true}),
                  std::make_shared<at::cuda::CUDAEvent>()};
    item.copied->record(*side_stream_);
    slot.last_copy = item.copied;
    return item;
  }

  torch::Tensor& claim_buffer(Slot& slot, size_t position, const torch::Tensor& like) {
    if (position < slot.pinned.size() && slot.pinned[position].sizes() == like.sizes() &&
        slot.pinned[position].dtype() == like.dtype()) {
      return slot.pinned[position];
    }
    torch::Tensor fresh =
        torch::empty(like.sizes(), torch::TensorOptions().dtype(like.dtype()).pinned_memory(true));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++staging_allocations_;
    }
    if (position == slot.pinned.size()) slot.pinned.push_back(fresh);
    slot.pinned.at(position) = fresh;
    return slot.pinned[position];
  }

  bool wait_for_space() {
    std::unique_lock<std::mutex> lock(mutex_);
    space_.wait(lock, [&] { return stopping_ || ready_.size() < slots_.size(); });
    return !stopping_;
  }

  void push(InFlight item) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.push_back(std::move(item));
    }
    filled_.notify_one();
  }

  void finish() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
    }
    filled_.notify_all();
  }

  std::optional<Batch> next_cuda() {
    std::unique_lock<std::mutex> lock(mutex_);
    filled_.wait(lock, [&] { return !ready_.empty() || finished_; });
    if (ready_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return std::nullopt;
    }
    InFlight item = std::move(ready_.front());
    ready_.pop_front();
    lock.unlock();
    space_.notify_one();
    const c10::cuda::CUDAStream consumer = c10::cuda::getCurrentCUDAStream(device_.index());
    item.copied->block(consumer);  // the caller's stream waits for the copy, the host does not
    map_tensors(item.batch, [&](const torch::Tensor& tensor) {
      tensor.record_stream(consumer.unwrap());
      return tensor;
    });
    return std::move(item.batch);
  }

  std::optional<c10::cuda::CUDAStream> side_stream_;
  std::vector<Slot> slots_;
  std::deque<InFlight> ready_;
#else
  void start_cuda() {
    TORCH_CHECK(false, "Prefetcher: target ", device_.str(),
                " needs CUDA, and this LibTorch was built without it");
  }
  std::optional<Batch> next_cuda() { return std::nullopt; }  // unreachable: start_cuda threw
#endif

  Source source_;
  torch::Device device_;
  PrefetchOptions options_;
  std::thread producer_;
  mutable std::mutex mutex_;
  std::condition_variable space_;   // the queue has room (or stopping_)
  std::condition_variable filled_;  // a batch is queued (or finished_)
  bool stopping_ = false;
  bool finished_ = false;
  std::exception_ptr error_;
  int64_t staging_allocations_ = 0;
};

// Prefetches the batches of an iterator range (e.g. loader->begin(), loader->end()); the range's
// container must outlive the prefetcher.
template <typename Iterator>
auto prefetch_range(Iterator begin, Iterator end, torch::Device device,
                    PrefetchOptions options = {}) {
  using Batch = std::decay_t<decltype(*begin)>;
  auto source = [begin, end]() mutable -> std::optional<Batch> {
    if (begin == end) return std::nullopt;
    Batch batch = *begin;
    ++begin;
    return batch;
  };
  return std::make_unique<Prefetcher<Batch>>(std::move(source), device, options);
}

// Prefetches a range with begin()/end(): a container, or a torch::data DataLoader (*loader).
template <typename Range>
auto prefetch(Range& range, torch::Device device, PrefetchOptions options = {}) {
  return prefetch_range(range.begin(), range.end(), device, options);
}

}  // namespace tp::fixes
