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
  static const std::vector<MessageFamily> families = [] {
    std::vector<MessageFamily> libtorch = {
      // The wrapper's device check (aten/src/ATen/core/adaption.cpp) until ~2.7, and
      // TensorIterator's (compute_types) in every version: 2.14.1's element-wise `add` still says
      // it (seen 1.13.1, 2.6.0, 2.14.1: probe add_meta_cpu).
      {E::kDeviceMismatch, "seen 1.13.1, 2.6.0, 2.14.1 (1.9+: the wrapper until ~2.7, TensorIterator on)", R"(^Expected all tensors to be on the same device, but found at least two devices, \S+ and \S+!)"},
      // The wrapper's check from ~2.8 (pytorch PR 155085, adaption.cpp common_device_check_failure);
      // seen 2.14.1 with a PrivateUse1 device (shared/GUIDE.md section 5).
      {E::kDeviceMismatch, "2.8+ (seen 2.14.1)", R"(^Expected all tensors to be on the same device, but got \w+ is on \S+, different from other tensors on \S+)"},
      // at::checkSameGPU (aten/src/ATen/TensorUtils.cpp), 1.x-2.x: cuDNN convolution and others.
      {E::kDeviceMismatch, "1.x-2.x (TensorUtils.cpp checkSameGPU)", R"(^Expected tensor for (argument #\d+ )?'\w+' to have the same device as tensor for (argument #\d+ )?'\w+')"},
      // checkSameGPU's other branch: one tensor on the CPU (TensorUtils.cpp checkSameGPU, 1.x-2.x;
      // 2.x MPS says it too), and addmm's out= form in 1.7-1.9.
      {E::kDeviceMismatch, "1.x-2.x (TensorUtils.cpp checkSameGPU)", R"(^Tensor for (argument #\d+ )?'\w+' is on CPU, (Tensor for .* is on CPU, )?but expected (it|them) to be on GPU)"},
      // Before 1.9. aten/src/ATen/Utils.h checked_tensor_unwrap (the TH bindings): 1.0-1.4 named
      // the backend, 1.3-1.6 the device type (the two overlap: 1.3.1 and 1.4.0 reports say backend).
      {E::kDeviceMismatch, "1.0-1.4 (ATen/Utils.h checked_tensor_unwrap)", R"(^Expected object of backend \w+ but got backend \w+ for (argument #\d+|sequence element))"},
      {E::kDeviceMismatch, "1.3-1.6 (ATen/Utils.h checked_tensor_unwrap)", R"(^Expected object of device type \w+ but got device type \w+ for (argument #\d+|sequence element))"},
      // 0.4 named the tensor type: the same device part (torch.cuda. or torch. then a capital) on
      // both sides is a dtype mismatch (DtypeMismatch below); here the device parts differ.
      {E::kDtypeMismatch, "0.4 (ATen/Utils.h checked_cast_tensor)", R"(^Expected object of type (Variable\[)?(torch\.cuda\.|torch\.(?=[A-Z]))[A-Z]\w*\]? but found type (Variable\[)?\2[A-Z]\w*)"},
      {E::kDeviceMismatch, "0.4 (ATen/Utils.h checked_cast_tensor)", R"(^Expected object of type (Variable\[)?torch\.[\w.]+\]? but found type (Variable\[)?torch\.[\w.]+\]? for (argument #\d+|sequence element))"},
      // TensorIterator / copy before 1.9: the device and the dtype; the same device is a dtype
      // mismatch, anything else a device one.
      {E::kDtypeMismatch, "1.1-1.4 (TensorIterator.cpp compute_types)", R"(^expected device (\S+) and dtype \w+ but got device \1 and dtype \w+)"},
      {E::kDeviceMismatch, "1.1-1.4 (TensorIterator.cpp compute_types)", R"(^expected device \S+ and dtype \w+ but got device \S+ and dtype \w+)"},
      {E::kDeviceMismatch, "1.3-1.8 (TensorIterator.cpp compute_types)", R"(^expected device \S+ but got device \S+)"},
      // THC's THCTensor_checkGPU (0.x-1.x, e.g. THCTensorMathPointwise.cu, THCTensorIndex.cu).
      {E::kDeviceMismatch, "0.x-1.x (THC THCTensor_checkGPU)", R"(^arguments are located on different GPUs)"},
      // index_select_out_cuda (THC, then aten/src/ATen/native/cuda/Indexing.cu), 1.x: the seed's.
      {E::kDeviceMismatch, "1.x (cuda/Indexing.cu index_select_out_cuda)", R"(^Input, output and indices must be on the current device)"},
      // Single operators' own device checks:
      //   advanced indexing (aten/src/ATen/native/IndexingUtils / TensorAdvancedIndexing.cpp, 1.8+);
      {E::kDeviceMismatch, "1.8-2.x (TensorAdvancedIndexing.cpp index), seen 1.13.1", R"(^indices should be either on \w+ or on the same device as the indexed tensor)"},
      //   where (aten/src/ATen/native/TensorCompare.cpp, 1.9-2.0);
      {E::kDeviceMismatch, "1.9-2.0 (TensorCompare.cpp where)", R"(^Expected condition, x and y to be on the same device, but condition is on \S+)"},
      //   masked_fill (aten/src/ATen/native/cuda/Indexing.cu masked_fill__cuda, 1.x-2.x);
      {E::kDeviceMismatch, "1.x-2.x (cuda/Indexing.cu masked_fill__cuda), tp::sim (sim/fallback.cpp)", R"(^expected self and mask to be on the same device, but got mask on \S+ and self on \S+)"},
      //   RNN input against hidden state or parameters (aten/src/ATen/native/RNN.cpp check_attributes);
      {E::kDeviceMismatch, "1.x-2.x (RNN.cpp check_attributes), seen 1.13.1", R"(^Input and (hidden|parameter) tensors are not at the same device, found input tensor at \S+ and (hidden|parameter) tensor at \S+)"},
      //   CUDA cat (aten/src/ATen/native/cuda/Shape.cu): "All input ..." 1.x, "torch.cat(): all input ..." 2.x;
      {E::kDeviceMismatch, "1.x-2.x (cuda/Shape.cu cat)", R"(^(torch\.cat\(\): a|A)ll input tensors must be on the same device\. Received \S+ and \S+)"},
      //   generators (aten/src/ATen/core/Generator.h check_generator).
      {E::kDeviceMismatch, "1.x-2.x (core/Generator.h check_generator)", R"(^Expected a '\w+' device type for generator but found '\w+')"},
      // Convolution's type check (aten/src/ATen/native/Convolution.cpp
      // check_input_same_type_as_parameters): the same device on both sides is a dtype mismatch,
      // else a device one. toString() names a type by its legacy name where it has one
      // (torch.FloatTensor, torch.cuda.HalfTensor), else as CPUBFloat16Type: torch. and CPU are
      // the CPU, torch.cuda. and CUDA are CUDA; or bare scalar names, 2.x.
      {E::kDtypeMismatch, "1.x-2.x (Convolution.cpp check_input_same_type_as_parameters)", R"(^Input type \(((torch\.cuda\.|CUDA)[A-Z]\w*\) and (weight|bias) type \((torch\.cuda\.|CUDA)|(torch\.(?=[A-Z])|CPU)[A-Z]\w*\) and (weight|bias) type \((torch\.(?=[A-Z])|CPU)|MPS[A-Z]\w*\) and (weight|bias) type \(MPS)[A-Z]\w*\) should be the same)"},
      {E::kDtypeMismatch, "1.13-2.x (Convolution.cpp check_input_same_type_as_parameters), seen 1.13.1", R"(^Input type \((struct )?(c10::\w+|[a-z]\w*)\) and (weight|bias) type \((struct )?(c10::\w+|[a-z]\w*)\) should be the same)"},
      // Two scalar types that differ, with no device in their names: bare names (2017, pytorch
      // issue 2458; one word, unlike CPUBFloat16Type or FloatTensor), and fake tensors'
      // torch.dtype (2.13-2.14 torch/_subclasses/fake_impls.py, when input_.dtype != weight.dtype).
      {E::kDtypeMismatch, "2017 (pytorch issue 2458), 2.13-2.14 (_subclasses/fake_impls.py, raised only when the dtypes differ), seen 2.13.0", R"(^Input type \((torch\.[a-z]\w*|[A-Z][a-z]+)\) and weight type \((torch\.[a-z]\w*|[A-Z][a-z]+)\) should be the same)"},
      {E::kDeviceMismatch, "1.x-2.x (Convolution.cpp check_input_same_type_as_parameters)", R"(^Input type \(\S+\) and (weight|bias) type \(\S+\) should be the same)"},
      // TensorUtils.cpp checkBackend and checkDeviceType (cuDNN, 1.x-2.x).
      {E::kDeviceMismatch, "1.x-2.x (TensorUtils.cpp checkBackend)", R"(^Expected tensor to have \w+ Backend, but got tensor with \w+ Backend)"},
      {E::kDeviceMismatch, "1.x-2.x (TensorUtils.cpp checkDeviceType)", R"(^Expected tensor to have \w+ DeviceType, but got tensor with \w+ DeviceType)"},
      // scaled_dot_product_attention's input checks (aten/src/ATen/native/transformers/sdp_utils_cpp.h, 2.x).
      {E::kDeviceMismatch, "2.x (transformers/sdp_utils_cpp.h)", R"(^Expected query, key, and value to have the same device type, but got query\.device: \S+)"},
      {E::kDtypeMismatch, "2.x (transformers/sdp_utils_cpp.h)", R"(^Expected query, key, and value to have the same dtype, but got query\.dtype: \S+)"},
      // TensorUtils.cpp checkSameType (cuDNN): same rule.
      {E::kDtypeMismatch, "1.x-2.x (TensorUtils.cpp checkSameType)", R"(^Expected tensor for (argument #\d+ )?'\w+' to have the same type as tensor for (argument #\d+ )?'\w+'; but type (torch\.cuda\.|torch\.(?=[A-Z]))[A-Z]\w* does not equal \3[A-Z]\w*)"},
      {E::kDeviceMismatch, "1.x-2.x (TensorUtils.cpp checkSameType)", R"(^Expected tensor for (argument #\d+ )?'\w+' to have the same type as tensor for (argument #\d+ )?'\w+'; but type \S+ does not equal \S+)"},
      // A build or host without the backend.
      {E::kBackendUnavailable, "seen 1.13.1, 2.6.0, 2.14.1", R"(^PyTorch is not linked with support for \w+ devices)"},
      // Only the CUDA backend, and only the operators that make a CUDA tensor: a build without
      // CUDA fails at the first allocation on the device (torch::ones on cuda:0 ->
      // aten::empty.memory_format, torch::load of a CUDA archive -> aten::empty_strided,
      // pin_memory -> aten::_pin_memory; 1.x: aten::empty), before any other operator can see a
      // CUDA tensor. Any other operator "from the 'CUDA' backend" (quantized::, torchvision::nms,
      // an extension's op) ran on a CUDA host whose CUDA works: a missing kernel, no missing
      // device. 'Meta', 'SparseCPU', 'QuantizedCPU' are other backends' kernels (near_misses.json).
      {E::kBackendUnavailable, "seen 1.13.1, 2.6.0, 2.14.1", R"(^Could not run 'aten::(empty|empty\.memory_format|empty_strided|_pin_memory)' with arguments from the 'CUDA(TensorId)?' backend)"},
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
      {E::kBackendUnavailable, "CUDA builds 1.x-2.x (C10_CUDA_CHECK)", R"(^(CUDA error|cuda runtime error \(\d+\) ): no CUDA-capable device is detected)"},
      // The driver older than the CUDA runtime: c10/cuda/CUDAFunctions.cpp device_count_impl
      // (cudaErrorInsufficientDriver), through C10_CUDA_CHECK (1.5+, "CUDA error: ") or THCudaCheck
      // (0.x-1.4, "cuda runtime error (35) : ").
      {E::kBackendUnavailable, "CUDA builds 1.x-2.x (CUDAFunctions.cpp)", R"(^The NVIDIA driver on your system is too old \(found version \d+\))"},
      {E::kBackendUnavailable, "CUDA builds 1.5-2.x (C10_CUDA_CHECK)", R"(^CUDA error: CUDA driver version is insufficient for CUDA runtime version)"},
      {E::kBackendUnavailable, "CUDA builds 0.x-1.4 (THCGeneral.cpp THCudaCheck)", R"(^cuda runtime error \(35\) : CUDA driver version is insufficient for CUDA runtime version)"},
      // A device index the host does not have (cudaErrorInvalidDevice): C10_CUDA_CHECK, and 1.x's
      // "CUDA error (10): " (c10/cuda/CUDAException.h before 1.5).
      {E::kBackendUnavailable, "CUDA builds 1.x-2.x (C10_CUDA_CHECK)", R"(^(CUDA|HIP) error( \(10\))?: invalid device ordinal)"},
      {E::kBackendUnavailable, "CUDA builds 0.x-1.4 (THC THCudaCheck)", R"(^cuda runtime error \(10\) : invalid device ordinal)"},
      // Another process holds the GPU in exclusive mode (cudaErrorDevicesUnavailable, C10_CUDA_CHECK).
      {E::kBackendUnavailable, "CUDA builds 1.x-2.x (C10_CUDA_CHECK; device(s) is/are: the wording posted in InstantCharacter#21)", R"(^CUDA error: (all )?CUDA-capable devices?(\(s\))? (is|are|is/are)( all)? busy or unavailable)"},
      // A program linked without libtorch_cuda (aten/src/ATen/detail/CUDAHooksInterface.h, 1.0-1.x).
      {E::kBackendUnavailable, "1.0-1.x (detail/CUDAHooksInterface.h initCUDA)", R"(^[Cc]annot initialize CUDA without ATen_cuda library)"},
      // c10/cuda/CUDACachingAllocator.cpp malloc (1.x-2.x), and cudaErrorMemoryAllocation
      // through C10_CUDA_CHECK.
      {E::kOutOfMemory, "CUDA builds 1.x-2.x (CUDACachingAllocator.cpp)", R"(^CUDA out of memory\. Tried to allocate)"},
      {E::kOutOfMemory, "CUDA builds 1.x-2.x (C10_CUDA_CHECK)", R"(^(CUDA|HIP) error: out of memory)"},
      // The same allocator on ROCm builds (hipified: "HIP out of memory", 2.x).
      {E::kOutOfMemory, "ROCm builds 2.x (CUDACachingAllocator.cpp, hipified)", R"(^HIP out of memory\. Tried to allocate)"},
      // aten/src/ATen/mps/MPSAllocator.mm malloc (2.x).
      {E::kOutOfMemory, "MPS builds 2.x (mps/MPSAllocator.mm)", R"(^MPS backend out of memory)"},
      // The CPU allocator (c10/core/impl/alloc_cpu.cpp, before ~1.10 c10/core/CPUAllocator.cpp),
      // after its "[enforce fail at ...] " prefix (core_message removes it).
      {E::kOutOfMemory, "1.2-2.x (c10/core/impl/alloc_cpu.cpp)", R"(^DefaultCPUAllocator: (can't allocate memory|not enough memory): you tried to allocate \d+)"},
      // 0.x-1.x THC: THCudaCheck on cudaErrorMemoryAllocation (2).
      {E::kOutOfMemory, "CUDA builds 0.x-1.x (THC THCudaCheck)", R"(^cuda runtime error \(2\) : out of memory)"},
      // The XPU caching allocator (c10/xpu/XPUCachingAllocator.cpp, 2.4+).
      {E::kOutOfMemory, "XPU builds 2.4+ (c10/xpu/XPUCachingAllocator.cpp)", R"(^XPU out of memory\. Tried to allocate)"},
      // cuBLAS cannot allocate its workspace when the device is full (aten/src/ATen/cuda/CublasHandlePool.cpp).
      {E::kOutOfMemory, "CUDA builds 1.x-2.x (cuda/CublasHandlePool.cpp TORCH_CUDABLAS_CHECK)", R"(^CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate\(handle\)`)"},
      // Dtypes.
      {E::kDtypeMismatch, "seen 1.13.1, 2.6.0, 2.14.1", R"(^mat1 and mat2 must have the same dtype)"},
      // addmm's other operand check and mm's (aten/src/ATen/native/LinearAlgebra.cpp meta, 2.x).
      {E::kDtypeMismatch, "2.x (LinearAlgebra.cpp addmm/mm meta)", R"(^self and mat2 must have the same dtype)"},
      {E::kDtypeMismatch, "seen 1.13.1, 2.6.0", R"(^expected scalar type \w+ but found \w+)"},
      {E::kDtypeMismatch, "seen 2.14.1", R"(^expected target dtype to be \w+)"},
      {E::kDtypeMismatch, "seen 2.6.0, 2.14.1", R"(^expected m1 and m2 to have the same dtype)"},
      // 2.x CUDA addmm (aten/src/ATen/native/cuda/Blas.cpp): "but got: float != c10::Half".
      {E::kDtypeMismatch, "CUDA builds 2.x (cuda/Blas.cpp addmm_out_cuda_impl)", R"(^expected mat1 and mat2 to have the same dtype, but got:)"},
      // 1.x ATen/Utils.h checked_tensor_unwrap: an argument of another scalar type. Not an index
      // or indices argument: an index's own dtype is its own kind of error (near_misses.json).
      {E::kDtypeMismatch, "1.0-1.6 (ATen/Utils.h checked_tensor_unwrap)", R"(^Expected object of scalar type \w+ but got scalar type \w+ for (argument #\d+ '(?!index'|indices')\w+'|sequence element))"},
      // aten/src/ATen/TensorIterator.cpp compute_types: an out= tensor of another dtype (1.x-2.x).
      {E::kDtypeMismatch, "1.x-2.x (TensorIterator.cpp compute_types)", R"(^Found dtype \w+ but expected \w+)"},
      // An in-place or out= result of a narrower dtype (TensorIterator.cpp compute_types, 1.5+).
      {E::kDtypeMismatch, "1.5-2.x (TensorIterator.cpp compute_types), seen 1.13.1", R"(^result type \w+ can't be cast to the desired output type \w+)"},
      // Checkpoints (torch/csrc/api/src/serialize/input-archive.cpp).
      {E::kMissingKey, "seen 1.13.1, 2.6.0, 2.14.1", R"(^No such serialized (tensor|submodule):? ')"},
      {E::kFileNotFound, "seen 1.13.1, 2.6.0, 2.14.1", R"(^open file failed because of errno 2 on fopen)"},
      {E::kCorruptArchive, "seen 1.13.1, 2.6.0, 2.14.1", R"(^PytorchStreamReader failed reading zip archive)"},
      // A download cut short: the zip's central directory is there, a record is not
      // (caffe2/serialize/inline_container.cc getRecord, via miniz).
      {E::kCorruptArchive, "1.x-2.x (caffe2/serialize/inline_container.cc)", R"(^PytorchStreamReader failed reading file [\w./]+: invalid header or archive is corrupted)"},
      {E::kCorruptArchive, "seen 1.13.1, 2.6.0, 2.14.1", R"(^Unexpected end of pickler archive)"},
      // torch/csrc/jit/serialization/unpickler.cpp, 1.x-2.x: a data.pkl cut short or garbled.
      {E::kCorruptArchive, "1.x-2.x (unpickler.cpp)", R"(^Overran buffer while unpickling data, didn't find STOP opcode)"},
      {E::kCorruptArchive, "1.x-2.x (unpickler.cpp readString)", R"(^Found character '[^']*' in string, strings must be qualified Python identifiers)"},
      // TorchScript archives (torch::jit::load). constants.pkl missing (caffe2/serialize/
      // inline_container.cpp getRecordID): a damaged TorchScript archive, and more often a
      // torch.save (not TorchScript) archive given to jit::load (deepjavalibrary/djl issues 1509,
      // 2802); only constants.pkl, since a zip without data.pkl is no torch archive at all
      // (near_misses.json). The archive's code/ missing: its
      // own classes (always __torch__.*) are unknown (torch/csrc/jit/frontend/
      // script_type_parser.cpp; torch::jit::ErrorReport's text begins with a newline, which
      // core_message removes).
      {E::kCorruptArchive, "seen 1.13.1 (inline_container.cpp getRecordID)", R"(^PytorchStreamReader failed locating file constants\.pkl: file not found)"},
      {E::kCorruptArchive, "seen 1.13.1 (script_type_parser.cpp)", R"(^Unknown type name '__torch__\.)"},
    };
    for (MessageFamily& other : other_library_families()) libtorch.push_back(std::move(other));
    return libtorch;
  }();
  // clang-format on
  return families;
}

}  // namespace tp
