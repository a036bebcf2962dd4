// The message families that LibTorch uses for each error class, by version. The first family
// that matches wins, so the more specific ones come first. Every entry of the observed-message
// corpus (harness/messages/) must classify through this table; see its test.
#include "error_class.h"

namespace tp {

const std::vector<MessageFamily>& message_families() {
  using E = ErrorClass;
  // clang-format off
  static const std::vector<MessageFamily> families = {
      // Device mismatch: the generated wrapper check and TensorIterator, in three wordings.
      {E::kDeviceMismatch, "1.9-2.7", R"(Expected all tensors to be on the same device, but found at least two devices)"},
      {E::kDeviceMismatch, "2.8+", R"(Expected all tensors to be on the same device, but got \w+ is on \S+, different from other tensors on \S+)"},
      {E::kDeviceMismatch, "1.7-1.8", R"(Input, output and indices must be on the current device)"},
      {E::kDeviceMismatch, "<=1.6", R"(Expected object of device type \w+ but got device type \w+)"},
      {E::kDeviceMismatch, "all", R"(Expected tensor for argument #\d+ '\w+' to have the same device)"},
      // A build or host without the backend.
      {E::kBackendUnavailable, "1.0+", R"(is not linked with support for \w+ devices)"},
      {E::kBackendUnavailable, "1.0+", R"(Could not run '[\w:.]+' with arguments from the '\w+' backend)"},
      {E::kBackendUnavailable, "2.4+", R"(Cannot access accelerator device when none is available)"},
      {E::kBackendUnavailable, "1.0+", R"(Torch not compiled with CUDA enabled)"},
      {E::kBackendUnavailable, "1.0+", R"(Found no NVIDIA driver on your system)"},
      {E::kBackendUnavailable, "1.0+", R"(no CUDA-capable device is detected|No CUDA GPUs are available)"},
      {E::kOutOfMemory, "1.0+", R"(CUDA out of memory|out of memory)"},
      // Dtypes.
      {E::kDtypeMismatch, "1.13", R"(mat1 and mat2 must have the same dtype)"},
      {E::kDtypeMismatch, "1.10+", R"(expected scalar type \w+ but found \w+)"},
      {E::kDtypeMismatch, "2.x", R"(expected target dtype to be \w+)"},
      {E::kDtypeMismatch, "1.0+", R"(Found dtype \w+ but expected \w+)"},
      {E::kDtypeMismatch, "1.0+", R"(expected (both vectors|m1 and m2) to have (the )?same dtype)"},
      {E::kDtypeMismatch, "2.x", R"(must have the same dtype)"},
      // Checkpoints.
      {E::kMissingKey, "1.0+", R"(No such serialized (tensor|submodule) ')"},
      // torch::load into a module whose submodule the archive lacks; seen 1.13.1.
      {E::kMissingKey, "1.13", R"(No such serialized submodule: ')"},
      {E::kFileNotFound, "1.0+", R"(open file failed.*(No such file|errno 2))"},
      {E::kCorruptArchive, "1.0+", R"(PytorchStreamReader failed)"},
      {E::kCorruptArchive, "1.0+", R"(Unpickler|unpickl|Overran buffer|unknown opcode)"},
      {E::kCorruptArchive, "1.0+", R"(Unexpected end of pickler archive)"},
      // The unpickler reading a GLOBAL from a data.pkl cut short; seen 1.13.1.
      {E::kCorruptArchive, "1.13", R"(strings must be qualified Python identifiers)"},
  };
  // clang-format on
  return families;
}

}  // namespace tp
