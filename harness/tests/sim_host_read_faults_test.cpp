// The one child of the sim's host-read signal tests (sim/host_read_fault.cpp), and the tests of
// what its handler reports as a host read: a fault's siginfo (si_code > 0) with a sim address is
// one, also while another thread holds the sim's lock (in the thread that holds it the handler
// does not wait for it); a SIGSEGV sent (si_code <= 0) with a sim address is none; allowed host
// reads install no handler. The child (host_read_child.h) installs, for SIGSEGV and SIGBUS, the
// handler TP_TEST_PREVIOUS names, then the sim's, then does what TP_TEST_ACTION names; what is
// passed on to that earlier handler is sim_host_read_signals_test.cpp's.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <torch/torch.h>
#include <unistd.h>

#include <atomic>
#include <csetjmp>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>

#include <torchplace/sim/sim.h>
#include "host_read_child.h"
#include "sim/sim_internal.h"

namespace sim_host_read_faults_test {  // unity-built with the other harness tests
namespace {

const char* const kReport = "tp::sim: host code read the memory of a tensor on sim:0";
const void* const kNullPage = reinterpret_cast<const void*>(16);  // a read there: SEGV_MAPERR

const void* volatile fault_address = nullptr;  // where the action faults, for previous_siginfo

void say(const char* text) { (void)!::write(STDERR_FILENO, text, std::strlen(text)); }

// The handlers TP_TEST_PREVIOUS installs before the sim's. 7: called with the fault's own
// siginfo (its signal, SEGV_MAPERR or BUS_ADRERR, the address read); 10: a sent one (SI_USER,
// from this process); 8: any other.
void previous_siginfo(int signal, siginfo_t* info, void*) {
  say("previous handler (siginfo)\n");
  const bool ours = info->si_signo == signal;
  const int code = signal == SIGBUS ? int{BUS_ADRERR} : int{SEGV_MAPERR};
  if (ours && info->si_code == code && info->si_addr == fault_address) std::_Exit(7);
  std::_Exit(ours && info->si_code == SI_USER && info->si_pid == ::getpid() ? 10 : 8);
}

void previous_plain(int) {
  say("previous handler (plain)\n");
  std::_Exit(9);
}

sigjmp_buf recovery;
void recovering(int, siginfo_t*, void*) { siglongjmp(recovery, 1); }

// TP_TEST_PREVIOUS, for SIGSEGV and SIGBUS: none (left as it was: the default), default, ignore,
// ignore_siginfo (SIG_IGN with SA_SIGINFO: sa_sigaction then holds SIG_IGN's value, no
// function), plain, siginfo (previous_siginfo), recovering (siglongjmp back to the action).
void install_previous(const std::string& previous) {
  if (previous == "none") return;
  struct sigaction action {};
  action.sa_flags = SA_SIGINFO;
  if (previous == "siginfo" || previous == "recovering") {
    action.sa_sigaction = previous == "siginfo" ? &previous_siginfo : &recovering;
  } else if (previous == "ignore_siginfo") {
    action.sa_handler = SIG_IGN;
  } else {
    ASSERT_TRUE(previous == "plain" || previous == "default" || previous == "ignore") << previous;
    action.sa_flags = 0;
    action.sa_handler = previous == "plain"    ? &previous_plain
                        : previous == "ignore" ? SIG_IGN
                                               : SIG_DFL;
  }
  ASSERT_EQ(sigaction(SIGSEGV, &action, nullptr), 0);
  ASSERT_EQ(sigaction(SIGBUS, &action, nullptr), 0);
}

// Guarded, the sim's handler replaced `before` (SA_SIGINFO, another function); allowed, `before`
// is still there.
void expect_the_sims_handler(int signal, const struct sigaction& before) {
  struct sigaction now {};
  ASSERT_EQ(sigaction(signal, nullptr, &now), 0);
  const auto* was = reinterpret_cast<void*>(before.sa_sigaction);
  if (tp::sim::host_reads_guarded()) {
    ASSERT_NE(now.sa_flags & SA_SIGINFO, 0) << "the sim's handler is not installed";
    ASSERT_NE(reinterpret_cast<void*>(now.sa_sigaction), was)
        << "the sim's handler is not installed";
  } else {
    EXPECT_EQ(now.sa_flags & SA_SIGINFO, before.sa_flags & SA_SIGINFO) << "a handler was installed";
    EXPECT_EQ(reinterpret_cast<void*>(now.sa_sigaction), was) << "a handler was installed";
  }
}

// A sim tensor of 4 floats (the sim enabled: its handler installed, unless allowed).
torch::Tensor sim_tensor() { return torch::arange(4, torch::kFloat).to(tp::sim::device()); }

void fault_at(const void* address) {
  fault_address = address;
  (void)*static_cast<const volatile char*>(address);
}

// A SIGSEGV sent to this thread (rt_tgsigqueueinfo) with `code` and a fault's address in it.
void send_claiming(int code, const void* address) {
  siginfo_t info{};
  info.si_signo = SIGSEGV;
  info.si_code = code;
  info.si_addr = const_cast<void*>(address);
  ASSERT_EQ(syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid), SIGSEGV, &info), 0);
}

