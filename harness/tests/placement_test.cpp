// tp::move_to_meta (placement.h): the registered parameters and buffers go to meta and a plain
// tensor member stays on the CPU, on every LibTorch; an error other than 1.13's refusal of the
// swap is passed on, never taken for that refusal. tp::expect_placement notes what it checked.
#include <torchplace/placement.h>
#include "internal/results.h"

#include <gtest/gtest.h>

#include <string>

namespace placement_test {  // unity-built with the other harness tests
namespace {

struct WithMember : torch::nn::Module {
  WithMember() {
    weight = register_parameter("weight", torch::ones({2}));
    table = register_buffer("table", torch::ones({3}));
  }
  torch::Tensor weight, table;
  torch::Tensor plain = torch::ones({4});  // not registered: Module::to never visits it
};

// A module whose move fails for a reason of its own (synthetic).
struct Refuses : torch::nn::Module {
  using torch::nn::Module::to;
  void to(torch::Device, bool) override { TORCH_CHECK(false, "synthetic: this module stays"); }
};

TEST(MoveToMeta, MovesWhatModuleToVisitsAndNothingElse) {
  WithMember module;
  tp::move_to_meta(module);
  EXPECT_EQ(module.named_parameters()["weight"].device(), tp::kMeta);
  EXPECT_EQ(module.named_buffers()["table"].device(), tp::kMeta);
  EXPECT_EQ(module.plain.device(), torch::Device(torch::kCPU));
}

TEST(MoveToMeta, PassesOnAnotherError) {
  Refuses refuses;
  try {
    tp::move_to_meta(refuses);
    ADD_FAILURE() << "move_to_meta swallowed the module's own error";
  } catch (const c10::Error& error) {
    EXPECT_NE(std::string(error.what()).find("synthetic: this module stays"), std::string::npos)
        << error.what();
  }
}

// expect_placement records what it checked: a note naming each tensor and the device it must be
// on, and the count in the metric meta_placement_checks.
TEST(ExpectPlacement, NotesEachTensorAndCountsThem) {
  tp::CellRecord record(tp::CellSpec("demo", {}, tp::Placement{{torch::kCPU}}),
                        tp::Expect::success());
  tp::Cell cell(record.spec, record);
  tp::expect_placement(cell, {{"input", torch::ones({2}, torch::device(tp::kMeta)), tp::kMeta},
                              {"target", torch::ones({2}), torch::Device(torch::kCPU)}});
  ASSERT_EQ(record.notes.size(), 1u);
  EXPECT_EQ(record.notes[0], "placement checked on meta: input on meta, target on cpu");
  EXPECT_EQ(record.metrics.at("meta_placement_checks"), 2.0);
}

}  // namespace
}  // namespace placement_test
