// Cells are the full cartesian product of the axes and the device axis, named stably.
#include <torch/version.h>
#include <torchplace/naming.h>
#include <torchplace/scenario.h>
#include <torchplace/sim/sim.h>

#include <gtest/gtest.h>

namespace tp {
namespace {

TEST(Scenario, CellsAreTheCartesianProductWithDevicesLast) {
  Scenario scenario("demo");
  scenario.axis("a", {"x", "y"}).axis("b", {"1", "2", "3"}).on(DeviceAxis::kEach);
  const std::vector<CellSpec> cells = scenario.cells();
  const size_t devices = expand(DeviceAxis::kEach).size();
  ASSERT_EQ(cells.size(), 2u * 3u * devices);
  EXPECT_EQ(cells.front().id(), "demo/a=x/b=1/device=cpu");
  EXPECT_EQ(cells.front().test_name(), "a=x/b=1/device=cpu");
  EXPECT_EQ(cells.back().axis("a"), "y");
  EXPECT_EQ(cells.back().axis("b"), "3");
  EXPECT_THROW(cells.front().axis("missing"), std::out_of_range);
}

// A case axis takes its values from the table, and each cell gets its own case's behaviour.
TEST(Scenario, CasesCarryTheirOwnBehaviour) {
  Scenario scenario("tabled");
  const auto error = [](const CellSpec&) { return Expect::error(ErrorClass::kFileNotFound); };
  const auto fine = [](const CellSpec&) { return Expect::success(); };
  const auto needs_more = [](const CellSpec&) {
    return std::optional<Unmet>(Unmet{SkipCode::kNeedsCuda, "needs CUDA"});
  };
  scenario
      .cases("case",
             {{"missing", [](Cell&) {}, error}, {"present", [](Cell&) {}, fine, needs_more}})
      .on(DeviceAxis::kEach);
  const std::vector<CellSpec> cells = scenario.cells();
  const size_t devices = expand(DeviceAxis::kEach).size();
  ASSERT_EQ(cells.size(), 2u * devices);
  const CellSpec& missing = cells.front();
  const CellSpec& present = cells[devices];
  EXPECT_EQ(missing.id(), "tabled/case=missing/device=cpu");
  EXPECT_EQ(present.id(), "tabled/case=present/device=cpu");
  EXPECT_EQ(scenario.expectation(missing).outcome, Expect::Outcome::kError);
  EXPECT_EQ(scenario.expectation(present).outcome, Expect::Outcome::kSuccess);
  EXPECT_FALSE(scenario.unmet_need(missing).has_value());
  ASSERT_TRUE(scenario.unmet_need(present).has_value());
  EXPECT_EQ(scenario.unmet_need(present)->code, SkipCode::kNeedsCuda);
}

TEST(Scenario, CasesRefuseTwinsGapsAndASecondBehaviour) {
  const auto fine = [](const CellSpec&) { return Expect::success(); };
  const BodyFn body = [](Cell&) {};
  EXPECT_THROW(Scenario("twice").cases("case", {{"a", body, fine}, {"a", body, fine}}),
               std::invalid_argument);
  EXPECT_THROW(Scenario("gap").cases("case", {{"a", body, nullptr}}), std::invalid_argument);
  Scenario cased("cased");
  cased.cases("case", {{"a", body, fine}});
  EXPECT_THROW(cased.run(body), std::logic_error);
  EXPECT_THROW(cased.expect(fine), std::logic_error);
  EXPECT_THROW(Scenario("ran").run(body).cases("case", {{"a", body, fine}}), std::logic_error);
  EXPECT_THROW(Scenario("expected").expect(fine).cases("case", {{"a", body, fine}}),
               std::logic_error);
  EXPECT_THROW(Scenario("empty").cases("case", {}), std::invalid_argument);
  // A second axis of the same name would shadow the table's values.
  EXPECT_THROW(Scenario("shadow").axis("case", {"a"}).cases("case", {{"a", body, fine}}),
               std::invalid_argument);
  EXPECT_THROW(Scenario("device").axis("device", {"cpu"}), std::invalid_argument);
}

TEST(Devices, CpuIsAlwaysListedAndCudaZeroEvenWhenAbsent) {
  const std::vector<Placement> placements = expand(DeviceAxis::kEach);
  ASSERT_GE(placements.size(), 3u);
  EXPECT_EQ(placements[0].label(), "cpu");
  EXPECT_FALSE(absent_reason(placements[0]).has_value());
  EXPECT_EQ(placements[1].label(), "sim:0");  // simulated (harness/sim/): present everywhere
  EXPECT_EQ(naming::name("s", {}, placements[1].devices, naming::Form::kTestName), "device=sim0");
  EXPECT_FALSE(absent_reason(placements[1]).has_value());
  EXPECT_EQ(placements[2].label(), "cuda:0");
  EXPECT_EQ(naming::name("s", {}, placements[2].devices, naming::Form::kTestName), "device=cuda0");
  EXPECT_EQ(absent_reason(placements[2]).has_value(), cuda_device_count() == 0);
  // then one cell a GPU present, cuda:0..N-1; with none, cuda:0 alone (its cells skip)
  const int gpus = cuda_device_count();
  ASSERT_EQ(placements.size(), 2u + static_cast<size_t>(gpus == 0 ? 1 : gpus));
  EXPECT_EQ(placements.back().label(), "cuda:" + std::to_string(gpus == 0 ? 0 : gpus - 1));
}

TEST(Devices, PairsNeedTwoGpusAndSaySo) {
  const std::vector<Placement> pairs = expand(DeviceAxis::kCudaPair);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].label(), "cuda:0+cuda:1");
  EXPECT_EQ(naming::name("s", {}, pairs[0].devices, naming::Form::kTestName),
            "devices=cuda0+cuda1");
  if (cuda_device_count() < 2) {
    ASSERT_TRUE(absent_reason(pairs[0]).has_value());
    EXPECT_NE(absent_reason(pairs[0])->find("cuda:0+cuda:1"), std::string::npos);
  }
}

