// Where the sim says a mistake or a transfer happened (sim/user_frame.cpp, sim/README.md "Where
// it happened"): the user's file:line after LibTorch's own text, and in the transfer log's
// summary. This file is compiled with -g (harness/CMakeLists.txt), as a user's -g build: its
// functions below stand for the user's code, each noting the line of its call with __LINE__.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <malloc.h>

#include <string>
#include <vector>

#include <torchplace/error_class.h>
#include <torchplace/sim/sim.h>
#include <torchplace/sim/transfer_log.h>
#include "sim/sim_internal.h"

namespace sim_where_test {
namespace {

int call_line = 0;  // the line of the last call below

// The user's mistakes and transfers, each in a function of its own (noinline: a frame).
__attribute__((noinline)) void mm_with_cpu_weight(const torch::Tensor& on_device) {
  call_line = __LINE__, (void)torch::mm(on_device, torch::ones({3, 3}));
}

__attribute__((noinline)) void add_cpu_tensor(torch::Tensor& out, const torch::Tensor& on_device) {
  call_line = __LINE__, (void)torch::add_out(out, on_device, torch::ones({3, 3}));
}

__attribute__((noinline)) void mse_of_cpu_prediction(const torch::Tensor& on_device) {
  call_line = __LINE__, (void)torch::mse_loss(torch::tensor(1.0f), on_device);
}

__attribute__((noinline)) float read_loss(const torch::Tensor& on_device) {
  float value = 0;
  call_line = __LINE__, value = on_device.sum().item<float>();
  return value;
}

__attribute__((noinline)) float read_loss_elsewhere(const torch::Tensor& on_device) {
  float value = 0;
  call_line = __LINE__, value = on_device.sum().item<float>();
  return value;
}

__attribute__((noinline)) torch::Tensor move_batch(const torch::Tensor& host) {
  torch::Tensor moved;
  call_line = __LINE__, moved = host.to(tp::sim::device());
  return moved;
}

// A template returning a template: its demangled name starts with the return type
// ("std::vector<float, std::allocator<float> > sim_where_test::...<float>(...)"), which the
// symbolizer must cut off, or the frame reads as the standard library's and is skipped.
template <typename T>
__attribute__((noinline)) std::vector<T> mm_in_a_template(const torch::Tensor& on_device) {
  call_line = __LINE__, (void)torch::mm(on_device, torch::ones({3, 3}));
  return {};
}

// The message a call raises, with the sim's context (what_without_backtrace: LibTorch's text,
// then " (<context>)"), and LibTorch's text alone (msg()).
struct Raised {
  std::string full;
  std::string libtorch;
};

template <typename Body>
Raised raised_by(Body body) {
  try {
    body();
  } catch (const c10::Error& error) {
    return {error.what_without_backtrace(), error.msg()};
  }
  return {};
}

std::string here(int line) { return std::string(__FILE__) + ":" + std::to_string(line); }

TEST(SimWhere, MismatchNamesTheUsersLine) {
  const torch::Tensor on_device = torch::randn({3, 3}, tp::sim::device());
  const Raised raised = raised_by([&] { mm_with_cpu_weight(on_device); });
  ASSERT_FALSE(raised.libtorch.empty()) << "mm of sim:0 and cpu did not raise";
  // LibTorch's text first and unchanged; the wrapper's names the argument: only the place added.
  EXPECT_EQ(raised.full.rfind(raised.libtorch, 0), 0u) << raised.full;
  EXPECT_EQ(raised.full.substr(raised.libtorch.size()),
            " (at " + here(call_line) +
                " in sim_where_test::(anonymous namespace)::"
                "mm_with_cpu_weight)")
      << raised.full;
  EXPECT_EQ(tp::name_of(tp::classify(raised.full)), "DeviceMismatch") << raised.full;
}

TEST(SimWhere, ATemplateReturningATemplateIsTheUsersLine) {
  const torch::Tensor on_device = torch::randn({3, 3}, tp::sim::device());
  const Raised raised = raised_by([&] { mm_in_a_template<float>(on_device); });
  ASSERT_FALSE(raised.libtorch.empty()) << "mm of sim:0 and cpu did not raise";
  EXPECT_EQ(raised.full.substr(raised.libtorch.size()),
            " (at " + here(call_line) +
                " in sim_where_test::(anonymous namespace)::mm_in_a_template<float>)")
      << raised.full;
}

TEST(SimWhere, IteratorMismatchNamesOperatorArgumentAndLine) {
  const torch::Tensor on_device = torch::randn({3, 3}, tp::sim::device());
  torch::Tensor out = torch::empty({3, 3}, tp::sim::device());
  const Raised raised = raised_by([&] { add_cpu_tensor(out, on_device); });
  ASSERT_FALSE(raised.libtorch.empty()) << "add_out of sim:0 and cpu did not raise";
  EXPECT_EQ(raised.full.rfind(raised.libtorch, 0), 0u) << raised.full;
  const std::string added = raised.full.substr(raised.libtorch.size());
  EXPECT_EQ(added.rfind(" (operator aten::add", 0), 0u) << raised.full;
  EXPECT_NE(added.find(", argument 'other', at " + here(call_line) + " in "), std::string::npos)
      << raised.full;
  EXPECT_EQ(tp::name_of(tp::classify(raised.full)), "DeviceMismatch") << raised.full;
}

// A kernel's refusal (sim_cuda_rules_test.cpp: mse_loss's gpu_kernel asserts every operand is on
// the device) names the CPU scalar it refused, which CUDA's message numbers only: here `self`,
// not the last operand checked.
TEST(SimWhere, KernelRefusalNamesTheScalarArgumentAndLine) {
  const torch::Tensor on_device = torch::full({}, 0.5f, tp::sim::device());
  const Raised raised = raised_by([&] { mse_of_cpu_prediction(on_device); });
  ASSERT_FALSE(raised.libtorch.empty()) << "mse_loss of sim:0 and a CPU scalar did not raise";
  const std::string added = raised.full.substr(raised.libtorch.size());
  EXPECT_EQ(added.rfind(" (operator aten::mse_loss", 0), 0u) << raised.full;
  EXPECT_NE(added.find(", argument 'self', at " + here(call_line) + " in "), std::string::npos)
      << raised.full;
}

TEST(SimWhere, TransferLogNamesItemAtItsLine) {
  const torch::Tensor on_device = torch::randn({3, 3}, tp::sim::device());
  tp::sim::TransferLog log;
  read_loss(on_device);
  read_loss(on_device);
  const int item_line = call_line;
  log.stop();
  ASSERT_EQ(log.syncs("_local_scalar_dense"), 2) << log.summary();
  const std::string site = ".item() at " + here(item_line) + " in sim_where_test::";
  EXPECT_NE(log.summary().find("2 x _local_scalar_dense (" + site), std::string::npos)
      << log.summary();
  const auto sites = log.call_sites();
  ASSERT_EQ(sites.size(), 1u) << log.summary();
  EXPECT_EQ(sites[0].event, "_local_scalar_dense");
  EXPECT_EQ(sites[0].count, 2);
}

// One event at two places: each place with its own count.
TEST(SimWhere, TransferLogCountsEachPlaceOfAnEvent) {
  const torch::Tensor on_device = torch::randn({3, 3}, tp::sim::device());
  tp::sim::TransferLog log;
  read_loss(on_device);
  read_loss(on_device);
  const int first = call_line;
  read_loss_elsewhere(on_device);
  const int second = call_line;
  log.stop();
  ASSERT_EQ(log.syncs("_local_scalar_dense"), 3) << log.summary();
  EXPECT_NE(log.summary().find(".item() x2 at " + here(first)), std::string::npos) << log.summary();
  EXPECT_NE(log.summary().find(".item() x1 at " + here(second)), std::string::npos)
      << log.summary();
  EXPECT_EQ(log.call_sites().size(), 2u) << log.summary();
}

TEST(SimWhere, TransferLogNamesACopyAtItsLine) {
  const torch::Tensor host = torch::randn({3, 3});
  tp::sim::TransferLog log;
  move_batch(host);
  log.stop();
  ASSERT_EQ(log.host_to_device().copies, 1) << log.summary();
  const std::string site = ".to(device) at " + here(call_line) + " in sim_where_test::";
  EXPECT_NE(log.summary().find("h2d 1 copies 36 B (0 non_blocking; " + site), std::string::npos)
      << log.summary();
  EXPECT_NE(log.summary().find("1 x copy_to_device (" + site), std::string::npos) << log.summary();
}

// A frame is skipped as library code by its function's namespace, else by its file: a name the
// symbolizer left mangled, or one with no namespace, inside LibTorch's or GoogleTest's headers.
// Frames made here, as symbolize() returns them (paths and names synthetic).
TEST(SimWhere, LibraryFramesAreKnownByTheirFileWhenTheNameSaysNothing) {
  using tp::sim::detail::Frame;
  using tp::sim::detail::library_code;
  EXPECT_TRUE(library_code(Frame{"at::native::add", "", 0}));
  EXPECT_TRUE(library_code(Frame{"_ZN2at6native3addEv", "/opt/include/ATen/ops/add.h", 12}));
  EXPECT_TRUE(library_code(Frame{"helper", "/usr/src/googletest/include/gtest/gtest.h", 3}));
  EXPECT_FALSE(library_code(Frame{"train_step", "/home/user/train.cpp", 42}));
  EXPECT_FALSE(library_code(Frame{"toy::train_step", "/home/user/train.cpp", 42}));
  EXPECT_TRUE(library_code(Frame{"", "/opt/include/ATen/ops/add.h", 12}));  // no name at all
  EXPECT_FALSE(library_code(Frame{"", "/home/user/train.cpp", 42}));
}

// Each new address a raise or a log meets is symbolized (user_frame() caches only its answer):
// the scope arrays libdw hands back are freed, so 500 calls leave the heap as it was.
TEST(SimWhere, SymbolizingKeepsNoMemory) {
  void* pc = reinterpret_cast<void*>(&move_batch);
  ASSERT_FALSE(tp::sim::detail::symbolize(pc).empty());
  const size_t before = mallinfo2().uordblks;
  for (int call = 0; call < 500; ++call) (void)tp::sim::detail::symbolize(pc);
  const size_t after = mallinfo2().uordblks;
  EXPECT_LT(after, before + 8 * 1024) << "the heap grew by " << after - before << " B";
}

// sites_text alone: an event none of whose places is the user's says nothing (a bare ".cpu()
// (no user frame)" would point nowhere); one place is named without a count.
TEST(SimWhere, SitesTextSaysNothingWhereNoPlaceIsTheUsers) {
  using tp::sim::CallSite;
  const std::vector<CallSite> sites = {{"d2h", ".cpu()", "", 2},
                                       {"h2d", ".to(device)", "at a.cpp:3 in f", 1}};
  EXPECT_EQ(tp::sim::detail::sites_text(sites, "d2h", "; "), "");
  EXPECT_EQ(tp::sim::detail::sites_text(sites, "h2d", "; "), "; .to(device) at a.cpp:3 in f");
  EXPECT_EQ(tp::sim::detail::sites_text(sites, "nonzero", "; "), "");
}

}  // namespace
}  // namespace sim_where_test
