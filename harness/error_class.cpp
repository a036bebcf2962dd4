#include "error_class.h"

#include <regex>

namespace tp {

std::string_view name_of(ErrorClass error_class) {
  switch (error_class) {
    case ErrorClass::kDeviceMismatch:
      return "DeviceMismatch";
    case ErrorClass::kBackendUnavailable:
      return "BackendUnavailable";
    case ErrorClass::kDtypeMismatch:
      return "DtypeMismatch";
    case ErrorClass::kMissingKey:
      return "MissingKey";
    case ErrorClass::kFileNotFound:
      return "FileNotFound";
    case ErrorClass::kCorruptArchive:
      return "CorruptArchive";
    case ErrorClass::kOutOfMemory:
      return "OutOfMemory";
    case ErrorClass::kCollectiveTimeout:
      return "CollectiveTimeout";
    case ErrorClass::kUnclassified:
      return "Unclassified";
  }
  return "Unclassified";
}

namespace {

struct CompiledFamily {
  ErrorClass error_class;
  std::regex regex;
};

const std::vector<CompiledFamily>& compiled_families() {
  static const std::vector<CompiledFamily> compiled = [] {
    std::vector<CompiledFamily> out;
    for (const MessageFamily& family : message_families()) {
      out.push_back({family.error_class, std::regex(family.pattern, std::regex::ECMAScript)});
    }
    return out;
  }();
  return compiled;
}

}  // namespace

bool is_sticky_cuda_error(std::string_view message) {
  static const std::regex sticky(
      "illegal memory access|device-side assert triggered|unspecified launch failure|"
      "misaligned address|illegal instruction was encountered|launch timed out",
      std::regex::ECMAScript | std::regex::icase);
  return std::regex_search(std::string(message), sticky);
}

ErrorClass classify(std::string_view message) {
  const std::string text(message);
  for (const CompiledFamily& family : compiled_families()) {
    if (std::regex_search(text, family.regex)) return family.error_class;
  }
  return ErrorClass::kUnclassified;
}

}  // namespace tp
