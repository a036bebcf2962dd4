// Host reads of a sim tensor's memory (harness/sim/HOST_READS.md):
// data_ptr<T>()[i], accessor, memcpy from data_ptr() die of SIGSEGV with a message naming the
// device and the fix, as on CUDA they read device memory from the host; the sim's own copies,
// resize_ and set_ keep working; TORCHPLACE_SIM_HOST_READS=allow gives plain memory.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <torchplace/compat.h>
#include <torchplace/sim/sim.h>
#include "child_run.h"
#include "raised_message.h"
#include "sim_guarded.h"

namespace sim_host_reads_test {  // unity-built with the other harness tests
namespace {

using tp_test::run_child;

// What the message says whatever was read (POSIX extended regex, as EXPECT_EXIT takes it).
const std::string kFix = "copy it to the CPU first with \\.cpu\\(\\) / \\.to\\(torch::kCPU\\)";

// Unguarded (the escape hatch), the death tests skip, saying so (TP_SKIP_UNLESS_GUARDED):
// SimHostReads.AllowedByTheEnvironment covers that mode.
using tp_test::address_space;
using tp_test::allowed_by_environment;

// In the death test's child: no core file, then the read (volatile: the compiler must do it).
template <typename Read>
void read_in_child(Read read) {
  const rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none);
  volatile float value = read();
  (void)value;
}

// The process's mappings, and how many bytes of them have no access ("---p"): the sim's
// reservations, among others.
struct Mappings {
  int count = 0;
  long long no_access = 0;
};

Mappings mappings() {
  std::ifstream maps("/proc/self/maps");
  Mappings found;
  for (std::string line; std::getline(maps, line); ++found.count) {
    unsigned long long start = 0, end = 0;
    char permissions[5] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %4s", &start, &end, permissions) == 3 &&
        std::strcmp(permissions, "---p") == 0)
      found.no_access += static_cast<long long>(end - start);
  }
  return found;
}

TEST(SimHostReads, DataPtrReadDiesNamingTheDeviceAndTheFix) {
  TP_SKIP_UNLESS_GUARDED();
  const torch::Tensor x = torch::arange(4, torch::kFloat).to(tp::sim::device());
  EXPECT_EXIT(read_in_child([&] { return x.data_ptr<float>()[0]; }),
              testing::KilledBySignal(SIGSEGV),
              "host code read the memory of a tensor on sim:0 .*" + kFix +
                  ".*the allocation: sim:0, 16 bytes at 0x[0-9a-f]+; offset 0 .*faulting code: 0x");
}

TEST(SimHostReads, AReadThroughAViewNamesItsOffset) {
  TP_SKIP_UNLESS_GUARDED();
  const torch::Tensor x = torch::arange(8, torch::kFloat).to(tp::sim::device());
  const torch::Tensor view = x.narrow(0, 3, 2);  // data_ptr() 12 bytes into the allocation
  EXPECT_TRUE(torch::equal(view.cpu(), torch::tensor({3.0f, 4.0f}))) << "the sim's own copy";
  EXPECT_EXIT(read_in_child([&] { return view.data_ptr<float>()[1]; }),
              testing::KilledBySignal(SIGSEGV), "tensor on sim:0 .*32 bytes at .*; offset 16 ");
}

TEST(SimHostReads, AnAccessorOnTheSecondDeviceNamesIt) {
  TP_SKIP_UNLESS_GUARDED();
  const torch::Tensor x = torch::ones({2, 3}).to(tp::sim::device(1));
  EXPECT_EXIT(read_in_child([&] { return x.accessor<float, 2>()[1][2]; }),
              testing::KilledBySignal(SIGSEGV), "tensor on sim:1 .*sim:1, 24 bytes .*offset 20 ");
}

