// The runner end to end: the probe suite (runner_probe/bad_cells.cpp) goes through the real cell
// runner and test main in a child process, with a deadline, and its results file must say that
// every bad cell failed, with the judge's reason, and that the control passed. The judge's unit
// tests (expected_error_test.cpp) cannot see a runner that ignores the judge's verdict.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <torch/cuda.h>

#include <torchplace/temp_dir.h>

namespace tp {
namespace {

constexpr int kDeadlineS = 120;      // the probe loads LibTorch and runs 13 cells: ~2 s
constexpr int kExitFailed = 1;       // gtest_main.cpp: a test failed
constexpr int kExitCannotJudge = 3;  // gtest_main.cpp: a malformed scenario

struct ProbeRun {
  int exit_code = -1;
  std::string output;
  std::map<std::string, nlohmann::json> cells;  // by case name
};

// Runs the probe's cells that `filter` selects under `timeout`, and reads the results file it
// writes; cells are keyed by case, and by case/device when `by_device`.
// `env`: assignments put before the command (NAME=value ...). The probe runs every cell the
// filter selects, whatever this process was given: gtest's sharding and output variables
// (GTEST_TOTAL_SHARDS, GTEST_SHARD_INDEX, GTEST_OUTPUT) are not passed on.
ProbeRun run_probe(const std::string& filter = "runner_probe.*device=cpu", bool by_device = false,
                   const std::string& env = "") {
  TempDir dir("runner_end_to_end");
  const std::string results = dir.file("results.json");
  const std::string command = "env -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX -u GTEST_OUTPUT " +
                              env + " timeout -k 5 " + std::to_string(kDeadlineS) + " '" +
                              TORCHPLACE_RUNNER_PROBE + "' --gtest_filter='" + filter + "'" +
                              " --torchplace_results='" + results + "' 2>&1";
  ProbeRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) run.output += buffer;
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(results);
  if (!in) return run;
  const nlohmann::json doc = nlohmann::json::parse(in);  // kept: the loop reads into it
  for (const nlohmann::json& cell : doc.at("cells")) {
    const std::string name = cell.at("axes").at("case").get<std::string>();
    run.cells[by_device ? name + "/" + cell.at("device").get<std::string>() : name] = cell;
  }
  return run;
}

const ProbeRun& probe() {
  static const ProbeRun run = run_probe();
  return run;
}

// The cell failed, and its reason holds `why` (the judge's or the runner's words).
void expect_failed(const std::string& name, const std::string& why) {
  const auto found = probe().cells.find(name);
  ASSERT_NE(found, probe().cells.end()) << name << " not in the results; output:\n"
                                        << probe().output;
  const nlohmann::json& cell = found->second;
  EXPECT_EQ(cell.at("status"), "fail") << name << ": " << cell.dump(2);
  EXPECT_EQ(cell.at("category"), "failed") << name;
  EXPECT_NE(cell.at("reason").get<std::string>().find(why), std::string::npos)
      << name << ": reason lacks '" << why << "': " << cell.at("reason");
}

TEST(RunnerEndToEnd, TheProbeRanEveryCpuCellAndFailed) {
  EXPECT_EQ(probe().exit_code, kExitFailed) << probe().output;
  EXPECT_EQ(probe().cells.size(), 13u) << probe().output;
}

TEST(RunnerEndToEnd, TheControlPasses) {
  const auto found = probe().cells.find("raises_as_expected");
  ASSERT_NE(found, probe().cells.end()) << probe().output;
  EXPECT_EQ(found->second.at("status"), "pass") << found->second.dump(2);
  EXPECT_EQ(found->second.at("category"), "expected_error");
  EXPECT_EQ(found->second.at("observed").at("outcome"), "error");
  EXPECT_EQ(found->second.at("observed").at("raised_in"), "add") << "the region (README)";
}

TEST(RunnerEndToEnd, AnErrorWhilePreparingFails) {
  expect_failed("raises_while_preparing", "error while preparing");
}

TEST(RunnerEndToEnd, AnErrorOfTheWrongClassFails) {
  expect_failed("raises_the_wrong_class", "expected DeviceMismatch");
}

TEST(RunnerEndToEnd, AnErrorAboutTheWrongArgumentFails) {
  expect_failed("names_the_wrong_argument", "about argument 'index', expected 'target'");
}

TEST(RunnerEndToEnd, NoErrorWhereOneIsExpectedFails) {
  expect_failed("raises_nothing", "ran without error");
  EXPECT_EQ(probe().cells.at("raises_nothing").at("observed").at("outcome"), "success");
}

// The fix's body runs, and its numeric check decides: a wrong answer fails the cell.
TEST(RunnerEndToEnd, AFixWithTheWrongAnswerFails) {
  expect_failed("wrong_answer", "differs from torch::full({2}, 3.0)");
}

// A skip is a claim like any other: one that does not say why fails the cell.
TEST(RunnerEndToEnd, ASkipWithoutANoteFails) {
  expect_failed("skips_without_a_note", "a skip must say why");
}

// A sticky error breaks its accelerator for the rest of the process: the cell fails, and a later
// cell on that device skips naming it (sim0 stands for a CUDA device); the CPU is never broken.
TEST(RunnerEndToEnd, AStickyErrorSkipsTheLaterCellsOnItsDeviceOnly) {
  const ProbeRun run = run_probe(
      "runner_probe.case=sticky_*device=cpu:runner_probe.case=sticky_*"
      "device=sim0",
      /*by_device=*/true);
  ASSERT_EQ(run.cells.size(), 4u) << run.output;
  for (const char* device : {"cpu", "sim:0"}) {
    const nlohmann::json& broke = run.cells.at(std::string("sticky_breaks_its_device/") + device);
    EXPECT_EQ(broke.at("status"), "fail") << broke.dump(2);
  }
  EXPECT_EQ(run.cells.at("sticky_then_a_fix/cpu").at("status"), "pass") << run.output;
  const nlohmann::json& after = run.cells.at("sticky_then_a_fix/sim:0");
  EXPECT_EQ(after.at("status"), "skip") << after.dump(2);
  EXPECT_EQ(after.value("skip_code", ""), "device_unusable") << after.dump(2);
  // the breaking cell, and the first line of its message whole (no backtrace)
  for (const char* part :
       {"sticky_breaks_its_device", "(CUDA error: an illegal memory access was encountered)"}) {
    EXPECT_NE(after.at("reason").get<std::string>().find(part), std::string::npos)
        << part << " not in: " << after.dump(2);
  }
}

// Only a cell on the sim enables it (cell_runner.cpp): with a device count the sim refuses, which
// only enabling reads (sim.h listed()), a process of CPU cells runs them as ever.
TEST(RunnerEndToEnd, CpuCellsLeaveTheSimUnregistered) {
  const ProbeRun run = run_probe("runner_probe.case=raises_as_expected*device=cpu", false,
                                 "TORCHPLACE_SIM_DEVICES=17");
  ASSERT_EQ(run.cells.size(), 1u) << run.output;
  EXPECT_EQ(run.cells.begin()->second.at("status"), "pass") << run.cells.begin()->second.dump(2);
}

// Every cell starts from the same RNG state: the same draw on the CPU and then on sim:0.
TEST(RunnerEndToEnd, EveryCellStartsFromTheSameSeed) {
  const ProbeRun run = run_probe(
      "runner_probe.case=draws_a_number*device=cpu:runner_probe.case=draws_a_number*device=sim0",
      /*by_device=*/true);
  ASSERT_EQ(run.cells.size(), 2u) << run.output;
  const nlohmann::json& first = run.cells.at("draws_a_number/cpu");
  const nlohmann::json& second = run.cells.at("draws_a_number/sim:0");
  EXPECT_EQ(first.at("status"), "pass") << first.dump(2);
  EXPECT_EQ(first.at("metrics").at("draw"), second.at("metrics").at("draw")) << run.output;
}

// The cell skipped with `code`, and its reason holds `why` (contains: newer GoogleTest ends a
// skip's message with a newline, seen on 2.14.1's sid root).
void expect_skipped(const std::string& name, const std::string& code, const std::string& why) {
  const auto found = probe().cells.find(name);
  ASSERT_NE(found, probe().cells.end()) << name << " not in the results; output:\n"
                                        << probe().output;
  const nlohmann::json& cell = found->second;
  EXPECT_EQ(cell.at("status"), "skip") << cell.dump(2);
  EXPECT_EQ(cell.value("skip_code", ""), code) << cell.dump(2);
  EXPECT_NE(cell.at("reason").get<std::string>().find(why), std::string::npos) << cell.dump(2);
}

// An expectation of skip skips the cell with its note as the reason; its body (a wrong answer)
// never runs.
TEST(RunnerEndToEnd, AnExpectedSkipSkipsWithItsNote) {
  expect_skipped("skips_with_a_note", "covered_by_other_cell", "runner probe: another cell");
}

// A cell on a device this host lacks skips with the absent-device code, whatever comes after.
TEST(RunnerEndToEnd, AnAbsentDeviceSkipsItsCells) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "cuda:0 is present here: nothing is absent";
  const ProbeRun run = run_probe("runner_probe.case=right_answer*device=cuda0");
  ASSERT_EQ(run.cells.size(), 1u) << run.output;
  const nlohmann::json& cell = run.cells.at("right_answer");
  EXPECT_EQ(cell.at("status"), "skip") << cell.dump(2);
  const std::string code = cell.value("skip_code", "");
  EXPECT_TRUE(code == "no_cuda_build" || code == "no_cuda_device") << cell.dump(2);
}

