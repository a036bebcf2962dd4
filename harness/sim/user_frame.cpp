// Where in the user's code a sim check raised or a transfer happened (README "Where it happened"):
// the first frame of the stack outside LibTorch, the C and C++ runtimes, GoogleTest and torchplace.
// The walk is glibc's backtrace(), capped at kMaxStackFrames; frames are judged by their object
// (dladdr), then, symbolized (symbolize.cpp), by their function's namespace and source file. Only
// a raise or TransferLog::summary() symbolizes; each address once (a cache).
#include <c10/util/Exception.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim_internal.h"

namespace tp::sim::detail {
namespace {

std::atomic<bool> frames_enabled{true};

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

// LibTorch, the runtimes, GoogleTest and torchplace's shared libraries, by file name.
bool skipped_object(const void* pc) {
  Dl_info info{};
  if (dladdr(pc, &info) == 0 || info.dli_fname == nullptr) return true;  // not a loaded object
  std::string name = info.dli_fname;
  name = name.substr(name.rfind('/') + 1);
  for (const char* prefix : {"libtorch", "libc10", "libcaffe2", "libshm", "libc.so", "libc-",
                             "libstdc++", "libgcc_s", "libm.so", "libpthread", "ld-linux",
                             "libgomp", "libgtest", "libgmock", "libpython", "libdw", "libelf"}) {
    if (starts_with(name, prefix)) return true;
  }
  return false;
}

// The first component of a qualified name ("at" of "at::Tensor::item<float>").
std::string first_namespace(const std::string& name) {
  int depth = 0;
  for (size_t at = 0; at + 1 < name.size(); ++at) {
    const char c = name[at];
    if (c == '<' || c == '(' || c == '{') ++depth;
    if (c == '>' || c == ')' || c == '}') --depth;
    if (depth == 0 && c == ':' && name[at + 1] == ':') return name.substr(0, at);
  }
  return "";
}

// "at train.cpp:42 in toy::train_step", "in toy::train_step" (no line), "" (no name).
std::string describe(const Frame& frame) {
  if (frame.function.empty()) return "";
  if (frame.file.empty()) return "in " + frame.function;
  return "at " + frame.file + ":" + std::to_string(frame.line) + " in " + frame.function;
}

// The user frame among one address's frames (its inlined calls first), "" when none: cached.
std::string user_frame_at(void* pc) {
  static std::mutex mutex;
  static auto* cache = new std::unordered_map<void*, std::string>();
  const std::lock_guard<std::mutex> lock(mutex);
  const auto found = cache->find(pc);
  if (found != cache->end()) return found->second;
  std::string where;
  if (!skipped_object(pc)) {
    for (const Frame& frame : symbolize(pc)) {
      if (frame.function.empty() || library_code(frame)) continue;
      where = describe(frame);
      break;
    }
  }
  return cache->emplace(pc, where).first->second;
}

}  // namespace

// LibTorch's, the standard library's, GoogleTest's and torchplace's own code, as it lands in a
// user's binary too (inline functions, templates, the static sim).
bool library_code(const Frame& frame) {
  const std::string space = first_namespace(frame.function);
  for (const char* name : {"at", "c10", "torch", "caffe2", "tp", "std", "__gnu_cxx", "testing"}) {
    if (space == name) return true;
  }
  for (const char* part : {"/ATen/", "/c10/", "/torch/csrc/", "/include/torch/", "/include/c++/",
                           "/gtest/", "/gmock/", "/harness/sim/"}) {
    if (frame.file.find(part) != std::string::npos) return true;
  }
  return false;
}

void set_user_frames(bool enabled) { frames_enabled = enabled; }
bool user_frames_enabled() { return frames_enabled.load(); }

std::vector<void*> capture_stack() {
  if (!frames_enabled.load()) return {};
  void* pcs[kMaxStackFrames];
  const int depth = backtrace(pcs, kMaxStackFrames);
  return std::vector<void*>(pcs, pcs + (depth > 0 ? depth : 0));
}

std::string user_frame(const std::vector<void*>& stack) {
  for (size_t index = 1; index < stack.size(); ++index) {  // [0]: capture_stack itself
    // A return address is the instruction after the call: its line is the next statement's.
    void* call = static_cast<char*>(stack[index]) - 1;
    std::string where = user_frame_at(call);
    if (!where.empty()) return where;
  }
  return "";
}

std::string user_frame() { return user_frame(capture_stack()); }

void add_place(c10::Error& error, const c10::FunctionSchema& schema, const std::string& argument) {
  if (!error.context().empty()) return;  // placed already (an inner check), or LibTorch's own
  const std::string& message = error.msg();
  std::vector<std::string> parts;
  if (message.find(" in method ") == std::string::npos) {  // the wrapper's names both
    parts.push_back("operator " + schema.name() +
                    (schema.overload_name().empty() ? "" : "." + schema.overload_name()));
    if (!argument.empty()) parts.push_back("argument '" + argument + "'");
  }
  const std::string where = user_frame();
  if (!where.empty()) parts.push_back(where);
  if (parts.empty()) return;
  std::string context = parts[0];
  for (size_t index = 1; index < parts.size(); ++index) context += ", " + parts[index];
  error.add_context(context);  // c10::Error folds one context into its line: "msg (context)"
}

}  // namespace tp::sim::detail
