// The classifier against the message texts that each LibTorch version gives for the mistakes.
#include <torchplace/error_class.h>
#include <torchplace/sim/sim.h>

#include <gtest/gtest.h>
#include <set>
#include <string>

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
    // The element-wise (TensorIterator) check keeps the 1.9 wording on 2.14.1.
    {"2.14.1", "Expected all tensors to be on the same device, but found at least two devices, meta and cpu!", ErrorClass::kDeviceMismatch},
    {"1.x-2.x", "Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 'weight'; but device 1 does not equal 0 (while checking arguments for cudnn_convolution)", ErrorClass::kDeviceMismatch},
    // A CUDA build on a host without a usable GPU (c10/cuda/CUDAFunctions.cpp).
    {"1.x-2.x", "CUDA driver initialization failed, you might not have a CUDA gpu.", ErrorClass::kBackendUnavailable},
    {"1.x-2.x", "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx", ErrorClass::kBackendUnavailable},
    {"2.x", "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.72 GiB of which 1.02 GiB is free.", ErrorClass::kOutOfMemory},
    {"1.13", "PyTorch is not linked with support for cuda devices", ErrorClass::kBackendUnavailable},
    {"1.13", "Could not run 'aten::_pin_memory' with arguments from the 'CUDA' backend.", ErrorClass::kBackendUnavailable},
    {"2.14", "Cannot access accelerator device when none is available.", ErrorClass::kBackendUnavailable},
    {"1.13", "mat1 and mat2 must have the same dtype", ErrorClass::kDtypeMismatch},
    {"2.14", "mat1 and mat2 must have the same dtype, but got Float and Double", ErrorClass::kDtypeMismatch},
    {"1.13", "expected scalar type Long but found Int", ErrorClass::kDtypeMismatch},
    {"2.14", "expected target dtype to be Long or Byte, but got Int", ErrorClass::kDtypeMismatch},
    // Gloo's, through c10d's Work::wait (seen 1.13.1, libgloo 0.0~git20220518: scenarios/ddp.cpp).
    {"1.13.1", "[./gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 2000ms for recv operation to complete", ErrorClass::kCollectiveTimeout},
    {"any", "something nobody has seen before", ErrorClass::kUnclassified},
    // Anchored: a family's sentence inside another message does not classify it.
    {"any", "while loading: mat1 and mat2 must have the same dtype", ErrorClass::kUnclassified},
};
// clang-format on

class ClassifyTest : public ::testing::TestWithParam<Case> {};

TEST_P(ClassifyTest, MapsMessageToClass) {
  const Case& c = GetParam();
  EXPECT_EQ(name_of(classify(c.message)), name_of(c.expected)) << c.versions << ": " << c.message;
}

// Named by the expected class and the row (DeviceMismatch_0): stable, unlike the bytes of a Case.
INSTANTIATE_TEST_SUITE_P(GuideTable, ClassifyTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(name_of(info.param.expected)) + "_" +
                                  std::to_string(info.index);
                         });

// A value outside the enumeration (a cast from a corrupt record) still has a label: the fallback.
TEST(ErrorClassNames, AValueOutsideTheEnumIsUnclassified) {
  EXPECT_EQ(name_of(static_cast<ErrorClass>(255)), "Unclassified");
}

// Every class has a name of its own: results.json, the gates and `torchplace explain` read it.
// kUnclassified is the enum's last value (error_class.h).
TEST(ErrorClassNames, EachClassHasANameOfItsOwn) {
  std::set<std::string> names;
  for (int value = 0; value <= static_cast<int>(ErrorClass::kUnclassified); ++value) {
    const std::string name(name_of(static_cast<ErrorClass>(value)));
    EXPECT_FALSE(name.empty()) << "class " << value;
    EXPECT_TRUE(names.insert(name).second) << name << " names two classes";
  }
}

TEST(StickyCudaErrors, OnlyErrorsThatBreakTheContextCount) {
  EXPECT_TRUE(is_sticky_cuda_error("CUDA error: an illegal memory access was encountered"));
  EXPECT_TRUE(is_sticky_cuda_error("CUDA error: device-side assert triggered\nCUDA kernel errors"));
  EXPECT_TRUE(is_sticky_cuda_error("CUDA error: unspecified launch failure"));
  EXPECT_FALSE(is_sticky_cuda_error("CUDA out of memory. Tried to allocate 2.00 GiB"));
  EXPECT_FALSE(is_sticky_cuda_error(
      "Expected all tensors to be on the same device, but found at least two devices"));
  EXPECT_FALSE(is_sticky_cuda_error(""));
}

