// tp::sim refuses the dtypes CUDA's kernels refuse, in CUDA's words (harness/sim/cuda_dtypes.inc,
// generated from each version's source by cuda_dtypes.py; README "Dtypes CUDA refuses"), and
// still runs every dtype they run. The CPU kernels the sim computes with take more: int64 mm, a
// bool sort (1.13), an int64 convolution.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include <exception>
#include <functional>
#include <string>
#include <typeinfo>
#include <vector>

#include <torchplace/sim/sim.h>
#include "raised_message.h"

namespace sim_dtypes_test {  // unity-built with the other harness tests
namespace {

#define TP_SIM_CUDA_DTYPES(...)
#include "sim/cuda_dtypes.inc"
#undef TP_SIM_CUDA_DTYPES

struct Listed {
  const char* name;
  const char* overload;
  std::vector<int> present;  // per version of TP_SIM_CUDA_DTYPE_VERSION_LIST
};

const std::vector<Listed>& table() {
  static const std::vector<Listed> rows = {
#define TP_SIM_CUDA_DTYPES(name, overload, argument, dims, empty, kind, message, runs, where, ...) \
  {name, overload, {__VA_ARGS__}},
#include "sim/cuda_dtypes.inc"
#undef TP_SIM_CUDA_DTYPES
  };
  return rows;
}

// The column the sim reads: the newest listed version not newer than the installed LibTorch
// (2.14.1, whose source was not available, reads 2.6.0's).
int installed_column() {
  const std::vector<std::string> versions = {TP_SIM_CUDA_DTYPE_VERSION_LIST};
  int column = 0;
  for (size_t index = 0; index < versions.size(); ++index) {
    const int major = std::stoi(versions[index]);
    const int minor = std::stoi(versions[index].substr(versions[index].find('.') + 1));
    if (major * 100 + minor <= TORCH_VERSION_MAJOR * 100 + TORCH_VERSION_MINOR)
      column = static_cast<int>(index);
  }
  return column;
}

// What a statement raises: its type and text ("" when it runs).
struct Raised {
  std::string type;
  std::string text;
};

Raised raised(const std::function<void()>& body) {
  try {
    body();
  } catch (const c10::Error& error) {
    return {typeid(error).name(), error.what_without_backtrace()};
  } catch (const std::exception& error) {
    return {typeid(error).name(), error.what()};
  }
  return {"", ""};
}

torch::Tensor on_sim(const torch::Tensor& tensor) { return tensor.to(tp::sim::device()); }

// Every operator the installed version's column lists exists in the installed dispatcher.
TEST(SimDtypes, TheTableMatchesTheInstalledLibTorch) {
  int listed = 0;
  for (const Listed& row : table()) {
    if (!row.present.at(installed_column())) continue;
    ++listed;
    const c10::OperatorName name(std::string("aten::") + row.name, row.overload);
    EXPECT_TRUE(c10::Dispatcher::singleton().findSchema(name).has_value())
        << "cuda_dtypes.inc lists for " << TORCH_VERSION << " an operator it lacks: " << name;
  }
  EXPECT_GT(listed, 150) << "too few rows for this version: a parse went wrong";
}

// int64 mm: `"addmm_cuda" not implemented for 'Long'` (Blas.cpp:285 @1.13.1, :449 @2.6.0), of
// the class the installed AT_DISPATCH raises (the CPU's own failing dispatch shows it).
TEST(SimDtypes, Int64MatmulRaisesAsOnCuda) {
  const torch::Tensor a = torch::ones({2, 3}, torch::kLong), b = torch::ones({3, 2}, torch::kLong);
  ASSERT_EQ(raised([&] { torch::mm(a, b); }).text, "") << "the CPU runs int64 mm";
  const Raised sim = raised([&] { torch::mm(on_sim(a), on_sim(b)); });
  EXPECT_EQ(sim.text, "\"addmm_cuda\" not implemented for 'Long'");
  const torch::Tensor flag = torch::ones({2, 2}, torch::kBool);
  EXPECT_EQ(sim.type, raised([&] { torch::mm(flag, flag); }).type) << "not AT_DISPATCH's class";
  const torch::Tensor bias = on_sim(torch::ones({2, 2}, torch::kLong));
  EXPECT_EQ(raised([&] { torch::addmm(bias, on_sim(a), on_sim(b)); }).text,
            "\"addmm_cuda\" not implemented for 'Long'");
  EXPECT_EQ(raised([&] { torch::matmul(on_sim(a), on_sim(b)); }).text,
            "\"addmm_cuda\" not implemented for 'Long'")
      << "matmul is mm on CUDA";
}

// What CUDA runs still runs: float matmuls of every kind, and int64 ones with an empty tensor
// (addmm_out_cuda_impl returns before its dispatch, Blas.cpp:226 @1.13.1); a 0-dim self is no
// exemption (baddbmm_out_cuda_impl dispatches on it, Blas.cpp:385 @1.13.1).
TEST(SimDtypes, WhatCudaRunsStillRuns) {
  const torch::Tensor a = on_sim(torch::randn({2, 3})), b = on_sim(torch::randn({3, 2}));
  EXPECT_EQ(raised([&] { torch::mm(a, b); }).text, "");
  EXPECT_EQ(raised([&] { torch::addmm(on_sim(torch::zeros({2, 2})), a, b); }).text, "");
  EXPECT_EQ(raised([&] { torch::bmm(a.unsqueeze(0), b.unsqueeze(0)); }).text, "");
  EXPECT_EQ(raised([&] { torch::mv(a, on_sim(torch::randn({3}))); }).text, "");
  EXPECT_EQ(raised([&] {
              torch::dot(on_sim(torch::randn({3}, torch::kDouble)),
                         on_sim(torch::randn({3}, torch::kDouble)));
            }).text,
            "");
  EXPECT_EQ(raised([&] { torch::sort(on_sim(torch::randn({4}))); }).text, "");
  const torch::Tensor empty = on_sim(torch::ones({5, 0}, torch::kLong));
  EXPECT_EQ(raised([&] { torch::mm(empty, on_sim(torch::ones({0, 2}, torch::kLong))); }).text, "");
  const torch::Tensor batch = on_sim(torch::ones({2, 2, 2}, torch::kLong));
  EXPECT_EQ(raised([&] { torch::baddbmm(on_sim(torch::tensor(1)), batch, batch); }).text,
            "\"baddbmm_cuda\" not implemented for 'Long'");
  // No early return in avg_pool3d_out_cuda (AveragePool3d.cu:401 @1.13.1): an empty batch too.
  const torch::Tensor none = on_sim(torch::ones({0, 1, 4, 4, 4}, torch::kLong));
  EXPECT_EQ(raised([&] { torch::avg_pool3d(none, 2); }).text,
            "\"avg_pool3d_out_cuda\" not implemented for 'Long'");
}

// Samples of operators op_db lists as lacking int64 or bool on CUDA (LibTorch 1.13.1's
// dtypesIfCUDA, per operator) that CUDA's code runs all the same, so the sim too: the conformance
// sweep's listed differences (reports/torchplace/conformance/known_differences.json). Lines
// of 1.13.1's source.
TEST(SimDtypes, OpDbSamplesThatCudaRuns) {
  const auto longs = [](at::IntArrayRef sizes) { return on_sim(torch::ones(sizes, torch::kLong)); };
  // linear's addmm (Linear.cpp:37) of an empty input: result_sizes[0] == 0 (Blas.cpp:201).
  EXPECT_EQ(raised([&] {
              torch::nn::functional::linear(longs({0, 3}), longs({4, 3}), longs({4}));
            }).text,
            "");
  // avg_pool2d_out_cuda dispatches only `if (count != 0)` (AveragePool2d.cu:288).
  EXPECT_EQ(raised([&] { torch::avg_pool2d(longs({0, 1, 4, 4}), 2); }).text, "");
  // einsum of one operand sums it (Linear.cpp:557); inner of a 0-dim one multiplies
  // (LinearAlgebra.cpp:1170).
  EXPECT_EQ(raised([&] { torch::einsum("i->", {longs({3})}); }).text, "");
  EXPECT_EQ(raised([&] { torch::inner(longs({}), longs({5, 5})); }).text, "");
  // _trilinear computes nothing for an empty input (Linear.cpp:618): bilinear of one.
  const auto bilinear = [&] {
    torch::bilinear(longs({0, 3}), longs({0, 4}), longs({5, 3, 4}), longs({5}));
  };
  EXPECT_EQ(raised(bilinear).text, "");
}

// Not decided by cuda_dtypes.py: scatter_reduce's dtypes hang on its `reduce` string (an enum
// switch to overloaded functors, cuda/ScatterGatherKernel.cu:514 @1.13.1): CUDA refuses a bool
// prod ("cuda_scatter_gather_base_kernel_func", :322), the sim runs it (README, listed difference).
TEST(SimDtypes, BoolScatterReduceProdRunsUnlikeCuda) {
  const torch::Tensor flags = on_sim(torch::ones({4}, torch::kBool));
  const torch::Tensor index = on_sim(torch::tensor({0, 1, 0, 1}));
  EXPECT_EQ(raised([&] { flags.scatter_reduce(0, index, flags, "prod"); }).text, "");
}

// A device mismatch is still CUDA's first error: its wrapper checks devices before the kernel.
TEST(SimDtypes, TheDeviceCheckComesFirst) {
  const torch::Tensor a = torch::ones({2, 2}, torch::kLong);
  const std::string text = raised([&] { torch::mm(on_sim(a), a); }).text;
  EXPECT_NE(text.find("Expected all tensors to be on the same device"), std::string::npos) << text;
}

// A bool sort: CUDA 1.13.1 refuses it (cuda/Sort.cpp:67 @1.13.1), 2.6.0 sorts it. A 0-dim one
// never reaches that kernel (Sorting.cpp:919 @1.13.1).
TEST(SimDtypes, BoolSortAsOnCuda) {
  const torch::Tensor flags = torch::tensor({true, false, true});
  ASSERT_EQ(raised([&] { torch::sort(flags); }).text, "") << "the CPU sorts bool";
  const std::string text = raised([&] { torch::sort(on_sim(flags)); }).text;
  if (TORCH_VERSION_MAJOR < 2) {
    EXPECT_EQ(text, "Sort currently does not support bool dtype on CUDA.");
    EXPECT_EQ(raised([&] { torch::argsort(on_sim(flags)); }).text, text);
  } else {
    EXPECT_EQ(text, "") << "2.6.0's CUDA sort takes bool";
  }
  EXPECT_EQ(raised([&] { torch::sort(on_sim(torch::tensor(true))); }).text, "");
}

// int64 conv2d: cuDNN cannot describe Long (cudnn/Types.cpp:28 @1.13.1, :23 @2.6.0); a
// depthwise one takes _conv_depthwise2d (DepthwiseConv2d.cu:309 @1.13.1); float32 runs.
TEST(SimDtypes, Int64ConvolutionRaisesAsOnCuda) {
  const torch::Tensor input = torch::ones({1, 2, 5, 5}, torch::kLong);
  const torch::Tensor weight = torch::ones({4, 2, 3, 3}, torch::kLong);
  ASSERT_EQ(raised([&] { torch::conv2d(input, weight); }).text, "") << "the CPU runs int64 conv2d";
  const Raised sim = raised([&] { torch::conv2d(on_sim(input), on_sim(weight)); });
  EXPECT_EQ(sim.text, "getCudnnDataTypeFromScalarType() not supported for Long");
  EXPECT_EQ(sim.type, typeid(std::runtime_error).name()) << "Types.cpp throws std::runtime_error";
  const torch::Tensor depthwise = torch::ones({2, 1, 3, 3}, torch::kLong);
  const std::vector<int64_t> ones = {1, 1}, zeros = {0, 0};
  const auto grouped = [&] {
    torch::conv2d(on_sim(input), on_sim(depthwise), torch::Tensor(), ones, zeros, ones, 2);
  };
  EXPECT_EQ(raised(grouped).text, "\"conv_depthwise2d_forward_cuda\" not implemented for 'Long'");
  EXPECT_EQ(raised([&] {
              torch::conv2d(on_sim(input.to(torch::kFloat)), on_sim(weight.to(torch::kFloat)));
            }).text,
            "");
}

// A float32 depthwise convolution takes _conv_depthwise2d on CUDA (Convolution.cpp:318 @1.13.1),
// which runs float32: it runs on the sim, as on the CPU.
TEST(SimDtypes, Float32DepthwiseConvolutionRuns) {
  torch::manual_seed(0);
  const torch::Tensor input = torch::randn({1, 2, 5, 5}), weight = torch::randn({4, 1, 3, 3});
  const std::vector<int64_t> ones = {1, 1}, zeros = {0, 0};
  const auto depthwise = [&](const torch::Tensor& x, const torch::Tensor& w) {
    return torch::conv2d(x, w, torch::Tensor(), ones, zeros, ones, 2);
  };
  torch::Tensor on_device;
  EXPECT_EQ(raised([&] { on_device = depthwise(on_sim(input), on_sim(weight)); }).text, "");
  ASSERT_TRUE(on_device.defined());
  EXPECT_TRUE(torch::allclose(on_device.cpu(), depthwise(input, weight), 1e-6, 1e-6));
}

// A tensor list argument (the gradients GradScaler unscales): its tensors are looked through, and
// a float64 found_inf is refused as CUDA refuses it (AmpKernels.cu:102 @1.13.1, :101 @2.6.0).
TEST(SimDtypes, AmpUnscaleRefusesAFloat64FoundInf) {
  const std::vector<torch::Tensor> grads = {on_sim(torch::ones({3})), on_sim(torch::ones({2, 2}))};
  const torch::Tensor inv_scale = on_sim(torch::ones({1}));
  torch::Tensor found_inf = on_sim(torch::zeros({1}, torch::kDouble));
  const Raised sim =
      raised([&] { at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale); });
  EXPECT_EQ(sim.text, "found_inf must be a float tensor.");
  EXPECT_EQ(sim.type, typeid(c10::Error).name());
}

}  // namespace
}  // namespace sim_dtypes_test