TEST(SimHostReads, MemcpyAndWritesDieToo) {
  TP_SKIP_UNLESS_GUARDED();
  const torch::Tensor x = torch::ones({64}).to(tp::sim::device());
  std::vector<float> host(64);
  const auto copy = [&] {
    std::memcpy(host.data(), x.data_ptr(), 64 * sizeof(float));
    return host[0];
  };
  EXPECT_EXIT(read_in_child(copy), testing::KilledBySignal(SIGSEGV), "tensor on sim:0 .*" + kFix);
#if defined(__x86_64__)  // the fault says whether it wrote (README)
  const std::string wrote =
      "host code wrote to the memory of a tensor on sim:0 .*\\.to\\(device\\)";
#else
  const std::string wrote = "host code read the memory of a tensor on sim:0";
#endif
  EXPECT_EXIT(read_in_child([&] { return x.data_ptr<float>()[5] = 2.0f; }),
              testing::KilledBySignal(SIGSEGV), wrote);
}

// What the sim itself does with the bytes goes through their host view: copies both ways and
// within the device, a view at an offset, resize_ and set_ growing a storage (LibTorch's CPU
// resize would memcpy through the data pointer), the fallback, item(), a boolean mask.
TEST(SimHostReads, TheSimsOwnPathsKeepWorking) {
  TP_SKIP_UNLESS_GUARDED();
  const torch::Device device = tp::sim::device();
  const torch::Tensor host = torch::arange(6, torch::kFloat);
  torch::Tensor x = host.to(device);
  EXPECT_TRUE(torch::equal(x.cpu(), host));
  EXPECT_TRUE(torch::equal(x.narrow(0, 2, 3).clone().cpu(), host.narrow(0, 2, 3)));
  EXPECT_TRUE(torch::equal((x * 2).cpu(), host * 2));
  EXPECT_EQ(x.sum().item<float>(), 15.0f);
  EXPECT_TRUE(torch::equal(x.index({x > 3}).cpu(), torch::tensor({4.0f, 5.0f})));
  x.resize_({1024});  // 24 bytes to 4 KiB: a new allocation, the old bytes kept
  EXPECT_TRUE(torch::equal(x.narrow(0, 0, 6).cpu(), host)) << "resize_ lost the bytes";
  torch::Tensor small = host.to(device);
  torch::Tensor over = torch::empty({0}, torch::TensorOptions().device(device));
  over.set_(small.storage(), 0, {2048}, {1});  // grows small's storage to 8 KiB
  EXPECT_EQ(small.storage().nbytes(), 2048 * sizeof(float));
  EXPECT_TRUE(torch::equal(over.narrow(0, 0, 6).cpu(), host)) << "set_ lost the bytes";
  EXPECT_EQ(torch::empty({0}, torch::TensorOptions().device(device)).data_ptr(), nullptr);
}

// 2.3+ allocators copy a copy-on-write storage's bytes themselves (Allocator::copy_data, via
// clone()) when a lazy clone is first written: the sim's copies through the host view.
TEST(SimHostReads, ACopyOnWriteCloneCopiesThroughTheHostView) {
#if TP_TORCH_AT_LEAST(2, 6)
  TP_SKIP_UNLESS_GUARDED();
  const torch::Tensor x = torch::arange(6, torch::kFloat).to(tp::sim::device());
  torch::Tensor lazy = at::_lazy_clone(x);
  lazy.add_(1);  // materialises: Allocator::clone, then the add on the copy
  EXPECT_TRUE(torch::equal(lazy.cpu(), torch::arange(6, torch::kFloat) + 1));
  EXPECT_TRUE(torch::equal(x.cpu(), torch::arange(6, torch::kFloat))) << "the original changed";
#else
  GTEST_SKIP() << "copy-on-write storage (_lazy_clone, Allocator::copy_data) is 2.x; this is "
               << TORCH_VERSION;
#endif
}

// Each allocation is one mapping at most (the kernel merges neighbours), so vm.max_map_count
// (65530 by default) is not the limit on live tensors it would be at two. Freed reservations are
// kept for reuse, up to 1024 (guarded_memory.cpp, kKept), and the others unmapped.
TEST(SimHostReads, MappingsStayBoundedAndFreedOnesAreReused) {
  TP_SKIP_UNLESS_GUARDED();
  constexpr int kAllocations = 2000;
  const long long page = sysconf(_SC_PAGESIZE);
  const Mappings before = mappings();
  std::vector<torch::Tensor> live;
  const auto allocate = [&] {  // 64 to 88 bytes each: a page of address space
    for (int index = 0; index < kAllocations; ++index)
      live.push_back(
          torch::empty({16 + index % 7}, torch::TensorOptions().device(tp::sim::device())));
  };
  allocate();
  const Mappings held = mappings();
  EXPECT_LE(held.count - before.count, kAllocations) << "more mappings than allocations";
  live.clear();
  const Mappings freed = mappings();
  EXPECT_LE(freed.no_access - before.no_access, 1024 * page) << "more than 1024 kept mapped";
  allocate();
  EXPECT_LE(mappings().no_access, held.no_access) << "the kept reservations were not reused";
  std::printf("mappings: %d before, %d with %d live sim allocations, %d after they were freed\n",
              before.count, held.count, kAllocations, freed.count);
}

