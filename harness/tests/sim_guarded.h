// The sim tests of its guarded memory (harness/sim/HOST_READS.md): whether this process runs
// guarded, the skip that says why when it does not, and the process's address space.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

#include <torchplace/sim/sim.h>

namespace tp_test {

inline bool allowed_by_environment() {
  const char* text = std::getenv("TORCHPLACE_SIM_HOST_READS");
  return text != nullptr && std::strcmp(text, "allow") == 0;
}

// The process's address space in bytes (/proc/self/statm's first field).
inline long long address_space() {
  std::ifstream statm("/proc/self/statm");
  long long pages = 0;
  statm >> pages;
  return pages * static_cast<long long>(sysconf(_SC_PAGESIZE));
}

}  // namespace tp_test

// The guard is on unless this process was started with the escape hatch; then sim memory is
// plain host memory, with no reservations to map and no reads to catch, and the test skips.
#define TP_SKIP_UNLESS_GUARDED()                                                        \
  if (tp_test::allowed_by_environment())                                                \
    GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: host reads are not guarded here"; \
  ASSERT_TRUE(tp::sim::host_reads_guarded())
