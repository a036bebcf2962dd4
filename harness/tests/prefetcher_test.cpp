// The prefetcher hands out every batch of its source, in order, with the source's values, and
// on CUDA reuses its pinned staging buffers only after their copies completed.
#include <torchplace/fixes/prefetcher.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>

#if TORCHPLACE_WITH_CUDA
#include <ATen/cuda/Sleep.h>
#endif

namespace tp::fixes {
namespace {

using Nested = std::tuple<std::vector<torch::Tensor>, std::map<std::string, torch::Tensor>,
                          std::pair<torch::Tensor, std::string>>;

// Batch `index` of a source whose every value is distinct from the other batches' values.
Nested make_batch(int64_t index, int64_t elements = 6) {
  const double base = static_cast<double>(index) * 1000.0;
  return {{torch::full({elements}, base + 1), torch::arange(elements) + base},
          {{"input", torch::full({2, elements}, base + 2)}, {"target", torch::full({1}, base)}},
          {torch::full({3}, base + 3, torch::kInt32), "batch-" + std::to_string(index)}};
}

// A source of `count` batches, made on demand.
std::function<std::optional<Nested>()> counting_source(int64_t count, int64_t elements = 6) {
  auto made = std::make_shared<int64_t>(0);
  return [made, count, elements]() -> std::optional<Nested> {
    if (*made == count) return std::nullopt;
    return make_batch((*made)++, elements);
  };
}

#if TORCHPLACE_WITH_CUDA
// A source of `count` batches made beforehand, so that the producer is never the slow side.
std::function<std::optional<Nested>()> prebuilt_source(int64_t count, int64_t elements) {
  auto batches = std::make_shared<std::vector<Nested>>();
  for (int64_t index = 0; index < count; ++index) batches->push_back(make_batch(index, elements));
  auto handed_out = std::make_shared<size_t>(0);
  return [batches, handed_out]() -> std::optional<Nested> {
    if (*handed_out == batches->size()) return std::nullopt;
    return (*batches)[(*handed_out)++];
  };
}
#endif

void expect_same_values_on(const Nested& moved, const Nested& source, torch::Device device) {
  for (size_t i = 0; i < std::get<0>(source).size(); ++i) {
    EXPECT_EQ(std::get<0>(moved)[i].device(), device);
    EXPECT_TRUE(torch::equal(std::get<0>(moved)[i].cpu(), std::get<0>(source)[i])) << i;
  }
  for (const auto& [key, tensor] : std::get<1>(source)) {
    EXPECT_EQ(std::get<1>(moved).at(key).device(), device) << key;
    EXPECT_TRUE(torch::equal(std::get<1>(moved).at(key).cpu(), tensor)) << key;
  }
  EXPECT_TRUE(torch::equal(std::get<2>(moved).first.cpu(), std::get<2>(source).first));
  EXPECT_EQ(std::get<2>(moved).second, std::get<2>(source).second);
}

// Drains the prefetcher, checking each batch against the source's batch of the same index.
void expect_every_batch(Prefetcher<Nested>& prefetcher, int64_t count, torch::Device device,
                        int64_t elements = 6) {
  std::vector<Nested> received;  // held, so that nothing is freed and reused while checking
  while (std::optional<Nested> batch = prefetcher.next()) received.push_back(std::move(*batch));
  ASSERT_EQ(static_cast<int64_t>(received.size()), count);
  for (int64_t index = 0; index < count; ++index) {
    SCOPED_TRACE("batch " + std::to_string(index));
    expect_same_values_on(received[index], make_batch(index, elements), device);
  }
}

TEST(MapTensors, VisitsTensorsInTheBatchsOrderAndKeepsOtherLeaves) {
  std::vector<int64_t> seen;
  const Nested mapped = map_tensors(make_batch(0), [&](const torch::Tensor& tensor) {
    seen.push_back(tensor.numel());
    return tensor * 2;
  });
  EXPECT_EQ(seen, (std::vector<int64_t>{6, 6, 12, 1, 3}));  // vector, map by key, pair
  EXPECT_TRUE(torch::equal(std::get<1>(mapped).at("input"), torch::full({2, 6}, 4.0)));
  EXPECT_EQ(std::get<2>(mapped).second, "batch-0");
}

TEST(Prefetcher, CpuTargetHandsOutTheSourcesBatchesUnchanged) {
  Prefetcher<Nested> prefetcher(counting_source(5), torch::kCPU);
  expect_every_batch(prefetcher, 5, torch::kCPU);
  EXPECT_FALSE(prefetcher.next().has_value());     // stays exhausted
  EXPECT_EQ(prefetcher.staging_allocations(), 0);  // no pinned staging without a copy
}

// The CPU pass-through copies nothing: the caller gets the source's own tensors.
TEST(Prefetcher, CpuTargetHandsOutTheSourcesOwnTensors) {
  const Nested batch = make_batch(0);
  bool given = false;
  Prefetcher<Nested> prefetcher(
      [&]() -> std::optional<Nested> {
        if (given) return std::nullopt;
        given = true;
        return batch;
      },
      torch::kCPU);
  const std::optional<Nested> handed = prefetcher.next();
  ASSERT_TRUE(handed.has_value());
  EXPECT_TRUE(std::get<0>(*handed)[0].is_same(std::get<0>(batch)[0]));
  EXPECT_TRUE(std::get<1>(*handed).at("target").is_same(std::get<1>(batch).at("target")));
  EXPECT_TRUE(std::get<2>(*handed).first.is_same(std::get<2>(batch).first));
  EXPECT_FALSE(prefetcher.next().has_value());
}

// Row i of `inputs`, labelled i. (TensorDataset's target-less Example<Tensor, NoTarget> is not
// one of the batch mover's types.)
struct Rows : torch::data::datasets::Dataset<Rows> {
  explicit Rows(torch::Tensor rows) : inputs(std::move(rows)) {}
  torch::data::Example<> get(size_t index) override {
    return {inputs[static_cast<int64_t>(index)], torch::tensor(static_cast<int64_t>(index))};
  }
  // torch::optional: c10::optional in 1.13, std::optional in 2.x
  torch::optional<size_t> size() const override { return static_cast<size_t>(inputs.size(0)); }
  torch::Tensor inputs;
};

TEST(Prefetcher, WrapsADataLoader) {
  const torch::Tensor inputs = torch::arange(20).reshape({10, 2});
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      Rows(inputs), torch::data::DataLoaderOptions().batch_size(4));
  auto prefetcher = prefetch(*loader, torch::kCPU);
  std::vector<torch::Tensor> rows;
  while (auto batch = prefetcher->next()) {
    for (const auto& example : *batch) rows.push_back(example.data);
  }
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_TRUE(torch::equal(torch::stack(rows), inputs));
}

// An iterator range is walked once, in order, and then ends (at most one call past the end).
TEST(Prefetcher, WalksAnIteratorRangeOnce) {
  const std::vector<Nested> batches = {make_batch(0), make_batch(1), make_batch(2)};
  auto prefetcher = prefetch_range(batches.begin(), batches.end(), torch::kCPU);
  for (const Nested& expected : batches) {
    const std::optional<Nested> got = prefetcher->next();
    ASSERT_TRUE(got.has_value());
    expect_same_values_on(*got, expected, torch::kCPU);
  }
  EXPECT_FALSE(prefetcher->next().has_value()) << "the range ended";
}

// 0 is refused, saying what was given; 1, the smallest depth, is allowed and hands out every batch.
TEST(Prefetcher, RejectsANonPositiveDepth) {
  try {
    Prefetcher<Nested>(counting_source(1), torch::kCPU, PrefetchOptions{/*depth=*/0, {}});
    ADD_FAILURE() << "depth 0 was accepted";
  } catch (const c10::Error& error) {
    EXPECT_EQ(error.msg().rfind("Prefetcher: depth must be >= 1, got 0", 0), 0u) << error.msg();
  }
  Prefetcher<Nested> shallow(counting_source(3), torch::kCPU, PrefetchOptions{/*depth=*/1, {}});
  expect_every_batch(shallow, 3, torch::kCPU);
}

// The documented default (prefetcher.h): two batches ahead, so two slots of pinned host memory;
// a deeper default would pin one more batch of host memory unasked.
TEST(Prefetcher, DefaultsToTwoBatchesAhead) { EXPECT_EQ(PrefetchOptions{}.depth, 2); }

TEST(Prefetcher, CudaTargetWithoutCudaSaysSo) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "CUDA is present: this checks its absence";
  try {
    Prefetcher<Nested> prefetcher(counting_source(1), torch::Device(torch::kCUDA, 0));
    FAIL() << "a CUDA target was accepted without CUDA";
  } catch (const c10::Error& error) {
    EXPECT_NE(std::string(error.what()).find("cuda:0"), std::string::npos) << error.what();
  }
}