// A reservation that fails (address space exhausted, here by RLIMIT_AS: a host allocation of the
// size fits, its reservation does not) raises naming the sizes and the escape hatch, and frees
// the host bytes it had taken (guarded_memory.cpp, allocate_device_bytes).
TEST(SimHostReads, AFailedReservationRaisesAndFreesItsHostBytes) {
  TP_SKIP_UNLESS_GUARDED();
  constexpr long long kBytes = (1LL << 30) + 12345;  // no kept reservation has its length
  rlimit previous{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &previous), 0);
  const long long before = address_space();
  const rlimit tight{static_cast<rlim_t>(before + kBytes + kBytes / 2), previous.rlim_max};
  if (previous.rlim_cur != RLIM_INFINITY && previous.rlim_cur < tight.rlim_cur)
    GTEST_SKIP() << "RLIMIT_AS is already below " << tight.rlim_cur << " bytes";
  const auto options = torch::TensorOptions().dtype(torch::kByte).device(tp::sim::device());
  ASSERT_EQ(setrlimit(RLIMIT_AS, &tight), 0);
  const std::string message = tp_test::message_of([&] { torch::empty({kBytes}, options); });
  const long long after = address_space();
  ASSERT_EQ(setrlimit(RLIMIT_AS, &previous), 0);
  EXPECT_NE(message.find("tp::sim: cannot reserve"), std::string::npos) << message;
  EXPECT_NE(message.find("for " + std::to_string(kBytes) + " bytes on sim:0"), std::string::npos)
      << message;
  EXPECT_NE(message.find("TORCHPLACE_SIM_HOST_READS=allow"), std::string::npos) << message;
  EXPECT_LT(after - before, kBytes / 2) << "the host bytes of the failed allocation were kept";
}

// Runs only as AllowedByTheEnvironment's child, which sets TORCHPLACE_SIM_HOST_READS=allow.
TEST(SimHostReads, ChildReadsWhenAllowed) {
  tp::sim::enable();  // refuses a value other than 'allow' (AnotherValueIsRefusedByName)
  if (!allowed_by_environment())
    GTEST_SKIP() << "the child of SimHostReads.AllowedByTheEnvironment (needs "
                    "TORCHPLACE_SIM_HOST_READS=allow)";
  EXPECT_FALSE(tp::sim::host_reads_guarded());
  const torch::Tensor x = torch::arange(6, torch::kFloat).reshape({2, 3}).to(tp::sim::device());
  EXPECT_EQ(x.data_ptr<float>()[4], 4.0f);
  EXPECT_EQ((x.accessor<float, 2>()[1][2]), 5.0f);
}

TEST(SimHostReads, AllowedByTheEnvironment) {
  const auto [status, output] =
      run_child("TORCHPLACE_SIM_HOST_READS=allow", "SimHostReads.ChildReadsWhenAllowed");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("[       OK ] SimHostReads.ChildReadsWhenAllowed"), std::string::npos)
      << output;
}

TEST(SimHostReads, AnotherValueIsRefusedByName) {
  const auto [status, output] =
      run_child("TORCHPLACE_SIM_HOST_READS=yes", "SimHostReads.ChildReadsWhenAllowed");
  EXPECT_NE(status, 0) << output;
  EXPECT_NE(output.find("TORCHPLACE_SIM_HOST_READS must be unset or 'allow'; got 'yes'"),
            std::string::npos)
      << output;
}

}  // namespace
}  // namespace sim_host_reads_test
