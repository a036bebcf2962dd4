// The fault handler of guarded device memory (guarded_memory.cpp): a SIGSEGV or SIGBUS inside a
// sim allocation's reservation is host code touching a sim tensor's memory. It says so on stderr,
// naming the allocation, the offset, the faulting code and a short backtrace, then dies of the
// signal. Any other fault goes to the handler that was there before. The message is formatted
// into a buffer and written with write(2); only the faulting code's name (dladdr, demangling)
// and the backtrace use functions that are not async-signal-safe, last, under an alarm.
#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "sim_internal.h"

namespace tp::sim::detail {
namespace {

struct sigaction previous_segv, previous_bus;

// A line of text in a fixed buffer, written to stderr in one write(2).
class Line {
 public:
  Line& text(const char* text) {
    for (; *text != '\0' && used_ < sizeof buffer_ - 1; ++text) buffer_[used_++] = *text;
    return *this;
  }
  Line& number(uintptr_t value, int base = 10) {
    char digits[24];
    int count = 0;
    do digits[count++] = "0123456789abcdef"[value % base];
    while ((value /= base) != 0);
    if (base == 16) text("0x");
    while (count > 0 && used_ < sizeof buffer_ - 1) buffer_[used_++] = digits[--count];
    return *this;
  }
  void write() {
    buffer_[used_++] = '\n';
    for (size_t done = 0; done < used_;) {
      const ssize_t wrote = ::write(STDERR_FILENO, buffer_ + done, used_ - done);
      if (wrote <= 0) break;
      done += static_cast<size_t>(wrote);
    }
    used_ = 0;
  }

 private:
  char buffer_[1024];
  size_t used_ = 0;
};

// The faulting instruction and whether it wrote (x86-64 and AArch64; elsewhere unknown: 0).
uintptr_t instruction(const void* context) {
  const auto* machine = &static_cast<const ucontext_t*>(context)->uc_mcontext;
#if defined(__x86_64__)
  return static_cast<uintptr_t>(machine->gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<uintptr_t>(machine->pc);
#else
  (void)machine;
  return 0;
#endif
}

bool wrote(const void* context) {
#if defined(__x86_64__)
  return (static_cast<const ucontext_t*>(context)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
  (void)context;
  return false;  // reported as a read
#endif
}

void report(const DeviceRegion& region, uintptr_t address, const void* context) {
  const bool write = wrote(context);
  const auto index = static_cast<uintptr_t>(region.index);
  const uintptr_t offset = address - region.start;
  Line line;
  line.text("tp::sim: host code ").text(write ? "wrote to" : "read");
  line.text(" the memory of a tensor on sim:").number(index);
  line.text(" (data_ptr/data<T>/accessor/memcpy): on CUDA this ").text(write ? "writes" : "reads");
  line.text(" device memory from the host; ");
  line.text(write ? "fill a CPU tensor and copy it with .to(device)"
                  : "copy it to the CPU first with .cpu() / .to(torch::kCPU)");
  line.write();
  line.text("tp::sim: the allocation: sim:").number(index).text(", ").number(region.bytes);
  line.text(" bytes at ").number(region.start, 16).text("; offset ").number(offset);
  line.text(" (address ")
      .number(address, 16)
      .text(offset >= region.bytes ? ", past its end)" : ")");
  line.write();
  line.text(
      "tp::sim: TORCHPLACE_SIM_HOST_READS=allow turns this check off (harness/sim/README.md)");
  line.write();
}

// The faulting code by name, then a short backtrace from it: not async-signal-safe (the dynamic
// loader's lock, malloc), so last, and an alarm ends the process should they ever hang.
void name_the_code(uintptr_t ip) {
  alarm(10);
  Line line;
  line.text("tp::sim: faulting code: ").number(ip, 16);
  Dl_info info{};
  if (ip != 0 && dladdr(reinterpret_cast<void*>(ip), &info) != 0) {
    if (info.dli_sname != nullptr) {
      int status = 0;
      char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
      line.text(" in ").text(status == 0 ? demangled : info.dli_sname);
      std::free(demangled);
    }
    line.text(" (").text(info.dli_fname != nullptr ? info.dli_fname : "?").text("+");
    line.number(ip - reinterpret_cast<uintptr_t>(info.dli_fbase), 16).text(")");
  }
  line.write();
  void* frames[24];
  const int count = backtrace(frames, static_cast<int>(std::size(frames)));
  int first = 0;  // from the faulting frame: the handler's own frames are noise
  while (first < count && reinterpret_cast<uintptr_t>(frames[first]) != ip) ++first;
  if (first == count) first = 0;
  line.text("tp::sim: backtrace (addr2line -e FILE +OFFSET names a frame without a symbol):");
  line.write();
  backtrace_symbols_fd(frames + first, std::min(count - first, 12), STDERR_FILENO);
}

void die_of(int signal) {
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(signal, &fallback, nullptr);
  raise(signal);  // blocked in its own handler: delivered, fatally, when this one returns
}

void pass_on(int signal, siginfo_t* info, void* context) {
  const struct sigaction& previous = signal == SIGBUS ? previous_bus : previous_segv;
  // SIG_DFL and SIG_IGN are no functions, whatever sa_flags says (sa_sigaction shares the field)
  const bool function = previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN;
  if (function && (previous.sa_flags & SA_SIGINFO) != 0) {
    return previous.sa_sigaction(signal, info, context);
  }
  if (previous.sa_handler == SIG_IGN && info->si_code <= 0) return;  // sent, and ignored
  if (function) return previous.sa_handler(signal);
  die_of(signal);  // a real fault is fatal even when ignored
}

void on_fault(int signal, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  DeviceRegion region{};
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  if (info->si_code <= 0 || !region_for_fault(address, &region)) {  // <= 0: sent, not a fault
    errno = saved_errno;
    return pass_on(signal, info, context);
  }
  report(region, address, context);
  name_the_code(instruction(context));
  die_of(signal);
}

}  // namespace

void install_host_read_handler() {
  void* warm[1];  // loads the unwinder now, not inside the handler
  backtrace(warm, static_cast<int>(std::size(warm)));
  struct sigaction action {};
  action.sa_sigaction = &on_fault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;  // the thread's alternate stack, if it has one
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &previous_segv);
  sigaction(SIGBUS, &action, &previous_bus);
}

}  // namespace tp::sim::detail
