// multi_gpu: a model and its inputs on two devices. The pair axis lists the simulated pair
// (sim:0+sim:1, tp::sim: every host) and the CUDA pair (cuda:0+cuda:1: skipped, saying why, with
// fewer than two GPUs). Each case is registered once with its body, expectation and needs.
//   inputs_on_second_device   broken: the model on the first device, the batch on the second:
//                             DeviceMismatch naming mat1.
//   inputs_to_first_device    the fix, DataParallel's rule: the module and its inputs start on
//                             the first device (device_ids[0]); output matches the CPU reference.
//   data_parallel             torch::nn::parallel::data_parallel over both devices: scatter,
//                             replicate, gather onto the first. CUDA only (see needs_cuda_pair).
//   checkpoint_unmapped       broken: a checkpoint saved on the first device, loaded without a
//                             map into a model on the second: torch::load's set_data moves the
//                             parameters to the first device (InputArchive::try_read), and
//                             forward on a batch on the second raises DeviceMismatch (mat1).
//   checkpoint_mapped         the fix: map the load to the device of the model's parameters.
//   to_second_while_current_first  the current device is the first (a device guard) while the
//                             model is moved to the second by index: it lands there, and forward
//                             on the second matches the reference (a device index is not aliased
//                             to the current device).
//   input_to_current_device   broken: the same model on the second device, the batch moved to
//                             the device type without an index (`x.to(torch::kCUDA)`), which
//                             means the current device, the first: DeviceMismatch (mat1).
#include <c10/core/DeviceGuard.h>

#include <torchplace/fixes/follow_parameters.h>
#include <torchplace/numeric.h>
#include <torchplace/scenario.h>
#include <torchplace/sim/sim.h>
#include <torchplace/temp_dir.h>

#if TORCHPLACE_WITH_CUDA
#include <torch/nn/parallel/data_parallel.h>  // its autograd Scatter/Gather need CUDA headers
#endif

