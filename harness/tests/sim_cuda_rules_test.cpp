// tp::sim against CUDA's checks past the generated wrapper, as harness/sim/scalar_rules.py read
// them from each version's source (scalar_rules.inc; README "Which operators check"):
// TensorIterator's one CPU scalar (aten/src/ATen/TensorIterator.cpp, compute_types), the kernel
// launchers that refuse it (aten/src/ATen/native/cuda/Loops.cuh, gpu_kernel), and searchsorted's
// sorter (BucketizationUtils.h). The values are synthetic; the messages are LibTorch's source's.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>

#include <torchplace/compat.h>
#include <torchplace/sim/sim.h>
#include "internal/expected_error.h"
#include "raised_message.h"
#include "sim/scalar_rules.inc"  // the version list only: the rows are under #ifdef
#include "sim/sim_internal.h"

namespace sim_cuda_rules_test {  // unity-built with the other harness tests
namespace {

using tp::sim::detail::check_iterator;
using tp::sim::detail::IteratorRule;
using tp::sim::detail::scalar_rule;
using tp::sim::detail::ScalarRule;
using tp_test::message_of;

torch::Tensor cpu_scalar(float value) { return torch::tensor(value); }  // 0-dim, on the CPU

std::string sim_name() { return c10::str(tp::sim::device()); }  // privateuseone:0 on 1.13

// Loops.cuh gpu_kernel's TORCH_INTERNAL_ASSERT, in c10/util/Exception.h's form (the sim writes the
// source-relative path; a CUDA build's __FILE__ is its own build path).
const std::string kKernelAssert =
    "iter.device(arg).is_cuda() INTERNAL ASSERT FAILED at \"aten/src/ATen/native/cuda/Loops.cuh\":";

// The installed version's column decides the operators of the tests below (2.14.1, whose source
// is not available, reads 2.6.0's): a stale table or a reading gone wrong shows here first.
TEST(SimCudaRules, TheTableDecidesTheseTestsOperators) {
  EXPECT_EQ(scalar_rule("add.out").rule, IteratorRule::kAccept);
  EXPECT_EQ(scalar_rule("mse_loss.out").rule, IteratorRule::kKernel);
  EXPECT_EQ(scalar_rule("lerp.Scalar_out").rule, IteratorRule::kKernel);
  EXPECT_EQ(scalar_rule("binary_cross_entropy.").rule, IteratorRule::kIterator);
  EXPECT_EQ(scalar_rule("no_such_operator.").rule, IteratorRule::kUndecided);
}

// add's iterator allows CPU scalars (BINARY_OP_CONFIG) and its kernel takes one (torchgen's ufunc
// kernel, is_cpu_scalar): one passes, as on CUDA.
TEST(SimCudaRules, AddTakesAZeroDimCpuScalar) {
  const torch::Tensor x = torch::ones({3}).to(tp::sim::device());
  const torch::Tensor sum = torch::add(x, cpu_scalar(2));
  EXPECT_EQ(sum.device(), tp::sim::device());
  EXPECT_EQ(sum.cpu().sum().item<float>(), 9.0f);
  torch::Tensor out = torch::empty({3}).to(tp::sim::device());
  torch::add_out(out, cpu_scalar(2), x);
  EXPECT_EQ(out.cpu().sum().item<float>(), 9.0f) << "a CPU scalar first";
}

// A CPU scalar first: LibTorch's CPU fallback puts a result where the first tensor argument is
// (CPUFallback.cpp compute_target_device); the sim moves it to the iterator's device, as on CUDA.
TEST(SimCudaRules, ACpuScalarFirstStillGivesAResultOnTheDevice) {
  const torch::Tensor x = torch::full({3}, 2.0f).to(tp::sim::device());
  const torch::Tensor quotient = torch::floor_divide(cpu_scalar(7), x);
  EXPECT_EQ(quotient.device(), tp::sim::device());
  EXPECT_EQ(quotient.cpu().sum().item<float>(), 9.0f);
}

// compute_types allows one CPU scalar on a non-CPU iterator: the second raises
// (TensorIterator.cpp: 1.13.1 line 478, 2.6.0 line 497).
TEST(SimCudaRules, AddOutWithTwoCpuScalarsRaises) {
  torch::Tensor out = torch::zeros({3}).to(tp::sim::device());
  const std::string message =
      message_of([&] { torch::add_out(out, cpu_scalar(1), cpu_scalar(2)); });
  EXPECT_EQ(message, "Trying to pass too many CPU scalars to non-CPU kernel!");
  EXPECT_EQ(out.cpu().sum().item<float>(), 0.0f) << "refused before it was written";
}

// mse_loss's iterator allows CPU scalars (build_borrowing_binary_op), but its CUDA kernel
// (BinaryMiscOpsKernels.cu mse_kernel_cuda) launches gpu_kernel, which asserts every operand is on
// the device: operand 2 (out, self, target) is the CPU target. Both reductions.
TEST(SimCudaRules, MseLossWithAZeroDimCpuTargetRaises) {
  const torch::Tensor prediction = torch::full({}, 0.5f).to(tp::sim::device());
  for (const int64_t reduction : {at::Reduction::Mean, at::Reduction::None}) {
    const std::string message =
        message_of([&] { torch::mse_loss(prediction, cpu_scalar(1), reduction); });
    EXPECT_EQ(message.rfind(kKernelAssert, 0), 0u) << message;
    EXPECT_NE(message.find(", please report a bug to PyTorch. argument 2: expected a CUDA device "
                           "but found cpu"),
              std::string::npos)
        << message;
  }
}

// lerp with a Scalar weight: build_binary_op allows the CPU end, lerp_scalar_kernel (Lerp.cu)
// launches gpu_kernel, which refuses it.
TEST(SimCudaRules, LerpWithAZeroDimCpuEndRaises) {
  const torch::Tensor start = torch::zeros({}).to(tp::sim::device());
  const std::string message = message_of([&] { torch::lerp(start, cpu_scalar(1), 0.5); });
  EXPECT_EQ(message.rfind(kKernelAssert, 0), 0u) << message;
  EXPECT_NE(message.find("argument 2: expected a CUDA device but found cpu"), std::string::npos)
      << message;
  EXPECT_EQ(torch::lerp(start, cpu_scalar(1).to(tp::sim::device()), 0.5).cpu().item<float>(), 0.5f);
}

// binary_cross_entropy (NoCheck, not structured): its CUDA kernel builds its iterator without
// allow_cpu_scalars (cuda/Loss.cu: 1.13.1 line 80, 2.6.0 line 82), so compute_types refuses the
// CPU target with TensorIterator's message. (Before, the sim let it pass: a README difference.)
TEST(SimCudaRules, BinaryCrossEntropyWithAZeroDimCpuTargetRaises) {
  const torch::Tensor probability = torch::full({}, 0.25f).to(tp::sim::device());
  const std::string message =
      message_of([&] { torch::binary_cross_entropy(probability, cpu_scalar(1)); });
  EXPECT_EQ(message,
            "Expected all tensors to be on the same device, but found at least two "
            "devices, " +
                sim_name() + " and cpu!");
  const torch::Tensor loss =
      torch::binary_cross_entropy(probability, cpu_scalar(1).to(tp::sim::device()));
  EXPECT_EQ(loss.device(), tp::sim::device()) << "the fallback's result on the iterator's device";
  EXPECT_NEAR(loss.cpu().item<float>(), -std::log(0.25f), 1e-6);
}

// A NoCheck iterator operator reached directly (add.out) names no argument: it is
// TensorIterator's message, not the wrapper's, with the common device first.
TEST(SimCudaRules, AnIteratorMismatchIsTensorIteratorsMessage) {
  torch::Tensor out = torch::empty({3}).to(tp::sim::device());
  const torch::Tensor x = torch::ones({3}).to(tp::sim::device());
  EXPECT_EQ(message_of([&] { torch::add_out(out, x, torch::ones({3})); }),
            "Expected all tensors to be on the same device, but found at least two devices, " +
                sim_name() + " and cpu!");
  const torch::Tensor there = torch::ones({3}).to(tp::sim::device(1));
  EXPECT_EQ(message_of([&] { torch::add_out(out, x, there); }),
            "Expected all tensors to be on the same device, but found at least two devices, " +
                sim_name() + " and " + c10::str(tp::sim::device(1)) + "!");
}

// clamp_min.Tensor's CUDA wrapper checks its tensors (no NoCheck in its yaml entry), though the
// out= form its generic kernel calls is NoCheck and would take a CPU scalar min: the sim checks
// the form as called (scalar_rules.inc TP_SIM_AS_CALLED), naming `min`.
TEST(SimCudaRules, AFormCheckedByItsOwnWrapperRefusesWhatItsOutFormTakes) {
  const torch::Tensor x = torch::zeros({3}).to(tp::sim::device());
  const std::string message = message_of([&] { torch::clamp_min(x, cpu_scalar(1)); });
  EXPECT_EQ(tp::named_argument(message), "min") << message;
  EXPECT_NE(message.find("wrapper_SIM_clamp_min_Tensor"), std::string::npos) << message;
  torch::Tensor out = torch::empty({3}).to(tp::sim::device());
  torch::clamp_min_out(out, x, cpu_scalar(1));  // NoCheck, its iterator takes one CPU scalar
  EXPECT_EQ(out.cpu().sum().item<float>(), 3.0f);
}

// Where the reading could not decide (logical_and: a jiterator kernel without a CPU scalar for
// ComplexHalf beside one with it), the sim keeps its older rule: a 0-dim CPU input passes.
TEST(SimCudaRules, AnUndecidedOperatorKeepsTheScalarExemption) {
  ASSERT_EQ(scalar_rule("logical_and.out").rule, IteratorRule::kUndecided);
  const torch::Tensor x = torch::ones({3}).to(tp::sim::device());
  const torch::Tensor both = torch::logical_and(x, torch::tensor(true));
  EXPECT_EQ(both.device(), tp::sim::device());
  EXPECT_EQ(both.cpu().sum().item<int64_t>(), 3);
}

// searchsorted's sorter is keyword-only: the wrapper skips it, CUDA's kernel checks it
// (BucketizationUtils.h searchsorted_pre_check: 1.13.1 line 128, 2.6.0 line 127). Before, the sim
// missed it (a README difference).
TEST(SimCudaRules, SearchsortedChecksItsSorterAsCudasKernelDoes) {
  const torch::Tensor sorted = torch::tensor({1.0f, 2.0f, 3.0f}).to(tp::sim::device());
  const torch::Tensor values = torch::tensor({2.5f}).to(tp::sim::device());
  const torch::Tensor sorter = torch::tensor({0, 1, 2}, torch::kLong);  // CPU
  const std::string message =
      message_of([&] { torch::searchsorted(sorted, values, false, false, c10::nullopt, sorter); });
  EXPECT_EQ(message,
            "torch.searchsorted(): sorter and boundary tensors should have same device "
            "type, but got sorter tensor device type cpu and input value tensor device "
            "type " +
                sim_name());
  const torch::Tensor found =
      torch::searchsorted(sorted, values, false, false, c10::nullopt, sorter.to(tp::sim::device()));
  EXPECT_EQ(found.cpu().item<int64_t>(), 2);
  // Without a sorter (the usual call) there is nothing to check.
  EXPECT_EQ(torch::searchsorted(sorted, values).cpu().item<int64_t>(),
            torch::searchsorted(sorted.cpu(), values.cpu()).item<int64_t>());
}

// Whether the table has the installed LibTorch's own major.minor column (1.13.1 does; 2.13.0
// reads 2.6.0's, the newest not newer).
bool reads_its_own_column() {
  for (const char* version : {TP_SIM_SCALAR_RULE_VERSION_LIST}) {
    if (tp::sim::detail::same_minor(version, TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR)) return true;
  }
  return false;
}

// The line of a launcher's assert in Loops.cuh, in the column read (scalar_rules.inc
// TP_SIM_SCALAR_LAUNCHER: gpu_kernel 1.13.1 line 89, 2.6.0 line 104; gpu_kernel_multiple_outputs
// 296 and 311).
std::string loops_line(int line_1_13, int line_2_6) {
  return std::to_string(TP_SIM_AT_LEAST(2, 6) ? line_2_6 : line_1_13);
}

const c10::FunctionSchema& schema_of(const char* name, const char* overload) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, overload).schema();
}

