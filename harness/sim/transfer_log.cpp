// tp::sim::TransferLog (transfer_log.h): copies and forced synchronisations, counted where the
// sim sees them. kernels.cpp reports each `_copy_from`, fallback.cpp each operator, and both
// only at the top level: the fallback's own copies (it computes on CPU copies of the inputs) run
// inside a FallbackScope and are not a user's transfers.
#include "transfer_log.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <atomic>
#include <mutex>
#include <sstream>
#include <vector>

#include "sim_internal.h"

namespace tp::sim {

struct TransferSink {
  mutable std::mutex mutex;
  TransferCounts counts;
  // event (a sync_operators() key, or h2d, d2h, d2d) -> the stack it came from -> how many: the
  // addresses only, symbolized by call_sites().
  detail::EventStacks stacks;
};

namespace detail {
namespace {

std::mutex registry_mutex;
std::vector<std::shared_ptr<TransferSink>>* live = new std::vector<std::shared_ptr<TransferSink>>();
std::atomic<int> live_count{0};
thread_local int fallback_depth = 0;  // > 0 inside the fallback: its own copies and calls

enum class Direction { kHostToDevice, kDeviceToHost, kDeviceToDevice, kNone };

Direction direction_of(const at::Tensor& src, const at::Tensor& dst) {
  const bool from = is_sim(src.device()), to = is_sim(dst.device());
  if (!from && to) return Direction::kHostToDevice;
  if (from && !to) return Direction::kDeviceToHost;
  if (from && to) return Direction::kDeviceToDevice;
  return Direction::kNone;
}

// Adds one event to every live log, with the stack it came from under each of `events`.
template <typename Add>
void to_every_log(Add add, const std::vector<void*>& stack, std::vector<const char*> events) {
  if (live_count.load() == 0) return;
  const std::lock_guard<std::mutex> registry(registry_mutex);
  for (const auto& sink : *live) {
    const std::lock_guard<std::mutex> lock(sink->mutex);
    add(sink->counts);
    for (const char* event : events) ++sink->stacks[event][stack];
  }
}

const char* direction_name(Direction direction) {
  switch (direction) {
    case Direction::kHostToDevice:
      return "h2d";
    case Direction::kDeviceToHost:
      return "d2h";
    case Direction::kDeviceToDevice:
      return "d2d";
    case Direction::kNone:
      break;
  }
  return "";
}

void add_copy(CopyCount& count, std::int64_t bytes, bool non_blocking) {
  ++count.copies;
  count.bytes += bytes;
  count.non_blocking += non_blocking ? 1 : 0;
}

bool has_boolean_index(const c10::FunctionSchema& schema, const torch::jit::Stack& stack) {
  const auto& arguments = schema.arguments();
  const size_t first = stack.size() - arguments.size();
  for (size_t index = 0; index < arguments.size(); ++index) {
    if (arguments[index].name() != "indices" || !stack[first + index].isList()) continue;
    for (const c10::IValue& each : stack[first + index].toListRef()) {
      if (!each.isTensor()) continue;
      const auto type = each.toTensor().scalar_type();
      if (type == at::kBool || type == at::kByte) return true;
    }
  }
  return false;
}

// The sync_operators() key of an operator call, or "" when its CUDA kernel does not synchronise.
// x[mask] needs no rule of its own: index is structured, and its meta function turns the mask
// into indices with nonzero on the device, which comes here as nonzero. index_put_ is not: its
// CPU kernel does that on the fallback's CPU copy, unseen, so it is counted by its mask.
std::string sync_of(const c10::FunctionSchema& schema, const torch::jit::Stack& stack) {
  const std::string name = schema.name().substr(schema.name().find("::") + 2);
  if (name == "_local_scalar_dense" || name == "nonzero" || name == "masked_select") return name;
  if (name == "_unique" || name == "_unique2" || name.rfind("unique_", 0) == 0) return "unique";
  const bool put = name == "index_put_" || name == "index_put" || name == "_index_put_impl_" ||
                   name == "_index_put_impl";
  return put && has_boolean_index(schema, stack) ? "index_put_bool_mask" : "";
}

}  // namespace

FallbackScope::FallbackScope() { ++fallback_depth; }
FallbackScope::~FallbackScope() { --fallback_depth; }
bool in_fallback_scope() { return fallback_depth > 0; }

void record_copy(const at::Tensor& src, const at::Tensor& dst, bool non_blocking) {
  if (fallback_depth > 0 || live_count.load() == 0) return;
  const Direction direction = direction_of(src, dst);
  const std::int64_t bytes = static_cast<std::int64_t>(src.numel()) * src.element_size();
  const auto add = [&](TransferCounts& counts) {
    switch (direction) {
      case Direction::kHostToDevice:
        add_copy(counts.host_to_device, bytes, non_blocking);
        if (!non_blocking) ++counts.syncs["copy_to_device"];
        break;
      case Direction::kDeviceToHost:
        add_copy(counts.device_to_host, bytes, non_blocking);
        if (!non_blocking) ++counts.syncs["copy_to_host"];
        break;
      case Direction::kDeviceToDevice:
        add_copy(counts.device_to_device, bytes, non_blocking);
        break;
      case Direction::kNone:
        break;
    }
  };
  if (direction == Direction::kNone) return;
  std::vector<const char*> events{direction_name(direction)};  // where each came from
  if (!non_blocking && direction != Direction::kDeviceToDevice)
    events.push_back(direction == Direction::kHostToDevice ? "copy_to_device" : "copy_to_host");
  to_every_log(add, capture_stack(), events);
}

void record_operator(const c10::FunctionSchema& schema, const torch::jit::Stack& stack) {
  if (fallback_depth > 0 || live_count.load() == 0) return;
  const std::string sync = sync_of(schema, stack);
  if (sync.empty()) return;
  to_every_log([&](TransferCounts& counts) { ++counts.syncs[sync]; }, capture_stack(),
               {sync.c_str()});
}

}  // namespace detail

// No enable(): a log around a CUDA cell's step must not register the sim (sim.h listed()); the
// sim's copies, once it is enabled, find the live logs.
TransferLog::TransferLog() : sink_(std::make_shared<TransferSink>()) {
  const std::lock_guard<std::mutex> registry(detail::registry_mutex);
  detail::live->push_back(sink_);
  ++detail::live_count;
}

TransferLog::~TransferLog() { stop(); }

void TransferLog::stop() {
  const std::lock_guard<std::mutex> registry(detail::registry_mutex);
  for (auto it = detail::live->begin(); it != detail::live->end(); ++it) {
    if (*it != sink_) continue;
    detail::live->erase(it);
    --detail::live_count;
    return;
  }
}

TransferCounts TransferLog::counts() const {
  const std::lock_guard<std::mutex> lock(sink_->mutex);
  return sink_->counts;
}

CopyCount TransferLog::host_to_device() const { return counts().host_to_device; }
CopyCount TransferLog::device_to_host() const { return counts().device_to_host; }
CopyCount TransferLog::device_to_device() const { return counts().device_to_device; }
std::map<std::string, std::int64_t> TransferLog::syncs_by_operator() const {
  return counts().syncs;
}

std::int64_t TransferLog::syncs() const {
  std::int64_t total = 0;
  for (const auto& [op, count] : counts().syncs) total += count;
  return total;
}

std::int64_t TransferLog::syncs(const std::string& op) const {
  TORCH_CHECK(sync_operators().count(op), "tp::sim::TransferLog: '", op,
              "' is not an operator it counts (tp::sim::sync_operators())");
  const auto all = counts().syncs;
  const auto found = all.find(op);
  return found == all.end() ? 0 : found->second;
}

std::vector<CallSite> TransferLog::call_sites() const {
  detail::EventStacks stacks;
  {
    const std::lock_guard<std::mutex> lock(sink_->mutex);
    stacks = sink_->stacks;
  }
  return detail::call_sites_of(stacks);
}

std::string TransferLog::summary() const {
  const TransferCounts all = counts();
  const std::vector<CallSite> sites = call_sites();
  std::ostringstream out;
  const auto direction = [&](const char* name, const CopyCount& count) {
    out << name << " " << count.copies << " copies " << count.bytes << " B (" << count.non_blocking
        << " non_blocking" << detail::sites_text(sites, name, "; ") << "); ";
  };
  direction("h2d", all.host_to_device);
  direction("d2h", all.device_to_host);
  direction("d2d", all.device_to_device);
  out << "syncs:";
  for (const auto& [op, count] : all.syncs) {
    out << " " << count << " x " << op;
    const std::string where = detail::sites_text(sites, op, "");
    if (!where.empty()) out << " (" << where << ")";
  }
  if (all.syncs.empty()) out << " none";
  return out.str();
}

// Sources: the hook is c10/cuda/CUDAFunctions.h (LibTorch 1.13.1 as installed, libtorch-dev):
// memcpy_and_sync and stream_synchronize call warn_or_error_on_sync when
// warning_state().get_sync_debug_mode() is not L_DISABLED. The callers below are aten's CUDA
// kernels as read in pytorch/pytorch (harness/sim/README.md "Transfer budget" lists them and
// which versions were read).
const std::map<std::string, std::string>& sync_operators() {
  static const auto* ops = new std::map<std::string, std::string>{
      {"_local_scalar_dense",
       "item(): _local_scalar_dense_cuda (native/cuda/CUDAScalar.cu), memcpy_and_sync"},
      {"copy_to_host",
       "a device-to-host copy not asked non_blocking: copy_kernel_cuda (native/cuda/Copy.cu), "
       "memcpy_and_sync"},
      {"copy_to_device",
       "a host-to-device copy not asked non_blocking: copy_kernel_cuda (native/cuda/Copy.cu), "
       "memcpy_and_sync"},
      {"nonzero",
       "nonzero_cuda_out_impl (native/cuda/Nonzero.cu): memcpy_and_sync of the count; also "
       "x[mask], whose structured index kernel calls nonzero on the mask"},
      {"masked_select", "masked_select on CUDA indexes with the mask: nonzero (Nonzero.cu)"},
      {"index_put_bool_mask",
       "index_put_ with a boolean/byte mask (and the backward of x[mask]): nonzero (Nonzero.cu)"},
      {"unique",
       "_unique, _unique2, unique_dim, unique_consecutive, unique_dim_consecutive: the output "
       "size is read on the host (native/cuda/UniqueCub.cu, memcpy_and_sync)"},
  };
  return *ops;
}

}  // namespace tp::sim