namespace scenarios::multi_gpu {
namespace {

constexpr int kSamples = 8;  // split 4 + 4 across the two devices
constexpr int kFeatures = 16;
constexpr int kOutputs = 4;
constexpr tp::Rtol kRtol{1e-4};  // float32 on a GPU against float32 on the CPU
constexpr tp::Atol kAtol{1e-5};

torch::Device first(const tp::CellSpec& cell) { return cell.placement().devices.at(0); }
torch::Device second(const tp::CellSpec& cell) { return cell.placement().devices.at(1); }

// A model and a batch, and the model's output on the CPU before it moves.
struct Setup {
  Setup() : input(torch::randn({kSamples, kFeatures})), model(kFeatures, kOutputs) {
    reference = model(input);
  }
  torch::Tensor input;
  torch::nn::Linear model;
  torch::Tensor reference;
};

void expect_matches(const torch::Tensor& output, const Setup& setup, const torch::Device& on) {
  EXPECT_EQ(output.device(), on);
  TP_EXPECT_CLOSE(output, setup.reference, kRtol, kAtol);
}

void forward_from_first(tp::Cell& cell, const torch::Device& input_device) {
  Setup setup;
  setup.model->to(first(cell));  // the replica that DataParallel scatters from
  const torch::Tensor moved = setup.input.to(input_device);
  const torch::Tensor output = cell.under_test("forward", [&] { return setup.model(moved); });
  expect_matches(output, setup, first(cell));
}

void inputs_on_second_device(tp::Cell& cell) { forward_from_first(cell, second(cell)); }
void inputs_to_first_device(tp::Cell& cell) { forward_from_first(cell, first(cell)); }

void data_parallel(tp::Cell& cell) {
  Setup setup;
  setup.model->to(first(cell));
#if TORCHPLACE_WITH_CUDA
  const torch::Tensor on_first = setup.input.to(first(cell));
  const torch::Tensor output = cell.under_test("data_parallel", [&] {
    return torch::nn::parallel::data_parallel(
        setup.model, on_first, std::vector<torch::Device>{first(cell), second(cell)}, first(cell));
  });
  expect_matches(output, setup, first(cell));
#else
  TORCH_CHECK(false, "data_parallel needs a LibTorch built with CUDA");  // needs_cuda_pair skips
#endif
}

// Saves the model from the first device, then loads it into a fresh model on the second, with
// the map `map_for` gives (nullopt: none), and runs forward on a batch on the second.
void load_on_second(tp::Cell& cell, bool mapped) {
  const tp::TempDir dir(cell.id());
  Setup setup;
  setup.model->to(first(cell));
  torch::save(setup.model, dir.file("first.pt"));
  torch::nn::Linear model(kFeatures, kOutputs);
  model->to(second(cell));
  if (mapped) {
    torch::load(model, dir.file("first.pt"), tp::fixes::parameter_device(*model));
  } else {
    torch::load(model, dir.file("first.pt"));
  }
  cell.note("parameters on " + tp::fixes::parameter_device(*model).str() + " after the load");
  const torch::Tensor input = setup.input.to(second(cell));
  const torch::Tensor output = cell.under_test("forward", [&] { return model(input); });
  expect_matches(output, setup, second(cell));
}

void checkpoint_unmapped(tp::Cell& cell) { load_on_second(cell, false); }
void checkpoint_mapped(tp::Cell& cell) { load_on_second(cell, true); }

// The model goes to the second device by index while the first is current.
void while_current_first(tp::Cell& cell, bool input_by_type) {
  const c10::DeviceGuard current(first(cell));
  Setup setup;
  setup.model->to(second(cell));
  EXPECT_EQ(tp::fixes::parameter_device(*setup.model), second(cell)) << "aliased to the current";
  const torch::Tensor input =
      setup.input.to(input_by_type ? torch::Device(second(cell).type()) : second(cell));
  const torch::Tensor output = cell.under_test("forward", [&] { return setup.model(input); });
  expect_matches(output, setup, second(cell));
}

void to_second_while_current_first(tp::Cell& cell) { while_current_first(cell, false); }
void input_to_current_device(tp::Cell& cell) { while_current_first(cell, true); }

tp::Expect mismatch(const tp::CellSpec&) {
  return tp::Expect::error(tp::ErrorClass::kDeviceMismatch).naming("mat1");
}
tp::Expect succeeds(const tp::CellSpec&) { return tp::Expect::success(); }

// LibTorch's C++ data_parallel is CUDA-only: it takes its devices from torch::cuda::device_count()
// and scatters and gathers with torch::autograd::Scatter/Gather, which run on CUDA streams
// (torch/csrc/api/include/torch/nn/parallel/data_parallel.h; torch/csrc/autograd/functions/
// comm.h: TORCH_CUDA_CU_API, at::cuda::CUDAStream).
std::optional<tp::Unmet> needs_cuda_pair(const tp::CellSpec& cell) {
  if (!tp::sim::is_sim(first(cell))) return std::nullopt;  // absent() covers the CUDA pair
  return tp::Unmet{tp::SkipCode::kNotOnSim,
                   "LibTorch's C++ data_parallel is CUDA-only (its Scatter/Gather, "
                   "torch/csrc/autograd/functions/comm.h, run on CUDA streams)"};
}

// 1.13's unpickler maps only to CPU, CUDA and HPU ("supported devices include CPU, CUDA and HPU,
// however got PRIVATEUSEONE"), so a checkpoint saved on sim cannot be loaded back onto it.
std::optional<tp::Unmet> needs_load_onto_device(const tp::CellSpec& cell) {
  if (!tp::sim::is_sim(first(cell))) return std::nullopt;
  return tp::needs_libtorch(2, 0,
                            "LibTorch 1.13's torch::load cannot restore a tensor onto a "
                            "PrivateUse1 device (sim); 2.x can");
}

}  // namespace

TP_SCENARIO(multi_gpu)
    .cases("variant",
           {{"inputs_on_second_device", inputs_on_second_device, mismatch},
            {"inputs_to_first_device", inputs_to_first_device, succeeds},
            {"data_parallel", data_parallel, succeeds, needs_cuda_pair},
            {"checkpoint_unmapped", checkpoint_unmapped, mismatch, needs_load_onto_device},
            {"checkpoint_mapped", checkpoint_mapped, succeeds, needs_load_onto_device},
            {"to_second_while_current_first", to_second_while_current_first, succeeds},
            {"input_to_current_device", input_to_current_device, mismatch}})
    .on(tp::DeviceAxis::kPair);

}  // namespace scenarios::multi_gpu
