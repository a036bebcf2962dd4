// The lines of a host read's report (sim/host_read_fault.cpp) at their limits: the allocation's
// line says "past its end" from the allocation's length on, and a line longer than its buffer
// (1024 bytes, the newline included) is its first 1023 characters, however it is cut, with the
// lines after it whole. The faulting code's line names its object's file: for code of this
// program, argv[0], which the tests choose (bash's exec -a).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <torchplace/sim/sim.h>
#include "sim_guarded.h"

namespace sim_host_read_lines_test {  // unity-built with the other harness tests
namespace {

constexpr size_t kLine = 1023;  // the buffer's 1024 bytes less the newline

void read_in_child(const torch::Tensor& x, size_t offset) {
  const rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none);
  volatile char byte = static_cast<const volatile char*>(x.data_ptr())[offset];
  (void)byte;
}

TEST(SimHostReadLines, PastItsEndFromTheAllocationsLengthOn) {
  TP_SKIP_UNLESS_GUARDED();
  const torch::Tensor x = torch::arange(4, torch::kFloat).to(tp::sim::device());  // 16 bytes
  const std::string address = " \\(address 0x[0-9a-f]+";
  EXPECT_EXIT(read_in_child(x, 15), testing::KilledBySignal(SIGSEGV),
              "16 bytes at 0x[0-9a-f]+; offset 15" + address + "\\)\n");
  EXPECT_EXIT(read_in_child(x, 16), testing::KilledBySignal(SIGSEGV),
              "16 bytes at 0x[0-9a-f]+; offset 16" + address + ", past its end\\)\n");
}

// Runs only as the child of the test below (TP_TEST_LINES_CHILD=1): reads sim memory in this
// program's own code (the read is here), so the faulting code's object is the program.
TEST(SimHostReadLines, ChildReadsInItsOwnCode) {
  if (std::getenv("TP_TEST_LINES_CHILD") == nullptr)
    GTEST_SKIP() << "the child of SimHostReadLines' tests (TP_TEST_LINES_CHILD=1)";
  TP_SKIP_UNLESS_GUARDED();
  const rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none);
  const torch::Tensor x = torch::arange(4, torch::kFloat).to(tp::sim::device());
  volatile float value = static_cast<const volatile float*>(x.data_ptr())[1];
  (void)value;
}

// The child's lines, run as `name` (its argv[0]).
std::vector<std::string> child_lines(const std::string& name) {
  char self[4096] = {};
  EXPECT_GT(readlink("/proc/self/exe", self, sizeof self - 1), 0);
  const std::string command =
      "env -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX -u GTEST_OUTPUT TP_TEST_LINES_CHILD=1 "
      "timeout -k 5 120 bash -c 'exec -a \"$0\" \"$1\" "
      "--gtest_filter=SimHostReadLines.ChildReadsInItsOwnCode' " +
      name + " '" + self + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  char buffer[4096];
  for (size_t read; pipe != nullptr && (read = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    output.append(buffer, read);
  if (pipe != nullptr) pclose(pipe);
  std::vector<std::string> lines;
  std::istringstream stream(output);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

// The faulting code's line and the one after it, or empty lines.
std::pair<std::string, std::string> faulting_code(const std::vector<std::string>& lines) {
  for (size_t index = 0; index + 1 < lines.size(); ++index)
    if (lines[index].rfind("tp::sim: faulting code: ", 0) == 0)
      return {lines[index], lines[index + 1]};
  return {};
}

// Hexadecimal digits: the faulting instruction's first (0x...), or the offset in `name`'s object.
std::string hex_after(const std::string& line, const std::string& before) {
  std::smatch found;
  return std::regex_search(line, found, std::regex(before + "0x([0-9a-f]+)")) ? found[1].str() : "";
}

// The line as it would be unbounded: the instruction, then the object's name and offset in it.
std::string whole(const std::string& instruction, const std::string& name,
                  const std::string& offset) {
  return "tp::sim: faulting code: 0x" + instruction + " (" + name + "+0x" + offset + ")";
}

TEST(SimHostReadLines, ALineLongerThanItsBufferIsItsFirst1023Characters) {
  TP_SKIP_UNLESS_GUARDED();
  const std::string kBacktrace = "tp::sim: backtrace (addr2line -e FILE +OFFSET names a frame";
  // A short name first: the instruction's length in hexadecimal and its offset in the program.
  const auto [short_line, short_next] = faulting_code(child_lines("tp-short"));
  const std::string offset = hex_after(short_line, "\\(tp-short\\+");
  const std::string instruction = hex_after(short_line, "faulting code: ");
  ASSERT_FALSE(offset.empty() || instruction.empty()) << short_line;
  EXPECT_EQ(short_line, whole(instruction, "tp-short", offset));
  // Cut inside the name; then inside the offset's digits, which start 3 characters before the
  // cut (the name's length puts them there: "tp::sim: faulting code: 0x", the instruction, " (",
  // the name, "+0x").
  const size_t before_name = 26 + instruction.size() + 2;
  for (const size_t length : {size_t{1200}, kLine - 3 - 3 - before_name}) {
    const std::string name = "tp-" + std::string(length - 3, 'n');
    const auto [line, next] = faulting_code(child_lines(name));
    const std::string expected = whole(hex_after(line, "faulting code: "), name, offset);
    ASSERT_GT(expected.size(), kLine) << line;
    EXPECT_EQ(line, expected.substr(0, kLine)) << "named " << length << " characters";
    EXPECT_EQ(next.rfind(kBacktrace, 0), 0u) << next;
  }
}

}  // namespace
}  // namespace sim_host_read_lines_test
