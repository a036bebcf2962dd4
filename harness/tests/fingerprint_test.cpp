// Where a result came from (internal/fingerprint.h): each field read from this host, and what
// the host does not have is null, never an empty string a reader would take for a value.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <string>
#include <thread>

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

}  // namespace
}  // namespace fingerprint_test
