// checkpoint_map_location: a checkpoint whose tensors are tagged with a CUDA device. The cpu
// cell makes one itself, by re-tagging a CPU torch::save archive to "cuda:0"
// (harness/archive_retag.h); a cuda or sim cell saves from its device (map_to_model_device and
// cpu_map_gpu_model: see below). Each case is registered once, with its body, its expectation and
// what it needs (the table at the end): the axis takes its values from that table.
//   case=default_load_without_cuda  no device given, on a LibTorch or host without CUDA: the
//                             archive is refused (BackendUnavailable). The cpu cell only.
//   case=default_load_with_cuda     no device given, with CUDA: it lands on the tagged device.
//   case=map_to_cpu           torch::kCPU: values bit-identical to the saved ones, on the CPU.
//   case=cpu_map_gpu_model    broken: loading into a model kept on the GPU with torch::kCPU moves
//                             its parameters to the CPU, and forward raises DeviceMismatch.
//   case=map_to_model_device  the fix: map to the device the model's parameters are on. Its
//                             checkpoint always comes from another device than the model's, so
//                             that only the map can put it right: the cuda:0-tagged archive in
//                             the cpu cell (unmapped: BackendUnavailable without CUDA, or
//                             DeviceMismatch with it), one saved from the CPU in a cuda or sim
//                             cell (unmapped, the parameters land on the CPU: DeviceMismatch).
//                             sim:0 proves the fix on a CPU-only host.
// Only torch::load (or the forward after it) is the statement under test: an error while the
// checkpoint is saved or re-tagged fails the cell.
// Bad input, one cell each, must give a clear class and never crash the process:
// truncated_archive, corrupt_data_pkl, missing_file, other_module_checkpoint.
#include <gtest/gtest.h>

#include <fstream>

#include <torchplace/archive_retag.h>
#include <torchplace/fixes/follow_parameters.h>
#include <torchplace/scenario.h>
#include <torchplace/sim/sim.h>
#include <torchplace/temp_dir.h>

