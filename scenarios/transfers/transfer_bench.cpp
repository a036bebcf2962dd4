// What each way of moving a batch between host and device costs, on every GPU present (on a
// CPU-only host the benchmarks are listed and skipped with the reason). Names:
//   transfer/direction:h2d|d2h/strategy:<s>/bytes:<N>/device:cuda:0         one tensor, 4 KiB..1
//   GiB small_tensors/direction:h2d/strategy:<s>/count:1000/bytes:4096/device:cuda:0  a flat list
//   nested_batch/direction:h2d/strategy:<s>/count:1000/bytes:4096/device:cuda:0   a map of lists
// Strategies: see strategies.h; raw_cudamemcpy is the machine's ceiling. prefetch and
// device_resident are host-to-device strategies and are not listed for d2h. The harness times
// each step (device_timing.h); the host batches are made once per size (host_cache.h).
#include <cmath>

#include "strategies.h"

namespace tp::bench {
namespace {

const std::vector<std::string> kStrategies = {
    "pageable", "pageable_non_blocking", "pinned_resident", "pin_each_time", "pinned_staging_reuse",
    "prefetch", "device_resident",       "raw_cudamemcpy"};
constexpr int64_t kSmallCount = 1000;
constexpr int64_t kSmallBytes = 4 * kKiB;

// One benchmark: a point of its family's axes (naming::product) on one device.
struct Case {
  std::string family;  // transfer | small_tensors | nested_batch
  naming::Axes axes;   // direction, strategy, [count,] bytes
  torch::Device device;
  std::string direction;
  std::string strategy;
  int64_t count = 1;         // tensors in the batch
  int64_t tensor_bytes = 0;  // bytes of each tensor
};

Case make_case(const std::string& family, const naming::Axes& axes, const torch::Device& device) {
  Case c{family, axes, device};
  for (const auto& [axis, value] : axes) {
    if (axis == "direction") c.direction = value;
    if (axis == "strategy") c.strategy = value;
    if (axis == "count") c.count = std::stoll(value);
    if (axis == "bytes") c.tensor_bytes = std::stoll(value);
  }
  return c;
}

#if TORCHPLACE_WITH_CUDA
// A list of the batch's tensors as a map of lists: 40 % images, 40 % masks, 20 % ids.
std::map<std::string, std::vector<torch::Tensor>> as_nested(
    const std::vector<torch::Tensor>& flat) {
  std::map<std::string, std::vector<torch::Tensor>> batch;
  const char* keys[] = {"images", "masks", "images", "masks", "ids"};
  for (size_t i = 0; i < flat.size(); ++i) batch[keys[i % 5]].push_back(flat[i]);
  return batch;
}

// `pinned`: the same batch in pinned memory (values included), for the pinned strategies.
template <typename Batch>
TransferStep make_step(const Case& c, const Batch& host, const Batch& pinned) {
  const torch::Device cuda = c.device;
  const bool h2d = c.direction == "h2d";
  const torch::Device target = h2d ? cuda : torch::Device(torch::kCPU);
  const Batch source = h2d ? host : tp::fixes::to_device(host, cuda);
  if (c.strategy == "pageable") return pageable_step(source, target, false);
  if (c.strategy == "pageable_non_blocking") return pageable_step(source, target, true);
  if (c.strategy == "pinned_resident") return pinned_resident_step(source, pinned, target);
  if (c.strategy == "pin_each_time") return pin_each_time_step(source, target);
  if (c.strategy == "pinned_staging_reuse") return staging_reuse_step(source, pinned, target, cuda);
  if (c.strategy == "prefetch") return prefetch_step(source, cuda);
  if (c.strategy == "device_resident") return device_resident_step(host, cuda);
  std::vector<int64_t> tensor_bytes;
  for (const torch::Tensor& tensor : flat_tensors(host)) tensor_bytes.push_back(tensor.nbytes());
  return raw_memcpy_step(tensor_bytes, flat_tensors(pinned), h2d, cuda);
}

// The batch's step, and for the extra work a step of the strategy on one tensor of `part` bytes
// (made here: only the gate's calibration asks for it).
template <typename Batch>
void time_steps(benchmark::State& state, const Case& c, const Batch& host, const Batch& pinned) {
  int64_t bytes = 0;
  for (const torch::Tensor& tensor : flat_tensors(host)) bytes += tensor.nbytes();
  run_transfer_loop(
      state, bytes,
      [&](int64_t part) {
        if (part == bytes) return make_step(c, host, pinned);
        const torch::Tensor part_host = torch::rand({part / static_cast<int64_t>(sizeof(float))});
        return make_step(c, part_host, pinned_like(part_host).copy_(part_host));
      },
      c.device);
}
#endif

void run_case(benchmark::State& state, const Case& c) {
  if (const auto reason = absent_reason(c.device)) return skip(state, *reason);
#if TORCHPLACE_WITH_CUDA
  // the batch on both sides (4 with the prefetcher's queue), and the extra work's own steps
  const double copies = (c.strategy == "prefetch" ? 4 : 2) * (1 + std::ceil(extra_work()));
  const auto device_bytes = static_cast<int64_t>(copies * c.count * c.tensor_bytes);
  fail_on_error(state, [&] {  // a CUDA error in the memory query, too, fails this one only
    if (const auto reason = lacks_memory(c.device, device_bytes)) return skip(state, *reason);
    const HostBatch& host = host_cache().get(c.count, c.tensor_bytes);  // made once per size
    if (c.family == "transfer") return time_steps(state, c, host.pageable[0], host.pinned[0]);
    if (c.family == "small_tensors") return time_steps(state, c, host.pageable, host.pinned);
    time_steps(state, c, as_nested(host.pageable), as_nested(host.pinned));
  });
#else
  skip(state, "built without CUDA: this LibTorch has no CUDA support, so " + c.device.str() +
                  " cannot be timed");
#endif
}

void add(const Case& c) {
  const std::string name = naming::name(c.family, c.axes, {c.device}, naming::Form::kBenchmark);
  benchmark::RegisterBenchmark(name.c_str(), run_case, c)->UseManualTime();
}

// Device by device; one tensor size by size (every direction and strategy of one size, then the
// next), so that the host cache makes each size's batch once.
void register_transfers() {
  const naming::Domain one_tensor = {{"direction", {"h2d", "d2h"}},
                                     {"strategy", kStrategies},
                                     {"bytes", as_values(powers_of_4(4 * kKiB, kGiB))}};
  const naming::Domain many_tensors = {{"direction", {"h2d"}},
                                       {"strategy", kStrategies},
                                       {"count", as_values({kSmallCount})},
                                       {"bytes", as_values({kSmallBytes})}};
  for (const torch::Device& device : cuda_bench_devices()) {
    for (const naming::Axes& axes : naming::product(one_tensor, "bytes")) {
      const Case c = make_case("transfer", axes, device);
      // host-to-device only: prefetch, and device_resident (a device-side clone either way)
      if (c.direction == "d2h" && (c.strategy == "prefetch" || c.strategy == "device_resident"))
        continue;
      add(c);
    }
    for (const std::string family : {"small_tensors", "nested_batch"}) {
      for (const naming::Axes& axes : naming::product(many_tensors))
        add(make_case(family, axes, device));
    }
  }
}

// Frees the cached host batches once every benchmark ran, before CUDA shuts down.
void free_host_batches() {
#if TORCHPLACE_WITH_CUDA
  host_cache().clear();
#endif
}

const bool registered_transfers = add_registrar(register_transfers);
const bool finishing = add_finisher(free_host_batches);

}  // namespace
}  // namespace tp::bench
