// Outcome categories: what a cell's expectation says it proves, and the category its record
// reports (results.json "category"). A fix whose mistake is latent, a latent broken variant and a
// race that was not shown must never read as "passed".
#include <gtest/gtest.h>

#include <torchplace/scenario.h>
#include "internal/results.h"

namespace tp {
namespace {

CellSpec spec_on(const std::string& device) {
  return CellSpec("demo", {{"variant", "fixed"}}, Placement{{torch::Device(device)}});
}

TEST(Category, EachExpectationPromisesItsOwnCategory) {
  EXPECT_STREQ(expected_category(Expect::success()), "passed");
  EXPECT_STREQ(expected_category(Expect::error(ErrorClass::kDeviceMismatch)), "expected_error");
  EXPECT_STREQ(expected_category(Expect::latent_mistake("why")), "latent_unexercised");
  EXPECT_STREQ(expected_category(Expect::unexercised("why")), "ran_unexercised");
  EXPECT_STREQ(expected_category(Expect::race_control("note")), "race_shown");
  EXPECT_STREQ(expected_category(Expect::skip("why")), "skipped");
}

TEST(Category, AFixIsUnexercisedExactlyWhereItsMistakeIsLatent) {
  for (const std::string device : {"cpu", "cuda:0", "cuda:1"}) {
    const CellSpec cell = spec_on(device);
    const bool latent = cross_device_mistake(cell, "why").latent;
    const Expect fix = cross_device_fix(cell, "why");
    EXPECT_EQ(fix.outcome, Expect::Outcome::kSuccess) << device;
    EXPECT_STREQ(expected_category(fix), latent ? "ran_unexercised" : "passed") << device;
    EXPECT_EQ(latent, device == "cpu") << device;
  }
  EXPECT_NE(cross_device_fix(spec_on("cpu"), "why").note.find("not exercised"), std::string::npos);
}

CellRecord record_of(const Expect& expect, const std::string& status,
                     const std::string& observed = "success") {
  CellRecord record(spec_on("cpu"), expect);
  record.status = status;
  record.observed_outcome = observed;
  return record;
}

TEST(Category, TheRecordAddsTheStatusAndWhatTheBodyReported) {
  EXPECT_EQ(record_of(Expect::success(), "pass").category(), "passed");
  EXPECT_EQ(record_of(Expect::unexercised("why"), "pass").category(), "ran_unexercised");
  EXPECT_EQ(record_of(Expect::latent_mistake("why"), "pass").category(), "latent_unexercised");
  EXPECT_EQ(record_of(Expect::error(ErrorClass::kDeviceMismatch), "pass", "error").category(),
            "expected_error");
  EXPECT_EQ(record_of(Expect::success(), "fail").category(), "failed");
  EXPECT_EQ(record_of(Expect::success(), "").category(), "failed");  // never finished
  EXPECT_EQ(record_of(Expect::skip("why"), "skip", "not_run").category(), "skipped");
  CellRecord race = record_of(Expect::race_control("note"), "pass");
  EXPECT_EQ(race.category(), "race_shown");
  race.race_not_shown = true;
  EXPECT_EQ(race.category(), "race_not_shown");
  CellRecord fix = record_of(Expect::success(), "pass");  // a fixed variant of a race pair
  fix.race_not_shown = true;
  EXPECT_EQ(fix.category(), "race_not_shown");
}

TEST(Category, CellRaceNotShownMarksTheRecordAndTheJson) {
  CellRecord record = record_of(Expect::race_control("note"), "pass");
  Cell cell(record.spec, record);
  cell.race_not_shown("no trial went wrong");
  const nlohmann::ordered_json json = to_json(record);
  EXPECT_EQ(json["category"], "race_not_shown");
  EXPECT_EQ(json["category_label"], "race not shown");
  EXPECT_EQ(json["expected"]["category"], "race_shown");
  EXPECT_EQ(json["notes"].back(), "race not shown: no trial went wrong");
}

TEST(Category, LabelsAreStableAndUnknownCategoriesAreRefused) {
  EXPECT_STREQ(category_label("ran_unexercised"), "ran (placement not exercised)");
  EXPECT_STREQ(category_label("latent_unexercised"), "latent (mistake cannot show here)");
  EXPECT_STREQ(category_label("race_not_shown"), "race not shown");
  EXPECT_THROW(category_label("fix_passed"), std::invalid_argument);
}

}  // namespace
}  // namespace tp
