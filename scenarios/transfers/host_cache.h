// Host memory the transfer benchmarks reuse. Making a batch is slow (torch::rand fills serially:
// 1 GiB takes ~2.75 s; cudaHostAlloc of 1 GiB takes a good part of a second) and Google
// Benchmark calls a benchmark's function 2-3 times in its first repetition and once in every
// later one, so the batch of one size is made once, outside the timed region, and reused by
// every strategy and repetition of that size. One size at a time: asking for another size frees
// the previous one's buffers first (1 GiB rows: 1 GiB pageable + 1 GiB pinned alive at most).
#pragma once
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace tp::bench {

// `count` float32 tensors of `tensor_bytes` each, views into one pageable and one pinned block.
struct HostBatch {
  int64_t count = 0;
  int64_t tensor_bytes = 0;
  std::vector<torch::Tensor> pageable;  // random values (torch::rand)
  std::vector<torch::Tensor> pinned;    // the same values, in one page-locked block
};

// Makes an uninitialised host block of `bytes` bytes (uint8, 1-D) that the cache may own.
using BlockMaker = std::function<torch::Tensor(int64_t bytes)>;

class HostCache {
 public:
  explicit HostCache(BlockMaker pinned_maker) : pinned_maker_(std::move(pinned_maker)) {}

  // The batch of this shape: the cached one, or (after freeing the cached one) a new one.
  const HostBatch& get(int64_t count, int64_t tensor_bytes) {
    if (batch_ && batch_->count == count && batch_->tensor_bytes == tensor_bytes) return *batch_;
    clear();  // before allocating: never two sizes alive
    batch_ = make(count, tensor_bytes);
    ++made_;
    return *batch_;
  }

  void clear() { batch_.reset(); }  // frees the buffers (the pinned block's deleter runs)
  int64_t batches_made() const { return made_; }

 private:
  HostBatch make(int64_t count, int64_t tensor_bytes) const {
    TORCH_CHECK(count >= 1 && tensor_bytes >= 4 && tensor_bytes % 4 == 0,
                "HostCache: needs count >= 1 and a whole number of float32 per tensor, got ", count,
                " x ", tensor_bytes, " bytes");
    const int64_t elements = tensor_bytes / 4;  // float32
    const torch::Tensor pageable = torch::rand({count * elements});
    const torch::Tensor block = pinned_maker_(count * tensor_bytes);
    TORCH_CHECK(block.nbytes() == static_cast<size_t>(count * tensor_bytes) && block.is_cpu(),
                "HostCache: the pinned maker returned ", block.nbytes(), " bytes, wanted ",
                count * tensor_bytes);
    const torch::Tensor pinned = block.view(torch::kFloat32);
    pinned.copy_(pageable);
    HostBatch batch{count, tensor_bytes, {}, {}};
    for (int64_t i = 0; i < count; ++i) {
      batch.pageable.push_back(pageable.narrow(0, i * elements, elements));
      batch.pinned.push_back(pinned.narrow(0, i * elements, elements));
    }
    return batch;
  }

  BlockMaker pinned_maker_;
  std::optional<HostBatch> batch_;
  int64_t made_ = 0;
};

}  // namespace tp::bench
