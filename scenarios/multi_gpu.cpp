// multi_gpu: a model replicated from cuda:0 with its inputs on cuda:1. These cells need two GPUs;
// with fewer they are listed as skipped with that reason.
//   inputs_on_second_device  broken: the model on cuda:0, the batch on cuda:1: DeviceMismatch.
//   inputs_to_first_device   the fix, DataParallel's rule: the module and its inputs start on the
//                            first device (device_ids[0]); output matches the CPU reference.
//   data_parallel            torch::nn::parallel::data_parallel over both GPUs, the module on the
//                            first device: scatter, replicate, gather onto the first device;
//                            output matches the CPU reference.
#include <torchplace/numeric.h>
#include <torchplace/scenario.h>

#if TORCHPLACE_WITH_CUDA
#include <torch/nn/parallel/data_parallel.h>  // its autograd Scatter/Gather need CUDA headers
#endif

namespace scenarios::multi_gpu {
namespace {

constexpr int kSamples = 8;  // split 4 + 4 across the two GPUs
constexpr int kFeatures = 16;
constexpr int kOutputs = 4;
constexpr double kRtol = 1e-4;  // float32 on a GPU against float32 on the CPU
constexpr double kAtol = 1e-5;

torch::Tensor forward_on(tp::Cell& cell, torch::nn::Linear& model, const torch::Tensor& input) {
  const torch::Device first = cell.placement().devices.at(0);
  const torch::Device second = cell.placement().devices.at(1);
  const std::string& variant = cell.axis("variant");
  if (variant != "data_parallel") {
    const torch::Tensor moved = input.to(variant == "inputs_on_second_device" ? second : first);
    return cell.under_test("forward", [&] { return model(moved); });  // second device: raises
  }
#if TORCHPLACE_WITH_CUDA
  const torch::Tensor on_first = input.to(first);
  return cell.under_test("data_parallel", [&] {
    return torch::nn::parallel::data_parallel(model, on_first,
                                              std::vector<torch::Device>{first, second}, first);
  });
#else
  TORCH_CHECK(false,
              "data_parallel needs a LibTorch built with CUDA");  // absent_reason skips first
  return {};
#endif
}

void run(tp::Cell& cell) {
  const torch::Tensor input = torch::randn({kSamples, kFeatures});
  torch::nn::Linear model(kFeatures, kOutputs);
  const torch::Tensor cpu_reference = model(input);
  model->to(cell.placement().devices.at(0));  // the replica that DataParallel scatters from
  const torch::Tensor output = forward_on(cell, model, input);
  EXPECT_EQ(output.device(), cell.placement().devices.at(0));
  TP_EXPECT_CLOSE(output, cpu_reference, kRtol, kAtol);
}

tp::Expect expectation(const tp::CellSpec& cell) {
  if (cell.axis("variant") == "inputs_on_second_device") {
    return tp::Expect::error(tp::ErrorClass::kDeviceMismatch).naming("mat1");
  }
  return tp::Expect::success();
}

}  // namespace

TP_SCENARIO(multi_gpu)
    .axis("variant", {"inputs_on_second_device", "inputs_to_first_device", "data_parallel"})
    .on(tp::DeviceAxis::kCudaPair)
    .expect(expectation)
    .run(run);

}  // namespace scenarios::multi_gpu