// An ordinary error (the expected one, here) leaves the accelerator usable: the next cell runs.
TEST(RunnerEndToEnd, AnOrdinaryErrorLeavesItsDeviceUsable) {
  const ProbeRun run = run_probe(
      "runner_probe.case=raises_as_expected*device=sim0:runner_probe.case=right_answer*device="
      "sim0");
  ASSERT_EQ(run.cells.size(), 2u) << run.output;
  EXPECT_EQ(run.cells.at("raises_as_expected").at("status"), "pass") << run.output;
  EXPECT_EQ(run.cells.at("right_answer").at("status"), "pass") << run.output;
}

// A need the host does not meet skips the cell with its code and words; its body (a wrong answer,
// which would fail) never runs.
TEST(RunnerEndToEnd, AnUnmetNeedSkipsTheCell) {
  expect_skipped("needs_what_is_missing", "needs_cuda", "a need no host meets");
}

// A scenario without a body stops the runner before any cell, naming it: nothing was judged.
TEST(RunnerEndToEnd, AScenarioWithoutABodyCannotBeJudged) {
  const ProbeRun run = run_probe("*", false, "TORCHPLACE_PROBE_BODYLESS=1");
  EXPECT_EQ(run.exit_code, kExitCannotJudge) << run.output;
  EXPECT_NE(run.output.find("scenario bodyless_probe has no .run()"), std::string::npos)
      << run.output;
  EXPECT_TRUE(run.cells.empty()) << run.output;
}