// A structured operator's meta function builds its iterator (addcmul's: build_ternary_op, no
// allow_cpu_scalars, scalar_rules.inc TP_SIM_META_CHECKED). Its `iterator` verdict holds where the
// column is the installed version's own; an older column's is not applied (kUndecided), since the
// meta function the sim runs is the installed version's. An operator whose own kernel builds the
// iterator (binary_cross_entropy) keeps its verdict either way.
TEST(SimCudaRules, AMetaCheckedIteratorVerdictHoldsOnlyInItsOwnVersionsColumn) {
  const IteratorRule meta_checked =
      reads_its_own_column() ? IteratorRule::kIterator : IteratorRule::kUndecided;
  EXPECT_EQ(scalar_rule("addcmul.out").rule, meta_checked);
  EXPECT_EQ(scalar_rule("addcmul_.").rule, meta_checked);
  EXPECT_EQ(scalar_rule("addcmul.").rule, meta_checked);
  EXPECT_EQ(scalar_rule("binary_cross_entropy.").rule, IteratorRule::kIterator);
  if (!reads_its_own_column()) return;
  // The out= form reaches the sim as called: compute_types refuses the 0-dim CPU tensor1 with
  // TensorIterator's message, where the older rule would have let it pass as a scalar.
  torch::Tensor out = torch::zeros({3}).to(tp::sim::device());
  const torch::Tensor x = torch::ones({3}).to(tp::sim::device());
  EXPECT_EQ(message_of([&] { torch::addcmul_out(out, x, cpu_scalar(2), x); }),
            "Expected all tensors to be on the same device, but found at least two devices, " +
                sim_name() + " and cpu!");
  EXPECT_EQ(out.cpu().sum().item<float>(), 0.0f) << "refused before it was written";
}