// A read of a page of this process's it unmapped: a fault outside sim memory (SEGV_MAPERR).
void fault_unmapped(const torch::Tensor&) {
  void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  ASSERT_EQ(::munmap(page, 4096), 0);
  fault_at(page);
}

// A read of a mapped page past its file's end (TP_TEST_BUS_FILE): SIGBUS, BUS_ADRERR.
void bus_error(const torch::Tensor&) {
  const int file = ::open(std::getenv("TP_TEST_BUS_FILE"), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(file, 0);
  ASSERT_EQ(::ftruncate(file, 4096), 0);
  void* page = ::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, file, 0);
  ASSERT_NE(page, MAP_FAILED);
  ASSERT_EQ(::ftruncate(file, 0), 0);
  fault_at(page);
}

// A fault the previous handler ("recovering") leaves with siglongjmp; the sim works after it.
void recover(const torch::Tensor&) {
  if (sigsetjmp(recovery, 1) == 0) {
    fault_at(kNullPage);
    ADD_FAILURE() << "address 16 was read without a fault";
  }
  EXPECT_TRUE(torch::equal((sim_tensor() + 1).cpu(), torch::arange(4, torch::kFloat) + 1));
}

const void* sim_address = nullptr;
void read_sim_memory(int) { fault_at(sim_address); }  // a SIGUSR1 handler

// Freed reservations of 400 lengths: kept_reservations() holds the sim's lock while it counts
// them, over and over on another thread, while this one reads sim memory (`holder`: that thread
// does, in a signal handler, mostly while it holds the lock itself).
void contend(const torch::Tensor& x, bool holder) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (size_t pages = 1; pages <= 400; ++pages)
    tp::sim::detail::free_device_bytes(tp::sim::detail::allocate_device_bytes(pages * page, 0));
  sim_address = x.data_ptr();
  ASSERT_NE(std::signal(SIGUSR1, &read_sim_memory), SIG_ERR);
  std::atomic<long> counts{0};
  std::thread counter([&counts] {
    for (;;) counts += static_cast<long>(tp::sim::detail::kept_reservations() > 0);
  });
  while (counts.load() < 1000) std::this_thread::yield();
  if (holder) pthread_kill(counter.native_handle(), SIGUSR1);
  if (!holder) fault_at(x.data_ptr());
  counter.join();
}

// TP_TEST_ACTION: what the child does once the sim's handler is installed (x: a sim tensor).
using Action = void (*)(const torch::Tensor& x);
const std::map<std::string, Action>& actions() {
  static const std::map<std::string, Action> table = {
      {"none", [](const torch::Tensor&) {}},
      {"raise", [](const torch::Tensor&) { ASSERT_EQ(std::raise(SIGSEGV), 0); }},  // SI_TKILL
      {"kill", [](const torch::Tensor&) { ASSERT_EQ(::kill(::getpid(), SIGSEGV), 0); }},  // SI_USER
      {"send", [](const torch::Tensor& x) { send_claiming(SI_USER, x.data_ptr()); }},
      {"send_maperr", [](const torch::Tensor& x) { send_claiming(SEGV_MAPERR, x.data_ptr()); }},
      {"fault", &fault_unmapped},
      {"fault_null", [](const torch::Tensor&) { fault_at(kNullPage); }},
      {"bus", &bus_error},
      {"recover", &recover},
      {"contended", [](const torch::Tensor& x) { contend(x, false); }},
      {"holder", [](const torch::Tensor& x) { contend(x, true); }}};
  return table;
}

