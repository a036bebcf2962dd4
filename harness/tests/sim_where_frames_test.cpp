// The pieces of "where it happened" (sim/README.md) on addresses of known places: symbolize()
// (sim/symbolize.cpp): a call inlined into its caller gives both frames, innermost first, each
// at its line (the inlined one's from the line table, the caller's from DW_AT_call_line), and
// code without debug information its symbol alone; user_frame() (sim/user_frame.cpp) on stacks
// made here; add_place()'s context. Built with -g, as sim_where_test.cpp; sim_where_no_debug.cpp
// with -g0 (harness/CMakeLists.txt).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "child_run.h"
#include "sim/sim_internal.h"

namespace sim_where_test {

int no_debug_function(int value);  // sim_where_no_debug.cpp, without debug information

int inlined_line = 0, caller_line = 0;  // the lines of the calls below

__attribute__((noinline)) void* return_address() { return __builtin_return_address(0); }

// always_inline: its code sits inside its caller, where DWARF records an inlined subroutine.
// Outside the anonymous namespace: a function of internal linkage has no DW_AT_linkage_name,
// and symbolize() names it by its DW_AT_name alone ("inlined").
// `volatile`: the calls below are no tail calls (a jump), each returns here.
__attribute__((always_inline)) inline void* inlined() {
  void* volatile pc = nullptr;
  inlined_line = __LINE__, pc = return_address();
  return pc;
}

namespace {

using tp::sim::detail::Frame;
using tp::sim::detail::symbolize;
using tp::sim::detail::user_frame;

__attribute__((noinline)) void* caller() {
  void* volatile pc = nullptr;
  caller_line = __LINE__, pc = inlined();
  return pc;
}

// Of internal linkage, inlined: DWARF gives it no DW_AT_linkage_name, only its DW_AT_name.
int internal_line = 0, internal_caller_line = 0;

__attribute__((always_inline)) inline void* inlined_internal() {
  void* volatile pc = nullptr;
  internal_line = __LINE__, pc = return_address();
  return pc;
}

__attribute__((noinline)) void* internal_caller() {
  void* volatile pc = nullptr;
  internal_caller_line = __LINE__, pc = inlined_internal();
  return pc;
}

// A return address is the instruction after the call: one byte back is inside the call.
void* in_the_call(void* return_address) { return static_cast<char*>(return_address) - 1; }
void* inside_no_debug_function() { return reinterpret_cast<char*>(&no_debug_function) + 1; }

std::string described(const std::vector<Frame>& frames) {
  std::string text;
  for (const Frame& frame : frames)
    text += frame.function + " at " + frame.file + ":" + std::to_string(frame.line) + "\n";
  return text;
}

const std::string kHere = "sim_where_test::(anonymous namespace)::";

TEST(SimWhere, AnInlinedCallIsItsOwnFrameThenItsCallersAtTheCall) {
  const std::vector<Frame> frames = symbolize(in_the_call(caller()));
  ASSERT_EQ(frames.size(), 2u) << described(frames);
  EXPECT_EQ(frames[0].function, "sim_where_test::inlined");
  EXPECT_EQ(frames[0].file, __FILE__);
  EXPECT_EQ(frames[0].line, inlined_line);
  EXPECT_EQ(frames[1].function, kHere + "caller");
  EXPECT_EQ(frames[1].file, __FILE__);
  EXPECT_EQ(frames[1].line, caller_line);
}

TEST(SimWhere, AnInlinedCallWithoutALinkageNameIsNamedByItsName) {
  const std::vector<Frame> frames = symbolize(in_the_call(internal_caller()));
  ASSERT_EQ(frames.size(), 2u) << described(frames);
  EXPECT_EQ(frames[0].function, "inlined_internal");
  EXPECT_EQ(frames[0].file, __FILE__);
  EXPECT_EQ(frames[0].line, internal_line);
  EXPECT_EQ(frames[1].function, kHere + "internal_caller");
  EXPECT_EQ(frames[1].line, internal_caller_line);
}

// Runs only as the test below's child (TP_TEST_WHERE_CHILD=1): symbolize() before anything else
// of this process, when libdwfl knows no object of it yet.
TEST(SimWhere, ChildSymbolizesFirst) {
  if (std::getenv("TP_TEST_WHERE_CHILD") == nullptr)
    GTEST_SKIP() << "the child of SimWhere.TheFirstAddressOfAProcessIsSymbolized";
  const std::vector<Frame> frames = symbolize(in_the_call(caller()));
  ASSERT_EQ(frames.size(), 2u) << described(frames);
  EXPECT_EQ(frames[0].function, "sim_where_test::inlined");
  EXPECT_EQ(frames[1].function, kHere + "caller");
  EXPECT_EQ(frames[1].line, caller_line);
}

TEST(SimWhere, TheFirstAddressOfAProcessIsSymbolized) {
  const auto [status, output] =
      tp_test::run_child("TP_TEST_WHERE_CHILD=1", "SimWhere.ChildSymbolizesFirst");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("[  PASSED  ] 1 test."), std::string::npos) << output;
}

TEST(SimWhere, CodeWithoutDebugInformationIsItsSymbolAlone) {
  const std::vector<Frame> frames = symbolize(inside_no_debug_function());
  ASSERT_EQ(frames.size(), 1u) << described(frames);
  EXPECT_EQ(frames[0].function, "sim_where_test::no_debug_function");
  EXPECT_EQ(frames[0].file, "");
  EXPECT_EQ(frames[0].line, 0);
}

TEST(SimWhere, AnAddressOutsideEveryObjectIsNoFrame) {
  EXPECT_TRUE(symbolize(nullptr).empty());  // not a frame without a name
  EXPECT_EQ(described(symbolize(nullptr)), "");
}

// Without libdw, dladdr's exported symbol alone: qsort (libc exports it), no file nor line; this
// executable exports none of its functions (no -rdynamic), so an address in one has no frame.
TEST(SimWhere, WithoutLibdwAnExportedSymbolIsTheFrame) {
  void* in_qsort = static_cast<char*>(dlsym(RTLD_DEFAULT, "qsort")) + 2;
  const std::vector<Frame> frames = tp::sim::detail::exported_frame(in_qsort);
  ASSERT_EQ(frames.size(), 1u) << described(frames);
  EXPECT_EQ(frames[0].function, "qsort");
  EXPECT_EQ(frames[0].file, "");
  EXPECT_EQ(frames[0].line, 0);
  EXPECT_TRUE(tp::sim::detail::exported_frame(caller()).empty());  // not a frame without a name
  EXPECT_TRUE(tp::sim::detail::exported_frame(nullptr).empty());
}

// user_frame(stack) skips [0] (capture_stack's own frame) and reads each return address one
// byte back, so a stack here holds a return address, or an address one past the place meant.
TEST(SimWhere, TheUserFrameOfAnInlinedCallIsTheInnermost) {
  const std::vector<void*> stack = {nullptr, caller()};
  EXPECT_EQ(user_frame(stack), "at " + std::string(__FILE__) + ":" + std::to_string(inlined_line) +
                                   " in sim_where_test::inlined");
}

TEST(SimWhere, AUserFrameWithoutDebugInformationIsNamedWithoutALine) {
  const std::vector<void*> stack = {nullptr, static_cast<char*>(inside_no_debug_function()) + 1};
  EXPECT_EQ(user_frame(stack), "in sim_where_test::no_debug_function");
}

// The C library's code is skipped by its object (libc.so.6), whatever its frames say: Debian's
// libc6-dbg gives qsort a file and a line, and qsort has no namespace.
TEST(SimWhere, TheCLibrarysCodeIsNoUserFrame) {
  void* in_qsort = static_cast<char*>(dlsym(RTLD_DEFAULT, "qsort")) + 2;
  EXPECT_EQ(user_frame({nullptr, in_qsort}), "");
  const std::vector<void*> stack = {nullptr, in_qsort, static_cast<char*>(caller())};
  EXPECT_EQ(user_frame(stack).rfind("at " + std::string(__FILE__) + ":", 0), 0u)
      << user_frame(stack);
}

// add_place() on an error raised here: the operator, the argument when named, then the user's
// line; nothing a message already names (" in method "), nothing left empty.
struct Placed {
  std::string full, libtorch;
};

Placed placed(const std::string& message, const std::string& argument, int* line = nullptr) {
  const auto& schema = c10::Dispatcher::singleton().findSchemaOrThrow("aten::add", "Tensor");
  try {
    TORCH_CHECK(false, message);
  } catch (c10::Error& error) {
    if (line != nullptr) *line = __LINE__ + 1;
    tp::sim::detail::add_place(error, schema.schema(), argument);
    return {error.what_without_backtrace(), error.msg()};
  }
  return {};
}

// Frames off (as in a Python process) for the span of a test.
struct FramesOff {
  FramesOff() { tp::sim::detail::set_user_frames(false); }
  ~FramesOff() { tp::sim::detail::set_user_frames(true); }
};

TEST(SimWhere, APlaceNamesTheOperatorThenTheArgumentThenTheLine) {
  int line = 0;
  const Placed error = placed("refused", "other", &line);
  EXPECT_EQ(error.libtorch, "refused");
  EXPECT_EQ(error.full, "refused (operator aten::add.Tensor, argument 'other', at " +
                            std::string(__FILE__) + ":" + std::to_string(line) + " in " + kHere +
                            "placed)");
}

TEST(SimWhere, APlaceLeavesOutWhatItHasNot) {
  const FramesOff off;
  EXPECT_TRUE(tp::sim::detail::capture_stack().empty());
  EXPECT_EQ(user_frame(), "");
  EXPECT_EQ(placed("refused", "").full, "refused (operator aten::add.Tensor)");
  const std::string named = "refused (when checking argument in method wrapper__add)";
  EXPECT_EQ(placed(named, "other").full, named);
}

}  // namespace
}  // namespace sim_where_test
