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
  kCollectiveFailure,   // a collective or its process group failed otherwise (NCCL, Gloo)
  kHostSync,            // a host-device synchronization refused (CUDA's sync-debug error mode)
  kUnclassified,        // matched no family: always a failure
};

std::string_view name_of(ErrorClass error_class);

// The class of a raw message, or kUnclassified: the class of the first hand-written family
// (message_families()) that matches core_message(message), else of the source family
// (source_families()) with the most literal text that matches it.
ErrorClass classify(std::string_view message);

// The LibTorch sentence inside a message as a user sees it. Removed in front, again and again:
// the TorchScript interpreter's wrapper ("The following operation failed in the TorchScript
// interpreter.", its traceback, then "RuntimeError: "), 1.x's "[enforce fail at FILE:N]
// <condition>. ", torchrun's "[rankN]: " on each line, and by one rule any bracketed tag
// ("[rank0]:", "[E ProcessGroupNCCL.cpp:737]", "[Rank 1]") or exception name ("RuntimeError: ",
// "torch.distributed.DistBackendError: "); cut behind: the C++ backtrace ("Exception raised from
// ...", "frame #0: ...").
std::string core_message(std::string_view message);

// A CUDA error after which the device's context stays broken for the rest of the process (an
// illegal address, a device-side assert, a launch failure): every later CUDA call fails too.
bool is_sticky_cuda_error(std::string_view message);

struct MessageFamily {
  ErrorClass error_class;
  std::string versions;      // where it was seen, e.g. "1.9-2.7"
  std::string pattern;       // hand-written: an ECMAScript regex; from the source: a template
  bool from_source = false;  // a template of LibTorch's source ({} a placeholder), matched from
                             // the message's start, its literal parts in order
};

// The hand-written families (message_families.cpp): what the source does not give.
const std::vector<MessageFamily>& message_families();
// Other libraries' texts, c10d's run-time ones, pre-1.13 wording, the sim's, and near misses a
// source template would take (other_families.cpp): the tail of message_families().
std::vector<MessageFamily> other_library_families();
// The families generated from each version's source (messages/source_families.inc).
const std::vector<MessageFamily>& source_families();

// True when a source template matches the text: its literal parts in order, the first at the
// start unless the template starts with a placeholder.
bool template_matches(std::string_view templ, std::string_view text);

// The family classify() takes for core_message(message), or nullptr.
const MessageFamily* match_family(std::string_view message);

}  // namespace tp