TEST(Devices, ThePairAxisListsTheSimulatedPairFirst) {
  const std::vector<Placement> pairs = expand(DeviceAxis::kPair);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].label(), "sim:0+sim:1");
  EXPECT_EQ(naming::name("s", {}, pairs[0].devices, naming::Form::kTestName), "devices=sim0+sim1");
  EXPECT_FALSE(absent(pairs[0]).has_value()) << "the simulated pair is present on every host";
  EXPECT_EQ(pairs[1].label(), "cuda:0+cuda:1");
}

// Two ranks' devices (scenarios/ddp.cpp): both on the CPU, then the pair axis's pairs.
TEST(Devices, RankPairsStartOnTheCpu) {
  const std::vector<Placement> ranks = expand(DeviceAxis::kRankPair);
  ASSERT_EQ(ranks.size(), 3u);
  EXPECT_EQ(ranks[0].label(), "cpu");
  EXPECT_FALSE(absent(ranks[0]).has_value());
  EXPECT_EQ(ranks[1].label(), "sim:0+sim:1");
  EXPECT_EQ(ranks[2].label(), "cuda:0+cuda:1");
}

// The code the gate reads (results.json "skip_code"): which absence, from the closed set.
TEST(Devices, AbsenceCarriesItsSkipCode) {
  const Placement cuda0{{torch::Device(torch::kCUDA, 0)}};
  const Placement pair{{torch::Device(torch::kCUDA, 0), torch::Device(torch::kCUDA, 1)}};
  const int gpus = cuda_device_count();
  const SkipCode none = TORCHPLACE_WITH_CUDA ? SkipCode::kNoCudaDevice : SkipCode::kNoCudaBuild;
  if (gpus == 0) {
    ASSERT_TRUE(absent(cuda0).has_value());
    EXPECT_EQ(name_of(absent(cuda0)->code), name_of(none));
    EXPECT_EQ(name_of(absent(pair)->code), name_of(none));
  } else if (gpus == 1) {
    EXPECT_FALSE(absent(cuda0).has_value());
    EXPECT_EQ(name_of(absent(pair)->code), "too_few_gpus");
  }
  EXPECT_FALSE(absent({{torch::Device(torch::kCPU)}}).has_value());
  EXPECT_EQ(name_of(SkipCode::kDeviceUnusable), "device_unusable");
}

