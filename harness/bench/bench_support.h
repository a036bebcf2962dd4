// Benchmark-side helpers with no scenario knowledge: run-time registration after the flags are
// read, the device axis (CUDA benchmarks listed for every GPU present, and for cuda:0 on a
// CPU-only host so that they show up skipped with the reason), the skip compat across Google
// Benchmark versions, the extra-work knob the gate's calibration uses, and free-device-memory
// checks. How a step is timed is in device_timing.h.
#pragma once
#include <benchmark/benchmark.h>
#include <c10/util/Exception.h>
#include <torch/types.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <torchplace/naming.h>  // benchmark names: naming::name(..., Form::kBenchmark)

namespace tp::bench {

// A bench file's registrar: a function that calls benchmark::RegisterBenchmark. Bench files add
// theirs from a static initialiser; bench_main runs them all once the flags are parsed, so that
// device queries happen in main and not before it.
using Registrar = void (*)();
bool add_registrar(Registrar registrar);  // returns true, for `static const bool x = ...;`
void register_all();
// A finisher frees what a bench file kept across benchmarks (cached host buffers): bench_main
// runs them all once every benchmark ran, before the process (and CUDA) shuts down.
bool add_finisher(Registrar finisher);  // returns true, as add_registrar
void finish_all();

// Devices of the CUDA benchmarks: cuda:0 .. cuda:N-1, and cuda:0 when N == 0.
std::vector<torch::Device> cuda_bench_devices();
// Why `device` cannot run a benchmark here, or nothing when it can.
std::optional<std::string> absent_reason(const torch::Device& device);

// A planned skip: SkipWithMessage on Google Benchmark >= 1.8, else SkipWithError("skip: " + why)
// (the report and the gate read an error_message starting with "skip: " as a planned skip).
void skip(benchmark::State& state, const std::string& reason);

// Counts benchmarks that failed (not planned skips): bench_main exits 1 when any did.
void note_failure();
int failures();

// Runs `body`; a c10::Error or other std::exception (std::bad_alloc, std::system_error) it
// throws fails this benchmark with its message (an error_message without the "skip: " prefix)
// instead of ending the whole run and losing its JSON, and counts as a failure.
template <typename Body>
void fail_on_error(benchmark::State& state, Body&& body) {
  try {
    body();
  } catch (const c10::Error& error) {
    note_failure();
    state.SkipWithError(error.what_without_backtrace());
  } catch (const std::exception& error) {
    note_failure();
    state.SkipWithError(error.what());
  }
}

// --torchplace_extra_work=FRACTION: every benchmark runs FRACTION more of its own steps (0.2 =
// one extra step in every five), so the injected slowdown is FRACTION of the step's time
// whatever the step costs (bytes, tensors or launches); 0 runs nothing extra.
void set_extra_work(double fraction);
double extra_work();
// Parses the flag's value: a finite number >= 0; nothing for anything else.
std::optional<double> parse_extra_work(const std::string& text);
// Runs work(units), then further whole steps work(units) while the extra steps of this thread
// stay at or below FRACTION of its steps (an accumulator: no step of another size is ever made).
void with_extra_work(int64_t units, const std::function<void(int64_t)>& work);
// Sets counter torchplace_extra_ratio = extra steps / steps since the last report (the injected
// share, warm-up steps included) when FRACTION > 0, and starts counting afresh.
void report_extra_work(benchmark::State& state);

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * kKiB;
constexpr int64_t kGiB = 1024 * kMiB;
// from, from*4, ..., up to `to` inclusive (bytes)
std::vector<int64_t> powers_of_4(int64_t from, int64_t to);
// Numbers as an axis's values for naming::product ("4096", ...).
std::vector<std::string> as_values(const std::vector<int64_t>& numbers);

#if TORCHPLACE_WITH_CUDA
// Bytes of free device memory after the caching allocator returned what it keeps.
int64_t free_device_bytes(const torch::Device& device);

// Why `bytes_needed` do not fit on `device` now, or nothing when they do (10 % headroom).
std::optional<std::string> lacks_memory(const torch::Device& device, int64_t bytes_needed);
#endif

}  // namespace tp::bench