TEST(Prefetcher, ValuesEqualTheSourceAndStagingIsReusedOnlyAfterItsCopy_CUDA) {
#if TORCHPLACE_WITH_CUDA
  if (!torch::cuda::is_available()) GTEST_SKIP() << "device absent: needs cuda:0";
  // Every copy waits behind a ~10 ms spin kernel on the side stream while the batches come
  // ready-made, so a staging buffer rewritten before its copy ran would hand the next batch's
  // values to this one. Depth 1 rewrites the one slot as soon as its batch is taken.
  constexpr int64_t kElements = 1024 * 1024;  // 4 MiB per float tensor
  constexpr int64_t kBatches = 12;
  constexpr int64_t kDelayCycles = 20'000'000;  // ~10 ms at 2 GHz
  const torch::Device cuda(torch::kCUDA, 0);
  for (const int depth : {1, 2}) {
    SCOPED_TRACE("depth " + std::to_string(depth));
    PrefetchOptions options{depth, [] { at::cuda::sleep(kDelayCycles); }};
    Prefetcher<Nested> prefetcher(prebuilt_source(kBatches, kElements), cuda, options);
    expect_every_batch(prefetcher, kBatches, cuda, kElements);
    EXPECT_EQ(prefetcher.staging_allocations(), depth * 5);  // 5 tensors a batch, then reused
  }
#else
  GTEST_SKIP() << "built without CUDA: this LibTorch has no CUDA support";
#endif
}