// gpu_kernel's assert, whole: TORCH_INTERNAL_ASSERT's form with the source line of the column
// read, and the operand it names. A CPU self (operand 1 of out, self, target) is refused as
// operand 1, and the sim's context names `self`, though `target` comes after it.
TEST(SimCudaRules, AKernelsRefusalNamesItsLineAndTheCpuOperand) {
  const torch::Tensor target = torch::full({}, 0.5f).to(tp::sim::device());
  try {
    torch::mse_loss(cpu_scalar(1), target);
    ADD_FAILURE() << "a 0-dim CPU self passed gpu_kernel";
  } catch (const c10::Error& error) {
    EXPECT_EQ(error.msg(), kKernelAssert + loops_line(89, 104) +
                               ", please report a bug to PyTorch. argument 1: expected a CUDA "
                               "device but found cpu");
    const std::string full = error.what_without_backtrace();
    EXPECT_NE(full.find("argument 'self'"), std::string::npos) << full;
    EXPECT_EQ(full.find("argument 'target'"), std::string::npos) << full;
  }
}

// A launcher whose assert has no message (gpu_kernel_multiple_outputs, Loops.cuh): the refusal is
// TORCH_INTERNAL_ASSERT's text alone, ending after "please report a bug to PyTorch. ".
TEST(SimCudaRules, ALauncherWhoseAssertHasNoMessageRefusesWithItsConditionAlone) {
  const torch::Tensor self = torch::full({}, 0.5f).to(tp::sim::device());
  const torch::Tensor out = torch::empty({}).to(tp::sim::device());
  const torch::jit::Stack stack{self, cpu_scalar(1), int64_t{at::Reduction::None}, out};
  const ScalarRule rule{IteratorRule::kKernel, "gpu_kernel_multiple_outputs"};
  EXPECT_EQ(message_of([&] { check_iterator(schema_of("aten::mse_loss", "out"), stack, rule); }),
            "iter.device(arg).is_cuda() INTERNAL ASSERT FAILED at "
            "\"aten/src/ATen/native/cuda/Loops.cuh\":" +
                loops_line(296, 311) + ", please report a bug to PyTorch. ");
}

