// Stable names for the ways a LibTorch call fails, and the classifier that maps a raw
// c10::Error message onto them across LibTorch versions (message_families.cpp holds the data).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace tp {

enum class ErrorClass {
  kDeviceMismatch,      // tensors on two devices in one op
  kBackendUnavailable,  // CUDA (or another backend) asked of a build or host without it
  kDtypeMismatch,       // operands of different dtypes
  kMissingKey,          // a checkpoint lacks a parameter or buffer the module has
  kFileNotFound,        // a checkpoint path that does not exist
  kCorruptArchive,      // a truncated or damaged checkpoint
  kOutOfMemory,         // an allocation the device cannot satisfy
  kCollectiveTimeout,   // a rank gave up waiting in a collective: its peer never joined
  kUnclassified,        // matched no family: always a failure
};

std::string_view name_of(ErrorClass error_class);

// The class of a raw message, or kUnclassified: the class of the first family that matches
// core_message(message).
ErrorClass classify(std::string_view message);

// The LibTorch sentence inside a message as a user sees it. Removed in front: the TorchScript
// interpreter's wrapper ("The following operation failed in the TorchScript interpreter.", its
// traceback, then "RuntimeError: "), a Python exception's class name ("RuntimeError: "), 1.x's
// "[enforce fail at FILE:N] <condition>. ", torchrun's "[rankN]: " on each line; cut behind: the
// C++ backtrace ("Exception raised from ...", "frame #0: ...").
std::string core_message(std::string_view message);

// A CUDA error after which the device's context stays broken for the rest of the process (an
// illegal address, a device-side assert, a launch failure): every later CUDA call fails too.
bool is_sticky_cuda_error(std::string_view message);

struct MessageFamily {
  ErrorClass error_class;
  std::string versions;  // where it was seen, e.g. "1.9-2.7"
  std::string pattern;   // ECMAScript regex, searched anywhere in the message
};

const std::vector<MessageFamily>& message_families();

// The first family that matches core_message(message), or nullptr.
const MessageFamily* match_family(std::string_view message);

}  // namespace tp
