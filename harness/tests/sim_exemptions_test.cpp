// tp::sim's device check against LibTorch's own rule, per version (harness/sim/device_checks.inc,
// generated from each version's native_functions.yaml): an operator whose CUDA wrapper checks
// (the default) refuses a 0-dim CPU tensor; a NoCheck TensorIterator operator takes it as a
// scalar; masked_fill_ checks its mask as CUDA's kernel does. Also the differences from CUDA that
// harness/sim/CUDA_RULES.md lists, each asserted as the sim behaves.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <torchplace/compat.h>
#include <torchplace/sim/sim.h>
#include "error_class.h"
#include "internal/expected_error.h"
#include "raised_message.h"
#include "sim/sim_internal.h"

namespace sim_exemptions_test {  // unity-built with the other harness tests
namespace {

#define TP_SIM_NOCHECK(...)
#include "sim/device_checks.inc"
#undef TP_SIM_NOCHECK

struct Listed {
  const char* name;
  const char* overload;
  std::vector<int> present;  // per version of TP_SIM_DEVICE_CHECK_VERSION_LIST
};

const std::vector<Listed>& table() {
  static const std::vector<Listed> rows = {
#define TP_SIM_NOCHECK(name, overload, comment, ...) {name, overload, {__VA_ARGS__}},
#include "sim/device_checks.inc"
#undef TP_SIM_NOCHECK
  };
  return rows;
}

// The column of the installed LibTorch, or -1 when the table has none for its major.minor.
int installed_column() {
  const std::vector<std::string> versions = {TP_SIM_DEVICE_CHECK_VERSION_LIST};
  const std::string installed =
      std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + ".";
  for (size_t index = 0; index < versions.size(); ++index) {
    if (versions[index].rfind(installed, 0) == 0) return static_cast<int>(index);
  }
  return -1;
}

using tp_test::message_of;

// The table must have the installed version's column, and every operator it lists as NoCheck
// there must exist in the installed dispatcher (a renamed or removed overload is a stale table).
TEST(SimExemptions, TheTableMatchesTheInstalledLibTorch) {
  const int column = installed_column();
  ASSERT_GE(column, 0) << "device_checks.inc has no column for LibTorch " << TORCH_VERSION
                       << ": regenerate it with harness/sim/device_checks.py";
  int listed = 0;
  for (const Listed& row : table()) {
    if (!row.present.at(column)) continue;
    ++listed;
    const c10::OperatorName name(std::string("aten::") + row.name, row.overload);
    EXPECT_TRUE(c10::Dispatcher::singleton().findSchema(name).has_value())
        << "listed NoCheck for " << TORCH_VERSION << " but not in its dispatcher: " << name;
  }
  EXPECT_GT(listed, 500) << "too few NoCheck operators for this version: a parse went wrong";
}

// The device check reads the installed version's column (on 1.13.1 the first: a column stuck at
// the first shows only on a newer LibTorch, in the matrix's unit step).
TEST(SimExemptions, TheCheckReadsTheInstalledColumn) {
  EXPECT_EQ(tp::sim::detail::version_column(), installed_column()) << TORCH_VERSION;
}

// Every version's column, whatever is installed: a listed major.minor reads its own, one a minor
// newer still reads it, one a minor older reads the one before (the first: older than them all).
TEST(SimExemptions, EachVersionReadsTheNewestColumnNotNewerThanIt) {
  const std::vector<std::string> versions = {TP_SIM_DEVICE_CHECK_VERSION_LIST};
  for (size_t index = 0; index < versions.size(); ++index) {
    int major = 0, minor = 0;
    ASSERT_EQ(std::sscanf(versions[index].c_str(), "%d.%d", &major, &minor), 2) << versions[index];
    const int column = static_cast<int>(index);
    EXPECT_EQ(tp::sim::detail::version_column(major, minor), column) << versions[index];
    const std::string next = std::to_string(major) + "." + std::to_string(minor + 1) + ".";
    if (index + 1 == versions.size() || versions[index + 1].rfind(next, 0) != 0)  // not listed
      EXPECT_EQ(tp::sim::detail::version_column(major, minor + 1), column) << versions[index];
    EXPECT_EQ(tp::sim::detail::version_column(major, minor - 1), std::max(column - 1, 0))
        << versions[index];
  }
  EXPECT_EQ(tp::sim::detail::version_column(99, 0), static_cast<int>(versions.size()) - 1);
}

// Whether a table's column is the installed version's own (cuda_rules.cpp: 2.14.1 reads 2.6.0's
// scalar rules, and then does not apply their stale `iterator` verdicts): major and minor only.
TEST(SimExemptions, SameMinorComparesMajorAndMinor) {
  using tp::sim::detail::same_minor;
  EXPECT_TRUE(same_minor("2.6.0", 2, 6));
  EXPECT_TRUE(same_minor("1.13.1", 1, 13));
  EXPECT_FALSE(same_minor("2.6.0", 2, 14));
  EXPECT_FALSE(same_minor("2.6.0", 1, 6));
  EXPECT_FALSE(same_minor("6.2.0", 2, 6));
  EXPECT_FALSE(same_minor("2.x", 2, -1)) << "a version that does not parse is no version";
}

// nll_loss_forward's CUDA wrapper checks `target`: a 0-dim CPU label (a per-sample loop) raises.
TEST(SimExemptions, AZeroDimCpuTargetIntoTheLossesRaises) {
  const torch::Tensor logits = torch::randn({5}).to(tp::sim::device());
  const torch::Tensor label = torch::tensor(2);  // 0-dim, CPU
  for (const std::string loss : {"cross_entropy", "nll_loss"}) {
    const std::string message = message_of([&] {
      if (loss == "nll_loss")
        torch::nll_loss(torch::log_softmax(logits, 0), label);
      else
        torch::nn::functional::cross_entropy(logits, label);
    });
    EXPECT_EQ(tp::classify(message), tp::ErrorClass::kDeviceMismatch) << loss << ": " << message;
    EXPECT_EQ(tp::named_argument(message), "target") << loss << ": " << message;
    EXPECT_NE(message.find("wrapper_SIM_nll_loss"), std::string::npos) << message;
  }
  const torch::Tensor weight = torch::randn({4, 3}).to(tp::sim::device());
  EXPECT_EQ(tp::named_argument(message_of([&] { weight.index_select(0, torch::tensor(3)); })),
            "index");
}

// NoCheck TensorIterator operators: CUDA's TensorIterator takes a 0-dim CPU input as a scalar.
TEST(SimExemptions, TensorIteratorOpsTakeAZeroDimCpuScalar) {
  const torch::Tensor x = torch::randn({3}).to(tp::sim::device());
  EXPECT_EQ((x * torch::tensor(2.0f)).device(), tp::sim::device());
  EXPECT_EQ((torch::tensor(2.0f) + x).device(), tp::sim::device()) << "a CPU scalar first";
  EXPECT_EQ(tp::classify(message_of([&] { x + torch::randn({3}); })),
            tp::ErrorClass::kDeviceMismatch)
      << "a CPU tensor of one dimension is no scalar";
}

// CUDA's TensorIterator takes a 0-dim CPU tensor as a scalar only as an input (TensorIterator.cpp,
// compute_types: `!op.is_output`): written into in place, or given as out=, it is refused.
TEST(SimExemptions, AZeroDimCpuTensorWrittenIntoIsNoScalar) {
  const torch::Tensor x = torch::full({}, 3.0f).to(tp::sim::device());
  torch::Tensor cpu_scalar = torch::tensor(2.0f);  // 0-dim, CPU
  EXPECT_EQ(tp::classify(message_of([&] { cpu_scalar.mul_(x); })), tp::ErrorClass::kDeviceMismatch)
      << "in place";
  EXPECT_EQ(tp::classify(message_of([&] { torch::mul_out(cpu_scalar, x, x); })),
            tp::ErrorClass::kDeviceMismatch)
      << "out=";
  EXPECT_EQ(cpu_scalar.item<float>(), 2.0f) << "refused before it was written";
}

// Structured operators (lerp, addcmul, clamp) first run LibTorch's generic kernel on the sim
// (CompositeExplicitAutogradNonFunctional), whose meta function builds the TensorIterator with the
// operator's own configuration, as CUDA's does. The meta device runs that same meta function, so
// it is the oracle on every version: a 0-dim CPU tensor is refused on both, or taken on both.
// 1.13.1 refuses all three; 2.6.0's lerp meta says allow_cpu_scalars(true) (Lerp.cpp, Debian's
// 2.6.0 source) and 2.14.1 takes addcmul's too (seen on 2.14.1's meta device).
std::string verdict_of(const std::function<void()>& body) {
  const std::string message = message_of(body);
  return message.empty() ? "ran" : std::string(tp::name_of(tp::classify(message)));
}

TEST(SimExemptions, StructuredOpsRunTheirOwnTensorIteratorCheck) {
  const torch::Tensor scalar = torch::tensor(0.5f);  // 0-dim, CPU
  const auto verdicts = [&](const torch::Device& device) {
    const torch::Tensor a = torch::randn({3}).to(device), b = torch::randn({3}).to(device);
    return std::vector<std::string>{verdict_of([&] { torch::lerp(a, b, scalar); }),
                                    verdict_of([&] { torch::addcmul(a, b, scalar); }),
                                    verdict_of([&] { torch::clamp(a, scalar); })};
  };
  const std::vector<std::string> on_sim = verdicts(tp::sim::device());
  EXPECT_EQ(on_sim, verdicts(torch::Device(torch::kMeta))) << "lerp's weight, addcmul's tensor2, "
                                                              "clamp's min: the sim against meta";
  const std::string mismatch(tp::name_of(tp::ErrorClass::kDeviceMismatch));
  EXPECT_EQ(on_sim[2], mismatch) << "clamp's min, on every version";
#if !TP_TORCH_AT_LEAST(2, 0)
  EXPECT_EQ(on_sim, std::vector<std::string>(3, mismatch)) << "1.13.1 refuses all three";
#endif
}

// masked_fill_ is NoCheck: CUDA's kernel (masked_fill__cuda) refuses a mask on another device
// with its own message, and reads a 0-dim value tensor from anywhere.
TEST(SimExemptions, MaskedFillChecksItsMaskAsCudaDoes) {
  const torch::Tensor scores = torch::zeros({2, 2}).to(tp::sim::device());
  const torch::Tensor mask = torch::ones({2, 2}, torch::kBool).triu(1);  // CPU
  const std::string message = message_of([&] { scores.masked_fill(mask, -1.0); });
  EXPECT_EQ(message.rfind("expected self and mask to be on the same device, but got mask on cpu "
                          "and self on ",
                          0),
            0u)
      << message;
  EXPECT_EQ(tp::classify(message), tp::ErrorClass::kDeviceMismatch) << message;
  const torch::Tensor filled = scores.masked_fill(mask.to(tp::sim::device()), torch::tensor(-1.0f));
  EXPECT_EQ(filled.device(), tp::sim::device());
  EXPECT_EQ(filled.cpu().sum().item<float>(), -1.0f);
}

// CPU indices pass only where the operator is `index` (NoCheck): max_unpool2d's CUDA wrapper
// checks its `indices` argument like any other (native_functions.yaml: CUDA kernel, no NoCheck).
TEST(SimExemptions, CpuIndicesOutsideIndexingAreRefused) {
  const torch::Tensor pooled = torch::ones({1, 1, 1, 1}).to(tp::sim::device());
  const torch::Tensor indices = torch::zeros({1, 1, 1, 1}, torch::kLong);  // CPU
  const std::string message = message_of([&] { torch::max_unpool2d(pooled, indices, {2, 2}); });
  EXPECT_EQ(tp::classify(message), tp::ErrorClass::kDeviceMismatch) << message;
  EXPECT_EQ(tp::named_argument(message), "indices") << message;  // each version's wording
  const torch::Tensor unpooled = torch::max_unpool2d(pooled, indices.to(tp::sim::device()), {2, 2});
  EXPECT_EQ(unpooled.cpu().sum().item<float>(), 1.0f);
}

// The wrapper checks every tensor of a Tensor[] argument: cat of a sim tensor and a CPU one
// raises, naming `tensors` (cat has a CUDA kernel, no NoCheck, in every version's yaml).
TEST(SimExemptions, EachTensorOfAListIsChecked) {
  const torch::Tensor there = torch::ones({2}).to(tp::sim::device());
  const std::string message = message_of([&] { torch::cat({there, torch::ones({2})}); });
  EXPECT_EQ(tp::classify(message), tp::ErrorClass::kDeviceMismatch) << message;
  EXPECT_EQ(tp::named_argument(message), "tensors") << message;
  EXPECT_EQ(torch::cat({there, there}).cpu().sum().item<float>(), 4.0f);
}

// The wrapper skips keyword-only arguments but not `out`, which follows them: addmm_out (beta and
// alpha keyword-only) into a CPU tensor raises, naming `out`.
TEST(SimExemptions, AnOutAfterKeywordOnlyArgumentsIsChecked) {
  const torch::Tensor there = torch::ones({2, 2}).to(tp::sim::device());
  torch::Tensor on_cpu = torch::empty({2, 2});
  const std::string message = message_of([&] { torch::addmm_out(on_cpu, there, there, there); });
  EXPECT_EQ(tp::classify(message), tp::ErrorClass::kDeviceMismatch) << message;
  EXPECT_EQ(tp::named_argument(message), "out") << message;
}

// README: dtypes follow the CPU's kernels, not CUDA's: half matmul fails on sim exactly where it
// fails on the CPU (1.13), and runs where the CPU runs it (2.x).
TEST(SimExemptions, HalfMatmulFollowsTheCpu) {
  const torch::Tensor half = torch::randn({2, 2}).to(torch::kHalf);
  const std::string on_cpu = message_of([&] { torch::mm(half, half); });
  const torch::Tensor on_sim = half.to(tp::sim::device());
  const std::string sim = message_of([&] { torch::mm(on_sim, on_sim); });
  EXPECT_EQ(on_cpu.empty(), sim.empty()) << "cpu: '" << on_cpu << "', sim: '" << sim << "'";
}

}  // namespace
}  // namespace sim_exemptions_test
