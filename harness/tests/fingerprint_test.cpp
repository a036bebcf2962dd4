// Where a result came from (internal/fingerprint.h): each field read from this host, and what
// the host does not have is null, never an empty string a reader would take for a value.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include <torchplace/temp_dir.h>
#include "internal/fingerprint.h"

namespace fingerprint_test {  // unity-built with the other harness tests
namespace {

std::string first_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

TEST(Fingerprint, TheDriverIsItsVersionLineOrNull) {
  const auto cuda = tp::fingerprint().at("cuda");
  const std::string driver = first_line_of("/proc/driver/nvidia/version");
  if (driver.empty()) {
    EXPECT_TRUE(cuda.at("driver").is_null()) << cuda.dump();
  } else {
    EXPECT_EQ(cuda.at("driver"), driver);
  }
  EXPECT_EQ(cuda.at("available"), torch::cuda::is_available());
}

TEST(Fingerprint, NamesThisBuildAndHost) {
  const auto print = tp::fingerprint();
  EXPECT_EQ(print.at("libtorch_version"), TORCH_VERSION);
  EXPECT_EQ(print.at("cpu_cores"), std::thread::hardware_concurrency());
  EXPECT_EQ(print.at("torch_threads"), at::get_num_threads());
  EXPECT_EQ(print.at("cxx_standard"), static_cast<long>(__cplusplus));
}

// The first line of `path` matching `pattern`, its group 1; "" when none (another reading of
// the files than the fingerprint's own).
std::string field_of(const std::string& path, const std::string& pattern) {
  std::ifstream in(path);
  const std::regex field(pattern);
  std::smatch found;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_match(line, found, field)) return found[1];
  }
  return "";
}

TEST(Fingerprint, TheOsAndTheCpuAreTheirFilesValues) {
  const auto print = tp::fingerprint();
  const std::string os = field_of("/etc/os-release", R"re(PRETTY_NAME="?(.*?)"?\s*)re");
  ASSERT_FALSE(os.empty()) << "/etc/os-release names no PRETTY_NAME: nothing to compare";
  EXPECT_EQ(print.at("os"), os);
  EXPECT_EQ(print.at("cpu_model"), field_of("/proc/cpuinfo", R"re(model name\s*:\s*(.*?)\s*)re"));
}

// The readers on files of known content (synthetic, in the forms of /proc/cpuinfo,
// /etc/os-release, which may leave a value unquoted, and the NVIDIA driver's version file).
TEST(Fingerprint, ReadFieldTakesTheValueAfterTheSeparator) {
  const tp::TempDir dir("fingerprint");
  std::ofstream(dir.file("os-release")) << "NAME=Synthetic\nPRETTY_NAME=Synthetic Linux 1\n";
  EXPECT_EQ(tp::host_files::read_field(dir.file("os-release"), "PRETTY_NAME", '='),
            "Synthetic Linux 1");
  std::ofstream(dir.file("quoted")) << "PRETTY_NAME=\"Synthetic Linux 2\"\n";
  EXPECT_EQ(tp::host_files::read_field(dir.file("quoted"), "PRETTY_NAME", '='),
            "Synthetic Linux 2");
  // a line that starts with the key but has no separator is passed over
  std::ofstream(dir.file("cpuinfo")) << "model name\nmodel name\t: Synthetic CPU @ 1.00GHz\n";
  EXPECT_EQ(tp::host_files::read_field(dir.file("cpuinfo"), "model name", ':'),
            "Synthetic CPU @ 1.00GHz");
  EXPECT_EQ(tp::host_files::read_field(dir.file("absent"), "model name", ':'), "");
}

TEST(Fingerprint, FirstLineIsTheFilesFirstLine) {
  const tp::TempDir dir("fingerprint");
  std::ofstream(dir.file("version")) << "NVRM version: synthetic 1.0\nGCC version: synthetic\n";
  EXPECT_EQ(tp::host_files::first_line(dir.file("version")), "NVRM version: synthetic 1.0");
  EXPECT_EQ(tp::host_files::first_line(dir.file("absent")), "");
}

}  // namespace
}  // namespace fingerprint_test
