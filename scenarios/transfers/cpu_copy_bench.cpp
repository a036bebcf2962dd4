// cpu_copy: a plain memcpy of N bytes (the CPU's ceiling) against LibTorch's tensor copy paths:
// clone(), .to(dtype) and copy_() into an existing tensor. Names:
//   cpu_copy/path:memcpy|alloc_memcpy|clone|to_dtype|copy_/bytes:<N>
// Each path has a memcpy baseline doing the same work: memcpy and copy_ write into a
// destination allocated once; alloc_memcpy, clone and to_dtype allocate theirs each time, as
// they do when used (at 64 MiB that is fresh pages, whose faults dominate on some VMs). to_dtype
// converts float32 to int32: the same bytes in and out, plus the conversion. The report divides
// each path by its like. Wall-clock time (copy_ may use several threads).
#include <cstring>

#include <torchplace/bench/bench_support.h>

namespace {

using tp::bench::kKiB;
using tp::bench::kMiB;

// 4 KiB .. 64 MiB in steps of 16x (64 MiB for the >= 64 MiB target): a short run.
const std::vector<int64_t> kSizes = {4 * kKiB, 64 * kKiB, 1 * kMiB, 16 * kMiB, 64 * kMiB};
const std::vector<std::string> kPaths = {"memcpy", "alloc_memcpy", "clone", "to_dtype", "copy_"};

struct Buffers {
  torch::Tensor source;       // float32, `bytes` long
  torch::Tensor destination;  // float32, written by memcpy and copy_
};

Buffers make_buffers(int64_t bytes) {
  const int64_t elements = bytes / static_cast<int64_t>(sizeof(float));
  Buffers buffers{torch::full({elements}, 1.5f), torch::empty({elements})};
  buffers.destination.zero_();  // touch every page before timing
  return buffers;
}

// One copy of the first `bytes` of the source along `path`.
void copy_prefix(const std::string& path, Buffers& buffers, int64_t bytes) {
  const int64_t elements = bytes / static_cast<int64_t>(sizeof(float));
  const torch::Tensor source = buffers.source.narrow(0, 0, elements);
  if (path == "memcpy") {
    std::memcpy(buffers.destination.data_ptr(), source.data_ptr(), static_cast<size_t>(bytes));
    benchmark::ClobberMemory();
  } else if (path == "alloc_memcpy") {  // clone's work without LibTorch: allocate, then copy
    const torch::Tensor destination = torch::empty({elements});
    std::memcpy(destination.data_ptr(), source.data_ptr(), static_cast<size_t>(bytes));
    benchmark::DoNotOptimize(destination.data_ptr());
    benchmark::ClobberMemory();
  } else if (path == "clone") {
    benchmark::DoNotOptimize(source.clone().data_ptr());
  } else if (path == "to_dtype") {
    benchmark::DoNotOptimize(source.to(torch::kInt32).data_ptr());
  } else {
    benchmark::DoNotOptimize(buffers.destination.narrow(0, 0, elements).copy_(source).data_ptr());
  }
}

void run_cpu_copy(benchmark::State& state, const std::string& path, int64_t bytes) {
  tp::bench::fail_on_error(state, [&] {
    Buffers buffers = make_buffers(bytes);
    copy_prefix(path, buffers, bytes);  // warm-up
    for (auto _ : state) {
      tp::bench::with_extra_work(bytes, [&](int64_t part) { copy_prefix(path, buffers, part); });
    }
    tp::bench::report_extra_work(state);
    state.SetBytesProcessed(state.iterations() * bytes);
  });
}

void register_cpu_copy() {
  for (const tp::naming::Axes& axes :
       tp::naming::product({{"path", kPaths}, {"bytes", tp::bench::as_values(kSizes)}})) {
    const std::string name = tp::naming::name("cpu_copy", axes, {}, tp::naming::Form::kBenchmark);
    benchmark::RegisterBenchmark(name.c_str(), run_cpu_copy, axes[0].second,
                                 std::stoll(axes[1].second))
        ->UseRealTime();
  }
}

const bool registered_cpu_copy = tp::bench::add_registrar(register_cpu_copy);

}  // namespace
