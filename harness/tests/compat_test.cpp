// tp::compat (harness/compat.h): the version test, the autocast switches per device type and
// AutocastGuard, which must leave autocast's state as it found it and, at the outermost level,
// drop the cast cache (in 1.13.1 a CPU autocast region reuses its bfloat16 copy of a leaf weight
// until the cache is cleared: an update made between two regions would go unseen). at::linear,
// as Python's F.linear calls it: the C++ frontend's linear casts weight.t(), a view, never cached.
#include <torchplace/compat.h>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

namespace tp::compat {
namespace {

constexpr int kVersion = TORCH_VERSION_MAJOR * 100 + TORCH_VERSION_MINOR;

// Saves the autocast state of the CPU and CUDA and puts it back: each test starts clean.
class Compat : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto type : {c10::kCPU, c10::kCUDA}) {
      enabled_[index(type)] = autocast_enabled(type);
      dtype_[index(type)] = autocast_dtype(type);
      set_autocast_enabled(type, false);
    }
  }
  void TearDown() override {
    for (auto type : {c10::kCPU, c10::kCUDA}) {
      set_autocast_enabled(type, enabled_[index(type)]);
      set_autocast_dtype(type, dtype_[index(type)]);
    }
  }
  static int index(c10::DeviceType type) { return type == c10::kCPU ? 0 : 1; }

 private:
  bool enabled_[2] = {false, false};
  at::ScalarType dtype_[2] = {at::kFloat, at::kFloat};
};

TEST_F(Compat, VersionTestComparesMajorThenMinor) {
  EXPECT_TRUE(TP_TORCH_AT_LEAST(TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR));
  EXPECT_TRUE(TP_TORCH_AT_LEAST(TORCH_VERSION_MAJOR, 0));
  EXPECT_TRUE(TP_TORCH_AT_LEAST(TORCH_VERSION_MAJOR - 1, 99));
  EXPECT_FALSE(TP_TORCH_AT_LEAST(TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR + 1));
  EXPECT_FALSE(TP_TORCH_AT_LEAST(TORCH_VERSION_MAJOR + 1, 0));
}

TEST_F(Compat, AutocastReachesCpuCudaAndFrom24PrivateUse1) {
  EXPECT_TRUE(autocast_supported(c10::kCPU));
  EXPECT_TRUE(autocast_supported(c10::kCUDA));
  EXPECT_EQ(autocast_supported(c10::kPrivateUse1), kVersion >= 204);
  EXPECT_FALSE(autocast_supported(c10::kMeta));
}

TEST_F(Compat, AnotherDeviceTypeIsRefusedByName) {
  const std::string also = kVersion >= 204 ? " and privateuseone" : "";
  try {
    set_autocast_enabled(c10::kMeta, true);
    ADD_FAILURE() << "set_autocast_enabled(Meta) did not throw";
  } catch (const c10::Error& error) {
    EXPECT_NE(std::string(error.what_without_backtrace())
                  .find("autocast supports cpu, cuda" + also + ", not meta"),
              std::string::npos)
        << error.what_without_backtrace();
  }
  try {
    (void)autocast_enabled(c10::kMeta);
    ADD_FAILURE() << "autocast_enabled(Meta) did not throw";
  } catch (const c10::Error& error) {
    EXPECT_NE(std::string(error.what_without_backtrace()).find("autocast: unsupported meta"),
              std::string::npos)
        << error.what_without_backtrace();
  }
}

TEST_F(Compat, EachDeviceTypeHasItsOwnSwitchAndDtype) {
  set_autocast_enabled(c10::kCPU, true);
  EXPECT_TRUE(autocast_enabled(c10::kCPU));
  EXPECT_FALSE(autocast_enabled(c10::kCUDA));
  set_autocast_enabled(c10::kCPU, false);
  set_autocast_enabled(c10::kCUDA, true);
  EXPECT_TRUE(autocast_enabled(c10::kCUDA));
  EXPECT_FALSE(autocast_enabled(c10::kCPU));
  // 1.13.1 refuses a CPU dtype other than bfloat16 (set_autocast_cpu_dtype); CUDA takes both
  set_autocast_dtype(c10::kCUDA, at::kHalf);
  set_autocast_dtype(c10::kCPU, at::kBFloat16);
  EXPECT_EQ(autocast_dtype(c10::kCUDA), at::kHalf) << "the CPU's dtype went to CUDA";
  EXPECT_EQ(autocast_dtype(c10::kCPU), at::kBFloat16);
  set_autocast_dtype(c10::kCUDA, at::kBFloat16);
  EXPECT_EQ(autocast_dtype(c10::kCUDA), at::kBFloat16);
}

TEST_F(Compat, GuardSetsThenRestoresNestedOrNot) {
  set_autocast_dtype(c10::kCPU, at::kBFloat16);
  set_autocast_dtype(c10::kCUDA, at::kHalf);
  {
    AutocastGuard outer(c10::kCPU, at::kBFloat16);
    {
      AutocastGuard inner(c10::kCPU, at::kBFloat16);
      AutocastGuard cuda(c10::kCUDA, at::kBFloat16);
      EXPECT_TRUE(autocast_enabled(c10::kCPU));
      EXPECT_TRUE(autocast_enabled(c10::kCUDA));
      EXPECT_EQ(autocast_dtype(c10::kCUDA), at::kBFloat16);
    }
    EXPECT_TRUE(autocast_enabled(c10::kCPU)) << "the inner guard disabled the outer region";
    EXPECT_FALSE(autocast_enabled(c10::kCUDA));
    EXPECT_EQ(autocast_dtype(c10::kCUDA), at::kHalf) << "CUDA's dtype was not restored";
  }
  EXPECT_FALSE(autocast_enabled(c10::kCPU));
  EXPECT_EQ(autocast_dtype(c10::kCPU), at::kBFloat16);
}

TEST_F(Compat, LeavingTheOutermostGuardDropsTheCastCache) {
  const torch::Tensor weight = torch::ones({2, 2}, torch::requires_grad());
  const torch::Tensor input = torch::ones({1, 2});
  torch::Tensor first;
  {
    AutocastGuard guard(c10::kCPU, at::kBFloat16);
    first = at::linear(input, weight);
  }
  EXPECT_EQ(first.scalar_type(), at::kBFloat16) << "autocast did not cast linear";
  {
    torch::NoGradGuard no_grad;
    weight.add_(1);  // an optimizer's step between two regions
  }
  AutocastGuard guard(c10::kCPU, at::kBFloat16);
  const torch::Tensor second = at::linear(input, weight);
  EXPECT_TRUE(torch::equal(second.to(torch::kFloat), torch::full({1, 2}, 4.0)))
      << "the second region used the first one's cached weight: " << second;
}

// As Python's nested `with torch.autocast` (observed: Debian's 1.13.1, pip's 2.13.0): leaving an
// inner region keeps the outer one's cast cache, so the outer region still reuses its copy.
TEST_F(Compat, LeavingAnInnerGuardKeepsTheOuterRegionsCache) {
  const torch::Tensor weight = torch::ones({2, 2}, torch::requires_grad());
  const torch::Tensor input = torch::ones({1, 2});
  AutocastGuard outer(c10::kCPU, at::kBFloat16);
  const torch::Tensor first = at::linear(input, weight);
  { AutocastGuard inner(c10::kCPU, at::kBFloat16); }
  {
    torch::NoGradGuard no_grad;
    weight.add_(1);
  }
  const torch::Tensor second = at::linear(input, weight);
  EXPECT_TRUE(torch::equal(second, first)) << "the inner guard dropped the outer region's cache";
}

}  // namespace
}  // namespace tp::compat
