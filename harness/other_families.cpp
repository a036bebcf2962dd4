// Hand-written families for what the LibTorch source of 1.13.1, 2.6.0 and 2.14.1 does not give
// as a literal (source_families.inc holds those): other libraries' texts (NCCL, Gloo, the CUDA
// runtime, torch_xla), messages c10d builds at run time, the wording of generations before 1.13,
// this suite's sim, and the near misses a source template would take for a class (class
// Unclassified: a match stops there). message_families() appends these after LibTorch's own.
// Each cites its source: a file of the library, or the public thread that shows the text.
#include "error_class.h"

namespace tp {

std::vector<MessageFamily> other_library_families() {
  using E = ErrorClass;
  // clang-format off
  return {
      // Near misses that a source template would classify (near_misses.json): a zip that is no
      // torch archive (caffe2/serialize/inline_container.cc getRecordID: only constants.pkl is
      // a damaged TorchScript archive), a dtype check of nested tensors and foreach lists
      // (aten/src/ATen/native/ForeachUtils.h, nested/NestedTensorUtils.h), CUDA's own
      // initialisation under ASAN (c10/cuda/CUDAFunctions.cpp device_count_impl).
      {E::kUnclassified, "1.x-2.x (caffe2/serialize/inline_container.cc getRecordID)", R"(^PytorchStreamReader failed locating file (?!constants\.pkl))"},
      {E::kUnclassified, "2.x (aten/src/ATen/native/ForeachUtils.h)", R"(^Expected all tensors to be on the same dtype)"},
      {E::kUnclassified, "1.x-2.x (c10/cuda/CUDAFunctions.cpp device_count_impl)", R"(^Got 'out of memory' error while trying to initialize CUDA)"},
      // An index's own dtype is its own kind of error, not two operands' dtypes
      // (aten/src/ATen/TensorUtils.cpp checkScalarType(s), embedding's indices, 1.x-2.x; 1.x
      // ATen/Utils.h checked_tensor_unwrap's "for argument #3 'index'").
      {E::kUnclassified, "1.x-2.x (aten/src/ATen/TensorUtils.cpp checkScalarTypes)", R"(^Expected tensor for argument #\d+ '(indices|index)' to have (one of the following scalar types|scalar type))"},
      {E::kUnclassified, "1.0-1.6 (ATen/Utils.h checked_tensor_unwrap)", R"(^Expected object of scalar type \w+ but got scalar type \w+ for argument #\d+ '(index|indices)')"},
      // NCCL through c10d: C10D_NCCL_CHECK (torch/csrc/distributed/c10d/NCCLUtils.hpp, 1.x-2.x)
      // builds "NCCL error in: <file>:<line>, <ncclGetErrorString>, NCCL version <v>"; 1.x
      // torch/csrc/cuda/nccl.cpp NCCL_CHECK "NCCL Error <n>: <string>"; NCCLUtils.cpp's abort.
      {E::kCollectiveFailure, "1.x-2.x (c10d/NCCLUtils.hpp C10D_NCCL_CHECK)", R"(^NCCL error in: \S+:\d+, )"},
      {E::kCollectiveFailure, "1.x (torch/csrc/cuda/nccl.cpp NCCL_CHECK)", R"(^NCCL Error \d+: )"},
      {E::kCollectiveFailure, "2.x (c10d/NCCLUtils.cpp)", R"(^NCCL communicator was aborted on rank \d+)"},
      // The NCCL watchdog (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp checkTimeout, 1.13-2.x:
      // "[Rank N] Watchdog caught ...", built with c10::str; 2.x rethrows it as "[PG ...]
      // Process group watchdog thread terminated with exception: ...").
      {E::kCollectiveTimeout, "1.13-2.x (c10d/ProcessGroupNCCL.cpp checkTimeout)", R"(^(Process group watchdog thread terminated with exception: (\[[^\]]*\] )*)?Watchdog caught collective operation timeout: )"},
      // Gloo's TCP transport (gloo/transport/tcp/pair.cc, unbound_buffer.cc; GLOO_ENFORCE and
      // GLOO_ERROR_MSG put "[file:line] " in front, which core_message removes). A peer's
      // connection gone: pytorch/pytorch issue 75512 ("Connection closed by peer"),
      // RVC-Project/Retrieval-based-Voice-Conversion-WebUI issue 1882 ("Read error ...
      // Connection reset by peer"), sgl-project/sglang issue 3226 (connectFullMesh, 2.x).
      {E::kCollectiveTimeout, "1.13.1-2.x (gloo transport/tcp/unbound_buffer.cc; ProcessGroupGloo.cpp rethrows it)", R"(^Timed out waiting \d+ms for (recv|send) operation to complete)"},
      {E::kCollectiveFailure, "1.x-2.x (gloo transport/tcp/pair.cc)", R"(^(Connection closed by peer|Read error \S+: Connection reset by peer|Write error \S+: Broken pipe))"},
      {E::kCollectiveFailure, "2.x (c10d ProcessGroupGloo.cpp; sgl-project/sglang issue 3226)", R"(^Gloo connectFullMesh failed with )"},
      // The CUDA runtime's own texts (cudaGetErrorString, CUDA Runtime API driver_types.h) through
      // C10_CUDA_CHECK: a build without kernels for this GPU, or a driver it cannot use.
      {E::kBackendUnavailable, "CUDA builds 1.x-2.x (C10_CUDA_CHECK; driver_types.h cudaErrorNoKernelImageForDevice)", R"(^CUDA error: no kernel image is available for execution on the device)"},
      {E::kBackendUnavailable, "CUDA builds 1.x-2.x (C10_CUDA_CHECK; driver_types.h cudaErrorCompatNotSupportedOnDevice)", R"(^CUDA error: forward compatibility was attempted on non supported HW)"},
      {E::kBackendUnavailable, "CUDA builds 1.x-2.x (C10_CUDA_CHECK; driver_types.h cudaErrorUnsupportedPtxVersion)", R"(^CUDA error: the provided PTX was compiled with an unsupported toolchain)"},
      // torch_xla (torch_xla/csrc/aten_xla_bridge.cpp GetXlaTensor: XLA_CHECK's "Check failed:
      // xtensor: " in front): a CPU tensor given to an XLA op (pytorch/xla issues 899, 2960).
      {E::kDeviceMismatch, "torch_xla (csrc/aten_xla_bridge.cpp GetXlaTensor)", R"(^(Check failed: xtensor: )?Input tensor is not an XLA tensor: )"},
      // torch.load's legacy path reads the magic number with pickle (torch/serialization.py
      // _legacy_load): a file that is no checkpoint at all (an HTML page, a git-lfs pointer)
      // fails in CPython's Modules/_pickle.c load_* "invalid load key, '%c'." (pytorch/examples
      // issue 169, yunjey/pytorch-tutorial issue 131).
      {E::kCorruptArchive, "torch.load legacy path (CPython Modules/_pickle.c)", R"(^invalid load key, '.{1,4}'\.)"},
      // Before 1.13: 0.2's TH type check (pytorch/pytorch issue 2138).
      {E::kDtypeMismatch, "0.2-0.3 (TH type check; pytorch/pytorch issue 2138)", R"(^expected (Float|Double|Half|Long|Int|Short|Byte|Char) tensor \(got (Float|Double|Half|Long|Int|Short|Byte|Char) tensor\))"},
      // This suite's sim (reports/torchplace/sim/__init__.py SimUnavailable, harness/sim/sim.cpp
      // check_index): its library built for another LibTorch or absent, a device it lacks.
      // Python prints the exception's own name in front (SimUnavailable: no "Error" in it).
      // torch.load in Python of a CUDA-tagged storage without CUDA (torch/serialization.py
      // validate_cuda_device: 1.13.1 line 166; 2.13.0's line 635 builds the same words from the
      // backend's name); the source rule gives its "is_available() is False" no class.
      {E::kBackendUnavailable, "1.x-2.x (torch/serialization.py validate_cuda_device)", R"(^Attempting to deserialize object on a CUDA device but torch\.cuda\.is_available\(\) is False)"},
      {E::kBackendUnavailable, "tp::sim (reports/torchplace/sim/__init__.py)", R"(^(torchplace\.sim\.SimUnavailable: )?torchplace\.sim: (\S+ was built against LibTorch \S+, but this torch is|no sim library at|cannot load) )"},
      // Two 0-dim CPU tensors given to a device kernel: TensorIterator's check (aten/src/ATen/
      // TensorIterator.cpp compute_types, 1.13.1 and 2.6.0), which the sim raises as CUDA does
      // (harness/sim/cuda_rules.cpp); its words hold no relation the source rule knows.
      {E::kDeviceMismatch, "1.13.1-2.x (TensorIterator.cpp compute_types; harness/sim/cuda_rules.cpp); 'CUDA kernel' before: pytorch/pytorch issue 40986", R"(^Trying to pass too many CPU scalars to (non-CPU|CUDA) kernel!)"},
      {E::kBackendUnavailable, "tp::sim (harness/sim/sim.cpp check_index)", R"(^(tp::sim|torchplace\.sim): no simulated device sim:\d+)"},
  };
  // clang-format on
}

}  // namespace tp
