// The sim's storage and view kernels (kernels.cpp) as CUDA's: resize_ and set_ grow a storage
// keeping its bytes and never shrink it (resize_bytes_cpu and maybe_resize_storage_cpu,
// aten/src/ATen/native/Resize.cpp and Resize.h @1.13.1, as cuda/Resize.cpp), views alias their
// input, and a negative view copied to the CPU comes out negated.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <utility>

#include <torchplace/sim/sim.h>
#include <torchplace/sim/transfer_log.h>
#include "raised_message.h"

namespace sim_storage_test {  // unity-built with the other harness tests
namespace {

torch::Tensor on_sim(const torch::Tensor& tensor) { return tensor.to(tp::sim::device()); }

torch::Tensor empty_on_sim() { return torch::empty({0}, torch::TensorOptions(tp::sim::device())); }

// More elements: the storage grows, keeping its bytes.
TEST(SimStorage, ResizeGrowsKeepingTheBytes) {
  torch::Tensor tensor = on_sim(torch::arange(4, torch::kFloat));
  tensor.resize_({8});
  EXPECT_EQ(tensor.storage().nbytes(), 32u);
  EXPECT_TRUE(torch::equal(tensor.slice(0, 0, 4).cpu(), torch::arange(4, torch::kFloat)));
}

// As many or fewer: the storage keeps its size and its address (it only ever grows).
TEST(SimStorage, ResizeNeitherShrinksNorMoves) {
  torch::Tensor tensor = on_sim(torch::arange(8, torch::kFloat));
  const void* const address = tensor.data_ptr();
  tensor.resize_({8});
  EXPECT_EQ(tensor.data_ptr(), address);
  tensor.resize_({2});
  EXPECT_EQ(tensor.data_ptr(), address);
  EXPECT_EQ(tensor.storage().nbytes(), 32u);
  EXPECT_TRUE(torch::equal(tensor.cpu(), torch::arange(2, torch::kFloat)));
}

// resize_ keeps the memory format it is asked for (CUDA's resize_ passes it on).
TEST(SimStorage, ResizeTakesTheMemoryFormat) {
  torch::Tensor tensor = empty_on_sim();
  tensor.resize_({2, 3, 4, 5}, at::MemoryFormat::ChannelsLast);
  EXPECT_TRUE(tensor.is_contiguous(at::MemoryFormat::ChannelsLast)) << tensor.strides();
  EXPECT_EQ(tensor.storage().nbytes(), 480u);
}

// A storage made not resizable refuses to grow, in LibTorch's words (resize_bytes_cpu, as
// resize_bytes_cuda), and keeps its size.
TEST(SimStorage, ANonResizableStorageRefusesToGrow) {
  c10::Storage fixed(c10::Storage::use_byte_size_t(), 16,
                     c10::GetAllocator(tp::sim::device().type()), /*resizable=*/false);
  torch::Tensor tensor = empty_on_sim();
  tensor.set_(fixed);
  ASSERT_EQ(tensor.numel(), 4);
  const std::string raised = tp_test::message_of([&] { tensor.resize_({8}); });
  EXPECT_NE(raised.find("Trying to resize storage that is not resizable"), std::string::npos)
      << "a non-resizable storage grew: " << raised;
  EXPECT_EQ(fixed.nbytes(), 16u);
}

// No elements need no bytes, whatever the offset (maybe_resize_storage_cpu returns when numel is
// 0, as cuda/Resize.h): the storage keeps its size.
TEST(SimStorage, ResizingToNoElementsGrowsNothing) {
  const torch::Tensor base = on_sim(torch::zeros({4}));
  torch::Tensor past_the_end = empty_on_sim();
  past_the_end.set_(base.storage(), /*storage_offset=*/8, {0}, {1});
  past_the_end.resize_({0, 3});
  EXPECT_EQ(base.storage().nbytes(), 16u);
  torch::Tensor none = empty_on_sim();
  none.resize_({0, 3});
  EXPECT_EQ(none.storage().nbytes(), 0u);
}

// set_ with sizes and strides of different lengths is refused (checkSetStorage, Resize.h:
// "unequal size length") and leaves the storage as it was.
TEST(SimStorage, SetWithMismatchedStridesLeavesTheStorage) {
  const torch::Tensor source = empty_on_sim();
  torch::Tensor tensor = empty_on_sim();
  const std::string raised = tp_test::message_of([&] {
    tensor.set_(source.storage(), 0, {4}, {1, 1});
  });
  EXPECT_NE(raised.find("unequal size length"), std::string::npos)
      << "set_ took 1 size and 2 strides: " << raised;
  EXPECT_EQ(source.storage().nbytes(), 0u);
}

// reshape (_reshape_alias), unfold and set_(storage) give views of their input: a write to the
// input shows through each, as on CUDA and the CPU.
TEST(SimStorage, ViewsAliasTheirInput) {
  torch::Tensor tensor = on_sim(torch::arange(6, torch::kFloat));
  const torch::Tensor reshaped = tensor.reshape({2, 3});
  const torch::Tensor windows = tensor.unfold(0, 2, 2);
  torch::Tensor whole = empty_on_sim();
  whole.set_(tensor.storage());
  ASSERT_EQ(whole.sizes(), tensor.sizes());
  tensor.fill_(7);
  const std::pair<const char*, torch::Tensor> views[] = {
      {"reshape", reshaped}, {"unfold", windows}, {"set_", whole}};
  for (const auto& [name, view] : views) {
    EXPECT_EQ(view.data_ptr(), tensor.data_ptr()) << name;
    EXPECT_TRUE(torch::equal(view.cpu(), torch::full(view.sizes(), 7.0))) << name;
  }
}

// A negative view (_neg_view) copied to the CPU comes out negated: the copy resolves the bit.
TEST(SimStorage, ANegativeViewCopiesNegated) {
  const torch::Tensor values = torch::arange(4, torch::kFloat) - 1;
  const torch::Tensor negative = torch::_neg_view(on_sim(values));
  ASSERT_TRUE(negative.is_neg());
  torch::Tensor host = torch::empty({4});
  host.copy_(negative);
  EXPECT_TRUE(torch::equal(host, -values)) << host;
}

// A copy out of a meta tensor is refused, in copy_'s words (copy_impl, Copy.cpp @1.13.1: before
// it hands any other device's copy to _copy_from), as on CUDA.
TEST(SimStorage, ACopyOutOfAMetaTensorIsRefused) {
  torch::Tensor tensor = on_sim(torch::zeros({2}));
  const std::string raised =
      tp_test::message_of([&] { tensor.copy_(torch::empty({2}, torch::kMeta)); });
  EXPECT_NE(raised.find("Cannot copy out of meta tensor"), std::string::npos)
      << "copied out of a meta tensor: " << raised;
}

// _copy_from_and_resize (cpu_fallback's for out= arguments) resizes its destination, copies
// into it and returns it; a blocking copy, as the transfer log counts it.
TEST(SimStorage, CopyFromAndResizeResizesAndBlocks) {
  const torch::Tensor values = torch::arange(3, torch::kFloat);
  const torch::Tensor destination = empty_on_sim();
  tp::sim::TransferLog log;
  const torch::Tensor result = at::_copy_from_and_resize(values, destination);
  log.stop();
  EXPECT_TRUE(result.is_same(destination));
  EXPECT_TRUE(torch::equal(destination.cpu(), values));
  EXPECT_EQ(log.host_to_device().copies, 1);
  EXPECT_EQ(log.host_to_device().non_blocking, 0);
}

// _copy_from_and_resize of a conjugate view resolves it, from the CPU and from the sim.
TEST(SimStorage, CopyFromAndResizeOfAConjugateViewResolvesIt) {
  const torch::Tensor values = torch::complex(torch::arange(3.0), torch::ones({3}));
  const torch::Tensor destination = torch::empty({0}, values.options().device(tp::sim::device()));
  at::_copy_from_and_resize(values.conj(), destination);
  EXPECT_TRUE(torch::equal(destination.cpu(), values.conj().resolve_conj()));
  torch::Tensor host = torch::empty({0}, values.options());
  at::_copy_from_and_resize(on_sim(values).conj(), host);
  EXPECT_TRUE(torch::equal(host, values.conj().resolve_conj()));
}

// set_data (Module::to's) between a CPU and a sim tensor: allowed, as between CPU and CUDA ones
// (_has_compatible_shallow_copy_type), on a leaf that requires grad too.
TEST(SimStorage, SetDataMovesBetweenTheCpuAndTheSim) {
  torch::Tensor parameter = torch::ones({2}).requires_grad_();
  parameter.set_data(on_sim(torch::full({2}, 3.0)));
  EXPECT_EQ(parameter.device(), tp::sim::device());
  EXPECT_TRUE(torch::equal(parameter.detach().cpu(), torch::full({2}, 3.0)));
  parameter.set_data(torch::zeros({2}));
  EXPECT_TRUE(parameter.device().is_cpu());
  torch::nn::Linear model(2, 3);
  model->to(tp::sim::device());
  EXPECT_EQ(model->weight.device(), tp::sim::device());
}

// ... but not between a sim tensor and a meta one, as not between CUDA and meta ones (meta is no
// dense backend: TensorImpl::has_compatible_shallow_copy_type).
TEST(SimStorage, SetDataRefusesAMetaTensor) {
  torch::Tensor parameter = on_sim(torch::ones({2}));
  EXPECT_THROW(parameter.set_data(torch::empty({2}, torch::kMeta)), c10::Error);
  EXPECT_EQ(parameter.device(), tp::sim::device());
}

// The same question in inference mode (no autograd keys): answered as a query, as for CUDA
// tensors, with no device check (CompositeImplicit _has_compatible_shallow_copy_type).
TEST(SimStorage, ShallowCopyCompatibilityInInferenceMode) {
  const c10::InferenceMode guard;
  const torch::Tensor tensor = on_sim(torch::ones({2}));
  EXPECT_TRUE(at::_has_compatible_shallow_copy_type(tensor, torch::ones({2})));
  EXPECT_FALSE(at::_has_compatible_shallow_copy_type(tensor, torch::empty({2}, torch::kMeta)));
}

}  // namespace
}  // namespace sim_storage_test
