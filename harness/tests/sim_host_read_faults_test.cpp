// Which faults the sim's handler (sim/host_read_fault.cpp) reports as a host read, and what it
// leaves as it was: a SIGSEGV sent (si_code <= 0) with a sim address in its siginfo is no host
// read, a fault's (si_code > 0) is; a real fault the process ignored still kills it; a fault
// outside sim memory reaches the handler there before with its own siginfo, a bus error the
// SIGBUS one; a handler that recovers from a fault (siglongjmp) leaves the sim working; a host
// read while another thread holds the sim's lock is reported, and one in the thread that holds
// it does not wait for it; allowed host reads install no handler. Each runs in a child: this
// binary again, with TP_TEST_FAULT naming the case.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <atomic>
#include <csetjmp>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>

#include <torchplace/sim/sim.h>
#include <torchplace/temp_dir.h>
#include "child_run.h"
#include "sim/sim_internal.h"

namespace sim_host_read_faults_test {  // unity-built with the other harness tests
namespace {

const char* const kChild = "SimHostReadFaults.Child";
const char* const kReport = "tp::sim: host code read the memory of a tensor on sim:0";

sigjmp_buf recovery;

void recover(int, siginfo_t*, void*) { siglongjmp(recovery, 1); }

void bus_handler(int, siginfo_t* info, void*) { std::_Exit(info->si_code > 0 ? 7 : 8); }

void plain_handler(int) { std::_Exit(9); }

// 7: called with the fault's own siginfo (a read of address 16: SEGV_MAPERR there).
void siginfo_handler(int signal, siginfo_t* info, void*) {
  const bool own = signal == SIGSEGV && info->si_signo == SIGSEGV && info->si_code == SEGV_MAPERR &&
                   info->si_addr == reinterpret_cast<void*>(16);
  std::_Exit(own ? 7 : 8);
}

char read_at(const void* address) { return *static_cast<const volatile char*>(address); }

const void* sim_address = nullptr;  // read by read_sim_memory, a SIGUSR1 handler

void read_sim_memory(int) { (void)read_at(sim_address); }

void install(int signal, void (*with_info)(int, siginfo_t*, void*)) {
  struct sigaction action {};
  action.sa_sigaction = with_info;
  action.sa_flags = SA_SIGINFO;
  ASSERT_EQ(sigaction(signal, &action, nullptr), 0);
}

// A sim tensor of 4 floats, after the sim's handler was installed (the sim is enabled).
torch::Tensor sim_tensor() { return torch::arange(4, torch::kFloat).to(tp::sim::device()); }

// Runs only as the tests' child (TP_TEST_FAULT=case).
TEST(SimHostReadFaults, Child) {
  const char* which = std::getenv("TP_TEST_FAULT");
  if (which == nullptr) GTEST_SKIP() << "the child of SimHostReadFaults' tests (TP_TEST_FAULT)";
  const rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none);
  const std::string mode = which;
  if (mode == "ignored") ASSERT_NE(std::signal(SIGSEGV, SIG_IGN), SIG_ERR);
  if (mode == "ignored_siginfo") {  // sa_sigaction then holds SIG_IGN's value, no function
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ignore.sa_flags = SA_SIGINFO;
    ASSERT_EQ(sigaction(SIGSEGV, &ignore, nullptr), 0);
  }
  if (mode == "bus") install(SIGBUS, &bus_handler);
  if (mode == "recover") install(SIGSEGV, &recover);
  if (mode == "siginfo") install(SIGSEGV, &siginfo_handler);
  if (mode == "allowed") ASSERT_NE(std::signal(SIGSEGV, &plain_handler), SIG_ERR);
  const torch::Tensor x = sim_tensor();
  alarm(10);  // a fault returned to (ignored) would repeat forever: SIGALRM ends it
  if (mode == "sent" || mode == "maperr" || mode == "ignored_siginfo") {  // SI_USER, or a fault's
    siginfo_t info{};
    info.si_signo = SIGSEGV;
    info.si_code = mode == "maperr" ? SEGV_MAPERR : SI_USER;
    info.si_addr = x.data_ptr();
    syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid), SIGSEGV, &info);
  } else if (mode == "ignored" || mode == "siginfo") {
    (void)read_at(reinterpret_cast<void*>(16));  // the null page: SEGV_MAPERR, a fault
  } else if (mode == "bus") {
    const int file = ::open(std::getenv("TP_TEST_BUS_FILE"), O_RDWR | O_CREAT, 0600);
    ASSERT_EQ(::ftruncate(file, 4096), 0);
    void* page = ::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, file, 0);
    ASSERT_NE(page, MAP_FAILED);
    ASSERT_EQ(::ftruncate(file, 0), 0);
    (void)read_at(page);  // SIGBUS: the page has no file
  } else if (mode == "recover") {
    if (sigsetjmp(recovery, 1) == 0) (void)read_at(reinterpret_cast<void*>(16));
    EXPECT_TRUE(torch::equal((sim_tensor() + 1).cpu(), torch::arange(4, torch::kFloat) + 1));
  } else if (mode == "contended" || mode == "holder") {
    // Freed reservations of 400 lengths: kept_reservations() holds the sim's lock while it
    // counts them, over and over on another thread, while this one reads sim memory ("holder":
    // that thread does, in a signal handler, mostly while it holds the lock itself).
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
    if (mode == "holder") pthread_kill(counter.native_handle(), SIGUSR1);
    if (mode == "contended") (void)read_at(x.data_ptr());
    counter.join();
  } else if (mode == "allowed") {
    struct sigaction now {};
    ASSERT_EQ(sigaction(SIGSEGV, nullptr, &now), 0);
    EXPECT_EQ(now.sa_flags & SA_SIGINFO, 0) << "a handler was installed";
    EXPECT_EQ(now.sa_handler, &plain_handler) << "a handler was installed";
  }
  alarm(0);
}

