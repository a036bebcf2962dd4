// batch_mover: the cost of moving a nested batch of N tensors with the batch mover
// (tp::fixes::to_device) against a hand-written loop of .to() that builds the same structure.
// Names: batch_mover/impl:mover|loop/tensors:<N>
// Both move to the CPU, where .to() returns its tensor without copying: what is left is the
// mover's own overhead (recursion, building the containers) against the loop's.
#include <torchplace/bench/bench_support.h>
#include <torchplace/fixes/batch_mover.h>

namespace {

using Batch = std::map<std::string, std::vector<torch::Tensor>>;

const std::vector<int64_t> kTensorCounts = {10, 100, 1000};

// `count` small tensors, split between an input and a target list.
Batch make_batch(int64_t count) {
  Batch batch;
  for (int64_t index = 0; index < count; ++index) {
    batch[index % 2 == 0 ? "input" : "target"].push_back(torch::ones({4}));
  }
  return batch;
}

Batch move_with_loop(const Batch& batch, torch::Device device) {
  Batch moved;
  for (const auto& [key, tensors] : batch) {
    std::vector<torch::Tensor>& out = moved[key];
    out.reserve(tensors.size());
    for (const torch::Tensor& tensor : tensors) out.push_back(tensor.to(device));
  }
  return moved;
}

Batch move(const std::string& impl, const Batch& batch) {
  const torch::Device cpu(torch::kCPU);
  return impl == "mover" ? tp::fixes::to_device(batch, cpu) : move_with_loop(batch, cpu);
}

void run_batch_mover(benchmark::State& state, const std::string& impl, int64_t count) {
  const Batch batch = make_batch(count);  // the extra work repeats the same step
  auto move_count = [&](int64_t) { benchmark::DoNotOptimize(move(impl, batch)); };
  move_count(count);  // warm-up
  for (auto _ : state) tp::bench::with_extra_work(count, move_count);
  tp::bench::report_extra_work(state);
  state.SetItemsProcessed(state.iterations() * count);  // tensors
}

void register_batch_mover() {
  for (const tp::naming::Axes& axes : tp::naming::product(
           {{"impl", {"mover", "loop"}}, {"tensors", tp::bench::as_values(kTensorCounts)}})) {
    const std::string name =
        tp::naming::name("batch_mover", axes, {}, tp::naming::Form::kBenchmark);
    benchmark::RegisterBenchmark(name.c_str(), run_batch_mover, axes[0].second,
                                 std::stoll(axes[1].second));
  }
}

const bool registered_batch_mover = tp::bench::add_registrar(register_batch_mover);

}  // namespace