TEST(RunnerEndToEnd, AFixWithTheRightAnswerPasses) {
  const auto found = probe().cells.find("right_answer");
  ASSERT_NE(found, probe().cells.end()) << probe().output;
  EXPECT_EQ(found->second.at("status"), "pass") << found->second.dump(2);
  EXPECT_EQ(found->second.at("category"), "passed");
  EXPECT_EQ(found->second.at("observed").at("outcome"), "success");
}

// TORCHPLACE_RESULTS_DIR: one record a run, named after its filter, however long the filter
// (the mutation engine joins a kill set's cells with ':'; past 255 bytes nothing was written).
TEST(RunnerEndToEnd, ALongFilterWritesItsRecordIntoTheResultsFolder) {
  TempDir dir("runner_results_dir");
  std::string filter = "runner_probe.case=right_answer/device=cpu";
  for (int absent = 0; filter.size() < 400; ++absent)
    filter += ":runner_probe.case=absent_" + std::to_string(absent) + "/device=cpu";
  const std::string command =
      "env -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX -u GTEST_OUTPUT TORCHPLACE_RESULTS_DIR='" +
      dir.file(".") + "' timeout -k 5 " + std::to_string(kDeadlineS) + " '" +
      TORCHPLACE_RUNNER_PROBE + "' --gtest_filter='" + filter + "' 2>&1";
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  const int status = pclose(pipe);
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0) << output;
  std::vector<std::filesystem::path> records;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file(".")))
    records.push_back(entry.path());
  ASSERT_EQ(records.size(), 1U) << output;
  std::ifstream in(records[0]);
  const nlohmann::json doc = nlohmann::json::parse(in);
  ASSERT_EQ(doc.at("cells").size(), 1U) << doc.dump(2);
  EXPECT_EQ(doc.at("cells")[0].at("status"), "pass") << doc.dump(2);
}

}  // namespace
}  // namespace tp
