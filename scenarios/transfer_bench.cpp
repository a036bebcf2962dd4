// What each way of moving a batch between host and device costs, on every GPU present (on a
// CPU-only host the benchmarks are listed and skipped with the reason). Names:
//   transfer/direction:h2d|d2h/strategy:<s>/bytes:<N>/device:cuda:0         one tensor, 4 KiB..1
//   GiB small_tensors/direction:h2d/strategy:<s>/count:1000/bytes:4096/device:cuda:0  a flat list
//   nested_batch/direction:h2d/strategy:<s>/count:1000/bytes:4096/device:cuda:0   a map of lists
// Strategies: see transfer_strategies.h; raw_cudamemcpy is the machine's ceiling. prefetch and
// device_resident are host-to-device strategies and are not listed for d2h. Each step is warmed up
// twice first.
#include <cstring>
#include <numeric>

#include "transfer_strategies.h"

namespace tp::bench {
namespace {

const std::vector<std::string> kStrategies = {
    "pageable", "pageable_non_blocking", "pin_each_time", "pinned_staging_reuse",
    "prefetch", "device_resident",       "raw_cudamemcpy"};
constexpr int64_t kSmallCount = 1000;
constexpr int64_t kSmallBytes = 4 * kKiB;

struct Case {
  std::string family;  // transfer | small_tensors | nested_batch
  std::string direction;
  std::string strategy;
  int64_t count;         // tensors in the batch
  int64_t tensor_bytes;  // bytes of each tensor
  torch::Device device;
};

std::string case_name(const Case& c) {
  std::string name = c.family + "/direction:" + c.direction + "/strategy:" + c.strategy;
  if (c.family != "transfer") name += "/count:" + std::to_string(c.count);
  return name + "/bytes:" + std::to_string(c.tensor_bytes) + "/" + device_part(c.device);
}

#if TORCHPLACE_WITH_CUDA
torch::Tensor host_tensor(int64_t bytes) {
  return torch::rand({bytes / static_cast<int64_t>(sizeof(float))});  // pageable
}

std::vector<torch::Tensor> small_tensors(const Case& c) {
  std::vector<torch::Tensor> tensors;
  for (int64_t i = 0; i < c.count; ++i) tensors.push_back(host_tensor(c.tensor_bytes));
  return tensors;
}

std::map<std::string, std::vector<torch::Tensor>> nested_batch(const Case& c) {
  std::map<std::string, std::vector<torch::Tensor>> batch;  // 40 % images, 40 % masks, 20 % ids
  const char* keys[] = {"images", "masks", "images", "masks", "ids"};
  for (int64_t i = 0; i < c.count; ++i) batch[keys[i % 5]].push_back(host_tensor(c.tensor_bytes));
  return batch;
}

// raw_cudamemcpy: cudaMemcpyAsync per tensor between cudaHostAlloc memory and the device.
Step raw_memcpy_step(const std::vector<int64_t>& tensor_bytes, bool to_device, torch::Device cuda) {
  const int64_t total = std::accumulate(tensor_bytes.begin(), tensor_bytes.end(), int64_t{0});
  void* host = nullptr;
  C10_CUDA_CHECK(cudaHostAlloc(&host, static_cast<size_t>(total), cudaHostAllocDefault));
  std::shared_ptr<void> host_memory(host, [](void* memory) { cudaFreeHost(memory); });
  std::memset(host, 1, static_cast<size_t>(total));
  const torch::Tensor device_memory =
      torch::empty({total}, torch::dtype(torch::kUInt8).device(cuda));
  const cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  return [=] {
    const c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream(cuda.index());
    auto* host_bytes = static_cast<char*>(host_memory.get());
    auto* device_bytes = static_cast<char*>(device_memory.data_ptr());
    EventTimer timer(stream);
    timer.start();
    int64_t offset = 0;
    for (const int64_t bytes : tensor_bytes) {
      char* destination = (to_device ? device_bytes : host_bytes) + offset;
      const char* source = (to_device ? host_bytes : device_bytes) + offset;
      C10_CUDA_CHECK(
          cudaMemcpyAsync(destination, source, static_cast<size_t>(bytes), kind, stream));
      offset += bytes;
    }
    return StepTimes{timer.stop_seconds(), 0};
  };
}

template <typename Batch>
Step make_step(const Case& c, const Batch& host) {
  const torch::Device cuda = c.device;
  const bool h2d = c.direction == "h2d";
  const torch::Device target = h2d ? cuda : torch::Device(torch::kCPU);
  const Batch source = h2d ? host : tp::fixes::to_device(host, cuda);
  if (c.strategy == "pageable") return pageable_step(source, target, cuda, false);
  if (c.strategy == "pageable_non_blocking") return pageable_step(source, target, cuda, true);
  if (c.strategy == "pin_each_time") return pin_each_time_step(source, target, cuda);
  if (c.strategy == "pinned_staging_reuse") return staging_reuse_step(source, target, cuda);
  if (c.strategy == "prefetch") return prefetch_step(source, cuda);
  if (c.strategy == "device_resident") return device_resident_step(host, cuda);
  std::vector<int64_t> tensor_bytes;
  for (const torch::Tensor& tensor : flat_tensors(host)) tensor_bytes.push_back(tensor.nbytes());
  return raw_memcpy_step(tensor_bytes, h2d, cuda);
}

template <typename Batch>
void time_steps(benchmark::State& state, const Case& c, const Batch& host) {
  c10::cuda::CUDAGuard guard(c.device);
  const int64_t bytes = batch_bytes(host);
  std::map<int64_t, Step> steps = {{bytes, make_step(c, host)}};
  StepTimes total;
  auto run_part = [&](int64_t part) {  // the batch, or the extra work: the strategy on `part` bytes
    auto found = steps.find(part);
    if (found == steps.end()) found = steps.emplace(part, make_step(c, host_tensor(part))).first;
    const StepTimes times = found->second();
    total.step_s += times.step_s;
    total.device_copy_s += times.device_copy_s;
  };
  for (int warm_up = 0; warm_up < 2; ++warm_up) with_extra_work(bytes, run_part);
  double device_copy_s = 0;
  for (auto _ : state) {
    total = StepTimes{};
    with_extra_work(bytes, run_part);
    state.SetIterationTime(total.step_s);
    device_copy_s += total.device_copy_s;
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  if (device_copy_s > 0) {
    state.counters["device_copy_bytes_per_second"] =
        benchmark::Counter(static_cast<double>(state.iterations() * bytes) / device_copy_s);
  }
}
#endif

void run_case(benchmark::State& state, const Case& c) {
  if (const auto reason = absent_reason(c.device)) return skip(state, *reason);
#if TORCHPLACE_WITH_CUDA
  const int64_t device_bytes = c.count * c.tensor_bytes * (c.strategy == "prefetch" ? 4 : 2);
  if (const auto reason = lacks_memory(c.device, device_bytes)) return skip(state, *reason);
  fail_on_error(state, [&] {
    if (c.family == "transfer") return time_steps(state, c, host_tensor(c.tensor_bytes));
    if (c.family == "small_tensors") return time_steps(state, c, small_tensors(c));
    time_steps(state, c, nested_batch(c));
  });
#endif
}

void add(const Case& c) {
  benchmark::RegisterBenchmark(case_name(c).c_str(), run_case, c)->UseManualTime();
}

void register_transfers() {
  for (const torch::Device& device : cuda_bench_devices()) {
    for (const std::string direction : {"h2d", "d2h"}) {
      for (const std::string& strategy : kStrategies) {
        // host-to-device only: prefetch, and device_resident (a device-side clone either way)
        if (direction == "d2h" && (strategy == "prefetch" || strategy == "device_resident"))
          continue;
        for (const int64_t bytes : powers_of_4(4 * kKiB, kGiB)) {
          add({"transfer", direction, strategy, 1, bytes, device});
        }
      }
    }
    for (const std::string family : {"small_tensors", "nested_batch"}) {
      for (const std::string& strategy : kStrategies) {
        add({family, "h2d", strategy, kSmallCount, kSmallBytes, device});
      }
    }
  }
}

const bool registered = add_registrar(register_transfers);

}  // namespace
}  // namespace tp::bench
