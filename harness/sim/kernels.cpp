// The kernels the simulated device implements itself rather than through the checking fallback:
// allocation, copies (exempt from the device check, as on CUDA), views and storage (they alias
// their input, which a CPU round trip cannot do), and the shallow-copy test that Module::to needs.
#include <ATen/EmptyTensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/_to_copy_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/accumulate.h>
#include <torch/library.h>

#include <vector>

#include "sim_internal.h"

namespace tp::sim::detail {
namespace {

at::Tensor empty(at::IntArrayRef size, c10::optional<at::ScalarType> dtype,
                 c10::optional<at::Layout> layout, c10::optional<at::Device> device,
                 c10::optional<bool> pin_memory, c10::optional<at::MemoryFormat> memory_format) {
  (void)layout, (void)pin_memory;
  const c10::OptionalDeviceGuard guard(device);  // the allocation's device, as CUDA's wrapper
  return at::detail::empty_generic(size, c10::GetAllocator(sim_type()),
                                   c10::DispatchKeySet(sim_key()), c10::dtype_or_default(dtype),
                                   memory_format);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride,
                         c10::optional<at::ScalarType> dtype, c10::optional<at::Layout> layout,
                         c10::optional<at::Device> device, c10::optional<bool> pin_memory) {
  (void)layout, (void)pin_memory;
  const c10::OptionalDeviceGuard guard(device);
  return at::detail::empty_strided_generic(size, stride, c10::GetAllocator(sim_type()),
                                           c10::DispatchKeySet(sim_key()),
                                           c10::dtype_or_default(dtype));
}

// A CPU tensor over the same memory (both devices keep their bytes in host memory, the sim's
// behind an address host code cannot read: host_address), with the same conjugate and negative
// bits, so that the CPU copy below resolves them.
at::Tensor host_alias(const at::Tensor& tensor) {
  if (tensor.device().is_cpu()) return tensor;
  at::Tensor alias = at::from_blob(host_address(tensor.data_ptr()), tensor.sizes(),
                                   tensor.strides(), tensor.options().device(at::kCPU));
  alias._set_conj(tensor.is_conj());
  alias._set_neg(tensor.is_neg());
  return alias;
}

// Copies between the simulated device and the CPU (and within either): no device check, as
// CUDA copies and .to() have none. Synchronous, whatever non_blocking says (which the transfer
// log records).
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  record_copy(self, dst, non_blocking);  // the transfer log (none inside the fallback)
  host_alias(dst).copy_(host_alias(self));
  return dst;
}

// Grows a sim storage to `bytes`, keeping its bytes. LibTorch's CPU resize (resize_bytes_cpu,
// aten/src/ATen/native/Resize.cpp, 1.13.1 and 2.6.0) would memcpy them through the data
// pointer, which host code cannot read; after this it finds the storage big enough.
void grow_storage(const c10::Storage& storage, size_t bytes) {
  if (bytes <= storage.nbytes() || !is_sim(storage.device())) return;
  TORCH_CHECK(storage.resizable(), "Trying to resize storage that is not resizable");
  c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
  at::DataPtr grown = impl->allocator()->allocate(bytes);
  copy_device_bytes(grown.get(), storage.data(), storage.nbytes());
  impl->set_data_ptr_noswap(std::move(grown));
  impl->set_nbytes(bytes);
}

// The bytes a tensor of `size` (and `stride`, if given) at `offset` needs; none when empty, as
// LibTorch's maybe_resize_storage_cpu skips those, or when the strides do not fit (it refuses).
size_t bytes_needed(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride,
                    int64_t offset) {
  if (c10::multiply_integers(size) == 0) return 0;
  const size_t item = self.dtype().itemsize();
  if (stride.data() == nullptr)
    return at::detail::computeStorageNbytesContiguous(size, item, offset);
  if (stride.size() != size.size()) return 0;
  return at::detail::computeStorageNbytes(size, stride, item, offset);
}

// Inside the fallback, the CPU copy of a tensor that is not dense (a view with gaps, an expanded
// one) keeps its strides. LibTorch's copy (_to_copy, memory format preserved) makes it dense, and
// the CPU kernel then reads another layout than on the CPU: a reduction sums in another order (a
// detection head's bias gradient was 4e-9 off the CPU's; a sum over an expanded tensor, 1e-5).
at::Tensor to_copy(const at::Tensor& self, c10::optional<at::ScalarType> dtype,
                   c10::optional<at::Layout> layout, c10::optional<at::Device> device,
                   c10::optional<bool> pin_memory, bool non_blocking,
                   c10::optional<at::MemoryFormat> memory_format) {
  const bool keep_strides =
      in_fallback_scope() && device.has_value() && device->is_cpu() &&
      dtype.value_or(self.scalar_type()) == self.scalar_type() &&
      memory_format.value_or(at::MemoryFormat::Preserve) == at::MemoryFormat::Preserve &&
      self.layout() == at::kStrided && !self.is_conj() && !self.is_neg() && self.numel() > 0 &&
      !self.is_non_overlapping_and_dense();
  if (!keep_strides) {
    return at::native::_to_copy(self, dtype, layout, device, pin_memory, non_blocking,
                                memory_format);
  }
  int64_t span = 1;  // the elements from the first one it reaches to the last
  for (int64_t dim = 0; dim < self.dim(); ++dim) span += (self.size(dim) - 1) * self.stride(dim);
  const at::Tensor reached =
      at::from_blob(host_address(self.data_ptr()), {span}, self.options().device(at::kCPU));
  return reached.clone().as_strided(self.sizes(), self.strides());
}

// A resize allocates on the current device: make it the tensor's own, as CUDA's resize_ does.
const at::Tensor& resize_on_own_device(const at::Tensor& self, at::IntArrayRef size,
                                       c10::optional<at::MemoryFormat> memory_format) {
  const c10::DeviceGuard guard(self.device());
  grow_storage(self.storage(), bytes_needed(self, size, {}, self.storage_offset()));
  return at::native::resize_(self, size, memory_format);
}

// set_ with a storage too small for the view grows it (resize_impl_cpu_): grown here first.
at::Tensor& set_storage(at::Tensor& self, c10::Storage source, int64_t offset, at::IntArrayRef size,
                        at::IntArrayRef stride) {
  const c10::DeviceGuard guard(source.device());
  grow_storage(source, bytes_needed(self, size, stride, offset));
  return at::native::set_storage_cpu_(self, std::move(source), offset, size, stride);
}

// copy_ itself, as CUDA: LibTorch's copy_ takes CUDA for its own and calls CUDA's copy kernel,
// which a CPU-only build lacks (copy_impl, aten/src/ATen/native/Copy.cpp:100-102 and :252 in
// 1.13.1): "copy_" must not reach it. The PrivateUse1 sim is reached through _copy_from.
at::Tensor& copy_as_cuda(at::Tensor& self, const at::Tensor& src, bool non_blocking) {
  if (!self.is_same(src)) copy_from(src, self, non_blocking);
  return self;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  resize_on_own_device(dst, self.sizes(), c10::nullopt);
  return copy_from(self, dst, false);
}

// Module::to replaces each parameter's data (set_data), which asks whether the two tensor types
// may share a TensorImpl: dense CPU and dense simulated tensors may.
bool compatible_shallow_copy(const at::Tensor& self, const at::Tensor& from) {
  const auto dense = [](const at::Tensor& t) {
    return t.layout() == at::kStrided && (t.device().is_cpu() || is_sim(t.device()));
  };
  return self.key_set() == from.key_set() || (dense(self) && dense(from));
}

}  // namespace

