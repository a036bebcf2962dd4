// The message families that LibTorch uses for each error class, by version. The first family
// that matches wins, so the more specific ones come first. Every entry of the observed-message
// corpus (harness/messages/corpus.json) must classify through this table, and no near miss
// (harness/messages/near_misses.json) may: see message_corpus_test.cpp.
//
// Rules: each pattern is anchored at the start of the message (^) to the sentence LibTorch
// begins it with; the versions say where the text was seen ("seen 1.13.1, 2.14.1": the version
// matrix) or, for a family no run here can reach (a GPU host's errors), where the source emits it.
#include "error_class.h"

namespace tp {

const std::vector<MessageFamily>& message_families() {
  using E = ErrorClass;
  // clang-format off
  static const std::vector<MessageFamily> families = {
      // The wrapper's device check (aten/src/ATen/core/adaption.cpp) until ~2.7, and
      // TensorIterator's (compute_types) in every version: 2.14.1's element-wise `add` still says
      // it (seen 1.13.1, 2.6.0, 2.14.1: probe add_meta_cpu).
      {E::kDeviceMismatch, "seen 1.13.1, 2.6.0, 2.14.1 (1.9+: the wrapper until ~2.7, TensorIterator on)", R"(^Expected all tensors to be on the same device, but found at least two devices, \S+ and \S+!)"},
      // The wrapper's check from ~2.8 (pytorch PR 155085, adaption.cpp common_device_check_failure);
      // seen 2.14.1 with a PrivateUse1 device (shared/GUIDE.md section 5).
      {E::kDeviceMismatch, "2.8+ (seen 2.14.1)", R"(^Expected all tensors to be on the same device, but got \w+ is on \S+, different from other tensors on \S+)"},
      // at::checkSameGPU (aten/src/ATen/TensorUtils.cpp), 1.x-2.x: cuDNN convolution and others.
      {E::kDeviceMismatch, "1.x-2.x (TensorUtils.cpp checkSameGPU)", R"(^Expected tensor for argument #\d+ '\w+' to have the same device as tensor for argument #\d+)"},
      // A build or host without the backend.
      {E::kBackendUnavailable, "seen 1.13.1, 2.6.0, 2.14.1", R"(^PyTorch is not linked with support for \w+ devices)"},
      // Only the CUDA backend: 'Meta', 'SparseCPU' and other backends lacking a kernel are no
      // missing device (near_misses.json).
      {E::kBackendUnavailable, "seen 1.13.1, 2.6.0, 2.14.1", R"(^Could not run '[\w:.]+' with arguments from the 'CUDA' backend)"},
      {E::kBackendUnavailable, "seen 2.6.0, 2.14.1", R"(^Cannot access accelerator device when none is available)"},
      // pin_memory() with a registered PrivateUse1 backend (tp::sim) that has no pinned allocator.
      // 2.14.1's wording, then 2.6.0's (the hooks' default getPinnedMemoryAllocator).
      {E::kBackendUnavailable, "seen 2.14.1", R"(^You should register `PrivateUse1HooksInterface` ?by `RegisterPrivateUse1HooksInterface` and implement `getPinnedMemoryAllocator`)"},
      {E::kBackendUnavailable, "seen 2.6.0", R"(^You should register `PrivateUse1HooksInterface` for PrivateUse1 before call `getPinnedMemoryAllocator`)"},
      // A CUDA build on a host without a usable GPU: c10/cuda/CUDAFunctions.cpp device_count_impl
      // (cudaErrorInsufficientDriver, cudaErrorInitializationError) and
      // device_count_ensure_non_zero, 1.x-2.x (pytorch issue 131117 shows the second on 2.x).
      {E::kBackendUnavailable, "CUDA builds 1.x-2.x (CUDAFunctions.cpp)", R"(^Found no NVIDIA driver on your system)"},
      {E::kBackendUnavailable, "CUDA builds 1.x-2.x (CUDAFunctions.cpp)", R"(^CUDA driver initialization failed, you might not have a CUDA gpu)"},
      {E::kBackendUnavailable, "CUDA builds 1.x-2.x (CUDAFunctions.cpp)", R"(^No CUDA GPUs are available)"},
      // cudaErrorNoDevice through C10_CUDA_CHECK ("CUDA error: " + cudaGetErrorString).
      {E::kBackendUnavailable, "CUDA builds 1.x-2.x (C10_CUDA_CHECK)", R"(^CUDA error: no CUDA-capable device is detected)"},
      // c10/cuda/CUDACachingAllocator.cpp malloc (1.x-2.x), and cudaErrorMemoryAllocation
      // through C10_CUDA_CHECK.
      {E::kOutOfMemory, "CUDA builds 1.x-2.x (CUDACachingAllocator.cpp)", R"(^CUDA out of memory\. Tried to allocate)"},
      {E::kOutOfMemory, "CUDA builds 1.x-2.x (C10_CUDA_CHECK)", R"(^CUDA error: out of memory)"},
      // Dtypes.
      {E::kDtypeMismatch, "seen 1.13.1, 2.6.0, 2.14.1", R"(^mat1 and mat2 must have the same dtype)"},
      {E::kDtypeMismatch, "seen 1.13.1, 2.6.0", R"(^expected scalar type \w+ but found \w+)"},
      {E::kDtypeMismatch, "seen 2.14.1", R"(^expected target dtype to be \w+)"},
      {E::kDtypeMismatch, "seen 2.6.0, 2.14.1", R"(^expected m1 and m2 to have the same dtype)"},
      // aten/src/ATen/TensorIterator.cpp compute_types: an out= tensor of another dtype (1.x-2.x).
      {E::kDtypeMismatch, "1.x-2.x (TensorIterator.cpp compute_types)", R"(^Found dtype \w+ but expected \w+)"},
      // Checkpoints (torch/csrc/api/src/serialize/input-archive.cpp).
      {E::kMissingKey, "seen 1.13.1, 2.6.0, 2.14.1", R"(^No such serialized (tensor|submodule):? ')"},
      {E::kFileNotFound, "seen 1.13.1, 2.6.0, 2.14.1", R"(^open file failed because of errno 2 on fopen)"},
      {E::kCorruptArchive, "seen 1.13.1, 2.6.0, 2.14.1", R"(^PytorchStreamReader failed reading zip archive)"},
      {E::kCorruptArchive, "seen 1.13.1, 2.6.0, 2.14.1", R"(^Unexpected end of pickler archive)"},
      // torch/csrc/jit/serialization/unpickler.cpp, 1.x-2.x: a data.pkl cut short or garbled.
      {E::kCorruptArchive, "1.x-2.x (unpickler.cpp)", R"(^Overran buffer while unpickling data, didn't find STOP opcode)"},
      {E::kCorruptArchive, "1.x-2.x (unpickler.cpp readString)", R"(^Found character '[^']*' in string, strings must be qualified Python identifiers)"},
      // Gloo's TCP transport (gloo/transport/tcp/unbound_buffer.cc waitRecv/waitSend, GLOO_ERROR_MSG
      // prefixes "[file:line] "), the same text in Debian's libgloo 0.0~git20220518 and gloo's main;
      // c10d's ProcessGroupGloo rethrows it from Work::wait as it is (AsyncWork::execute keeps the
      // exception, 1.13-2.x). A rank waited in a collective its peer never joined.
      {E::kCollectiveTimeout, "1.13.1-2.x (gloo transport/tcp/unbound_buffer.cc; ProcessGroupGloo.cpp rethrows it)", R"(^\[[^\]]*gloo/transport/tcp/unbound_buffer\.cc:\d+\] Timed out waiting \d+ms for (recv|send) operation to complete)"},
  };
  // clang-format on
  return families;
}

}  // namespace tp
