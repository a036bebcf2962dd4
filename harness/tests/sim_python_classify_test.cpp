// torchplace_classify (harness/sim/python_classify.cpp), the C entry point the pytest plugin calls
// through ctypes (reports/torchplace/sim_library.py): the class of a real message, by name. The
// message is LibTorch 1.9-2.7's wording (error_class_test.cpp lists its versions).
#include <gtest/gtest.h>
#include <string>

extern "C" const char* torchplace_classify(const char* message) noexcept;

namespace {

constexpr const char* kMismatch =
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
    "cpu! (when checking argument for argument index in method wrapper__index_select)";

TEST(SimPythonClassify, NamesTheClassOfARealMessage) {
  const char* found = torchplace_classify(kMismatch);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(std::string(found), "DeviceMismatch");
}

TEST(SimPythonClassify, NoMessageIsUnclassified) {
  const char* found = torchplace_classify(nullptr);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(std::string(found), "Unclassified");
}

}  // namespace
