// tp::sim — a simulated accelerator for CPU-only CI.
//
// Tensors on tp::sim::device(i) live in CPU memory under a device type of their own (LibTorch's
// PrivateUse1 key, shown as "sim:0" where the LibTorch version can name it, "privateuseone:0"
// before 2.0). There are N simulated devices (2 unless TORCHPLACE_SIM_DEVICES or
// set_device_count says otherwise); each tensor keeps its device index, so a model on sim:0 and
// an input on sim:1 raise as on two GPUs. Every operator first checks its tensor arguments the way
// LibTorch's CUDA wrappers do (c10::impl::check_and_update_common_device), then computes with the
// CPU kernel. So a training step that forgets a .to(device) raises "Expected all tensors to be on
// the same device ..." on a machine without a GPU, as it would on CUDA.
//
//   tp::sim::enable();                        // once per process; idempotent
//   const torch::Device device = tp::sim::device();
//   model->to(device);
//   auto loss = torch::nll_loss(model(x.to(device)), y);  // raises: y was left on the CPU
//
// Where it differs from CUDA is listed in harness/sim/CUDA_RULES.md. It takes over PrivateUse1: a
// process that registers another PrivateUse1 backend cannot use it.
#pragma once
#include <torch/types.h>

#include <string>

namespace tp::sim {

// Registers the simulated device with LibTorch: allocator, device guard, kernels, the checking
// fallback and (2.x) its name and hooks. Safe to call from several threads and many times.
void enable();

// Like enable(), but the sim answers as CUDA, for a program's CUDA path run unmodified on a
// CPU-only LibTorch: its tensors are cuda:0 .. cuda:N-1, torch::cuda::is_available() is true and
// device_count() is N, and messages say cuda:0 (README.md "As CUDA"). Call it before anything
// asks about CUDA (the first answer LibTorch gets is kept) and instead of enable(); loading the
// shared library torchplace_sim_cuda (linked, or LD_PRELOAD) calls it. Refuses a LibTorch built
// with CUDA, and a process where enable() ran first.
void enable_as_cuda();

// The simulated device `index` (privateuseone:index); device() is index 0. Calls enable().
// An index >= device_count() is refused (c10::Error naming it), never aliased to another.
torch::Device device(int index = 0);

// The simulated device `index` as a value, without enable(): what a list of cells names before
// any of them runs. A process that runs only CUDA cells then never registers the sim, which
// LibTorch 2.8+ would take for its accelerator, failing every CUDA backward (README.md "Beside a
// GPU"). Tensors on it need enable() first (device() calls it).
torch::Device listed(int index);

// How many simulated devices there are: the environment variable TORCHPLACE_SIM_DEVICES
// (1..16) if set when enable() first runs, else 2. Calls enable(); a bad value raises there.
int device_count();

// Sets the count (1..16) for the rest of the process; tensors already made keep their device.
void set_device_count(int count);

// True for tensors and devices of the simulated type.
bool is_sim(const torch::Device& device);

// "sim:0" for the simulated device on every LibTorch version, device.str() otherwise.
std::string label(const torch::Device& device);

// False when the environment variable TORCHPLACE_SIM_HOST_READS=allow (read once, when enable()
// first runs; any other value than unset or 'allow' is refused there) gives sim tensors plain host
// memory; true by default, when host code that reads a sim tensor's memory (data_ptr<T>()[i],
// accessor, memcpy from data_ptr()) dies of SIGSEGV with a message naming the tensor's device and
// the fix (harness/sim/README.md "Host reads of device memory"). Calls enable().
bool host_reads_guarded();

// A counter of the operator calls the checking fallback has seen: compare two readings (for tests
// that must show the check ran between them).
long long checked_calls();

}  // namespace tp::sim
