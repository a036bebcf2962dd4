// Internal to torchplace_sim: the pieces that sim.cpp registers.
#pragma once
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <torch/library.h>
#include <torch/version.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim.h"
#include "transfer_log.h"

// True when the LibTorch built against is major.minor or newer.
#define TP_SIM_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||   \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace tp::sim::detail {

// The boxed fallback for the simulated device: device check, then the CPU kernel.
void checked_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);
// Makes the checking fallback the sim's own kernel of aten::`qualified` ("name.overload"), rather
// than a composite kernel, once however many tables name it (cuda_kernels.inc, scalar_rules.inc).
void register_fallback_kernel(const std::string& qualified);
// The fallback's device check alone (README "Which operators check") of the operator's arguments
// at the top of `stack`: raises as CUDA would, else returns the arguments' common device.
c10::optional<c10::Device> check_devices(const c10::FunctionSchema& schema,
                                         const torch::jit::Stack& stack);
long long checked_call_count();

// The calling thread's current simulated device, and setting it (refuses an index past the
// count, naming it). Allocations are tagged with it.
c10::DeviceIndex current_index();
void set_current_index(c10::DeviceIndex index);
// Refuses an index outside 0 .. count-1 with a message naming it.
void check_index(int index);

// The transfer log (transfer_log.cpp): a copy a user's code asked for, and an operator call on
// the device (counted when its CUDA kernel synchronises). Neither counts inside a FallbackScope,
// which the fallback holds while it computes on CPU copies of the inputs.
void record_copy(const at::Tensor& src, const at::Tensor& dst, bool non_blocking);
void record_operator(const c10::FunctionSchema& schema, const torch::jit::Stack& stack);
struct FallbackScope {
  FallbackScope();
  ~FallbackScope();
  FallbackScope(const FallbackScope&) = delete;
  FallbackScope& operator=(const FallbackScope&) = delete;
};
bool in_fallback_scope();  // on this thread

// Where in the user's code (user_frame.cpp, symbolize.cpp; README "Where it happened"): the first
// frame outside LibTorch, the C and C++ runtimes, GoogleTest and torchplace.
constexpr int kMaxStackFrames = 64;  // the walk's cap
struct Frame {
  std::string function;  // "toy::train_step", "" when unknown
  std::string file;      // "" without debug information
  int line = 0;
};
// An address's frames, innermost (inlined) first.
std::vector<Frame> symbolize(void* pc);
// Without libdw (or outside every object libdwfl knows): the exported symbol that dladdr finds at
// `pc`, no file nor line; none where no exported symbol covers it.
std::vector<Frame> exported_frame(void* pc);
// A symbol's function as Frame::function holds it: its demangled name less the parameters and
// a return type ("toy::train_step"); a C name or one that does not demangle unchanged.
std::string symbol_function(const char* symbol);
// LibTorch's, the runtimes', GoogleTest's or torchplace's frame: by its function's first
// namespace, else by its source file (a name with none, e.g. one left mangled).
bool library_code(const Frame& frame);
// The calling thread's return addresses (backtrace()); none while frames are off.
std::vector<void*> capture_stack();
// The first user frame of a stack: "at train.cpp:42 in toy::train_step", "in toy::train_step"
// (no debug information), "" (none found); of the calling thread's stack, without one.
std::string user_frame(const std::vector<void*>& stack);
std::string user_frame();
// Off in a Python process (python_entry.cpp): its traceback gives the line.
void set_user_frames(bool enabled);
bool user_frames_enabled();
// Appends to a sim check's error, once (c10::Error's context, printed on its line): the operator
// and `argument` unless the message names them ("in method"), then user_frame().
void add_place(c10::Error& error, const c10::FunctionSchema& schema, const std::string& argument);

// The transfer log's call sites (call_sites.cpp): event -> stack -> count, symbolized; and the
// text summary() gives an event's sites ("" when none has a user frame), after `lead`.
using EventStacks = std::map<std::string, std::map<std::vector<void*>, std::int64_t>>;
std::vector<CallSite> call_sites_of(const EventStacks& stacks);
std::string sites_text(const std::vector<CallSite>& sites, const std::string& event,
                       const std::string& lead);

// False only under the mutation TORCHPLACE_SIM_MUTATION=no_device_check (ci mutation script).
bool checks_enabled();
// The column of device_checks.inc that the device check reads for this LibTorch, and for
// LibTorch major.minor.
int version_column();
int version_column(int major, int minor);

// Device memory (guarded_memory.cpp; README "Host reads of device memory"). Unless
// TORCHPLACE_SIM_HOST_READS=allow (read once by configure_device_memory, at enable()), a sim
// allocation's address has no access: the bytes live elsewhere in host memory and the sim reaches
// them through host_address(). Zero bytes are a null pointer.
void configure_device_memory();
bool host_reads_guarded();
void* allocate_device_bytes(size_t bytes, c10::DeviceIndex index);
void free_device_bytes(void* data);
// How many freed reservations of `length` bytes are kept for reuse (0: of every length; at most
// 1024 in all).
size_t kept_reservations(size_t length = 0);
// The host bytes behind a sim address (one inside an allocation, or its end, too); any other
// pointer unchanged. copy_device_bytes is memcpy through it, for either side.
void* host_address(const void* device_address);
void copy_device_bytes(void* destination, const void* source, size_t count);
// For the fault handler (host_read_fault.cpp): the allocation whose reservation holds `address`.
struct DeviceRegion {
  uintptr_t start;
  size_t bytes;
  c10::DeviceIndex index;
};
bool region_for_fault(uintptr_t address, DeviceRegion* region);
// SIGSEGV and SIGBUS: a fault inside a sim allocation is reported and fatal; others pass on.
void install_host_read_handler();
// The column for LibTorch major.minor in a table of `count` versions (ascending): the newest
// listed version not newer than it (the first for one older than them all).
int newest_column(const char* const* versions, int count, int major, int minor);
// Whether a listed version ("2.6.0") is LibTorch major.minor.
bool same_minor(const char* version, int major, int minor);