TEST(Prefetcher, RethrowsTheSourcesErrorOnTheCallersThread_CUDA) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "device absent: needs cuda:0";
  auto calls = std::make_shared<int>(0);
  Prefetcher<Nested> prefetcher(
      [calls]() -> std::optional<Nested> {
        TORCH_CHECK((*calls)++ == 0, "source broke on its second batch");
        return make_batch(0);
      },
      torch::Device(torch::kCUDA, 0));
  EXPECT_TRUE(prefetcher.next().has_value());
  EXPECT_THROW(prefetcher.next(), c10::Error);
}

// A training loop that stops early destroys the prefetcher while its producer waits for room:
// the destructor must wake it and join, within a deadline (a hang fails here, it does not hang).
TEST(Prefetcher, DestroyedMidStreamStopsItsProducer_CUDA) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "device absent: needs cuda:0";
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto prefetcher = std::make_unique<Prefetcher<Nested>>(
      [calls]() -> std::optional<Nested> { return make_batch((*calls)++); },
      torch::Device(torch::kCUDA, 0), PrefetchOptions{1});
  ASSERT_TRUE(prefetcher->next().has_value());
  for (int waited = 0; calls->load() < 2 && waited < 2000; ++waited) {  // batch 1 queued
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // its producer now waits
  auto destroyed = std::make_shared<std::promise<void>>();
  std::future<void> done = destroyed->get_future();
  std::thread([owned = std::move(prefetcher), destroyed]() mutable {
    owned.reset();
    destroyed->set_value();
  }).detach();  // a destructor that never returns is left behind, not waited for
  if (done.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "~Prefetcher did not return in 10 s: its producer was not woken and stopped";
    std::fflush(stdout);
    std::_Exit(EXIT_FAILURE);  // threads blocked for good: end here, not at a hung exit
  }
  EXPECT_LE(calls->load(), 3) << "the source was still called after the prefetcher stopped";
}

// What the CUDA target's producer checks before copying on its side stream: every tensor on the
// host. A meta tensor is a non-CPU tensor on every build; one of five is enough to be refused.
TEST(Prefetcher, SourceCheckRefusesABatchNotOnTheHost) {
  const torch::Device cuda(torch::kCUDA, 0);
  EXPECT_NO_THROW(check_host_batch(make_batch(0), cuda));
  Nested partly_on_meta = make_batch(0);
  std::get<1>(partly_on_meta).at("target") =
      std::get<1>(partly_on_meta).at("target").to(torch::kMeta);
  try {
    check_host_batch(partly_on_meta, cuda);
    FAIL() << "a batch holding a meta tensor passed the host check";
  } catch (const c10::Error& error) {
    const std::string message = error.what_without_backtrace();
    EXPECT_NE(message.find("must give host (CPU) tensors, got one on meta"), std::string::npos)
        << message;
    EXPECT_NE(message.find("cuda:0"), std::string::npos) << message;
  }
}

// The same refusal from the producer thread, rethrown by next(): a CUDA batch is not copied.
TEST(Prefetcher, CudaTargetRefusesASourceOfDeviceTensors_CUDA) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "device absent: needs cuda:0";
  const torch::Device cuda(torch::kCUDA, 0);
  const Nested on_device = to_device(make_batch(0), cuda);
  Prefetcher<Nested> prefetcher([on_device]() -> std::optional<Nested> { return on_device; }, cuda);
  try {
    prefetcher.next();
    FAIL() << "a source of CUDA tensors was accepted";
  } catch (const c10::Error& error) {
    EXPECT_NE(std::string(error.what()).find("got one on cuda:0"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace tp::fixes
