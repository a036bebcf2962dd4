// Cells the real runner (internal/cell_runner.cpp, internal/expected_error.cpp) must fail, and two
// it must pass, built into their own suite: torchplace_runner_probe. It is not a CTest suite of
// its own (its cells are meant to fail); runner_end_to_end_test.cpp runs it as a child process
// and reads its verdicts. The bodies run on every device axis value; the driver selects the cpu
// cells; one case's need is never met (it must skip). The device mismatches are genuine (meta and
// CPU tensors in one add); the argument-naming message is LibTorch's ~2.8 wording, raised by hand
// (no CPU-only op names an argument).
#include <torch/torch.h>

#include <cstdlib>
#include <optional>

#include <torchplace/numeric.h>
#include <torchplace/scenario.h>

namespace tp::runner_probe {
namespace {

// As PyTorch's codegen words it (aten/src/ATen/core/adaption.cpp), for index_select on CUDA.
constexpr const char* kIndexNamed =
    "Expected all tensors to be on the same device, but got index is on cpu, different from "
    "other tensors on cuda:0 (when checking argument in method wrapper_CUDA__index_select)";

void add_meta_to_cpu() { (void)torch::add(torch::ones({2}, torch::kMeta), torch::ones({2})); }

// The control: the statement under test raises the expected DeviceMismatch.
void raises_as_expected(Cell& cell) { cell.under_test("add", add_meta_to_cpu); }

// The same mismatch, raised before the statement under test (a model never moved).
void raises_while_preparing(Cell& cell) {
  add_meta_to_cpu();
  cell.under_test("add", add_meta_to_cpu);
}

// The statement under test raises, but a shape error, not a DeviceMismatch.
void raises_the_wrong_class(Cell& cell) {
  cell.under_test("mm", [] { return torch::mm(torch::ones({2, 2}), torch::ones({3, 3})); });
}

// A DeviceMismatch about `index` where the cell expects one about `target`.
void names_the_wrong_argument(Cell& cell) {
  cell.under_test("index_select", [] { TORCH_CHECK(false, kIndexNamed); });
}

// Nothing raises where a DeviceMismatch is expected.
void raises_nothing(Cell& cell) {
  cell.under_test("add", [] { return torch::ones({2}) + 1; });
}

// A fix whose answer is wrong: it runs, and its numeric check must fail the cell.
void wrong_answer(Cell& cell) {
  const torch::Tensor sum = cell.under_test("add", [] { return torch::ones({2}) + 1; });
  TP_EXPECT_CLOSE(sum, torch::full({2}, 3.0), Rtol{1e-6}, Atol{0.0});  // 2 is not 3
}

// The fix's control: the same check on the right answer passes.
void right_answer(Cell& cell) {
  const torch::Tensor sum = cell.under_test("add", [] { return torch::ones({2}) + 1; });
  TP_EXPECT_CLOSE(sum, torch::full({2}, 2.0), Rtol{1e-6}, Atol{0.0});
}

// A sticky error on the cell's accelerator (CUDA's words for cudaErrorIllegalAddress, as
// c10/cuda/CUDAException.cpp prefixes them): the runner must fail the cell and skip every later
// cell on that device, naming this one. On sim0 it stands for a CUDA device on a CPU host.
void breaks_its_device(Cell& cell) {
  cell.under_test(
      "kernel", [] { TORCH_CHECK(false, "CUDA error: an illegal memory access was encountered"); });
}
// Draws from LibTorch's CPU generator and records the number: the runner seeds every cell the
// same, so this cell draws the same number on each device it runs on.
void draws_a_number(Cell& cell) {
  const torch::Tensor drawn = cell.under_test("rand", [] { return torch::rand({1}); });
  cell.metric("draw", drawn.item<double>());
}

Expect succeeds(const CellSpec&) { return Expect::success(); }
std::optional<Unmet> needs_what_is_missing(const CellSpec&) {
  return Unmet{SkipCode::kNeedsCuda, "runner probe: a need no host meets"};
}
Expect skip_without_a_note(const CellSpec&) { return Expect::skip(""); }  // must say why
Expect skip_with_a_note(const CellSpec&) { return Expect::skip("runner probe: another cell"); }
Expect mismatch(const CellSpec&) { return Expect::error(ErrorClass::kDeviceMismatch); }
Expect mismatch_on_target(const CellSpec&) {
  return Expect::error(ErrorClass::kDeviceMismatch).naming("target");
}

TP_SCENARIO(runner_probe)
    .cases("case", {{"raises_as_expected", raises_as_expected, mismatch},
                    {"raises_while_preparing", raises_while_preparing, mismatch},
                    {"raises_the_wrong_class", raises_the_wrong_class, mismatch},
                    {"names_the_wrong_argument", names_the_wrong_argument, mismatch_on_target},
                    {"raises_nothing", raises_nothing, mismatch},
                    {"wrong_answer", wrong_answer, succeeds},
                    {"right_answer", right_answer, succeeds},
                    {"skips_without_a_note", right_answer, skip_without_a_note},
                    {"skips_with_a_note", wrong_answer, skip_with_a_note},
                    {"sticky_breaks_its_device", breaks_its_device, succeeds},
                    {"sticky_then_a_fix", right_answer, succeeds},
                    {"needs_what_is_missing", wrong_answer, succeeds, needs_what_is_missing},
                    {"draws_a_number", draws_a_number, succeeds}})
    .on(DeviceAxis::kEach);

// A scenario without a body, registered only when the driver sets TORCHPLACE_PROBE_BODYLESS: the
// runner must refuse it before any cell runs (exit 3, naming it).
[[maybe_unused]] const bool kBodyless = std::getenv("TORCHPLACE_PROBE_BODYLESS") != nullptr &&
                                        (Registry::add("bodyless_probe").expect(succeeds), true);

}  // namespace
}  // namespace tp::runner_probe
