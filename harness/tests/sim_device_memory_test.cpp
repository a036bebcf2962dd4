// The sim's device memory (harness/sim/guarded_memory.cpp), below the tensors: which addresses
// map to a reservation's host bytes, what freeing gives back, and the smallest copies. The
// death tests of host reads are sim_host_reads_test.cpp's.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include <torchplace/sim/sim.h>
#include "sim/sim_internal.h"
#include "sim_guarded.h"

namespace sim_device_memory_test {  // unity-built with the other harness tests
namespace {

using tp::sim::detail::allocate_device_bytes;
using tp::sim::detail::DeviceRegion;
using tp::sim::detail::free_device_bytes;
using tp::sim::detail::host_address;
using tp::sim::detail::kept_reservations;
using tp::sim::detail::region_for_fault;
using tp_test::address_space;

char* at(void* base, size_t offset) { return static_cast<char*>(base) + offset; }

size_t page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// Allocations of one page each, live until the end of the test. Every other one of twice as many
// is freed: the kernel places a reservation next to the one before, so this leaves allocations
// whose end no other allocation starts at.
struct Pages {
  std::vector<void*> held;
  explicit Pages(int count) {
    tp::sim::enable();
    for (int index = 0; index < 2 * count; ++index) {
      void* data = allocate_device_bytes(page(), 0);
      if (index % 2 == 0)
        free_device_bytes(data);
      else
        held.push_back(data);
    }
  }
  ~Pages() {
    for (void* data : held) free_device_bytes(data);
  }
};

// The end of an allocation is not inside it: the fault handler finds no region there unless the
// next allocation starts at that address (the kernel may place one there).
TEST(SimDeviceMemory, AnAllocationsEndIsNotInsideIt) {
  TP_SKIP_UNLESS_GUARDED();
  const Pages pages(8);
  for (void* data : pages.held) {
    DeviceRegion region{};
    if (region_for_fault(reinterpret_cast<uintptr_t>(at(data, page())), &region))
      EXPECT_EQ(region.start, reinterpret_cast<uintptr_t>(at(data, page())))
          << "the end of an allocation was reported inside it";
    ASSERT_TRUE(region_for_fault(reinterpret_cast<uintptr_t>(at(data, page() - 1)), &region));
    EXPECT_EQ(region.start, reinterpret_cast<uintptr_t>(data));
    EXPECT_EQ(region.bytes, page());
  }
}

// An address in no allocation (this test's stack) is no region, and leaves *region as it was.
TEST(SimDeviceMemory, AnAddressOutsideEveryAllocationLeavesTheRegionAlone) {
  TP_SKIP_UNLESS_GUARDED();
  const Pages pages(2);
  int on_the_stack = 0;
  DeviceRegion region{1, 2, 3};
  EXPECT_FALSE(region_for_fault(reinterpret_cast<uintptr_t>(&on_the_stack), &region));
  EXPECT_EQ(region.start, 1u);
  EXPECT_EQ(region.bytes, 2u);
  EXPECT_EQ(region.index, 3);
}

// host_address maps an allocation's interior and its end (a pointer one past its last byte, as
// loops and views compute) to the host bytes, and leaves an address past the end alone.
TEST(SimDeviceMemory, HostAddressMapsTheEndAndNothingPastIt) {
  TP_SKIP_UNLESS_GUARDED();
  const Pages pages(8);
  int unshared_ends = 0;
  for (void* data : pages.held) {
    char* const host = static_cast<char*>(host_address(data));
    ASSERT_NE(host, data) << "a sim address was not mapped";
    EXPECT_EQ(host_address(at(data, 17)), host + 17);
    DeviceRegion next{};
    if (region_for_fault(reinterpret_cast<uintptr_t>(at(data, page())), &next)) continue;
    ++unshared_ends;  // no allocation starts at this one's end
    EXPECT_EQ(host_address(at(data, page())), host + page()) << "the end was not mapped";
    if (region_for_fault(reinterpret_cast<uintptr_t>(at(data, page() + 1)), &next)) continue;
    EXPECT_EQ(host_address(at(data, page() + 1)), at(data, page() + 1))
        << "an address past the end was mapped into the allocation";
  }
  EXPECT_GT(unshared_ends, 0) << "every allocation's end began another: nothing was checked";
}

// One-page reservations, each made just after mapping a page of plain host memory, until one
// ends where that page begins (the kernel places a mapping next to the one before, as above).
// Both are released at the end.
struct PageAfterAReservation {
  std::vector<void*> reservations, pages;
  void* page_at_end = nullptr;
  PageAfterAReservation() {
    tp::sim::enable();
    const size_t kept = kept_reservations(page());  // taken first, so that the next are new
    for (size_t index = 0; index < kept; ++index)
      reservations.push_back(allocate_device_bytes(page(), 0));
    for (int attempt = 0; attempt < 64 && page_at_end == nullptr; ++attempt) {
      void* ours =
          mmap(nullptr, page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (ours == MAP_FAILED) break;
      pages.push_back(ours);
      reservations.push_back(allocate_device_bytes(page(), 0));
      if (at(reservations.back(), page()) == ours) page_at_end = ours;
    }
  }
  ~PageAfterAReservation() {
    for (void* data : reservations) free_device_bytes(data);
    for (void* data : pages) munmap(data, page());
  }
};

// A CPU tensor whose memory begins at a reservation's end, the address host_address maps to that
// reservation's host bytes (above): copied to the sim, it gives its own values. The sim's copy
// maps the device side only (kernels.cpp, host_alias).
TEST(SimDeviceMemory, ACpuTensorWhereAReservationEndsCopiesItsOwnValues) {
  TP_SKIP_UNLESS_GUARDED();
  const PageAfterAReservation memory;
  ASSERT_NE(memory.page_at_end, nullptr) << "no reservation ended where a mapped page began";
  ASSERT_NE(host_address(memory.page_at_end), memory.page_at_end);
  const int64_t count = static_cast<int64_t>(page() / sizeof(float));
  const torch::Tensor values = torch::arange(count, torch::kFloat);
  const torch::Tensor cpu = torch::from_blob(memory.page_at_end, {count}, torch::kFloat);
  cpu.copy_(values);
  EXPECT_TRUE(torch::equal(cpu.to(tp::sim::device()).cpu(), values));
}

TEST(SimDeviceMemory, FreeingAnUnknownAddressRaises) {
  TP_SKIP_UNLESS_GUARDED();
  tp::sim::enable();
  char local[64] = {};
  EXPECT_THROW(free_device_bytes(local), c10::Error);
}

// As free(): freeing null does nothing. A 0-byte allocation is null, and LibTorch's
// raw_deallocate hands the deleter whatever raw_allocate gave.
TEST(SimDeviceMemory, FreeingNullDoesNothing) {
  TP_SKIP_UNLESS_GUARDED();
  tp::sim::enable();
  void* none = allocate_device_bytes(0, 0);
  EXPECT_EQ(none, nullptr);
  EXPECT_NO_THROW(free_device_bytes(none));
}

// Freeing gives the host bytes back. The reservation is kept for reuse, so the second round of
// the same length takes no more address space than the first left.
TEST(SimDeviceMemory, FreeingGivesTheHostBytesBack) {
  TP_SKIP_UNLESS_GUARDED();
  tp::sim::enable();
  constexpr size_t kBytes = (size_t{256} << 20) + 4321;  // no other test's length
  free_device_bytes(allocate_device_bytes(kBytes, 0));
  const long long after_first = address_space();
  free_device_bytes(allocate_device_bytes(kBytes, 0));
  EXPECT_LT(address_space() - after_first, static_cast<long long>(kBytes / 2))
      << "a freed allocation kept its host bytes";
}

// Freed reservations are kept for reuse up to 1024 in all (guarded_memory.cpp kKept), the others
// unmapped; an allocation takes a kept one of its length first. Two rounds of 1100 one-page
// allocations: the second takes back every one-page reservation kept, and frees them again.
TEST(SimDeviceMemory, AtMost1024FreedReservationsAreKeptAndTakenBack) {
  TP_SKIP_UNLESS_GUARDED();
  tp::sim::enable();
  for (int round = 0; round < 2; ++round) {
    std::vector<void*> held;
    for (int index = 0; index < 1100; ++index) held.push_back(allocate_device_bytes(page(), 0));
    EXPECT_EQ(kept_reservations(page()), 0u) << "round " << round << ": one was not taken";
    for (void* data : held) free_device_bytes(data);
    EXPECT_EQ(kept_reservations(), 1024u) << "round " << round;
  }
}

// A one-byte storage keeps its byte when it grows (kernels.cpp grow_storage copies through
// copy_device_bytes).
TEST(SimDeviceMemory, AOneByteStorageKeepsItsByteWhenItGrows) {
  tp::sim::enable();
  torch::Tensor x = torch::full({1}, 7, torch::kByte).to(tp::sim::device());
  x.resize_({5000});
  EXPECT_EQ(x.narrow(0, 0, 1).cpu().item<uint8_t>(), 7);
}

}  // namespace
}  // namespace sim_device_memory_test