// The child's exit status, 128 + a signal it died of (the shell's), and its output.
std::pair<int, std::string> child(const std::string& environment) {
  const auto [status, output] = tp_test::run_child(environment, kChild);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

bool guarded() { return tp::sim::host_reads_guarded(); }

// si_code <= 0: sent, whatever its si_addr says (kill(2) puts the sender's pid and uid there).
TEST(SimHostReadFaults, ASentSegvWithASimAddressIsNoHostRead) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] = child("TP_TEST_FAULT=sent");
  EXPECT_EQ(status, 128 + SIGSEGV) << output;
  EXPECT_EQ(output.find("tp::sim: host code"), std::string::npos) << output;
}

// A fault's siginfo (si_code > 0) with a sim address is a host read.
TEST(SimHostReadFaults, AFaultsSiginfoWithASimAddressIsAHostRead) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] = child("TP_TEST_FAULT=maperr");
  EXPECT_EQ(status, 128 + SIGSEGV) << output;
  EXPECT_NE(output.find(kReport), std::string::npos) << output;
}

// A fault (si_code SEGV_MAPERR, 1) is fatal even when the process ignored SIGSEGV before the sim.
TEST(SimHostReadFaults, AFaultIgnoredBeforeTheSimStillKills) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] = child("TP_TEST_FAULT=ignored");
  EXPECT_EQ(status, 128 + SIGSEGV) << output;
}

// SIG_IGN installed with SA_SIGINFO: a sent SIGSEGV is ignored, as before the sim (the handler
// once called SIG_IGN's value, address 1, as a function).
TEST(SimHostReadFaults, ASentSegvIgnoredWithSiginfoBeforeTheSimIsIgnored) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] = child("TP_TEST_FAULT=ignored_siginfo");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("[  PASSED  ] 1 test."), std::string::npos) << output;
}

TEST(SimHostReadFaults, APreviousHandlerGetsTheFaultsOwnSiginfo) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] = child("TP_TEST_FAULT=siginfo");
  EXPECT_EQ(status, 7) << "the previous SA_SIGINFO handler, with the fault's siginfo: " << output;
}

TEST(SimHostReadFaults, ABusErrorGoesToTheBusHandlerThereBefore) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const tp::TempDir dir("sigbus");
  const auto [status, output] = child("TP_TEST_FAULT=bus TP_TEST_BUS_FILE=" + dir.file("shrunk"));
  EXPECT_EQ(status, 7) << "the previous SIGBUS handler, with a fault's siginfo: " << output;
}

TEST(SimHostReadFaults, AHandlerThatRecoversLeavesTheSimWorking) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] = child("TP_TEST_FAULT=recover");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("[  PASSED  ] 1 test."), std::string::npos) << output;
}

TEST(SimHostReadFaults, AHostReadWhileTheSimsLockIsHeldIsReported) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] = child("TP_TEST_FAULT=contended");
  EXPECT_EQ(status, 128 + SIGSEGV) << output;
  EXPECT_NE(output.find(kReport), std::string::npos) << output;
}

// The handler never waits long for the lock: in a thread that holds it (a signal handler there
// read sim memory) it gives up, and the fault kills as any other. Should the signal come while
// the thread is between locks, the read is reported: naming the allocation, 16 bytes.
TEST(SimHostReadFaults, AHostReadWhereTheLockIsHeldByItsOwnThreadDoesNotWait) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] = child("TP_TEST_FAULT=holder");
  EXPECT_EQ(status, 128 + SIGSEGV) << output;
  if (output.find("tp::sim: host code") != std::string::npos)
    EXPECT_NE(output.find("the allocation: sim:0, 16 bytes at"), std::string::npos) << output;
}

TEST(SimHostReadFaults, AllowedHostReadsInstallNoHandler) {
  const auto [status, output] = child("TORCHPLACE_SIM_HOST_READS=allow TP_TEST_FAULT=allowed");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("[  PASSED  ] 1 test."), std::string::npos) << output;
}

}  // namespace
}  // namespace sim_host_read_faults_test