// An iterator whose operands are all on the CPU is a CPU iterator: compute_types' one-CPU-scalar
// rule is for a non-CPU common device, so two 0-dim CPU inputs pass (the CPU's own add takes
// them), and the check gives no common device.
TEST(SimCudaRules, AnAllCpuIteratorHasNothingToRefuse) {
  EXPECT_EQ(torch::add(cpu_scalar(1), cpu_scalar(2)).item<float>(), 3.0f);
  const torch::jit::Stack stack{cpu_scalar(1), cpu_scalar(2), c10::Scalar(1)};
  c10::optional<c10::Device> common = tp::sim::device();
  EXPECT_NO_THROW(
      common = check_iterator(schema_of("aten::add", "Tensor"), stack, scalar_rule("add.Tensor")));
  EXPECT_FALSE(common.has_value());
}

// split_with_sizes_copy.out (scalar_rules.inc TP_SIM_AS_CALLED 0, 1): 1.13.1 has no CUDA kernel
// of it, only the CompositeExplicitAutograd one, which the sim runs as CUDA does: its copies into
// `out` cross devices, so CPU pieces are filled. 2.6.0 has a CUDA kernel whose wrapper checks
// every tensor, `out` too: from that column on the sim checks the form as called.
TEST(SimCudaRules, AFormIsCheckedAsCalledOnlyInTheColumnsThatSaySo) {
  const torch::Tensor x = torch::arange(6, torch::kFloat).to(tp::sim::device());
  std::vector<torch::Tensor> pieces{torch::zeros({2}), torch::zeros({4})};  // on the CPU
  const std::string message = message_of([&] {
    at::split_with_sizes_copy_out(pieces, x, {2, 4}, 0);
  });
  if (TP_SIM_AT_LEAST(2, 6)) {
    EXPECT_EQ(tp::named_argument(message), "out") << message;
    EXPECT_NE(message.find("wrapper_SIM_split_with_sizes_copy_out"), std::string::npos) << message;
    return;
  }
  EXPECT_EQ(message, "");
  EXPECT_EQ(pieces[0].sum().item<float>(), 1.0f);
  EXPECT_EQ(pieces[1].sum().item<float>(), 14.0f);
}

}  // namespace
}  // namespace sim_cuda_rules_test
