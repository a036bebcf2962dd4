// The backend an int64 convolution takes on CUDA decides what refuses it (cuda_dtypes.cpp,
// refuse_cuda_convolution_dtype; CUDA_RULES.md): a depthwise one goes to _conv_depthwise2d or
// conv_depthwise3d, whose rows name their dispatch, unless cuDNN's channels-last format applies
// (use_cudnn_depthwise, Convolution.cpp @1.13.1); anything else to cuDNN, which cannot describe
// Long (cudnn/Types.cpp:28 @1.13.1). And uint8 matmuls, which CUDA's addmm does not dispatch.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <exception>
#include <functional>
#include <string>
#include <vector>

#include <torchplace/sim/sim.h>

namespace sim_conv_backend_test {  // unity-built with the other harness tests
namespace {

constexpr const char* kCudnn = "getCudnnDataTypeFromScalarType() not supported for Long";

// What a statement raises ("" when it runs).
std::string raised(const std::function<void()>& body) {
  try {
    body();
  } catch (const c10::Error& error) {
    return error.what_without_backtrace();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

torch::Tensor longs(at::IntArrayRef sizes) { return torch::ones(sizes, torch::kLong); }

// A convolution of `input` and `weight` on the sim, stride 1, no padding, `groups` groups; what
// it raises. The CPU runs every one of these.
std::string convolution_on_sim(const torch::Tensor& input, const torch::Tensor& weight,
                               int64_t groups) {
  const std::vector<int64_t> ones(input.dim() - 2, 1), zeros(input.dim() - 2, 0);
  const auto convolve = [&](const torch::Tensor& x, const torch::Tensor& w) {
    return at::convolution(x, w, {}, ones, zeros, ones, false, zeros, groups);
  };
  EXPECT_EQ(raised([&] { convolve(input, weight); }), "") << "the CPU runs it";
  return raised([&] { convolve(input.to(tp::sim::device()), weight.to(tp::sim::device())); });
}

// One input channel and one group: not depthwise (is_depthwise wants groups > 1), so cuDNN.
TEST(SimConvBackend, OneChannelOneGroupGoesToCudnn) {
  EXPECT_EQ(convolution_on_sim(longs({1, 1, 5, 5}), longs({2, 1, 3, 3}), 1), kCudnn);
  EXPECT_EQ(convolution_on_sim(longs({1, 1, 1, 1}), longs({1, 1, 1, 1}), 1), kCudnn)
      << "a one-element input";
}

// A 1-d convolution goes to cuDNN too.
TEST(SimConvBackend, Conv1dGoesToCudnn) {
  EXPECT_EQ(convolution_on_sim(longs({1, 2, 5}), longs({4, 2, 3}), 1), kCudnn);
}

// A depthwise 3-d convolution (5-d input) takes conv_depthwise3d, which dispatches no Long
// (DepthwiseConv3d.cu:427 @1.13.1); a 2-d one _conv_depthwise2d.
TEST(SimConvBackend, DepthwiseConvolutionsTakeTheirOwnKernels) {
  EXPECT_EQ(convolution_on_sim(longs({1, 2, 3, 5, 5}), longs({2, 1, 3, 3, 3}), 2),
            "\"conv_depthwise3d\" not implemented for 'Long'");
  EXPECT_EQ(convolution_on_sim(longs({1, 2, 5, 5}), longs({2, 1, 3, 3}), 2),
            "\"conv_depthwise2d_forward_cuda\" not implemented for 'Long'");
}

// CUDA's depthwise kernels take 4-d and 5-d inputs only (is_depthwise, Convolution.cpp @1.13.1):
// a 4-d convolution (6-d input) with as many groups as input channels goes to cuDNN. The CPU
// refuses such a convolution itself ("unsupported ConvNd parameters"); the sim refuses the dtype
// first, as cuDNN.
TEST(SimConvBackend, ADepthwiseShapedFourDimensionalConvolutionGoesToCudnn) {
  const std::vector<int64_t> ones(4, 1), zeros(4, 0);
  const torch::Device sim = tp::sim::device();
  EXPECT_EQ(raised([&] {
              at::convolution(longs({1, 2, 3, 3, 3, 3}).to(sim), longs({2, 1, 2, 2, 2, 2}).to(sim),
                              {}, ones, zeros, ones, false, zeros, 2);
            }),
            kCudnn);
}

// cuDNN takes a depthwise convolution when the input or the weight is channels-last
// (cudnn_conv_suggest_memory_format, ConvUtils.h @1.13.1: ChannelsLast for a 4-d weight,
// ChannelsLast3d for a 5-d one).
TEST(SimConvBackend, ChannelsLastDepthwiseGoesToCudnn) {
  const torch::Tensor input = longs({1, 2, 5, 5}), weight = longs({2, 1, 3, 3});
  const auto last = at::MemoryFormat::ChannelsLast;
  EXPECT_EQ(convolution_on_sim(input.contiguous(last), weight, 2), kCudnn) << "the input";
  // A depthwise weight has one channel per group: its contiguous strides count as channels-last
  // contiguous too, and suggest the contiguous format; these strides suggest channels-last.
  const torch::Tensor strided = torch::empty_strided({2, 1, 3, 3}, {9, 1, 3, 1}, torch::kLong);
  ASSERT_EQ(strided.suggest_memory_format(), last);
  EXPECT_EQ(convolution_on_sim(input, strided.fill_(1), 2), kCudnn) << "the weight";
  const torch::Tensor input3d = longs({1, 2, 3, 5, 5}), weight3d = longs({2, 1, 3, 3, 3});
  EXPECT_EQ(convolution_on_sim(input3d.contiguous(at::MemoryFormat::ChannelsLast3d), weight3d, 2),
            kCudnn);
}

// An input on the device and a weight on the CPU: CUDA's _convolution checks their types
// (c10::Error, "Input type (CUDALongType) and weight type (CPULongType) should be the same",
// Convolution.cpp:645 @1.13.1) before cuDNN describes the dtype (std::runtime_error). The sim's
// c10::Error names the devices instead; its class and its coming first are CUDA's.
TEST(SimConvBackend, MixedDevicesRaiseBeforeTheDtype) {
  const torch::Tensor input = longs({1, 2, 5, 5}).to(tp::sim::device()),
                      weight = longs({4, 2, 3, 3});
  const std::vector<int64_t> ones = {1, 1}, zeros = {0, 0};
  try {
    at::convolution(input, weight, {}, ones, zeros, ones, false, zeros, 1);
    ADD_FAILURE() << "a convolution of sim:0 and CPU tensors ran";
  } catch (const c10::Error& error) {
    EXPECT_EQ(std::string(error.what()).find(kCudnn), std::string::npos) << error.what();
  } catch (const std::exception& error) {
    ADD_FAILURE() << "not c10::Error: " << error.what();
  }
}

// uint8 mm: CUDA's addmm dispatch runs no Byte (the "addmm_cuda" rows, Blas.cpp:285 @1.13.1).
TEST(SimCudaDtypes, ByteMatmulRaisesAsOnCuda) {
  const torch::Tensor a = torch::ones({2, 3}, torch::kByte), b = torch::ones({3, 2}, torch::kByte);
  ASSERT_EQ(raised([&] { torch::mm(a, b); }), "") << "the CPU runs uint8 mm";
  EXPECT_EQ(raised([&] { torch::mm(a.to(tp::sim::device()), b.to(tp::sim::device())); }),
            "\"addmm_cuda\" not implemented for 'Byte'");
}

// An int64 mm whose second argument is empty runs, as its result is (addmm_out_cuda_impl returns
// before its dispatch, Blas.cpp @1.13.1).
TEST(SimCudaDtypes, Int64MatmulWithAnEmptySecondArgumentRuns) {
  const torch::Tensor a = torch::ones({2, 3}, torch::kLong), b = torch::ones({3, 0}, torch::kLong);
  torch::Tensor product;
  EXPECT_EQ(raised([&] { product = torch::mm(a.to(tp::sim::device()), b.to(tp::sim::device())); }),
            "");
  EXPECT_EQ(product.sizes(), (std::vector<int64_t>{2, 0}));
}

// _amp_foreach_non_finite_check_and_unscale_ returns before its checks only when the list of
// gradients is empty (AmpKernels.cu:93 @1.13.1): an empty gradient in it exempts nothing, and an
// empty list is not refused for found_inf's dtype (1.13.1 has no CPU kernel for the sim to run
// then: what else it raises is not CUDA's).
TEST(SimCudaDtypes, AmpUnscaleExemptsOnlyAnEmptyGradientList) {
  const auto on_sim = [](const torch::Tensor& tensor) { return tensor.to(tp::sim::device()); };
  const torch::Tensor inv_scale = on_sim(torch::ones({1}));
  torch::Tensor found_inf = on_sim(torch::zeros({1}, torch::kDouble));
  const std::vector<torch::Tensor> grads = {on_sim(torch::ones({3})), on_sim(torch::ones({0}))};
  const std::string refused = "found_inf must be a float tensor.";
  EXPECT_EQ(
      raised([&] { at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale); }),
      refused);
  const std::string none =
      raised([&] { at::_amp_foreach_non_finite_check_and_unscale_({}, found_inf, inv_scale); });
  EXPECT_EQ(none.find(refused), std::string::npos) << none;
}

}  // namespace
}  // namespace sim_conv_backend_test