// Runs only as the child of the sim's host-read signal tests (TP_TEST_PREVIOUS, TP_TEST_ACTION).
TEST(SimHostReadFaults, Child) {
  const char* previous = std::getenv("TP_TEST_PREVIOUS");
  const char* action = std::getenv("TP_TEST_ACTION");
  if (previous == nullptr || action == nullptr)
    GTEST_SKIP() << "the child of the sim's host-read signal tests (TP_TEST_ACTION)";
  const rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none);
  const auto act = actions().find(action);
  ASSERT_NE(act, actions().end()) << "TP_TEST_ACTION=" << action;
  ASSERT_NO_FATAL_FAILURE(install_previous(previous));
  struct sigaction segv {};
  struct sigaction bus {};
  ASSERT_EQ(sigaction(SIGSEGV, nullptr, &segv), 0);
  ASSERT_EQ(sigaction(SIGBUS, nullptr, &bus), 0);
  const torch::Tensor x = sim_tensor();
  ASSERT_NO_FATAL_FAILURE(expect_the_sims_handler(SIGSEGV, segv));
  ASSERT_NO_FATAL_FAILURE(expect_the_sims_handler(SIGBUS, bus));
  alarm(10);  // a fault returned to (ignored) would repeat forever: SIGALRM ends it
  act->second(x);
  alarm(0);
}

bool guarded() { return tp::sim::host_reads_guarded(); }

// si_code <= 0: sent, whatever its si_addr says (kill(2) puts the sender's pid and uid there).
TEST(SimHostReadFaults, ASentSegvWithASimAddressIsNoHostRead) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] = tp_test::host_read_child("none", "send");  // SI_USER
  EXPECT_EQ(status, 128 + SIGSEGV) << output;
  EXPECT_EQ(output.find("tp::sim: host code"), std::string::npos) << output;
}

// A fault's siginfo (si_code > 0) with a sim address is a host read.
TEST(SimHostReadFaults, AFaultsSiginfoWithASimAddressIsAHostRead) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] = tp_test::host_read_child("none", "send_maperr");
  EXPECT_EQ(status, 128 + SIGSEGV) << output;
  EXPECT_NE(output.find(kReport), std::string::npos) << output;
}

TEST(SimHostReadFaults, AHostReadWhileTheSimsLockIsHeldIsReported) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] = tp_test::host_read_child("none", "contended");
  EXPECT_EQ(status, 128 + SIGSEGV) << output;
  EXPECT_NE(output.find(kReport), std::string::npos) << output;
}

// The handler never waits long for the lock: in a thread that holds it (a signal handler there
// read sim memory) it gives up, and the fault kills as any other. Should the signal come while
// the thread is between locks, the read is reported: naming the allocation, 16 bytes.
TEST(SimHostReadFaults, AHostReadWhereTheLockIsHeldByItsOwnThreadDoesNotWait) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] = tp_test::host_read_child("none", "holder");
  EXPECT_EQ(status, 128 + SIGSEGV) << output;
  if (output.find("tp::sim: host code") != std::string::npos)
    EXPECT_NE(output.find("the allocation: sim:0, 16 bytes at"), std::string::npos) << output;
}

// The child checks that the handler there before (plain) is still SIGSEGV's and SIGBUS's.
TEST(SimHostReadFaults, AllowedHostReadsInstallNoHandler) {
  const auto [status, output] =
      tp_test::host_read_child("plain", "none", "TORCHPLACE_SIM_HOST_READS=allow");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("[  PASSED  ] 1 test."), std::string::npos) << output;
}

}  // namespace
}  // namespace sim_host_read_faults_test
