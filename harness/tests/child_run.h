// The sim tests' way to start this test binary again with another environment (settings the
// sim reads once, when it is enabled): `filter`'s tests in a child, its exit status and output.
#pragma once
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <string>
#include <utility>

namespace tp_test {

inline std::pair<int, std::string> run_child(const std::string& environment,
                                             const std::string& filter) {
  char self[4096] = {};
  EXPECT_GT(readlink("/proc/self/exe", self, sizeof self - 1), 0);
  const std::string command = "env -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX -u GTEST_OUTPUT " +
                              environment + " timeout -k 5 120 '" + self +
                              "' --gtest_filter=" + filter + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  if (pipe == nullptr) return {-1, output};
  char buffer[4096];
  for (size_t read; (read = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    output.append(buffer, read);
  return {pclose(pipe), output};
}

}  // namespace tp_test