// CUDA's checks past the wrapper for a NoCheck operator (cuda_rules.cpp, scalar_rules.inc): how
// its TensorIterator and kernel treat a 0-dim CPU input, as read from the version's source.
enum class IteratorRule {
  kUndecided,  // not read, or the reading could not tell: the fallback's older rule applies
  kAccept,     // allow_cpu_scalars, and the kernel takes one CPU scalar
  kIterator,   // no allow_cpu_scalars: compute_types refuses a CPU operand
  kKernel,     // allow_cpu_scalars, but the launcher (gpu_kernel) refuses the CPU operand
};
struct ScalarRule {
  IteratorRule rule;
  const char* launcher;  // kKernel's launcher
};
// "name.overload" -> its rule for the installed LibTorch.
ScalarRule scalar_rule(const std::string& key);
// Raises as CUDA's TensorIterator (and launcher) would, with their messages; else returns the
// common device (nullopt when every operand is on the CPU).
c10::optional<c10::Device> check_iterator(const c10::FunctionSchema& schema,
                                          const torch::jit::Stack& stack, ScalarRule rule);
// Kernel-level checks the wrapper does not make (searchsorted's keyword-only sorter).
void check_own(const c10::FunctionSchema& schema, const torch::jit::Stack& stack);

// The fallback as the kernel of the forms CUDA's wrapper checks as called (scalar_rules.inc
// TP_SIM_AS_CALLED).
void register_as_called();

// Kernels that must not go through the fallback: allocation, copies, views, storage.
void register_kernels();
// Operators whose CUDA kernel a PrivateUse1 device does not get by default (cuda_kernels.cpp):
// the CPU kernel where CUDA has its own; a refusal where CUDA has none.
void register_cuda_kernels();
void refuse_without_cuda_kernel(const c10::FunctionSchema& schema);
// The fused LSTM and GRU cells 2.x calls for a PrivateUse1 input (rnn_cells.cpp).
void register_rnn_cells();
// The dtypes CUDA's kernel of the operator refuses, in CUDA's words (cuda_dtypes.cpp): checked on
// the arguments at the top of `stack` before the CPU kernel runs (it returns whether one of them
// was empty, nullopt when the operator has no checks), and on the results after it, told that;
// a convolution's (cpu_copies.cpp) on its input.
c10::optional<bool> refuse_cuda_dtype(const c10::FunctionSchema& schema,
                                      const torch::jit::Stack& stack);
void refuse_cuda_result_dtype(const c10::FunctionSchema& schema, const torch::jit::Stack& stack,
                              bool empty);
void refuse_cuda_convolution_dtype(const c10::FunctionSchema& schema,
                                   const torch::jit::Stack& stack);
// Operators run on CPU copies by the sim itself: convolutions, undeclared writes (cpu_copies.cpp).
void register_cpu_copies();
// Sparse tensors are not simulated: an operator that would make or take one on the sim is refused
// naming that limit (cpu_copies.cpp); refuse_sparse_outputs checks what the fallback returns.
[[noreturn]] void refuse_sparse(const std::string& operator_name);
void refuse_sparse_outputs(const c10::FunctionSchema& schema, const torch::jit::Stack& stack);
// scaled_dot_product_attention's choice of algorithm, the CPU's (2.5+; nothing before).
void register_attention();
// CUDA's autocast cast policy for AutocastPrivateUse1 (2.4+; nothing before).
void register_autocast();
// Allocator, device guard, name and (2.x) hooks, for device type `as` (PrivateUse1, or CUDA).
void register_device(c10::DeviceType as);
// The device type the sim answers for (PrivateUse1 unless enable_as_cuda chose CUDA), and the
// dispatch key that stands for `key` (one of the PrivateUse1 keys) there: itself, or CUDA's.
c10::DeviceType sim_type();
c10::DispatchKey sim_key(c10::DispatchKey key = c10::DispatchKey::PrivateUse1);
// CUDA's hooks (cuda_hooks.cpp), so that torch::cuda::is_available() and device_count() answer for
// the sim; refuses a LibTorch built with CUDA, and a process that read CUDA's hooks already.
void register_cuda_hooks();
// The PrivateUse1 hooks interface (2.x; nothing before it existed).
void register_hooks();
#if TP_SIM_AT_LEAST(2, 1)
// Pinned host memory (hooks.cpp): the allocator, and whether an address is in one of its blocks.
at::Allocator* pinned_allocator();
bool is_pinned_address(const void* data);
#endif

}  // namespace tp::sim::detail
