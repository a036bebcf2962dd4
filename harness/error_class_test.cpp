// The classifier against the message texts that each LibTorch version gives for the mistakes.
#include "error_class.h"

#include <gtest/gtest.h>

namespace tp {
namespace {

struct Case {
  const char* versions;
  const char* message;
  ErrorClass expected;
};

// clang-format off
const Case kCases[] = {
    {"1.9-2.7", "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument index in method wrapper__index_select)", ErrorClass::kDeviceMismatch},
    {"2.8+", "Expected all tensors to be on the same device, but got index is on cpu, different from other tensors on cuda:0 (when checking argument in method wrapper_CUDA__index_select)", ErrorClass::kDeviceMismatch},
    {"1.7-1.8", "Input, output and indices must be on the current device", ErrorClass::kDeviceMismatch},
    {"<=1.6", "Expected object of device type cuda but got device type cpu for argument #3 'index' in call to _th_index_select", ErrorClass::kDeviceMismatch},
    {"1.13", "PyTorch is not linked with support for cuda devices", ErrorClass::kBackendUnavailable},
    {"1.13", "Could not run 'aten::_pin_memory' with arguments from the 'CUDA' backend.", ErrorClass::kBackendUnavailable},
    {"2.14", "Cannot access accelerator device when none is available.", ErrorClass::kBackendUnavailable},
    {"1.13", "mat1 and mat2 must have the same dtype", ErrorClass::kDtypeMismatch},
    {"2.14", "mat1 and mat2 must have the same dtype, but got Float and Double", ErrorClass::kDtypeMismatch},
    {"1.13", "expected scalar type Long but found Int", ErrorClass::kDtypeMismatch},
    {"2.14", "expected target dtype to be Long or Byte, but got Int", ErrorClass::kDtypeMismatch},
    {"any", "something nobody has seen before", ErrorClass::kUnclassified},
};
// clang-format on

class ClassifyTest : public ::testing::TestWithParam<Case> {};

TEST_P(ClassifyTest, MapsMessageToClass) {
  const Case& c = GetParam();
  EXPECT_EQ(name_of(classify(c.message)), name_of(c.expected)) << c.versions << ": " << c.message;
}

INSTANTIATE_TEST_SUITE_P(GuideTable, ClassifyTest, ::testing::ValuesIn(kCases));

TEST(StickyCudaErrors, OnlyErrorsThatBreakTheContextCount) {
  EXPECT_TRUE(is_sticky_cuda_error("CUDA error: an illegal memory access was encountered"));
  EXPECT_TRUE(is_sticky_cuda_error("CUDA error: device-side assert triggered\nCUDA kernel errors"));
  EXPECT_TRUE(is_sticky_cuda_error("CUDA error: unspecified launch failure"));
  EXPECT_FALSE(is_sticky_cuda_error("CUDA out of memory. Tried to allocate 2.00 GiB"));
  EXPECT_FALSE(is_sticky_cuda_error(
      "Expected all tensors to be on the same device, but found at least two devices"));
  EXPECT_FALSE(is_sticky_cuda_error(""));
}

TEST(MessageFamilies, EveryPatternCompilesAndNamesItsVersions) {
  for (const MessageFamily& family : message_families()) {
    EXPECT_FALSE(family.versions.empty()) << family.pattern;
    EXPECT_NE(family.error_class, ErrorClass::kUnclassified) << family.pattern;
  }
  EXPECT_EQ(classify(""), ErrorClass::kUnclassified);  // forces every regex to compile
}

}  // namespace
}  // namespace tp
