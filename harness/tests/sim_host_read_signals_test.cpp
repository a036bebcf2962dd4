// What the sim's fault handler (sim/host_read_fault.cpp) passes on to the handler the process had
// before the sim's: a fault outside sim memory goes to it (an SA_SIGINFO one with the fault's own
// siginfo, a plain one, one that recovers and leaves the sim working) or dies of its own signal,
// as it would without the sim, a bus error too; a sent SIGSEGV goes to it with the sender's
// siginfo; a SIGSEGV the process ignored stays ignored when it is sent (si_code <= 0, SA_SIGINFO
// or not), and a fault kills it all the same. Each case runs in the one child of
// sim_host_read_faults_test.cpp (host_read_child.h): the handler before, then what it does.
#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <tuple>

#include <torchplace/sim/sim.h>
#include <torchplace/temp_dir.h>
#include "host_read_child.h"

namespace sim_host_read_signals_test {  // unity-built with the other harness tests
namespace {

using tp_test::host_read_child;

const char* const kPassed = "[  PASSED  ] 1 test.";

bool guarded() { return tp::sim::host_reads_guarded(); }

// A host read of sim memory raises SIGSEGV, or SIGBUS where the kernel says so: the sim's handler
// takes both, in this process as in the children below.
TEST(SimHostReadSignals, TheSimsHandlerTakesBusErrorsAsSegmentationFaults) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  (void)torch::zeros({2}, tp::sim::device());  // the sim's memory is set up
  struct sigaction segv {};
  struct sigaction bus {};
  ASSERT_EQ(sigaction(SIGSEGV, nullptr, &segv), 0);
  ASSERT_EQ(sigaction(SIGBUS, nullptr, &bus), 0);
  ASSERT_NE(segv.sa_flags & SA_SIGINFO, 0);
  EXPECT_NE(bus.sa_flags & SA_SIGINFO, 0);
  EXPECT_EQ(bus.sa_sigaction, segv.sa_sigaction);
}

TEST(SimHostReadSignals, ABusErrorOutsideSimMemoryStaysABusError) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const tp::TempDir dir("sigbus");
  const auto [status, output] =
      host_read_child("none", "bus", "TP_TEST_BUS_FILE=" + dir.file("shrunk"));
  EXPECT_EQ(status, 128 + SIGBUS) << output;
  EXPECT_EQ(output.find("tp::sim: host code"), std::string::npos) << output;
}

TEST(SimHostReadSignals, ABusErrorGoesToTheBusHandlerThereBefore) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const tp::TempDir dir("sigbus");
  const auto [status, output] =
      host_read_child("siginfo", "bus", "TP_TEST_BUS_FILE=" + dir.file("shrunk"));
  EXPECT_EQ(status, 7) << "the previous SIGBUS handler, with the fault's siginfo: " << output;
}

// raise(3): si_code SI_TKILL, sent, not a fault.
TEST(SimHostReadSignals, ASentSegvIgnoredBeforeTheSimStaysIgnored) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] = host_read_child("ignore", "raise");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find(kPassed), std::string::npos) << output;
}

// SIG_IGN installed with SA_SIGINFO: a sent SIGSEGV is ignored, as before the sim (the handler
// once called SIG_IGN's value, address 1, as a function).
TEST(SimHostReadSignals, ASentSegvIgnoredWithSiginfoBeforeTheSimIsIgnored) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] = host_read_child("ignore_siginfo", "send");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find(kPassed), std::string::npos) << output;
}

// A fault (si_code SEGV_MAPERR, 1) is fatal even when the process ignored SIGSEGV before the sim.
TEST(SimHostReadSignals, AFaultIgnoredBeforeTheSimStillKills) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] = host_read_child("ignore", "fault_null");
  EXPECT_EQ(status, 128 + SIGSEGV) << output;
}

TEST(SimHostReadSignals, APreviousHandlerGetsTheFaultsOwnSiginfo) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] = host_read_child("siginfo", "fault_null");
  EXPECT_EQ(status, 7) << "the previous SA_SIGINFO handler, with the fault's siginfo: " << output;
}

TEST(SimHostReadSignals, AFaultOutsideSimMemoryGoesToThePreviousHandler) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  auto [status, output] = host_read_child("siginfo", "fault");
  EXPECT_EQ(status, 7) << "a fault, with its siginfo: " << output;
  EXPECT_NE(output.find("previous handler (siginfo)"), std::string::npos) << output;
  std::tie(status, output) = host_read_child("plain", "fault");
  EXPECT_EQ(status, 9) << output;
  EXPECT_NE(output.find("previous handler (plain)"), std::string::npos) << output;
}

// kill(2): si_code SI_USER, this process's pid in si_pid.
TEST(SimHostReadSignals, ASentSegvGoesToThePreviousHandler) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  auto [status, output] = host_read_child("siginfo", "kill");
  EXPECT_EQ(status, 10) << "sent, with the sender's siginfo: " << output;
  EXPECT_NE(output.find("previous handler (siginfo)"), std::string::npos) << output;
  std::tie(status, output) = host_read_child("plain", "kill");
  EXPECT_EQ(status, 9) << output;
  EXPECT_NE(output.find("previous handler (plain)"), std::string::npos) << output;
}

TEST(SimHostReadSignals, IgnoredOnlyWhenSentAndDefaultKillsEither) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const std::tuple<const char*, const char*, int> cases[] = {
      {"ignore", "fault", 128 + SIGSEGV},  // a fault is fatal even when ignored
      {"ignore", "kill", 0},               // kill(2): si_code 0, ignored
      {"default", "kill", 128 + SIGSEGV},
      {"default", "fault", 128 + SIGSEGV}};
  for (const auto& [previous, action, expected] : cases) {
    const auto [status, output] = host_read_child(previous, action);
    EXPECT_EQ(status, expected) << previous << ", " << action << ": " << output;
  }
}

TEST(SimHostReadSignals, AHandlerThatRecoversLeavesTheSimWorking) {
  if (!guarded()) GTEST_SKIP() << "TORCHPLACE_SIM_HOST_READS=allow: no handler";
  const auto [status, output] = host_read_child("recovering", "recover");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find(kPassed), std::string::npos) << output;
}

}  // namespace
}  // namespace sim_host_read_signals_test