// The wrappers core_message removes, each around one real sentence (synthetic compositions in the
// documented form of each wrapper; the real wrapped messages are in harness/messages/corpus.json).
TEST(CoreMessage, RemovesTheKnownWrappersAndTheBacktrace) {
  const std::string sentence = "mat1 and mat2 must have the same dtype";
  EXPECT_EQ(core_message("RuntimeError: " + sentence), sentence);
  EXPECT_EQ(core_message("  torch.cuda.OutOfMemoryError: " + sentence), sentence);
  EXPECT_EQ(core_message("[enforce fail at inline_container.cc:145] . " + sentence), sentence);
  EXPECT_EQ(core_message("[enforce fail at CPUAllocator.cpp:64] data. " + sentence), sentence);
  EXPECT_EQ(core_message(
                sentence +
                "\nException raised from addmm at Blas.cpp:1 (most recent call first):\nframe #0"),
            sentence);
  EXPECT_EQ(core_message(sentence + " (operator() at aten/src/ATen/x.cpp:1)\nframe #0: c10::Error"),
            sentence + " (operator() at aten/src/ATen/x.cpp:1)");
  EXPECT_EQ(core_message("The following operation failed in the TorchScript interpreter.\n"
                         "Traceback of TorchScript (most recent call last):\n"
                         "  File \"<string>\", line 2, in forward\n"
                         "def forward(self, x):\n  return x.mm(x)\n         ~~~~ <--- HERE\n"
                         "RuntimeError: " +
                         sentence + "\n"),
            sentence + "\n");
  // The same with a blank line before the class line (the traceback's sections end with one).
  EXPECT_EQ(core_message("The following operation failed in the TorchScript interpreter.\n"
                         "Traceback of TorchScript (most recent call last):\n"
                         "  File \"<string>\", line 2, in forward\n"
                         "def forward(self, x):\n  return x.mm(x)\n         ~~~~ <--- HERE\n\n"
                         "RuntimeError: " +
                         sentence),
            sentence);
  // Four wrappers, one inside the next, are all removed (strip_front makes up to eight passes).
  EXPECT_EQ(core_message("RuntimeError: torch.jit.Error: RuntimeError: [enforce fail at "
                         "inline_container.cc:145] . " +
                         sentence),
            sentence);
  // A ninth stays: eight passes, no more (a bound, so a message never loops).
  std::string nine;
  for (int i = 0; i < 9; ++i) nine += "RuntimeError: ";
  EXPECT_EQ(core_message(nine + sentence), "RuntimeError: " + sentence);
  // A name that is no exception's (a warning) stays: the message is not an error.
  EXPECT_EQ(classify("UserWarning: " + sentence), ErrorClass::kUnclassified);
  // The interpreter's sentence with no message line after it stays whole, and classifies as
  // nothing.
  const std::string interpreter_only =
      "The following operation failed in the TorchScript interpreter.\n";
  EXPECT_EQ(core_message(interpreter_only), interpreter_only);
  EXPECT_EQ(classify(interpreter_only), ErrorClass::kUnclassified);
}

// torchrun's "[rankN]: " (2.3+) goes from every line when the first line has it; a later line's
// alone stays (synthetic compositions in the form torch/distributed/elastic writes).
TEST(CoreMessage, RemovesTorchrunsRankPrefixOnlyWhenTheFirstLineHasIt) {
  const std::string sentence = "mat1 and mat2 must have the same dtype";
  EXPECT_EQ(core_message("[rank3]: RuntimeError: " + sentence + "\n[rank3]: next"),
            sentence + "\nnext");
  EXPECT_EQ(core_message(sentence + "\n[rank3]: next"), sentence + "\n[rank3]: next");
  // blank space in front goes first, then the prefix
  EXPECT_EQ(core_message("\n[rank3]: RuntimeError: " + sentence), sentence);
}

// A later line's "[rankN]:" straight before the log line's own tag (no blank between, the form
// of the first line above) goes as well (synthetic composition).
TEST(CoreMessage, RemovesALaterLinesRankPrefixBeforeALogTag) {
  const std::string sentence = "mat1 and mat2 must have the same dtype";
  const std::string log_line = "[E321 02:07:08.4 ProcessGroupNCCL.cpp:607] next";
  EXPECT_EQ(core_message("[rank3]: RuntimeError: " + sentence + "\n[rank3]:" + log_line),
            sentence + "\n" + log_line);
}

// A qualified exception name that ends in "Exception" goes as one ending in "Error" does:
// mp.spawn's, as users posted it (https://github.com/lyu-yx/ACUMEN/issues/4,
// https://github.com/hustvl/BoxTeacher/issues/13).
TEST(CoreMessage, RemovesAnExceptionNameEndingInException) {
  EXPECT_EQ(core_message("torch.multiprocessing.spawn.ProcessExitedException: process 0 "
                         "terminated with signal SIGKILL"),
            "process 0 terminated with signal SIGKILL");
}

// One rule for every prefix: bracketed tags and exception names, qualified or not (synthetic
// compositions in the forms of torchrun, c10d's logger, Python's traceback; the real messages
// are in harness/messages/real_messages.json).
TEST(CoreMessage, RemovesTagsAndExceptionNamesByOneRule) {
  const std::string sentence = "mat1 and mat2 must have the same dtype";
  EXPECT_EQ(core_message("[rank0]:[E321 02:07:08.4 ProcessGroupNCCL.cpp:607] [Rank 0] " + sentence),
            sentence);
  EXPECT_EQ(core_message("torch.distributed.DistBackendError: " + sentence), sentence);
  EXPECT_EQ(core_message("_pickle.UnpicklingError: " + sentence), sentence);
  EXPECT_EQ(core_message("OutOfMemoryError: " + sentence), sentence);
  EXPECT_EQ(core_message("Note: " + sentence), "Note: " + sentence);
}

TEST(MessageFamilies, EveryPatternCompilesAndNamesItsVersions) {
  for (const MessageFamily& family : message_families()) {
    EXPECT_FALSE(family.versions.empty()) << family.pattern;
    EXPECT_FALSE(family.from_source) << family.pattern;
  }
  EXPECT_EQ(classify(""), ErrorClass::kUnclassified);  // forces every regex to compile
}

// The sim's own refusal of an index past its devices, raised here (harness/sim/sim.cpp
// check_index), not copied: no device to run on is BackendUnavailable, as CUDA's own.
TEST(MessageFamilies, TheSimsRefusalOfADeviceItLacksIsBackendUnavailable) {
  try {
    tp::sim::device(tp::sim::device_count());
    FAIL() << "sim:" << tp::sim::device_count() << " was not refused";
  } catch (const c10::Error& error) {
    const std::string message = error.what_without_backtrace();
    EXPECT_EQ(classify(message), ErrorClass::kBackendUnavailable) << message;
  }
}

}  // namespace
}  // namespace tp
