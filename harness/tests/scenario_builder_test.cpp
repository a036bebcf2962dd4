// The scenario-author API refuses what would make a bad name or a cell without its behaviour,
// naming the scenario and the call (harness/scenario.cpp), and keeps what each call sets.
#include <torchplace/devices.h>
#include <torchplace/scenario.h>

#include <gtest/gtest.h>

#include "internal/results.h"

#include <functional>
#include <stdexcept>
#include <string>

namespace tp {
namespace {

// The message of what `call` throws as E, "" if it throws nothing.
template <typename E>
std::string refusal(const std::function<void()>& call) {
  try {
    call();
  } catch (const E& error) {
    return error.what();
  }
  return "";
}

const BodyFn kBody = [](Cell&) {};
const ExpectFn kFine = [](const CellSpec&) { return Expect::success(); };

// Names and values become test names, ids and CTest labels: [a-z0-9_], each end included.
TEST(ScenarioBuilder, NamesAndValuesAreLowercaseLettersDigitsAndUnderscores) {
  EXPECT_NO_THROW(Scenario("s").axis("a_z", {"z09", "a", "_"}));
  const std::string rule = "': use lowercase letters, digits, _";
  EXPECT_EQ(refusal<std::invalid_argument>([] { Scenario("s").axis("Big", {"x"}); }),
            "s: axis name 'Big" + rule);
  EXPECT_EQ(refusal<std::invalid_argument>([] {
              Scenario("s").axis("a", {"x", "X"});
            }),
            "s: value of axis a 'X" + rule);
  for (const std::string bad : {"", "a-b", "a.b", "a b", "{", "`", "/", ":"}) {
    EXPECT_EQ(refusal<std::invalid_argument>([&] { Scenario("s").axis("a", {bad}); }),
              "s: value of axis a '" + bad + rule)
        << bad;
  }
  EXPECT_EQ(refusal<std::invalid_argument>([] { Registry::add("Not_A_Token"); }),
            "scenario name 'Not_A_Token" + rule);
}

// After cases(), the table holds the behaviour: run(), expect() and needs() are refused.
TEST(ScenarioBuilder, ACasedScenarioRefusesEachSecondBehaviourByName) {
  Scenario cased("cased");
  cased.cases("case", {{"a", kBody, kFine}});
  const std::string held = "() after cases(): the table holds it";
  EXPECT_EQ(refusal<std::logic_error>([&] { cased.run(kBody); }), "cased: run" + held);
  EXPECT_EQ(refusal<std::logic_error>([&] { cased.expect(kFine); }), "cased: expect" + held);
  EXPECT_EQ(refusal<std::logic_error>([&] { cased.needs(nullptr); }), "cased: needs" + held);
  const NeedsFn none = [](const CellSpec&) { return std::optional<Unmet>(); };
  EXPECT_THROW(Scenario("needed").needs(none).cases("case", {{"a", kBody, kFine}}),
               std::logic_error);
}

// What run(), expect(), needs() and on() set is what the cells get.
TEST(ScenarioBuilder, EachCallKeepsWhatItSets) {
  int ran = 0;
  const NeedsFn gpu = [](const CellSpec&) {
    return std::optional<Unmet>(Unmet{SkipCode::kNeedsCuda, "needs CUDA"});
  };
  Scenario scenario("kept");
  scenario.on(DeviceAxis::kPair)
      .run([&](Cell&) { ++ran; })
      .expect([](const CellSpec&) { return Expect::error(ErrorClass::kDeviceMismatch); })
      .needs(gpu);
  const std::vector<CellSpec> cells = scenario.cells();
  ASSERT_EQ(cells.size(), expand(DeviceAxis::kPair).size());
  EXPECT_EQ(cells.front().id(), "kept/devices=sim:0+sim:1");
  EXPECT_EQ(scenario.expectation(cells.front()).outcome, Expect::Outcome::kError);
  EXPECT_EQ(scenario.unmet_need(cells.front())->code, SkipCode::kNeedsCuda);
  ASSERT_TRUE(scenario.body());
  CellRecord record(cells.front(), Expect::success());
  Cell cell(cells.front(), record);
  scenario.body()(cell);
  EXPECT_EQ(ran, 1);
}

// One scenario a name: its cells' ids and test names are unique. Registered after the cells were
// listed (the test main lists them first), so it adds none.
TEST(ScenarioBuilder, ANameIsRegisteredOnce) {
  Registry::add("registered_once_probe");
  EXPECT_EQ(refusal<std::invalid_argument>([] { Registry::add("registered_once_probe"); }),
            "scenario 'registered_once_probe' registered twice");
}

// Nested regions under test: the innermost names the error; the outer ones add nothing.
TEST(ScenarioBuilder, TheInnermostRegionNamesTheError) {
  const CellSpec spec = Scenario("nested").cells().front();
  CellRecord record(spec, Expect::success());
  Cell cell(spec, record);
  const auto inner = [&] {
    return cell.under_test("inner", []() -> int { TORCH_CHECK(false, "refused"); });
  };
  EXPECT_THROW(cell.under_test("outer", inner), c10::Error);
  EXPECT_EQ(record.raised_in, "inner");
  EXPECT_EQ(record.raised_message, "refused");
}

}  // namespace
}  // namespace tp
