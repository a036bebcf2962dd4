// Test main for scenario suites: registers the cells, records each one's outcome, and writes
// the results JSON when asked.
//
//   <suite> [gtest flags] [--torchplace_results=PATH]
//
// Without the flag, TORCHPLACE_RESULTS_DIR=DIR writes DIR/<the gtest filter as a file name>.json:
// CTest runs each scenario cell in a process of its own, and gate.own_cells holds the files it
// leaves to ci/gate/expectations.json (scenarios/CMakeLists.txt).
//
// Exit codes: 0 every test passed or was skipped; 1 a test failed; 64 bad arguments;
// 3 cannot judge: a scenario is malformed (register_cells names it), or the results file could
// not be written.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>

#include "results.h"

namespace {

constexpr int kExitUsage = 64;  // as ci/torchplace: 2 means a behaviour regression there
constexpr int kExitCannotJudge = 3;

// Copies GoogleTest's verdict, skip reason and failure text into the cell's record, and rewrites
// the results file after every cell, so a crash keeps every cell finished before it.
class RecordingListener : public ::testing::EmptyTestEventListener {
 public:
  explicit RecordingListener(std::string path) : path_(std::move(path)) {}

  static bool write_results(const std::string& path) {
    try {
      tp::write_atomically(path, tp::ResultLog::instance().to_json().dump(2) + "\n");
      return true;
    } catch (const std::exception& error) {
      std::cerr << "torchplace: " << error.what() << "\n";
      return false;
    }
  }

 private:
  void OnTestPartResult(const ::testing::TestPartResult& part) override {
    tp::CellRecord* record = tp::ResultLog::instance().current();
    if (record == nullptr || part.type() == ::testing::TestPartResult::kSuccess) return;
    std::string text = part.message();
    const std::string prefix = "Skipped\n";
    if (text.rfind(prefix, 0) == 0) text.erase(0, prefix.size());
    if (!record->reason.empty()) record->reason += "\n";
    record->reason += text;
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    tp::CellRecord* record = tp::ResultLog::instance().current();
    if (record == nullptr) return;
    const ::testing::TestResult& result = *info.result();
    record->status = result.Skipped() ? "skip" : result.Passed() ? "pass" : "fail";
    tp::ResultLog::instance().end_current();
    if (!path_.empty()) write_results(path_);
  }

  std::string path_;
};

// DIR/<filter>.json: the filter's first 100 characters, those other than letters and digits made
// '_', and its hash, which keeps two filters that read the same that way apart (a file name
// holds 255 bytes at most: a kill set's catchers joined by ':' ran past it, and nothing was
// written).
std::string results_in(const std::string& dir, int argc, char** argv) {
  const std::string flag = "--gtest_filter=";
  std::string filter = "all";
  for (int index = 1; index < argc; ++index) {
    const std::string arg = argv[index];
    if (arg.rfind(flag, 0) == 0) filter = arg.substr(flag.size());
  }
  std::string name = filter.substr(0, 100);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return dir + "/" + name + "." + std::to_string(std::hash<std::string>{}(filter)) + ".json";
}

}  // namespace

int main(int argc, char** argv) {
  const char* results_dir = std::getenv("TORCHPLACE_RESULTS_DIR");
  std::string results_path =
      results_dir != nullptr && *results_dir != '\0' ? results_in(results_dir, argc, argv) : "";
  ::testing::InitGoogleTest(&argc, argv);
  const std::string flag = "--torchplace_results=";
  for (int index = 1; index < argc; ++index) {
    const std::string arg = argv[index];
    if (arg.rfind(flag, 0) == 0 && arg.size() > flag.size()) {
      results_path = arg.substr(flag.size());
    } else {
      std::cerr << "bad argument '" << arg << "'\nusage: " << argv[0]
                << " [gtest flags] [--torchplace_results=PATH]\n";
      return kExitUsage;
    }
  }
  try {
    tp::register_cells();
  } catch (const std::exception& error) {  // a scenario without a body, say: no cell can run
    std::cerr << argv[0] << ": " << error.what() << "\n";
    return kExitCannotJudge;
  }
  ::testing::UnitTest::GetInstance()->listeners().Append(new RecordingListener(results_path));
  const int status = RUN_ALL_TESTS();
  if (results_path.empty()) return status;
  // Once more at the end: a run whose filter selected no cell still writes its (empty) file.
  return RecordingListener::write_results(results_path) ? status : kExitCannotJudge;
}
