// The signals the sim's fault handler passes on (sim/host_read_fault.cpp): a fault outside sim
// memory dies of its own signal, as it would without the sim, or goes to the handler the process
// had before; a SIGSEGV the process ignored before the sim was enabled stays ignored when it is
// sent (not a fault), and a fault kills it all the same.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <torch/torch.h>
#include <unistd.h>

#include <sys/wait.h>

#include <csignal>
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>

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

// The handlers a child installs before the sim's: each says so, then exits with its own status.
void previous_with_siginfo(int, siginfo_t* info, void*) {
  const char text[] = "previous handler (siginfo)\n";
  (void)!::write(STDERR_FILENO, text, sizeof text - 1);
  std::_Exit(info->si_code > 0 ? 7 : 8);  // 7: a fault
}

void previous_plain(int) {
  const char text[] = "previous handler (plain)\n";
  (void)!::write(STDERR_FILENO, text, sizeof text - 1);
  std::_Exit(9);
}

const char* const kPrevious = "SimHostReadSignals.ChildWithAPreviousHandler";

// Runs only as the child of the tests below (TP_TEST_PREVIOUS=siginfo|plain|ignore|default):
// installs that handler, then the sim's, then reads a page of its own it unmapped (a fault
// outside sim memory) or, with TP_TEST_SEND, sends itself SIGSEGV with kill(2) (SI_USER).
TEST(SimHostReadSignals, ChildWithAPreviousHandler) {
  const char* previous = std::getenv("TP_TEST_PREVIOUS");
  if (previous == nullptr) GTEST_SKIP() << "the child of the tests of a previous handler";
  const rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none);
  const std::string mode = previous;
  struct sigaction action {};
  if (mode == "siginfo") {
    action.sa_sigaction = &previous_with_siginfo;
    action.sa_flags = SA_SIGINFO;
  } else {
    action.sa_handler = mode == "plain" ? &previous_plain : mode == "ignore" ? SIG_IGN : SIG_DFL;
  }
  ASSERT_EQ(sigaction(SIGSEGV, &action, nullptr), 0);
  ASSERT_TRUE(sim_handler_installed());
  if (std::getenv("TP_TEST_SEND") != nullptr) {
    ASSERT_EQ(::kill(::getpid(), SIGSEGV), 0);
    return;
  }
  void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  ASSERT_EQ(::munmap(page, 4096), 0);  // unmapped: si_code SEGV_MAPERR (1), a fault all the same
  volatile char byte = *static_cast<volatile char*>(page);
  (void)byte;
}

// The child's exit status as its shell gives it (128 + the signal it died of), or -1.
int exit_status(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

TEST(SimHostReadSignals, AFaultOutsideSimMemoryGoesToThePreviousHandler) {
  if (!sim_handler_installed()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  auto [status, output] = tp_test::run_child("TP_TEST_PREVIOUS=siginfo", kPrevious);
  EXPECT_EQ(exit_status(status), 7) << "a fault, with its siginfo: " << output;
  EXPECT_NE(output.find("previous handler (siginfo)"), std::string::npos) << output;
  std::tie(status, output) = tp_test::run_child("TP_TEST_PREVIOUS=plain", kPrevious);
  EXPECT_EQ(exit_status(status), 9) << output;
  EXPECT_NE(output.find("previous handler (plain)"), std::string::npos) << output;
}

TEST(SimHostReadSignals, IgnoredOnlyWhenSentAndDefaultKillsEither) {
  if (!sim_handler_installed()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const std::pair<const char*, int> cases[] = {
      {"TP_TEST_PREVIOUS=ignore", 128 + SIGSEGV},     // a fault is fatal even when ignored
      {"TP_TEST_PREVIOUS=ignore TP_TEST_SEND=1", 0},  // kill(2): si_code 0, ignored
      {"TP_TEST_PREVIOUS=default TP_TEST_SEND=1", 128 + SIGSEGV},
      {"TP_TEST_PREVIOUS=default", 128 + SIGSEGV}};
  for (const auto& [environment, expected] : cases) {
    const auto [status, output] = tp_test::run_child(environment, kPrevious);
    EXPECT_EQ(exit_status(status), expected) << environment << ": " << output;
  }
}

}  // namespace
}  // namespace sim_host_read_signals_test
