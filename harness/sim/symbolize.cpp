// An address's function and source line (user_frame.cpp): with elfutils' libdwfl when built with
// it (TP_SIM_HAVE_LIBDW), the inlined calls too, from the debug information (-g) or, without it,
// the symbol table; else dladdr's name, which only a symbol the object exports has.
#include <cxxabi.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "sim_internal.h"

#ifdef TP_SIM_HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#endif

namespace tp::sim::detail {

// "toy::train_step" of "toy::train_step(at::Tensor const&)" (its mangled name's demangling),
// "float at::Tensor::item<float>() const" -> "at::Tensor::item<float>"; a C name unchanged.
std::string symbol_function(const char* symbol) {
  if (symbol == nullptr) return "";
  int status = 0;
  char* demangled = abi::__cxa_demangle(symbol, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled != nullptr ? demangled : symbol;
  std::free(demangled);
  const size_t close = name.rfind(')');
  if (close == std::string::npos || symbol[0] != '_') return name;
  int depth = 0;  // the parameter list's '(': the one that closes at `close`
  size_t open = close;
  for (size_t at = close + 1; at-- > 0;) {
    if (name[at] == ')') ++depth;
    if (name[at] == '(' && --depth == 0) {
      open = at;
      break;
    }
  }
  name.erase(open);
  depth = 0;  // a return type before the name (templates): cut at the last space outside <>
  size_t start = 0;
  for (size_t at = 0; at < name.size(); ++at) {
    const char c = name[at];
    if (c == '<' || c == '(' || c == '{') ++depth;
    if (c == '>' || c == ')' || c == '}') --depth;
    if (c == ' ' && depth == 0) start = at + 1;
  }
  return name.substr(start);
}

namespace {

#ifdef TP_SIM_HAVE_LIBDW

Dwfl* process() {  // callers hold user_frame.cpp's lock
  static Dwfl* dwfl = [] {
    static char* debuginfo_path = nullptr;
    static Dwfl_Callbacks callbacks{};
    callbacks.find_elf = dwfl_linux_proc_find_elf;
    callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    callbacks.debuginfo_path = &debuginfo_path;
    return dwfl_begin(&callbacks);
  }();
  return dwfl;
}

// The module of `pc`, reporting the process's objects again when it is new (dlopen'ed since).
Dwfl_Module* module_of(Dwarf_Addr pc) {
  Dwfl* dwfl = process();
  if (dwfl == nullptr) return nullptr;
  Dwfl_Module* module = dwfl_addrmodule(dwfl, pc);
  if (module != nullptr) return module;
  dwfl_report_begin(dwfl);
  const int failed = dwfl_linux_proc_report(dwfl, getpid());
  dwfl_report_end(dwfl, nullptr, nullptr);
  return failed == 0 ? dwfl_addrmodule(dwfl, pc) : nullptr;
}

std::string linkage_name(Dwarf_Die* die) {
  Dwarf_Attribute attribute;
  for (const int name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (dwarf_attr_integrate(die, name, &attribute) != nullptr)
      return symbol_function(dwarf_formstring(&attribute));
  }
  const char* plain = dwarf_diename(die);  // C, or a name without a linkage name
  return plain == nullptr ? "" : plain;
}

// The scopes around `pc`, innermost first, in the concrete tree: dwarf_getscopes gives those of
// the innermost function, then, past an inlined one, its abstract origin's (not its caller);
// dwarf_getscopes_die of that innermost function gives its callers, outer inlined calls included.
int concrete_scopes(Dwarf_Die* unit, Dwarf_Addr pc, Dwarf_Die** scopes) {
  Dwarf_Die* around = nullptr;
  const int count = dwarf_getscopes(unit, pc, &around);
  int innermost = 0;
  while (innermost < count && dwarf_tag(&around[innermost]) != DW_TAG_inlined_subroutine &&
         dwarf_tag(&around[innermost]) != DW_TAG_subprogram) {
    ++innermost;
  }
  const int found = innermost < count ? dwarf_getscopes_die(&around[innermost], scopes) : 0;
  std::free(around);
  return found;
}

// The frames of `pc` innermost first: each inlined call, then the function it is inlined into.
// The line of an inlined function is the line table's; of its caller, the call's (DW_AT_call_*).
std::vector<Frame> frames_of(Dwfl_Module* module, Dwarf_Addr pc) {
  std::vector<Frame> frames;
  Dwarf_Addr bias = 0;
  Dwarf_Die* unit = dwfl_module_addrdie(module, pc, &bias);
  Dwfl_Line* line = dwfl_module_getsrc(module, pc);
  int number = 0;
  const char* file =
      line == nullptr ? nullptr : dwfl_lineinfo(line, nullptr, &number, nullptr, nullptr, nullptr);
  Dwarf_Die* scopes = nullptr;
  const int count = unit == nullptr ? 0 : concrete_scopes(unit, pc - bias, &scopes);
  Dwarf_Files* files = nullptr;
  size_t file_count = 0;
  if (unit != nullptr) dwarf_getsrcfiles(unit, &files, &file_count);
  for (int index = 0; index < count; ++index) {
    const int tag = dwarf_tag(&scopes[index]);
    if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
    // The out-of-line function by its symbol (a local one has no DW_AT_linkage_name to qualify
    // its DW_AT_name); an inlined one by its linkage name.
    const std::string name = tag == DW_TAG_subprogram
                                 ? symbol_function(dwfl_module_addrname(module, pc))
                                 : linkage_name(&scopes[index]);
    frames.push_back(
        {name.empty() ? linkage_name(&scopes[index]) : name, file ? file : "", file ? number : 0});
    Dwarf_Attribute attribute;
    Dwarf_Word call_file = 0, call_line = 0;
    file = nullptr;  // the caller's line: the call's, when this one was inlined
    if (tag == DW_TAG_inlined_subroutine && files != nullptr &&
        dwarf_formudata(dwarf_attr(&scopes[index], DW_AT_call_file, &attribute), &call_file) == 0 &&
        dwarf_formudata(dwarf_attr(&scopes[index], DW_AT_call_line, &attribute), &call_line) == 0 &&
        call_file < file_count) {
      file = dwarf_filesrc(files, call_file, nullptr, nullptr);
      number = static_cast<int>(call_line);
    }
  }
  std::free(scopes);
  if (frames.empty() || frames.back().function.empty()) {  // no debug information: the symbol
    const std::string name = symbol_function(dwfl_module_addrname(module, pc));
    if (frames.empty()) frames.push_back({name, file ? file : "", file ? number : 0});
    frames.back().function = name;
  }
  return frames;
}

#endif  // TP_SIM_HAVE_LIBDW

}  // namespace

std::vector<Frame> exported_frame(void* pc) {
  Dl_info info{};
  if (dladdr(pc, &info) == 0 || info.dli_sname == nullptr) return {};
  return {Frame{symbol_function(info.dli_sname), "", 0}};
}

std::vector<Frame> symbolize(void* pc) {
#ifdef TP_SIM_HAVE_LIBDW
  Dwfl_Module* module = module_of(reinterpret_cast<Dwarf_Addr>(pc));
  if (module != nullptr) return frames_of(module, reinterpret_cast<Dwarf_Addr>(pc));
#endif
  return exported_frame(pc);
}

}  // namespace tp::sim::detail
