// tp::move_to_meta (placement.h): the registered parameters and buffers go to meta and a plain
// tensor member stays on the CPU, on every LibTorch; an error other than 1.13's refusal of the
// swap is passed on, never taken for that refusal.
#include <torchplace/placement.h>

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

}  // namespace
}  // namespace placement_test