namespace scenarios::checkpoint_map_location {
namespace {

constexpr int kFeatures = 6;
constexpr int kHidden = 5;
constexpr int kOutputs = 2;
constexpr int kSamples = 4;

struct NetImpl : torch::nn::Module {
  NetImpl()
      : encoder(register_module("encoder", torch::nn::Linear(kFeatures, kHidden))),
        head(register_module("head", torch::nn::Linear(kHidden, kOutputs))) {}
  torch::Tensor forward(const torch::Tensor& input) { return head(torch::relu(encoder(input))); }
  torch::nn::Linear encoder;
  torch::nn::Linear head;
};
TORCH_MODULE(Net);

// The same kind of layers under other names: a checkpoint of a different module.
struct OtherNetImpl : torch::nn::Module {
  OtherNetImpl() : backbone(register_module("backbone", torch::nn::Linear(kFeatures, kHidden))) {}
  torch::nn::Linear backbone;
};
TORCH_MODULE(OtherNet);

// A checkpoint of `saved` for the cell, and where it lies. The cpu cell re-tags a CPU archive to
// cuda:0; a cuda or sim cell saves from its device, or, for the cases whose checkpoint must come
// from another device than the model's, from the CPU before `saved` moves there.
struct Checkpoint {
  explicit Checkpoint(const tp::Cell& cell, bool from_cpu_off_cpu) : dir(cell.id()) {
    const bool from_cpu = from_cpu_off_cpu && !cell.device().is_cpu();
    if (from_cpu) torch::save(saved, dir.file("from_cpu.pt"));
    saved->to(cell.device());
    torch::save(saved, dir.file("saved.pt"));
    path = from_cpu ? dir.file("from_cpu.pt") : dir.file("saved.pt");
    if (cell.device().is_cpu()) {
      tp::archive::retag_devices(dir.file("saved.pt"), dir.file("cuda0.pt"), "cpu", "cuda:0");
      path = dir.file("cuda0.pt");
    }
  }
  const tp::TempDir dir;
  Net saved;
  std::string path;  // the checkpoint the case loads
};

void expect_bit_identical(const Net& loaded, const Net& saved) {
  const auto saved_parameters = saved->named_parameters();
  for (const auto& item : loaded->named_parameters()) {
    EXPECT_TRUE(torch::equal(item.value().cpu(), saved_parameters[item.key()].cpu())) << item.key();
  }
}

void load_default(tp::Cell& cell) {
  const Checkpoint checkpoint(cell, false);
  Net loaded;
  cell.under_test("torch::load", [&] { torch::load(loaded, checkpoint.path); });  // no CUDA: raises
  const torch::Device tagged = cell.device().is_cuda() ? cell.device() : torch::Device("cuda:0");
  EXPECT_EQ(tp::fixes::parameter_device(*loaded), tagged);
  expect_bit_identical(loaded, checkpoint.saved);
}

void map_to_cpu(tp::Cell& cell) {
  const Checkpoint checkpoint(cell, false);
  const std::string& path = checkpoint.path;
  Net loaded;
  cell.under_test("torch::load", [&] { torch::load(loaded, path, torch::kCPU); });
  EXPECT_EQ(tp::fixes::parameter_device(*loaded), torch::Device(torch::kCPU));
  expect_bit_identical(loaded, checkpoint.saved);
}

// Off the CPU the case's checkpoint comes from the CPU: loaded without a map it lands there, not
// on the model's device, so only the map can put it right. (The cpu cell's is tagged cuda:0.)
void expect_from_another_device(const tp::Cell& cell, const Checkpoint& checkpoint) {
  if (cell.device().is_cpu()) return;
  Net unmapped;
  torch::load(unmapped, checkpoint.path);
  EXPECT_TRUE(tp::fixes::parameter_device(*unmapped).is_cpu()) << "saved from the model's device";
}

// The model stays on the cell's device while its checkpoint (saved from another device) is
// loaded with the map `map_for` gives; then forward must match the saved model.
void load_into_model_on_device(tp::Cell& cell, torch::Device (*map_for)(const Net&)) {
  Checkpoint checkpoint(cell, true);  // not const: forward on checkpoint.saved
  expect_from_another_device(cell, checkpoint);
  const torch::Tensor input = torch::randn({kSamples, kFeatures}, cell.device());
  Net model;
  model->to(cell.device());
  const torch::Device map_location = map_for(model);
  torch::load(model, checkpoint.path, map_location);
  cell.note("parameters on " + tp::fixes::parameter_device(*model).str() + " after the load");
  // broken on CUDA and sim: raises here
  const torch::Tensor output = cell.under_test("forward", [&] { return model(input); });
  // The same float32 parameters and input on the same device: the same bits.
  EXPECT_TRUE(torch::equal(output.cpu(), checkpoint.saved(input).cpu()));
}

void cpu_map_gpu_model(tp::Cell& cell) {
  load_into_model_on_device(cell, [](const Net&) { return torch::Device(torch::kCPU); });
}

void map_to_model_device(tp::Cell& cell) {  // the fix: the map follows the model's parameters
  load_into_model_on_device(cell,
                            [](const Net& model) { return tp::fixes::parameter_device(*model); });
}

// Loads `bad_path` into a model on the cell's device: the statement under test of bad input.
void load_bad(tp::Cell& cell, const std::string& bad_path) {
  Net model;
  model->to(cell.device());
  cell.under_test("torch::load", [&] { torch::load(model, bad_path, cell.device()); });
}

void missing_file(tp::Cell& cell) {
  const Checkpoint checkpoint(cell, false);
  load_bad(cell, checkpoint.dir.file("absent.pt"));
}

// The first half of the archive's bytes: a download or a write cut short.
void truncated_archive(tp::Cell& cell) {
  const Checkpoint checkpoint(cell, false);
  std::ifstream in(checkpoint.dir.file("saved.pt"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(checkpoint.dir.file("truncated.pt"), std::ios::binary)
      << bytes.substr(0, bytes.size() / 2);
  load_bad(cell, checkpoint.dir.file("truncated.pt"));
}

// A well-formed zip whose data.pkl lacks its last byte (the STOP opcode): the unpickler runs
// out of input at the same place whatever the archive holds.
void corrupt_data_pkl(tp::Cell& cell) {
  const Checkpoint checkpoint(cell, false);
  tp::archive::rewrite_records(checkpoint.dir.file("saved.pt"), checkpoint.dir.file("corrupt.pt"),
                               [](const std::string& name, std::string bytes) {
                                 if (name == "data.pkl") bytes.pop_back();
                                 return bytes;
                               });
  load_bad(cell, checkpoint.dir.file("corrupt.pt"));
}

void other_module_checkpoint(tp::Cell& cell) {
  const tp::TempDir dir(cell.id());
  OtherNet other;
  torch::save(other, dir.file("other.pt"));
  load_bad(cell, dir.file("other.pt"));
}

using E = tp::ErrorClass;
constexpr const char* kSimSkip =
    "sim:0: this case is about CUDA-tagged archives and file errors; the simulated device runs "
    "the cases whose checkpoint comes from another device (cpu_map_gpu_model, "
    "map_to_model_device)";

// An expectation for the cpu and cuda cells; sim:0 skips with kSimSkip.
tp::ExpectFn off_sim(tp::ExpectFn expect) {
  return [expect](const tp::CellSpec& cell) {
    return tp::sim::is_sim(cell.device()) ? tp::Expect::skip(kSimSkip) : expect(cell);
  };
}
tp::ExpectFn error_of(E error_class) {
  return off_sim([error_class](const tp::CellSpec&) { return tp::Expect::error(error_class); });
}

tp::Expect without_cuda(const tp::CellSpec& cell) {
  if (!cell.device().is_cuda()) {
    return tp::Expect::error(E::kBackendUnavailable, "a cuda:0-tagged archive, no CUDA here");
  }
  return tp::Expect::skip(
      "runs in the cpu cell: a cuda cell has CUDA, where "
      "default_load_with_cuda covers the plain load");
}
tp::Expect succeeds(const tp::CellSpec&) { return tp::Expect::success(); }
tp::Expect cross_device(const tp::CellSpec& cell) {
  return tp::cross_device_mistake(cell, "the map and the model share a device").naming("mat1");
}

// Never on a CUDA cell: its expectation (a skip) covers it, and the gate accepts needs_no_cuda
// on no CUDA cell (reports/torchplace/gate/skips.py).
std::optional<tp::Unmet> needs_no_cuda(const tp::CellSpec& cell) {
  if (cell.device().is_cuda() || !torch::cuda::is_available()) return std::nullopt;
  return tp::Unmet{tp::SkipCode::kNeedsNoCuda,
                   "needs a LibTorch or host without CUDA: here a plain torch::load succeeds "
                   "(default_load_with_cuda covers it)"};
}
// 1.13's unpickler maps only to CPU, CUDA and HPU ("supported devices include CPU, CUDA and HPU,
// however got PRIVATEUSEONE"); 2.x maps to any registered backend.
std::optional<tp::Unmet> needs_map_to_sim(const tp::CellSpec& cell) {
  if (!tp::sim::is_sim(cell.device())) return std::nullopt;
  return tp::needs_libtorch(2, 0,
                            "LibTorch 1.13's torch::load maps only to CPU, CUDA and HPU, not to "
                            "sim:0; the cpu cell proves the map with a cuda:0-tagged archive");
}

std::optional<tp::Unmet> needs_cuda(const tp::CellSpec&) {
  if (torch::cuda::is_available()) return std::nullopt;
  return tp::Unmet{tp::SkipCode::kNeedsCuda,
                   "needs CUDA: only then does a plain torch::load put the archive on cuda:0 "
                   "(default_load_without_cuda covers this host)"};
}

}  // namespace

TP_SCENARIO(checkpoint_map_location)
    .cases("case",
           {{"default_load_without_cuda", load_default, off_sim(without_cuda), needs_no_cuda},
            {"default_load_with_cuda", load_default, off_sim(succeeds), needs_cuda},
            {"map_to_cpu", map_to_cpu, off_sim(succeeds)},
            {"cpu_map_gpu_model", cpu_map_gpu_model, cross_device},
            {"map_to_model_device", map_to_model_device, succeeds, needs_map_to_sim},
            {"truncated_archive", truncated_archive, error_of(E::kCorruptArchive)},
            {"corrupt_data_pkl", corrupt_data_pkl, error_of(E::kCorruptArchive)},
            {"missing_file", missing_file, error_of(E::kFileNotFound)},
            {"other_module_checkpoint", other_module_checkpoint, error_of(E::kMissingKey)}})
    .on(tp::DeviceAxis::kEach);

}  // namespace scenarios::checkpoint_map_location
