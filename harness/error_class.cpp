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
    case ErrorClass::kCollectiveFailure:
      return "CollectiveFailure";
    case ErrorClass::kHostSync:
      return "HostSync";
    case ErrorClass::kUnclassified:
      return "Unclassified";
  }
  return "Unclassified";
}

namespace {

struct CompiledFamily {
  const MessageFamily* family;
  std::regex regex;
};

const std::vector<CompiledFamily>& compiled_families() {
  static const std::vector<CompiledFamily> compiled = [] {
    std::vector<CompiledFamily> out;
    for (const MessageFamily& family : message_families()) {
      out.push_back({&family, std::regex(family.pattern, std::regex::ECMAScript)});
    }
    return out;
  }();
  return compiled;
}

// The one rule for what stands in front of a message, removed again and again: a bracketed tag
// (torchrun's "[rank0]:", a logger's "[E ProcessGroupNCCL.cpp:737]", c10d's "[Rank 1]", Gloo's
// "[../gloo/transport/tcp/pair.cc:598]") or an exception's name, qualified or not
// ("RuntimeError: ", "torch.OutOfMemoryError: ", "torch.distributed.DistBackendError: ",
// "_pickle.UnpicklingError: ": torch/csrc/Exceptions.h and the launchers print them so).
const std::regex& front_prefix() {
  static const std::regex prefix(R"(^(\[[^\]\n]*\]:?[ \t]*|[A-Za-z_][\w.]*(Error|Exception): ))",
                                 std::regex::ECMAScript);
  return prefix;
}

// c10/util/Exception.h CAFFE_ENFORCE (1.x serialization, the CPU allocator):
// "[enforce fail at inline_container.cc:145] . PytorchStreamReader failed ..." (the condition
// is empty), "[enforce fail at CPUAllocator.cpp:64] data. DefaultCPUAllocator: ...".
const std::regex& enforce_prefix() {
  static const std::regex prefix(R"(^\[enforce fail at [^\]]+\] (.*?)\. )", std::regex::ECMAScript);
  return prefix;
}

constexpr std::string_view kInterpreter =
    "The following operation failed in the TorchScript interpreter.";

// torch/csrc/jit/runtime/interpreter.cpp handleError writes the sentence above, "Traceback of
// TorchScript ...", the serialized code with its "<--- HERE" marks, then one line
// "<Python exception name>: <the LibTorch message>" (seen 1.13.1: RuntimeError). Returns what
// follows that name, or the text unchanged when no such line follows.
std::string unwrap_interpreter(const std::string& text) {
  std::size_t line = text.find('\n');
  while (line != std::string::npos) {
    const std::string rest = text.substr(line + 1);
    std::smatch found;
    if (std::regex_search(rest, found, front_prefix())) return found.suffix().str();
    line = text.find('\n', line + 1);
  }
  return text;
}

// torchrun (torch/distributed/elastic, 2.3+) writes "[rank5]: " (or "[rank5]:" before a log
// line) before every line a worker prints, the error's lines included: removed from each line
// when the first has it.
std::string strip_rank_prefix(const std::string& text) {
  static const std::regex rank(R"(^\[rank\d+\]:)");
  if (!std::regex_search(text, rank)) return text;
  static const std::regex every_line(R"((^|\n)\[rank\d+\]: ?)");
  return std::regex_replace(text, every_line, "$1");
}

std::string strip_front(std::string text) {
  for (int pass = 0; pass < 8; ++pass) {  // a wrapper can hold a prefixed message, and so on
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    text.erase(0, first == std::string::npos ? text.size() : first);
    text = strip_rank_prefix(text);
    std::smatch found;
    if (std::regex_search(text, found, enforce_prefix()) ||  // before any bracketed tag
        std::regex_search(text, found, front_prefix())) {
      text = found.suffix().str();
    } else if (text.compare(0, kInterpreter.size(), kInterpreter) == 0) {
      const std::string inner = unwrap_interpreter(text);
      if (inner == text) return text;
      text = inner;
    } else {
      return text;
    }
  }
  return text;
}

}  // namespace

std::string core_message(std::string_view message) {
  std::string text = strip_front(std::string(message));
  // c10::Error::what() appends the C++ backtrace: "Exception raised from <fn> at <file>:<line>"
  // (1.7+) or "frame #0: ..." lines (1.x).
  for (const char* tail : {"\nException raised from ", "\nframe #"}) {
    const std::size_t at = text.find(tail);
    if (at != std::string::npos) text.erase(at);
  }
  return text;
}

bool is_sticky_cuda_error(std::string_view message) {
  static const std::regex sticky(
      "illegal memory access|device-side assert triggered|unspecified launch failure|"
      "misaligned address|illegal instruction was encountered|launch timed out",
      std::regex::ECMAScript | std::regex::icase);
  return std::regex_search(std::string(message), sticky);
}

namespace {

// A template's literal parts ("{}" splits them; "{{" and "}}" are literal braces).
std::vector<std::string> literal_parts(std::string_view templ) {
  std::vector<std::string> parts(1);
  for (std::size_t i = 0; i < templ.size(); ++i) {
    const std::string_view two = templ.substr(i, 2);
    if (two == "{}") {
      parts.emplace_back();
    } else {
      parts.back() += templ[i];
    }
    if (two == "{}" || two == "{{" || two == "}}") ++i;
  }
  return parts;
}

std::size_t literal_length(std::string_view templ) {
  std::size_t length = 0;
  for (const std::string& part : literal_parts(templ)) length += part.size();
  return length;
}

}  // namespace

bool template_matches(std::string_view templ, std::string_view text) {
  const std::vector<std::string> parts = literal_parts(templ);
  if (text.compare(0, parts[0].size(), parts[0]) != 0) return false;
  std::size_t at = parts[0].size();
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::size_t found = text.find(parts[i], at);  // the leftmost leaves the most room
    if (found == std::string_view::npos) return false;
    at = found + parts[i].size();
  }
  return true;
}

const MessageFamily* match_family(std::string_view message) {
  const std::string text = core_message(message);
  for (const CompiledFamily& compiled : compiled_families()) {
    if (std::regex_search(text, compiled.regex)) return compiled.family;
  }
  // The most specific source template: the most literal text, the first of equals.
  const MessageFamily* best = nullptr;
  std::size_t best_length = 0;
  for (const MessageFamily& family : source_families()) {
    const std::size_t length = literal_length(family.pattern);
    if (length > best_length && template_matches(family.pattern, text)) {
      best = &family;
      best_length = length;
    }
  }
  return best;
}

ErrorClass classify(std::string_view message) {
  const MessageFamily* family = match_family(message);
  return family == nullptr ? ErrorClass::kUnclassified : family->error_class;
}

}  // namespace tp
