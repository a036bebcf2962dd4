// The signals the sim's fault handler passes on (sim/host_read_fault.cpp): a fault outside sim
// memory dies of its own signal, as it would without the sim, and a SIGSEGV the process ignored
// before the sim was enabled stays ignored when it is sent (not a fault).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <torch/torch.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <string>

#include <torchplace/sim/sim.h>
#include <torchplace/temp_dir.h>
#include "child_run.h"

namespace sim_host_read_signals_test {  // unity-built with the other harness tests
namespace {

// The sim enabled with its handler installed (a sim allocation configures it), or why not.
bool sim_handler_installed() {
  tp::sim::enable();
  (void)torch::zeros({4}, torch::TensorOptions().device(tp::sim::device()));
  return tp::sim::host_reads_guarded();
}

// In the death test's child: no core file, then a read of a mapped page past its file's end.
void bus_error_in_child(const std::string& path) {
  const rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none);
  const int file = ::open(path.c_str(), O_RDWR | O_CREAT, 0600);
  if (file < 0 || ::ftruncate(file, 4096) != 0) std::_Exit(2);
  void* page = ::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, file, 0);
  if (page == MAP_FAILED || ::ftruncate(file, 0) != 0) std::_Exit(3);
  volatile char byte = static_cast<const char*>(page)[0];  // SIGBUS: the page has no file
  (void)byte;
}

TEST(SimHostReadSignals, ABusErrorOutsideSimMemoryStaysABusError) {
  if (!sim_handler_installed()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const tp::TempDir dir("sigbus");
  EXPECT_EXIT(bus_error_in_child(dir.file("shrunk")), testing::KilledBySignal(SIGBUS), "");
}

// Runs only as ASentSegvIgnoredBeforeTheSimStaysIgnored's child (TP_TEST_IGNORE_SEGV=1).
TEST(SimHostReadSignals, ChildIgnoresASentSegv) {
  if (std::getenv("TP_TEST_IGNORE_SEGV") == nullptr)
    GTEST_SKIP() << "the child of SimHostReadSignals.ASentSegvIgnoredBeforeTheSimStaysIgnored";
  ASSERT_NE(std::signal(SIGSEGV, SIG_IGN), SIG_ERR);
  ASSERT_TRUE(sim_handler_installed());
  struct sigaction now {};
  ASSERT_EQ(sigaction(SIGSEGV, nullptr, &now), 0);
  ASSERT_NE(now.sa_flags & SA_SIGINFO, 0) << "the sim's handler is not installed";
  ASSERT_EQ(std::raise(SIGSEGV), 0);  // si_code <= 0: sent, not a fault
}

TEST(SimHostReadSignals, ASentSegvIgnoredBeforeTheSimStaysIgnored) {
  if (!sim_handler_installed()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] =
      tp_test::run_child("TP_TEST_IGNORE_SEGV=1", "SimHostReadSignals.ChildIgnoresASentSegv");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("[  PASSED  ] 1 test."), std::string::npos) << output;
}

}  // namespace
}  // namespace sim_host_read_signals_test
