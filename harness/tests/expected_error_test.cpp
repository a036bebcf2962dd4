// An expected error counts only if the statement under test raised it: an error while preparing,
// an error of another class, or one about another argument fails the cell. The device mismatches
// here are genuine: meta and CPU tensors in one TensorIterator op (add), on any host.
#include "internal/expected_error.h"

#include <gtest/gtest.h>
#include <torch/script.h>
#include <torch/torch.h>

namespace tp {
namespace {

// LibTorch's texts for CPU targets or indices with CUDA tensors (~2.8 on; 1.9-2.7), as
// PyTorch's codegen words them (aten/src/ATen/core/adaption.cpp).
constexpr const char* kTarget28 =
    "Expected all tensors to be on the same device, but got target is on cpu, different from "
    "other tensors on cuda:0 (when checking argument in method wrapper_CUDA_nll_loss_forward)";
constexpr const char* kTarget19 =
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
    "cpu! (when checking argument for argument target in method wrapper_nll_loss_forward)";
constexpr const char* kIndex28 =
    "Expected all tensors to be on the same device, but got index is on cpu, different from "
    "other tensors on cuda:0 (when checking argument in method wrapper_CUDA__index_select)";

// Runs `body` as a cell expecting `expected` would, and returns the verdict.
std::optional<std::string> judge(const Expect& expected, const std::function<void(Cell&)>& body) {
  CellRecord record(CellSpec("demo", {}, Placement{{torch::kCPU}}), expected);
  Cell cell(record.spec, record);
  try {
    body(cell);
  } catch (const c10::Error& error) {
    record.message = error.what_without_backtrace();
    record.observed_class = classify(record.message);
    return unexpected_error(record);
  }
  return "no error";
}

void add_meta_to_cpu() { (void)torch::add(torch::ones({2}, torch::kMeta), torch::ones({2})); }

const Expect kMismatch = Expect::error(ErrorClass::kDeviceMismatch).naming("target");

// A TorchScript method that adds a meta tensor to its CPU input: the interpreter rethrows the
// device mismatch as a std::runtime_error (interpreter.cpp handleError), not as a c10::Error.
torch::jit::Module meta_adder() {
  torch::jit::Module module("MetaAdder");
  module.define(R"(
def forward(self, x):
    return x + torch.ones(2, device=torch.device("meta"))
)");
  return module;
}

TEST(ExpectedError, TorchScriptsInterpreterErrorIsJudgedAsLibTorchs) {
  CellRecord record(CellSpec("demo", {}, Placement{{torch::kCPU}}), Expect::success());
  Cell cell(record.spec, record);
  torch::jit::Module module = meta_adder();
  EXPECT_THROW(module.forward({torch::ones({2})}), std::runtime_error);  // what LibTorch throws
  try {
    cell.under_test("forward", [&] { return module.forward({torch::ones({2})}); });
    ADD_FAILURE() << "a meta tensor added to a CPU one in TorchScript ran";
  } catch (const c10::Error& error) {
    const std::string message = error.what_without_backtrace();
    EXPECT_EQ(message.rfind("The following operation failed in the TorchScript interpreter.", 0),
              0u)
        << message;
    EXPECT_NE(message.find("Expected all tensors to be on the same device"), std::string::npos);
    EXPECT_EQ(record.raised_in, "forward");
    EXPECT_EQ(record.raised_message, message);
    ASSERT_EQ(record.notes.size(), 1u);
    EXPECT_NE(record.notes[0].find("std::runtime_error"), std::string::npos) << record.notes[0];
  }
}

TEST(ExpectedError, TorchScriptsCompilerErrorIsJudgedAsLibTorchs) {
  CellRecord record(CellSpec("demo", {}, Placement{{torch::kCPU}}), Expect::success());
  Cell cell(record.spec, record);
  torch::jit::Module module("Typo");
  EXPECT_THROW(cell.under_test(
                   "define", [&] { module.define("def forward(self, x: Tnsr):\n    return x\n"); }),
               c10::Error);
  EXPECT_EQ(record.raised_in, "define");
  EXPECT_NE(record.raised_message.find("Tnsr"), std::string::npos) << record.raised_message;
}

TEST(ExpectedError, OtherExceptionsLeaveTheRegionAsTheyAre) {
  CellRecord record(CellSpec("demo", {}, Placement{{torch::kCPU}}), Expect::success());
  Cell cell(record.spec, record);
  try {
    cell.under_test("at", [] { return std::vector<int>{}.at(1); });
    ADD_FAILURE() << "no exception";
  } catch (const c10::Error&) {
    ADD_FAILURE() << "an std::out_of_range became a c10::Error";
  } catch (const std::out_of_range&) {
  }
  EXPECT_THROW(cell.under_test("run", [] { throw std::runtime_error("not TorchScript's"); }),
               std::runtime_error);
  EXPECT_TRUE(record.raised_in.empty()) << record.raised_in;
  EXPECT_TRUE(record.notes.empty());
}

TEST(ExpectedError, NamedArgumentReadsEveryWording) {
  EXPECT_EQ(named_argument(kTarget28), "target");
  EXPECT_EQ(named_argument(kTarget19), "target");
  EXPECT_EQ(named_argument(kIndex28), "index");
  EXPECT_EQ(named_argument("... when checking arugment for argument mat2 in method wrapper_mm)"),
            "mat2");  // 1.9's spelling
  // Before 1.9 an argument was named by position and quote: no name is read, so a cell naming
  // its argument is judged by the class alone (corpus.json, github.com/OpenMined/PySyft#3902).
  EXPECT_FALSE(
      named_argument("RuntimeError: Expected object of device type cuda but got device "
                     "type cpu for argument #1 'self' in call to _th_set_"));
  EXPECT_FALSE(
      named_argument("Expected all tensors to be on the same device, but found at least "
                     "two devices, meta and cpu!"));
}

TEST(ExpectedError, CountsAnErrorFromTheStatementUnderTest) {
  EXPECT_EQ(judge(kMismatch, [](Cell& cell) { cell.under_test("add", add_meta_to_cpu); }),
            std::nullopt);
}

TEST(ExpectedError, AnErrorWhilePreparingFailsTheCell) {
  const auto verdict = judge(kMismatch, [](Cell& cell) {
    add_meta_to_cpu();  // e.g. a model never moved: raises before the statement under test
    cell.under_test("add", add_meta_to_cpu);
  });
  ASSERT_TRUE(verdict.has_value());
  EXPECT_NE(verdict->find("error while preparing"), std::string::npos) << *verdict;
  EXPECT_EQ(verdict->find("had raised another error first"), std::string::npos) << *verdict;
}

TEST(ExpectedError, AnErrorAfterTheRegionSwallowedItsOwnFailsTheCell) {
  const auto verdict = judge(kMismatch, [](Cell& cell) {
    try {
      cell.under_test("add", add_meta_to_cpu);
    } catch (const c10::Error&) {
    }
    TORCH_CHECK(false, kTarget19);  // the same class, but raised outside the region
  });
  ASSERT_TRUE(verdict.has_value());
  EXPECT_NE(verdict->find("error while preparing"), std::string::npos) << *verdict;
  const std::string first = "(add had raised another error first: ";
  const std::size_t at = verdict->find(first);
  ASSERT_NE(at, std::string::npos) << *verdict;
  // the swallowed error's own words (meta and cpu), not the one raised outside the region
  EXPECT_NE(verdict->find("meta", at + first.size()), std::string::npos) << *verdict;
}

TEST(ExpectedError, AnotherClassFromTheStatementFailsTheCell) {
  const auto verdict = judge(kMismatch, [](Cell& cell) {
    cell.under_test("mm", [] { return torch::mm(torch::ones({2, 2}), torch::ones({3, 3})); });
  });
  ASSERT_TRUE(verdict.has_value());
  EXPECT_NE(verdict->find("expected DeviceMismatch"), std::string::npos) << *verdict;
}

TEST(ExpectedError, TheMessageMustNameTheExpectedArgumentWhereItNamesOne) {
  for (const char* right : {kTarget28, kTarget19}) {
    EXPECT_EQ(
        judge(kMismatch,
              [&](Cell& cell) { cell.under_test("nll_loss", [&] { TORCH_CHECK(false, right); }); }),
        std::nullopt)
        << right;
  }
  const auto verdict = judge(kMismatch, [](Cell& cell) {
    cell.under_test("nll_loss", [] { TORCH_CHECK(false, kIndex28); });
  });
  ASSERT_TRUE(verdict.has_value());
  EXPECT_NE(verdict->find("about argument 'index', expected 'target'"), std::string::npos)
      << *verdict;
}

}  // namespace
}  // namespace tp