// needs_libtorch(major, minor): none on this build's version or older, a coded skip naming the
// version on a newer one.
TEST(Devices, NeedsLibTorchWaitsOnlyForANewerVersion) {
  const int major = TORCH_VERSION_MAJOR, minor = TORCH_VERSION_MINOR;
  EXPECT_FALSE(needs_libtorch(major, minor, "synthetic").has_value());
  EXPECT_FALSE(needs_libtorch(major - 1, minor + 1, "synthetic").has_value());
  const std::optional<Unmet> minor_up = needs_libtorch(major, minor + 1, "synthetic: why");
  ASSERT_TRUE(minor_up.has_value());
  EXPECT_EQ(name_of(minor_up->code), "needs_newer_libtorch");
  EXPECT_EQ(minor_up->why, "synthetic: why");
  EXPECT_EQ(minor_up->needs_libtorch, std::to_string(major) + "." + std::to_string(minor + 1));
  const std::optional<Unmet> major_up = needs_libtorch(major + 1, 0, "synthetic");
  ASSERT_TRUE(major_up.has_value());
  EXPECT_EQ(major_up->needs_libtorch, std::to_string(major + 1) + ".0");
}

// One function names cells, gtest tests and benchmarks: the same axes and devices, each tool's
// separators.
TEST(Naming, OneSpellingOfAxesAndDevicesPerForm) {
  const naming::Axes axes = {{"loss", "nll"}, {"variant", "broken"}};
  const std::vector<torch::Device> cuda = {torch::Device(torch::kCUDA, 0)};
  EXPECT_EQ(naming::name("amp", axes, cuda, naming::Form::kCellId),
            "amp/loss=nll/variant=broken/device=cuda:0");
  EXPECT_EQ(naming::name("amp", axes, cuda, naming::Form::kTestName),
            "loss=nll/variant=broken/device=cuda0");
  EXPECT_EQ(naming::name("amp", axes, cuda, naming::Form::kBenchmark),
            "amp/loss:nll/variant:broken/device:cuda:0");
  const std::vector<torch::Device> pair = {torch::Device(torch::kCUDA, 0),
                                           torch::Device(torch::kCUDA, 1)};
  EXPECT_EQ(naming::name("m", {}, pair, naming::Form::kCellId), "m/devices=cuda:0+cuda:1");
  EXPECT_EQ(naming::name("b", {{"bytes", "4096"}}, {}, naming::Form::kBenchmark), "b/bytes:4096");
  EXPECT_EQ(naming::device(tp::sim::device(), naming::Form::kCellId), "sim:0");
  const CellSpec cell("amp", axes, Placement{cuda});
  EXPECT_EQ(cell.id(), naming::name("amp", axes, cuda, naming::Form::kCellId));
  EXPECT_EQ(cell.test_name(), naming::name("amp", axes, cuda, naming::Form::kTestName));
}

// Cells and benchmarks are the product of their axes: the first axis slowest unless another is
// named, each point spelled in the declared order.
TEST(Naming, ProductOfAxesInDeclaredOrder) {
  const naming::Domain domain = {{"direction", {"h2d", "d2h"}}, {"bytes", {"4", "16"}}};
  const std::vector<naming::Axes> first = naming::product(domain);
  ASSERT_EQ(first.size(), 4u);
  EXPECT_EQ(first[1], (naming::Axes{{"direction", "h2d"}, {"bytes", "16"}}));
  const std::vector<naming::Axes> by_size = naming::product(domain, "bytes");
  ASSERT_EQ(by_size.size(), 4u);
  EXPECT_EQ(by_size[1], (naming::Axes{{"direction", "d2h"}, {"bytes", "4"}}));
  // three axes, the middle one slowest: the others keep their order, the last fastest
  const naming::Domain three = {{"a", {"0", "1"}}, {"b", {"x", "y"}}, {"c", {"p", "q"}}};
  const std::vector<naming::Axes> by_b = naming::product(three, "b");
  ASSERT_EQ(by_b.size(), 8u);
  EXPECT_EQ(by_b[1], (naming::Axes{{"a", "0"}, {"b", "x"}, {"c", "q"}}));
  EXPECT_EQ(by_b[2], (naming::Axes{{"a", "1"}, {"b", "x"}, {"c", "p"}}));
  EXPECT_EQ(by_b[4], (naming::Axes{{"a", "0"}, {"b", "y"}, {"c", "p"}}));
  // the last axis slowest: rotated to the front, not swapped with the first (c, a, b)
  EXPECT_EQ(naming::product(three, "c")[1], (naming::Axes{{"a", "0"}, {"b", "y"}, {"c", "p"}}));
  EXPECT_EQ(naming::product({}), std::vector<naming::Axes>(1));  // no axes: one empty point
  EXPECT_THROW(naming::product(domain, "count"), std::invalid_argument);
  EXPECT_THROW(naming::product({{"a", {"0"}}, {"a", {"1"}}}), std::invalid_argument);
}

}  // namespace
}  // namespace tp
