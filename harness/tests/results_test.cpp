// A cell's record in the results file (internal/results.cpp to_json): what its expectation said
// (the note, whether the mistake is latent, the argument a mismatch must name), its skip code,
// its duration, and the category where an expected error meets a body's other reports. The
// Python readers check the same fields (reports/torchplace/schema.py check_cell).
#include <gtest/gtest.h>

#include <torchplace/scenario.h>
#include "internal/results.h"

namespace results_test {  // unity-built with the other harness tests
namespace {

using tp::CellRecord;
using tp::Expect;

CellRecord record_of(const Expect& expect, const std::string& status) {
  CellRecord record(
      tp::CellSpec("demo", {{"variant", "broken"}}, tp::Placement{{torch::Device("cpu")}}), expect);
  record.status = status;
  return record;
}

TEST(ResultsRecord, TheExpectationKeepsItsNoteAndLatency) {
  const auto latent = tp::to_json(record_of(Expect::latent_mistake("synthetic: why"), "pass"));
  const auto& expected = latent.at("expected");
  EXPECT_EQ(expected.at("note"), "synthetic: why") << expected.dump();
  EXPECT_EQ(expected.at("latent"), true) << expected.dump();
  EXPECT_EQ(expected.at("category"), "latent_unexercised") << expected.dump();
  const auto shown = tp::to_json(record_of(Expect::success("synthetic: a note"), "pass"));
  EXPECT_EQ(shown.at("expected").at("note"), "synthetic: a note");
  EXPECT_EQ(shown.at("expected").at("latent"), false);
}

TEST(ResultsRecord, TheExpectationNamesTheArgumentOrNone) {
  const Expect named = Expect::error(tp::ErrorClass::kDeviceMismatch).naming("target");
  const auto expected = tp::to_json(record_of(named, "pass")).at("expected");
  EXPECT_EQ(expected.at("argument"), "target") << expected.dump();
  EXPECT_EQ(expected.at("category"), "expected_error") << expected.dump();
  EXPECT_EQ(expected.at("error_class"), "DeviceMismatch") << expected.dump();
  const auto any = tp::to_json(record_of(Expect::error(tp::ErrorClass::kDeviceMismatch), "pass"));
  EXPECT_EQ(any.at("expected").at("argument"), "") << any.at("expected").dump();
}

TEST(ResultsRecord, OnlyASkippedCellHasASkipCode) {
  EXPECT_TRUE(tp::to_json(record_of(Expect::success(), "pass")).at("skip_code").is_null());
  EXPECT_TRUE(tp::to_json(record_of(Expect::success(), "fail")).at("skip_code").is_null());
  CellRecord coded = record_of(Expect::success(), "skip");
  coded.skip_code = tp::SkipCode::kNoCudaDevice;
  EXPECT_EQ(tp::to_json(coded).at("skip_code"), "no_cuda_device");
  // a GTEST_SKIP in a body, which the harness did not code
  EXPECT_EQ(tp::to_json(record_of(Expect::success(), "skip")).at("skip_code"), "unlisted");
}

// A needs_newer_libtorch skip names the version it waits for (the gate compares the run's);
// every other record says null.
TEST(ResultsRecord, ANewerLibTorchSkipNamesItsVersion) {
  EXPECT_TRUE(tp::to_json(record_of(Expect::success(), "skip")).at("needs_libtorch").is_null());
  CellRecord waits = record_of(Expect::success(), "skip");
  waits.skip_code = tp::SkipCode::kNeedsNewerLibTorch;
  waits.needs_libtorch = "2.0";
  EXPECT_EQ(tp::to_json(waits).at("skip_code"), "needs_newer_libtorch");
  EXPECT_EQ(tp::to_json(waits).at("needs_libtorch"), "2.0");
}

// The runner times only the cells it runs: a skipped one reports no time.
TEST(ResultsRecord, ACellThatDidNotRunTookNoTime) {
  CellRecord skipped = record_of(Expect::skip("synthetic: covered elsewhere"), "skip");
  skipped.skip_code = tp::SkipCode::kOtherCell;
  EXPECT_EQ(tp::to_json(skipped).at("duration_ms"), 0.0);
}

// A cell that raised its expected error is expected_error, whatever else its body reported
// before it raised (here: a race it did not show).
TEST(ResultsRecord, AnExpectedErrorOutranksARaceNotShown) {
  CellRecord record = record_of(Expect::error(tp::ErrorClass::kDeviceMismatch), "pass");
  record.observed_outcome = "error";
  tp::Cell cell(record.spec, record);
  cell.race_not_shown("synthetic: no trial went wrong");
  EXPECT_EQ(record.category(), "expected_error");
  EXPECT_EQ(tp::to_json(record).at("category"), "expected_error");
}

}  // namespace
}  // namespace results_test
