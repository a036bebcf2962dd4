// Guarded device memory (README "Host reads of device memory"). A sim tensor's bytes live in host
// memory from LibTorch's CPU allocator, but its data pointer is another address: a reservation of
// the same length with no access at all (PROT_NONE). Host code that dereferences a sim tensor's
// data pointer (data_ptr<T>()[i], accessor, memcpy) faults, as a device pointer read on the host
// misbehaves on CUDA, and host_read_fault.cpp says so. The sim's own kernels reach the bytes
// through host_address(), which maps a device address (an interior one too) to its host bytes.
// A freed reservation is kept for reuse (up to 1024). TORCHPLACE_SIM_HOST_READS=allow, read once
// at enable(), hands out the host bytes themselves.
#include <c10/core/impl/alloc_cpu.h>
#include <c10/util/Exception.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "sim_internal.h"

namespace tp::sim::detail {
namespace {

struct Allocation {
  char* host;       // the bytes, from c10::alloc_cpu
  size_t bytes;     // as asked
  size_t reserved;  // the reservation's length: bytes rounded up to whole pages
  c10::DeviceIndex index;
};

std::atomic<bool> guarded{false};
std::mutex regions_mutex;
// By reservation address. Never destroyed: tensors and the fault handler outlive static objects.
auto* const regions = new std::map<uintptr_t, Allocation>();

// Freed reservations by length, handed out again: an mmap and munmap pair costs about 5 us, ten
// times the rest of an allocation (README), while a kept reservation costs address space only.
// At most kKept; more are unmapped. Guarded by regions_mutex.
constexpr size_t kKept = 1024;
auto* const kept = new std::unordered_map<size_t, std::vector<void*>>();
size_t kept_count = 0;

size_t page_size() {
  static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

// The region holding `address` (its end too, when `end_counts`), or regions->end(). The caller
// holds the mutex.
std::map<uintptr_t, Allocation>::const_iterator find(uintptr_t address, bool end_counts) {
  auto it = regions->upper_bound(address);
  if (it == regions->begin()) return regions->end();
  --it;
  const uintptr_t end = it->first + it->second.reserved;
  return address < end || (end_counts && address == end) ? it : regions->end();
}

bool allowed_by_environment() {
  const char* text = std::getenv("TORCHPLACE_SIM_HOST_READS");
  if (text == nullptr || *text == '\0') return false;
  TORCH_CHECK(std::strcmp(text, "allow") == 0,
              "TORCHPLACE_SIM_HOST_READS must be unset or 'allow'; got '", text, "'");
  return true;
}

// An address range with no access and no memory behind it, or a c10::Error saying why not.
void* reserve(size_t length, size_t bytes, c10::DeviceIndex index) {
  void* address =
      mmap(nullptr, length, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  TORCH_CHECK(address != MAP_FAILED, "tp::sim: cannot reserve ", length,
              " bytes of address space for ", bytes, " bytes on sim:", int(index), " (",
              std::strerror(errno),
              "; each sim allocation is one mapping, vm.max_map_count "
              "caps them; TORCHPLACE_SIM_HOST_READS=allow uses plain host memory)");
  return address;
}

void* take_kept(size_t length) {
  const std::lock_guard<std::mutex> lock(regions_mutex);
  const auto found = kept->find(length);
  if (found == kept->end() || found->second.empty()) return nullptr;
  void* address = found->second.back();
  found->second.pop_back();
  --kept_count;
  return address;
}

}  // namespace

void configure_device_memory() {
  const bool guard = !allowed_by_environment();
  if (guard) install_host_read_handler();
  guarded.store(guard);
}

bool host_reads_guarded() { return guarded.load(std::memory_order_relaxed); }

void* allocate_device_bytes(size_t bytes, c10::DeviceIndex index) {
  if (!host_reads_guarded() || bytes == 0) return c10::alloc_cpu(bytes);  // 0 bytes: null
  const size_t length = (bytes + page_size() - 1) / page_size() * page_size();
  void* host = c10::alloc_cpu(bytes);
  void* device = take_kept(length);
  try {
    if (device == nullptr) device = reserve(length, bytes, index);
  } catch (...) {
    c10::free_cpu(host);
    throw;
  }
  const std::lock_guard<std::mutex> lock(regions_mutex);
  regions->emplace(reinterpret_cast<uintptr_t>(device),
                   Allocation{static_cast<char*>(host), bytes, length, index});
  return device;
}

void free_device_bytes(void* data) {
  if (data == nullptr) return;
  if (!host_reads_guarded()) return c10::free_cpu(data);
  Allocation region{};
  bool keep = false;
  {
    const std::lock_guard<std::mutex> lock(regions_mutex);
    const auto found = regions->find(reinterpret_cast<uintptr_t>(data));
    TORCH_INTERNAL_ASSERT(found != regions->end(), "tp::sim: freeing an unknown address");
    region = found->second;
    regions->erase(found);
    keep = kept_count < kKept;
    if (keep) {
      (*kept)[region.reserved].push_back(data);
      ++kept_count;
    }
  }
  if (!keep) munmap(data, region.reserved);  // after the erase: the address may be reused
  c10::free_cpu(region.host);
}

size_t kept_reservations(size_t length) {
  const std::lock_guard<std::mutex> lock(regions_mutex);
  size_t count = 0;
  for (const auto& [each, addresses] : *kept)
    count += length == 0 || each == length ? addresses.size() : 0;
  return count;
}

void* host_address(const void* device_address) {
  auto* const unchanged = const_cast<void*>(device_address);
  if (!host_reads_guarded() || device_address == nullptr) return unchanged;
  const auto address = reinterpret_cast<uintptr_t>(device_address);
  const std::lock_guard<std::mutex> lock(regions_mutex);
  const auto found = find(address, true);
  return found == regions->end() ? unchanged : found->second.host + (address - found->first);
}

void copy_device_bytes(void* destination, const void* source, size_t count) {
  if (count > 0) std::memcpy(host_address(destination), host_address(source), count);
}

// In a signal handler: never waits for the mutex for long (a thread that holds it is inside
// one of the functions above, none of which faults).
bool region_for_fault(uintptr_t address, DeviceRegion* region) {
  for (int attempt = 0; !regions_mutex.try_lock(); ++attempt) {
    if (attempt == 100000) return false;
    sched_yield();
  }
  const auto found = find(address, false);
  const bool inside = found != regions->end();
  if (inside) *region = {found->first, found->second.bytes, found->second.index};
  regions_mutex.unlock();
  return inside;
}

}  // namespace tp::sim::detail
