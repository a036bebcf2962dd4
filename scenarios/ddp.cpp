// ddp: data-parallel training on two ranks. LibTorch's C++ frontend has no DDP module; it ships
// what DDP is built from: each rank holds a replica on its own device and averages its gradients
// with c10d's ProcessGroupGloo::allreduce. The ranks are two threads of the cell's process,
// joined through one c10d::HashStore over loopback only (a Gloo device bound to 127.0.0.1).
// Gloo reduces CPU tensors: a rank on sim or CUDA copies its flattened gradients to the CPU for
// the allreduce and back (average_gradients), explicitly.
// Columns (DeviceAxis::kRankPair): cpu, both ranks on the CPU, where the placement mistakes are
// latent; then a device pair, rank r on devices[r] (sim:0+sim:1 on every host, tp::sim; and
// cuda:0+cuda:1), where they raise.
//   each_rank_on_its_device      the fix: after every step both ranks' parameters are equal and
//                                match a single-process full-batch float64 reference.
//   rank_inputs_left_on_cpu      broken: rank 1 forgets to move its batch: DeviceMismatch on
//                                rank 1; rank 0, left waiting in the allreduce, gives up after
//                                the group's timeout with CollectiveTimeout (checked and noted).
//   every_rank_on_device_0       broken: every replica on devices[0], each batch on its rank's
//                                device: DeviceMismatch on rank 1.
//   checkpoint_without_rank_map  broken: rank 0 saves from devices[0]; rank 1 loads it without a
//                                map, so its parameters land on devices[0]: DeviceMismatch.
//   checkpoint_with_rank_map     the fix: each rank maps the checkpoint to its own device. The
//                                cpu cell's checkpoint is re-tagged to cuda:0 (a GPU run's,
//                                harness/archive_retag.h), so that only the map puts it right.
//   one_rank_missing_checkpoint  rank 1 resumes from a path that does not exist (FileNotFound
//                                before its first allreduce); rank 0 must come back within the
//                                deadline with CollectiveTimeout. On every column, the CPU's too.
// Deadlines: the group's timeout (kGroupTimeout: the rendezvous and every collective) and a
// watchdog on the rank threads (kWatchdog): a rank past it fails the cell, named; never a hang.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <optional>

#include <torchplace/archive_retag.h>
#include <torchplace/compat.h>
#include <torchplace/numeric.h>
#include <torchplace/ranks.h>
#include <torchplace/scenario.h>
#include <torchplace/sim/sim.h>
#include <torchplace/temp_dir.h>

#if TP_HAS_C10D_GLOO
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif

namespace scenarios::ddp {
namespace {

constexpr int kWorld = 2;
constexpr int kSamples = 8;  // 4 a rank
constexpr int kFeatures = 6;
constexpr int kHidden = 5;
constexpr int kOutputs = 2;
constexpr int kSteps = 3;
constexpr double kLearningRate = 0.1;
constexpr tp::Rtol kRtol{1e-5};  // float32 ranks against the float64 reference, 3 steps
constexpr tp::Atol kAtol{1e-6};
constexpr std::chrono::milliseconds kGroupTimeout{2000};
constexpr std::chrono::milliseconds kWatchdog = 3 * kGroupTimeout;  // rendezvous + a collective

struct NetImpl : torch::nn::Module {
  NetImpl()
      : hidden(register_module("hidden", torch::nn::Linear(kFeatures, kHidden))),
        out(register_module("out", torch::nn::Linear(kHidden, kOutputs))) {}
  torch::Tensor forward(const torch::Tensor& input) { return out(torch::tanh(hidden(input))); }
  torch::nn::Linear hidden;
  torch::nn::Linear out;
};
TORCH_MODULE(Net);

Net copy_of(const Net& source, torch::Dtype dtype) {
  Net copy;
  copy->to(dtype);
  torch::NoGradGuard no_grad;
  const auto parameters = copy->parameters();
  for (size_t i = 0; i < parameters.size(); ++i) parameters[i].copy_(source->parameters()[i]);
  return copy;
}

torch::Tensor flat_parameters(const Net& model) {  // float64, on the CPU: a step's snapshot
  std::vector<torch::Tensor> flat;
  for (const auto& parameter : model->parameters()) flat.push_back(parameter.detach().flatten());
  return torch::cat(flat).to(torch::kCPU, torch::kDouble);
}

// What a rank left: its error (c10d's and Gloo's turned into c10::Error), the statement it came
// from when that is the one under test, its snapshots, and how long it ran.
struct RankOutcome {
  std::exception_ptr error;
  std::string raised_in;  // the statement under test that raised, or empty
  std::string message;
  std::vector<torch::Tensor> snapshots;
  double ms = 0;
};

// Everything the rank threads touch: shared with them, so that a rank the watchdog gives up on
// keeps it alive until it returns (never the cell).
struct Run {
  std::string variant;
  std::vector<torch::Device> devices;  // one (cpu) or a pair
  torch::Tensor inputs, targets;       // on the CPU, the full batch
  Net initial;
  std::unique_ptr<tp::TempDir> dir;
  std::array<RankOutcome, kWorld> outcomes;
#if TP_HAS_C10D_GLOO
  c10::intrusive_ptr<c10d::HashStore> store = c10::make_intrusive<c10d::HashStore>();
  std::array<c10::intrusive_ptr<c10d::ProcessGroupGloo>, kWorld> groups;  // outlive the ranks
#endif
  torch::Device device_of(int rank) const { return devices.at(devices.size() > 1 ? rank : 0); }
};

template <typename Statement>
decltype(auto) marked(RankOutcome& outcome, const char* operation, Statement&& statement) {
  try {
    return statement();
  } catch (const c10::Error&) {
    outcome.raised_in = operation;
    throw;
  }
}

#if TP_HAS_C10D_GLOO
void connect(Run& run, int rank) {
  auto options = c10d::ProcessGroupGloo::Options::create(kGroupTimeout);
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  run.groups[rank] = c10::make_intrusive<c10d::ProcessGroupGloo>(run.store, rank, kWorld, options);
}

// Gloo reduces CPU tensors: the gradients, flattened, go to the CPU for the allreduce (a copy on
// sim and CUDA, none on the CPU), are summed over the ranks, averaged, and copied back.
void average_gradients(c10d::ProcessGroupGloo& group, Net& model) {
  std::vector<torch::Tensor> grads;
  for (const auto& parameter : model->parameters()) grads.push_back(parameter.grad().flatten());
  std::vector<torch::Tensor> flat{torch::cat(grads).to(torch::kCPU)};
  group.allreduce(flat)->wait();
  flat[0].div_(kWorld);
  int64_t offset = 0;
  for (auto& parameter : model->parameters()) {
    const int64_t size = parameter.numel();
    parameter.grad().copy_(flat[0].slice(0, offset, offset + size).view_as(parameter));
    offset += size;
  }
}

// Rank 0 saves its replica from its device; after a barrier each rank loads it, mapped to its
// own device (the fix) or without a map (the mistake).
Net load_checkpoint(Run& run, int rank, const Net& replica) {
  const std::string saved = run.dir->file("rank0.pt");
  const torch::Device device = run.device_of(rank);
  const std::string path = device.is_cpu() ? run.dir->file("rank0_cuda0.pt") : saved;
  if (rank == 0) torch::save(replica, saved);
  if (rank == 0 && device.is_cpu()) tp::archive::retag_devices(saved, path, "cpu", "cuda:0");
  run.groups[rank]->barrier()->wait();
  Net model;  // fresh weights: only the load gives it rank 0's (the reference's)
  model->to(device);
  if (run.variant == "checkpoint_without_rank_map") {
    marked(run.outcomes[rank], "torch::load", [&] { torch::load(model, saved); });
  } else {
    marked(run.outcomes[rank], "torch::load", [&] { torch::load(model, path, device); });
  }
  return model;
}

Net replica_for(Run& run, int rank) {
  const std::string& variant = run.variant;
  const torch::Device device =
      variant == "every_rank_on_device_0" ? run.device_of(0) : run.device_of(rank);
  Net replica = copy_of(run.initial, torch::kFloat);
  replica->to(device);
  if (variant.rfind("checkpoint_", 0) == 0) return load_checkpoint(run, rank, replica);
  if (variant == "one_rank_missing_checkpoint" && rank == 1) {  // raises before any collective
    const std::string absent = run.dir->file("absent.pt");
    marked(run.outcomes[rank], "torch::load", [&] { torch::load(replica, absent, device); });
  }
  return replica;
}

void train_rank(Run& run, int rank) {
  RankOutcome& outcome = run.outcomes[rank];
  connect(run, rank);
  Net model = replica_for(run, rank);
  torch::optim::SGD optimizer(model->parameters(), kLearningRate);
  const bool left_on_cpu = run.variant == "rank_inputs_left_on_cpu" && rank == 1;
  const torch::Device batch_device = left_on_cpu ? torch::Device(torch::kCPU) : run.device_of(rank);
  const torch::Tensor inputs = run.inputs.chunk(kWorld).at(rank).to(batch_device);
  const torch::Tensor targets = run.targets.chunk(kWorld).at(rank).to(batch_device);
  for (int step = 0; step < kSteps; ++step) {
    optimizer.zero_grad();
    const torch::Tensor output = marked(outcome, "forward", [&] { return model(inputs); });
    torch::mse_loss(output, targets).backward();
    average_gradients(*run.groups[rank], model);
    optimizer.step();
    outcome.snapshots.push_back(flat_parameters(model));
  }
}
#else
void train_rank(Run&, int) { TORCH_CHECK(false, "no c10d Gloo: the cell skips first"); }
#endif

// Runs a rank and keeps what it raised; an exception from c10d or Gloo (not a c10::Error)
// becomes one with the same message, naming the rank.
void rank_thread(Run& run, int rank) {
  RankOutcome& outcome = run.outcomes[rank];
  const auto start = std::chrono::steady_clock::now();
  try {
    train_rank(run, rank);
  } catch (const c10::Error& error) {
    outcome.message = error.what_without_backtrace();
    outcome.error = std::current_exception();
  } catch (const std::exception& error) {
    outcome.message = error.what() + std::string("\n(rank ") + std::to_string(rank) + ")";
    try {
      TORCH_CHECK(false, outcome.message);
    } catch (const c10::Error&) {
      outcome.error = std::current_exception();
    }
  }
  outcome.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Starts the ranks and joins each by the watchdog's deadline; a rank still running then is left
// to finish on its own (it holds `run`) and fails the cell, named.
void run_ranks(const std::shared_ptr<Run>& run) {
  const std::vector<int> late = tp::late_ranks(
      kWorld, [run](int rank) { rank_thread(*run, rank); }, kWatchdog);
  TORCH_CHECK(late.empty(), "CollectiveTimeout: rank ", late.front(), " of ", kWorld,
              " still running when the watchdog's ", kWatchdog.count(),
              " ms ran out (the group's timeout: ", kGroupTimeout.count(), " ms)");
}

// Each failed rank is noted with its class, and the cause (tp::cause_of) raised. Every other
// failed rank must have timed out waiting for it (within the deadline: the watchdog saw to that)
// or raised the same class itself (tp::explained).
void raise_the_cause(tp::Cell& cell, const Run& run) {
  tp::RankClasses classes(kWorld);
  for (int rank = 0; rank < kWorld; ++rank) {
    const RankOutcome& outcome = run.outcomes[rank];
    if (!outcome.error) continue;
    classes[rank] = tp::classify(outcome.message);
    cell.note("rank " + std::to_string(rank) + ": " +
              std::string(tp::name_of(tp::classify(outcome.message))) + " after " +
              std::to_string(static_cast<int>(outcome.ms)) + " ms");
  }
  const std::optional<int> cause = tp::cause_of(classes);
  if (!cause) return;
  for (const int rank : tp::peers_of(classes, *cause)) {
    EXPECT_TRUE(tp::explained(classes, *cause, rank))
        << "rank " << rank << ", peer of the failed rank " << *cause << ": "
        << run.outcomes[rank].message;
    cell.metric("peer_wait_ms", run.outcomes[rank].ms);
  }
  const RankOutcome& failed = run.outcomes[*cause];
  if (failed.raised_in.empty()) std::rethrow_exception(failed.error);
  cell.under_test("rank " + std::to_string(*cause) + " " + failed.raised_in,
                  [&] { std::rethrow_exception(failed.error); });
}

// The reference: one process, the full batch, float64, the same SGD steps.
std::vector<torch::Tensor> reference_steps(const Run& run) {
  Net model = copy_of(run.initial, torch::kDouble);
  torch::optim::SGD optimizer(model->parameters(), kLearningRate);
  std::vector<torch::Tensor> steps;
  for (int step = 0; step < kSteps; ++step) {
    optimizer.zero_grad();
    torch::mse_loss(model(run.inputs.to(torch::kDouble)), run.targets.to(torch::kDouble))
        .backward();
    optimizer.step();
    steps.push_back(flat_parameters(model));
  }
  return steps;
}

void train(tp::Cell& cell) {
  auto run = std::make_shared<Run>();
  run->variant = cell.axis("variant");
  run->devices = cell.placement().devices;
  run->inputs = torch::randn({kSamples, kFeatures});
  run->targets = torch::randn({kSamples, kOutputs});
  run->dir = std::make_unique<tp::TempDir>(cell.id());
#if TP_HAS_C10D_GLOO
  run->store->setTimeout(kGroupTimeout);  // the rendezvous's wait for the peer
#endif
  run_ranks(run);
  raise_the_cause(cell, *run);
  // every step's parameters, stacked: a rank that trained a step more or less fails on its size
  const torch::Tensor reference = torch::stack(reference_steps(*run));
  const torch::Tensor rank0 = torch::stack(run->outcomes[0].snapshots);
  EXPECT_TRUE(torch::equal(rank0, torch::stack(run->outcomes[1].snapshots))) << "the ranks differ";
  TP_EXPECT_CLOSE(rank0, reference, kRtol, kAtol);
}

tp::Expect expectation(const tp::CellSpec& cell) {
  const std::string& variant = cell.axis("variant");
  const std::string both_on_cpu = "both ranks and their batches on the CPU";
  if (variant == "each_rank_on_its_device") return tp::cross_device_fix(cell, both_on_cpu);
  if (variant == "checkpoint_with_rank_map") return tp::Expect::success();
  if (variant == "one_rank_missing_checkpoint") {
    return tp::Expect::error(tp::ErrorClass::kFileNotFound, "rank 0: CollectiveTimeout");
  }
  return tp::cross_device_mistake(cell, both_on_cpu).naming("mat1");
}

std::optional<tp::Unmet> needs(const tp::CellSpec& cell) {
  if (!TP_HAS_C10D_GLOO) {
    return tp::Unmet{tp::SkipCode::kNoC10dGloo,
                     "this LibTorch has no c10d Gloo backend (USE_C10D_GLOO undefined) or the "
                     "Gloo headers are missing (Debian: libgloo-dev)"};
  }
  const bool loads = cell.axis("variant").rfind("checkpoint_", 0) == 0;
  if (!loads || !tp::sim::is_sim(cell.device())) return std::nullopt;
  return tp::needs_libtorch(2, 0,
                            "LibTorch 1.13's torch::load maps only to CPU, CUDA and HPU, not to "
                            "sim devices; the cuda pair and 2.x's sim pair run it");
}

}  // namespace

TP_SCENARIO(ddp)
    .axis("variant", {"each_rank_on_its_device", "rank_inputs_left_on_cpu",
                      "every_rank_on_device_0", "checkpoint_without_rank_map",
                      "checkpoint_with_rank_map", "one_rank_missing_checkpoint"})
    .on(tp::DeviceAxis::kRankPair)
    .expect(expectation)
    .needs(needs)
    .run(train);

}  // namespace scenarios::ddp
