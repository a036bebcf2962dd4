// The whole report of a host read (sim/host_read_fault.cpp), line by line, from a child that
// reads sim memory inside a library function: its first line (the device and the fix), the
// allocation and the address, the escape hatch, the faulting code by name, library and offset,
// then a backtrace from that code. sim_host_reads_test.cpp's death tests check the first lines'
// parts across the ways host code reads.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <torch/torch.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <torchplace/sim/sim.h>
#include "child_run.h"
#include "sim_guarded.h"

namespace sim_host_read_report_test {  // unity-built with the other harness tests
namespace {

const char* const kChild = "SimHostReadReport.ChildHashesSimMemory";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

// Hexadecimal digits as a number; none: 0.
uintptr_t from_hex(const std::string& digits) {
  return digits.empty() ? 0 : static_cast<uintptr_t>(std::stoull(digits, nullptr, 16));
}

// `pattern`'s first group, where it first matches in `output`, as a hexadecimal number.
uintptr_t parsed(const std::string& output, const std::string& pattern) {
  std::smatch match;
  return std::regex_search(output, match, std::regex(pattern)) ? from_hex(match[1].str()) : 0;
}

// Runs only as the report tests' child (TP_TEST_REPORT_CHILD=1): prints where the allocation and
// libstdc++ lie, then hashes the allocation's bytes from 4 bytes in: std::_Hash_bytes, an
// exported function of libstdc++ (std::hash of a string_view), reads them on the host.
TEST(SimHostReadReport, ChildHashesSimMemory) {
  if (std::getenv("TP_TEST_REPORT_CHILD") == nullptr)
    GTEST_SKIP() << "the child of SimHostReadReport's tests (TP_TEST_REPORT_CHILD=1)";
  TP_SKIP_UNLESS_GUARDED();
  const rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none);
  const torch::Tensor x = torch::arange(4, torch::kFloat).to(tp::sim::device());
  Dl_info library{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&std::_Hash_bytes), &library), 0);
  std::printf("child: allocation 0x%zx, libstdc++ 0x%zx\n", reinterpret_cast<size_t>(x.data_ptr()),
              reinterpret_cast<size_t>(library.dli_fbase));
  std::fflush(stdout);
  const std::string_view bytes(static_cast<const char*>(x.data_ptr()) + 4, 8);
  volatile size_t hash = std::hash<std::string_view>{}(bytes);
  (void)hash;
}

// The child dies of SIGSEGV (the shell run_child starts says 128 + the signal), and its report
// is these lines, whole and in order, then 12 frames (gtest's stack below the read is deeper)
// from the faulting one. Its addresses are the child's own: the allocation it printed plus the
// offset, and libstdc++'s base plus the code's offset in it.
TEST(SimHostReadReport, EveryLineOfTheReport) {
  TP_SKIP_UNLESS_GUARDED();
  const auto [status, output] = tp_test::run_child("TP_TEST_REPORT_CHILD=1", kChild);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGSEGV) << status << output;
  const std::vector<std::string> lines = lines_of(output);
  size_t first = 0;
  while (first < lines.size() && lines[first].rfind("tp::sim:", 0) != 0) ++first;
  ASSERT_LE(first + 5 + 12, lines.size()) << output;
  const std::string hex = "0x([0-9a-f]+)";
  const std::vector<std::string> expected = {
      "tp::sim: host code read the memory of a tensor on sim:0 \\(data_ptr/data<T>/accessor/"
      "memcpy\\): on CUDA this reads device memory from the host; copy it to the CPU first with "
      "\\.cpu\\(\\) / \\.to\\(torch::kCPU\\)",
      "tp::sim: the allocation: sim:0, 16 bytes at " + hex + "; offset 4 \\(address " + hex + "\\)",
      "tp::sim: TORCHPLACE_SIM_HOST_READS=allow turns this check off \\(harness/sim/README\\.md\\)",
      "tp::sim: faulting code: " + hex +
          " in std::_Hash_bytes\\(void const\\*, unsigned long, unsigned long\\) \\(/\\S*"
          "libstdc\\+\\+\\.so[.0-9]*\\+" +
          hex + "\\)",
      "tp::sim: backtrace \\(addr2line -e FILE \\+OFFSET names a frame without a symbol\\):"};
  std::smatch match[5];
  for (size_t index = 0; index < expected.size(); ++index)
    EXPECT_TRUE(std::regex_match(lines[first + index], match[index], std::regex(expected[index])))
        << "line " << index + 1 << ": " << lines[first + index];
  const uintptr_t start = parsed(output, "child: allocation " + hex);
  const uintptr_t ip = from_hex(match[3][1].str());
  EXPECT_EQ(from_hex(match[1][1].str()), start);
  EXPECT_EQ(from_hex(match[1][2].str()), start + 4) << "the address read";
  EXPECT_EQ(ip - from_hex(match[3][2].str()), parsed(output, "libstdc\\+\\+ " + hex));
  // backtrace_symbols_fd's line: "FILE(SYMBOL+OFFSET)[ADDRESS]", with a space before '[' in
  // newer glibc (sid's, which the 2.14.1 column builds in)
  const std::regex frame("\\S+\\((\\S*)\\) ?\\[" + hex + "\\]");
  size_t frames = 0;
  for (size_t index = first + 5; index < lines.size(); ++index, ++frames) {
    std::smatch found;
    if (!std::regex_match(lines[index], found, frame)) break;
    if (frames == 0) EXPECT_EQ(from_hex(found[2].str()), ip) << "the faulting frame first";
    if (frames == 0) EXPECT_NE(found[1].str().find("_Hash_bytes"), std::string::npos);
  }
  EXPECT_EQ(frames, 12u) << output;
}

}  // namespace
}  // namespace sim_host_read_report_test
