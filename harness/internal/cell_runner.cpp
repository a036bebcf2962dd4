// Turns every registered cell into a GoogleTest test and checks its outcome against its
// expectation. Only c10::Error is caught, and only to classify it: an error of the wrong class,
// an expected error raised outside the cell.under_test(...) region ("error while preparing"),
// an error where success was expected, or success where an error was expected fails the cell
// with the raw message. Anything else propagates, and GoogleTest fails the cell with it.
// A sticky CUDA error (an illegal address, a device-side assert) breaks the device for the rest
// of the process: its cell fails, and later cells on that device skip, naming it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <map>
#include <optional>

#include <torchplace/scenario.h>
#include <torchplace/sim/sim.h>
#include "expected_error.h"
#include "results.h"

namespace tp {
namespace {

constexpr uint64_t kSeed = 20261129;  // every cell starts from the same RNG state

// Accelerators a sticky error left unusable in this process: device -> the cell and message.
std::map<std::string, std::string>& broken_devices() {
  static std::map<std::string, std::string> broken;
  return broken;
}

std::optional<Unmet> broken_reason(const Placement& placement) {
  for (const torch::Device& device : placement.devices) {
    const auto found = broken_devices().find(device.str());
    if (found == broken_devices().end()) continue;
    return Unmet{SkipCode::kDeviceUnusable,
                 "not run: " + device.str() + " was left unusable by a sticky CUDA error in " +
                     found->second + "; run this cell in a fresh process"};
  }
  return std::nullopt;
}

void note_sticky_error(const CellRecord& record) {
  if (record.observed_outcome != "error" || !is_sticky_cuda_error(record.message)) return;
  const std::string first_line = record.message.substr(0, record.message.find('\n'));
  for (const torch::Device& device : record.spec.placement().devices) {
    // any accelerator, not only CUDA: the sim stands for one in the runner's CPU-host tests
    if (!device.is_cpu())
      broken_devices()[device.str()] = record.spec.id() + " (" + first_line + ")";
  }
}

// What the body raised: the outcome, the message without its backtrace, and its class.
void record_error(CellRecord& record, const c10::Error& error) {
  record.observed_outcome = "error";
  record.message = error.what_without_backtrace();
  record.observed_class = classify(record.message);
}

// The error must come from the body's cell.under_test(...) region (expected_error.h).
void run_expecting_error(const Scenario& scenario, Cell& cell, CellRecord& record) {
  const ErrorClass wanted = record.expected.error_class;
  try {
    scenario.body()(cell);
  } catch (const c10::Error& error) {
    record_error(record, error);
    if (const auto why = unexpected_error(record)) ADD_FAILURE() << *why;
    return;
  }
  record.observed_outcome = "success";
  ADD_FAILURE() << "expected " << name_of(wanted) << ", but the broken variant ran without error";
}

void run_expecting_success(const Scenario& scenario, Cell& cell, CellRecord& record) {
  try {
    scenario.body()(cell);
  } catch (const c10::Error& error) {
    record_error(record, error);
    ADD_FAILURE() << "expected success, but LibTorch raised " << name_of(*record.observed_class)
                  << "; raw message:\n"
                  << record.message;
    return;
  }
  record.observed_outcome = "success";
}

// The sim is registered when its first cell runs, never in a process that runs only CUDA cells
// (sim.h listed()).
void enable_sim_if_used(const Placement& placement) {
  for (const torch::Device& device : placement.devices) {
    if (sim::is_sim(device)) sim::enable();
  }
}

class CellTest : public ::testing::Test {
 public:
  CellTest(const Scenario& scenario, CellSpec spec) : scenario_(scenario), spec_(std::move(spec)) {}

  void TestBody() override {
    // The record exists before the expectation is asked for, so a throwing expectation still
    // leaves a failed cell in the results rather than none.
    CellRecord& record = ResultLog::instance().begin(spec_, Expect::skip("expectation threw"));
    record.expected = scenario_.expectation(spec_);
    const Expect& expected = record.expected;
    std::optional<Unmet> unmet = absent(spec_.placement());
    if (!unmet) unmet = broken_reason(spec_.placement());
    if (!unmet) unmet = scenario_.unmet_need(spec_);
    if (!unmet && expected.outcome == Expect::Outcome::kSkip) {
      ASSERT_FALSE(expected.note.empty()) << "a skip must say why";
      unmet = Unmet{SkipCode::kOtherCell, expected.note};
    }
    if (unmet) {
      record.skip_code = unmet->code;  // results.json "skip_code", checked by the gate
      record.needs_libtorch = unmet->needs_libtorch;
      GTEST_SKIP() << unmet->why;
    }
    enable_sim_if_used(spec_.placement());
    torch::manual_seed(kSeed);
    Cell cell(spec_, record);
    record.observed_outcome =
        "exception";  // stays so only if something other than c10::Error escapes
    const auto start = std::chrono::steady_clock::now();
    if (expected.outcome == Expect::Outcome::kError) {
      run_expecting_error(scenario_, cell, record);
    } else {
      run_expecting_success(scenario_, cell, record);
    }
    record.duration_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    note_sticky_error(record);
  }

 private:
  const Scenario& scenario_;
  CellSpec spec_;
};

}  // namespace

void register_cells() {
  for (const Scenario& scenario : Registry::all()) {
    if (!scenario.body())
      throw std::invalid_argument("scenario " + scenario.name() + " has no .run()");
    for (const CellSpec& spec : scenario.cells()) {
      const std::string test_name = spec.test_name();
      ::testing::RegisterTest(
          scenario.name().c_str(), test_name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
          [&scenario, spec]() -> ::testing::Test* { return new CellTest(scenario, spec); });
    }
  }
}

}  // namespace tp
