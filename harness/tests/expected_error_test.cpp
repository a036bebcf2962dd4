// An expected error counts only if the statement under test raised it: an error while preparing,
// an error of another class, or one about another argument fails the cell. The device mismatches
// here are genuine: meta and CPU tensors in one TensorIterator op (add), on any host.
#include "internal/expected_error.h"

#include <gtest/gtest.h>
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

TEST(ExpectedError, NamedArgumentReadsEveryWording) {
  EXPECT_EQ(named_argument(kTarget28), "target");
  EXPECT_EQ(named_argument(kTarget19), "target");
  EXPECT_EQ(named_argument(kIndex28), "index");
  EXPECT_EQ(named_argument("... when checking arugment for argument mat2 in method wrapper_mm)"),
            "mat2");  // 1.9's spelling
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
