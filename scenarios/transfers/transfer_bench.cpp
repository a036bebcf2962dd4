// What each way of moving a batch between host and device costs, on every GPU present (on a
// CPU-only host the benchmarks are listed and skipped with the reason). Names:
//   transfer/direction:h2d|d2h/strategy:<s>/bytes:<N>/device:cuda:0         one tensor, 4 KiB..1
//   GiB small_tensors/direction:h2d/strategy:<s>/count:1000/bytes:4096/device:cuda:0  a flat list
//   nested_batch/direction:h2d/strategy:<s>/count:1000/bytes:4096/device:cuda:0   a map of lists
// Strategies: see strategies.h; raw_cudamemcpy is the machine's ceiling. prefetch and
// device_resident are host-to-device strategies and are not listed for d2h. The harness times
// each step (device_timing.h).
#include <cmath>

#include "strategies.h"

namespace tp::bench {
namespace {

const std::vector<std::string> kStrategies = {
    "pageable",        "pageable_non_blocking", "pinned_resident", "pin_each_time",
    "pinned_staging_reuse", "prefetch",         "device_resident", "raw_cudamemcpy"};
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

template <typename Batch>
TransferStep make_step(const Case& c, const Batch& host) {
  const torch::Device cuda = c.device;
  const bool h2d = c.direction == "h2d";
  const torch::Device target = h2d ? cuda : torch::Device(torch::kCPU);
  const Batch source = h2d ? host : tp::fixes::to_device(host, cuda);
  if (c.strategy == "pageable") return pageable_step(source, target, false);
  if (c.strategy == "pageable_non_blocking") return pageable_step(source, target, true);
  if (c.strategy == "pinned_resident") return pinned_resident_step(source, target);
  if (c.strategy == "pin_each_time") return pin_each_time_step(source, target);
  if (c.strategy == "pinned_staging_reuse") return staging_reuse_step(source, target, cuda);
  if (c.strategy == "prefetch") return prefetch_step(source, cuda);
  if (c.strategy == "device_resident") return device_resident_step(host, cuda);
  std::vector<int64_t> tensor_bytes;
  for (const torch::Tensor& tensor : flat_tensors(host)) tensor_bytes.push_back(tensor.nbytes());
  return raw_memcpy_step(tensor_bytes, h2d, cuda);
}

// The batch's step, and for the extra work a step of the strategy on one tensor of `part` bytes.
template <typename Batch>
void time_steps(benchmark::State& state, const Case& c, const Batch& host) {
  int64_t bytes = 0;
  for (const torch::Tensor& tensor : flat_tensors(host)) bytes += tensor.nbytes();
  run_transfer_loop(state, bytes, [&](int64_t part) {
    return part == bytes ? make_step(c, host) : make_step(c, host_tensor(part));
  }, c.device);
}
#endif

void run_case(benchmark::State& state, const Case& c) {
  if (const auto reason = absent_reason(c.device)) return skip(state, *reason);
#if TORCHPLACE_WITH_CUDA
  // the batch on both sides (4 with the prefetcher's queue), and the extra work's own steps
  const double copies = (c.strategy == "prefetch" ? 4 : 2) * (1 + std::ceil(extra_work()));
  const auto device_bytes = static_cast<int64_t>(copies * c.count * c.tensor_bytes);
  if (const auto reason = lacks_memory(c.device, device_bytes)) return skip(state, *reason);
  fail_on_error(state, [&] {
    if (c.family == "transfer") return time_steps(state, c, host_tensor(c.tensor_bytes));
    if (c.family == "small_tensors") return time_steps(state, c, small_tensors(c));
    time_steps(state, c, nested_batch(c));
  });
#else
  skip(state, "built without CUDA: this LibTorch has no CUDA support, so " +
                  c.device.str() + " cannot be timed");
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