void register_kernels() {
  // Held for the life of the process: the registrations end when a Library is destroyed.
  static auto* aten =
      new torch::Library(torch::Library::IMPL, "aten", sim_key(), __FILE__, __LINE__);
  aten->impl("empty.memory_format", TORCH_FN(empty));
  aten->impl("empty_strided", TORCH_FN(empty_strided));
  aten->impl("_copy_from", TORCH_FN(copy_from));
  aten->impl("_to_copy", TORCH_FN(to_copy));
  aten->impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
  aten->impl("view", TORCH_FN(at::native::view));
  aten->impl("as_strided", TORCH_FN(at::native::as_strided_tensorimpl));
  aten->impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  aten->impl("unfold", TORCH_FN(at::native::unfold));
  aten->impl("resize_", TORCH_FN(resize_on_own_device));
  aten->impl("set_.source_Storage", TORCH_FN(at::native::set_));
  aten->impl("set_.source_Storage_storage_offset", TORCH_FN(set_storage));
  aten->impl("_has_compatible_shallow_copy_type", TORCH_FN(compatible_shallow_copy));
  if (sim_type() == c10::DeviceType::CUDA) aten->impl("copy_", TORCH_FN(copy_as_cuda));
  register_as_called();
  // A query, not differentiable; 1.13 finds no kernel for it under AutogradPrivateUse1 otherwise.
  static auto* autograd =
      new torch::Library(torch::Library::IMPL, "aten",
                         sim_key(c10::DispatchKey::AutogradPrivateUse1), __FILE__, __LINE__);
  autograd->impl("_has_compatible_shallow_copy_type", TORCH_FN(compatible_shallow_copy));
  // A copy of a conjugate or negative view resolves its bit itself (host_alias): LibTorch's
  // fallbacks for those bits would clone it first, and a clone copies through _copy_from again,
  // without end (linalg.eigvals and FFT outputs on sim:0 died of the recursion). LibTorch lets
  // copy_ through both keys the same way; CUDA never reaches _copy_from.
  for (const auto key : {c10::DispatchKey::Conjugate, c10::DispatchKey::Negative}) {
    static std::vector<torch::Library*> math_bits;
    math_bits.push_back(new torch::Library(torch::Library::IMPL, "aten", key, __FILE__, __LINE__));
    math_bits.back()->impl("_copy_from", torch::CppFunction::makeFallthrough());
    math_bits.back()->impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
  }
  // Reduced, these structured losses' meta function sizes an iterator's output, then resizes it
  // to a scalar; the generic kernel a device without its own gets then calls the out= variant,
  // whose CPU kernel resizes the scalar back, warning "An output with one or more elements was
  // resized". The CPU's functional kernel, as on CUDA.
  for (const char* name : {"mse_loss", "smooth_l1_loss"}) register_fallback_kernel(name);
  // An operator without an autograd kernel (a custom one: torchvision::nms) falls through to the
  // device's kernel, as LibTorch lets it on CPU and CUDA. 1.13 registers that fallthrough for
  // every autograd key but the PrivateUse ones ("Could not run 'torchvision::nms' with arguments
  // from the 'AutogradPrivateUse1' backend"), leaving it to the device: here. 2.x has its own.
  auto& dispatcher = c10::Dispatcher::singleton();
  if (!dispatcher.hasBackendFallbackForDispatchKey(
          sim_key(c10::DispatchKey::AutogradPrivateUse1))) {
    static auto* through =
        new torch::Library(torch::Library::IMPL, "_",
                           sim_key(c10::DispatchKey::AutogradPrivateUse1), __FILE__, __LINE__);
    through->fallback(torch::CppFunction::makeFallthrough());
  }
  static auto* all = new torch::Library(torch::Library::IMPL, "_", sim_key(), __FILE__, __LINE__);
  all->fallback(torch::CppFunction::makeFromBoxedFunction<&checked_fallback>());
}

}  // namespace tp::sim::detail
