// checkpoint_map_location: a checkpoint whose tensors are tagged with a CUDA device. The cpu
// cell makes one itself, by re-tagging a CPU torch::save archive to "cuda:0"
// (harness/archive_retag.h); a cuda cell saves from its GPU (map_to_model_device: see below).
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
//                             DeviceMismatch with it), one saved from the CPU in a cuda cell
//                             (unmapped, the parameters land on the CPU: DeviceMismatch).
// Only torch::load (or the forward after it) is the statement under test: an error while the
// checkpoint is saved or re-tagged fails the cell.
// Bad input, one cell each, must give a clear class and never crash the process:
// truncated_archive, corrupt_data_pkl, missing_file, other_module_checkpoint.
#include <gtest/gtest.h>

#include <fstream>

#include <torchplace/archive_retag.h>
#include <torchplace/fixes/follow_parameters.h>
#include <torchplace/numeric.h>
#include <torchplace/scenario.h>
#include <torchplace/sim/sim.h>
#include <torchplace/temp_dir.h>

namespace {

constexpr int kFeatures = 6;
constexpr int kHidden = 5;
constexpr int kOutputs = 2;
constexpr int kSamples = 4;
constexpr double kRtol = 1e-6;  // the same float32 parameters on the same device
constexpr double kAtol = 1e-7;

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

// Saves `saved` (already on the cell's device) and returns a CUDA-tagged checkpoint's path:
// re-tagged to cuda:0 in the cpu cell, as saved from the GPU in a cuda cell.
std::string cuda_tagged_checkpoint(const tp::Cell& cell, const tp::TempDir& dir, Net& saved) {
  torch::save(saved, dir.file("saved.pt"));
  if (cell.device().is_cuda()) return dir.file("saved.pt");
  tp::archive::retag_devices(dir.file("saved.pt"), dir.file("cuda0.pt"), "cpu", "cuda:0");
  return dir.file("cuda0.pt");
}

void expect_bit_identical(const Net& loaded, const Net& saved) {
  const auto saved_parameters = saved->named_parameters();
  for (const auto& item : loaded->named_parameters()) {
    EXPECT_TRUE(torch::equal(item.value().cpu(), saved_parameters[item.key()].cpu())) << item.key();
  }
}

void load_default(tp::Cell& cell, const std::string& path, Net& saved) {
  Net loaded;
  cell.under_test("torch::load", [&] { torch::load(loaded, path); });  // raises without CUDA
  const torch::Device tagged = cell.device().is_cuda() ? cell.device() : torch::Device("cuda:0");
  EXPECT_EQ(tp::fixes::parameter_device(*loaded), tagged);
  expect_bit_identical(loaded, saved);
}

void map_to_cpu(tp::Cell& cell, const std::string& path, Net& saved) {
  Net loaded;
  cell.under_test("torch::load", [&] { torch::load(loaded, path, torch::kCPU); });
  EXPECT_EQ(tp::fixes::parameter_device(*loaded), torch::Device(torch::kCPU));
  expect_bit_identical(loaded, saved);
}

// Where the case maps the checkpoint for `model`: the fix follows the model's parameters.
torch::Device map_location_for(const std::string& kind, const Net& model) {
  if (kind == "cpu_map_gpu_model") return torch::kCPU;
  return tp::fixes::parameter_device(*model);  // map_to_model_device
}

// The model stays on the cell's device while its checkpoint is mapped as the case does it.
void load_into_model_on_device(tp::Cell& cell, const std::string& path, Net& saved) {
  const torch::Tensor input = torch::randn({kSamples, kFeatures}, cell.device());
  Net model;
  model->to(cell.device());
  const torch::Device map_location = map_location_for(cell.axis("case"), model);
  torch::load(model, path, map_location);
  cell.note("parameters on " + tp::fixes::parameter_device(*model).str() + " after the load");
  if (map_location == cell.device()) {
    EXPECT_EQ(tp::fixes::parameter_device(*model), cell.device()) << "the map did not hold";
  }
  // broken on CUDA: raises here
  const torch::Tensor output = cell.under_test("forward", [&] { return model(input); });
  TP_EXPECT_CLOSE(output, saved(input), kRtol, kAtol);
}

// Writes the first half of the archive's bytes: a download or a write cut short.
std::string truncated_archive(const tp::TempDir& dir, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(dir.file("truncated.pt"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  return dir.file("truncated.pt");
}

// A well-formed zip whose data.pkl lacks its last byte (the STOP opcode): the unpickler runs
// out of input at the same place whatever the archive holds.
std::string corrupt_data_pkl(const tp::TempDir& dir, const std::string& path) {
  tp::archive::rewrite_records(path, dir.file("corrupt.pt"),
                               [](const std::string& name, std::string bytes) {
                                 if (name == "data.pkl") bytes.pop_back();
                                 return bytes;
                               });
  return dir.file("corrupt.pt");
}

void load_bad_input(tp::Cell& cell, const tp::TempDir& dir, const std::string& path) {
  const std::string& kind = cell.axis("case");
  std::string bad_path = dir.file("absent.pt");  // missing_file
  if (kind == "truncated_archive") bad_path = truncated_archive(dir, path);
  if (kind == "corrupt_data_pkl") bad_path = corrupt_data_pkl(dir, path);
  if (kind == "other_module_checkpoint") {
    OtherNet other;
    torch::save(other, dir.file("other.pt"));
    bad_path = dir.file("other.pt");
  }
  Net model;
  model->to(cell.device());
  cell.under_test("torch::load", [&] { torch::load(model, bad_path, cell.device()); });
}

// map_to_model_device in a cuda cell: the checkpoint is saved from the CPU (see the top).
bool saved_from_cpu(const tp::CellSpec& cell) {
  return cell.axis("case") == "map_to_model_device" && cell.device().is_cuda();
}

void run(tp::Cell& cell) {
  const tp::TempDir dir(cell.id());
  Net saved;
  if (saved_from_cpu(cell)) torch::save(saved, dir.file("from_cpu.pt"));
  saved->to(cell.device());
  const std::string path =
      saved_from_cpu(cell) ? dir.file("from_cpu.pt") : cuda_tagged_checkpoint(cell, dir, saved);
  const std::string& kind = cell.axis("case");
  if (kind.rfind("default_load", 0) == 0) return load_default(cell, path, saved);
  if (kind == "map_to_cpu") return map_to_cpu(cell, path, saved);
  if (kind == "cpu_map_gpu_model" || kind == "map_to_model_device") {
    return load_into_model_on_device(cell, path, saved);
  }
  load_bad_input(cell, dir, dir.file("saved.pt"));
}

tp::Expect expectation(const tp::CellSpec& cell) {
  using E = tp::ErrorClass;
  const std::string& kind = cell.axis("case");
  if (tp::sim::is_sim(cell.device())) {
    return tp::Expect::skip("sim:0: these cases are about CUDA-tagged archives; save and load on "
                            "the simulated device are checked in harness/sim/sim_test.cpp");
  }
  if (kind == "default_load_without_cuda") {
    if (cell.device().is_cuda()) {
      return tp::Expect::skip(
          "runs in the cpu cell: a cuda cell has CUDA, where "
          "default_load_with_cuda covers the plain load");
    }
    return tp::Expect::error(E::kBackendUnavailable, "a cuda:0-tagged archive, no CUDA here");
  }
  if (kind == "cpu_map_gpu_model") {
    return tp::cross_device_mistake(cell, "the map and the model share a device").naming("mat1");
  }
  if (kind == "truncated_archive" || kind == "corrupt_data_pkl") {
    return tp::Expect::error(E::kCorruptArchive);
  }
  if (kind == "missing_file") return tp::Expect::error(E::kFileNotFound);
  if (kind == "other_module_checkpoint") return tp::Expect::error(E::kMissingKey);
  return tp::Expect::success();  // default_load_with_cuda, map_to_cpu, map_to_model_device
}

std::optional<tp::Unmet> needs(const tp::CellSpec& cell) {
  const std::string& kind = cell.axis("case");
  const bool cuda = torch::cuda::is_available();
  if (kind == "default_load_without_cuda" && cuda) {
    return tp::Unmet{tp::SkipCode::kNeedsNoCuda,
                     "needs a LibTorch or host without CUDA: here a plain torch::load succeeds "
                     "(default_load_with_cuda covers it)"};
  }
  if (kind == "default_load_with_cuda" && !cuda) {
    return tp::Unmet{tp::SkipCode::kNeedsCuda,
                     "needs CUDA: only then does a plain torch::load put the archive on cuda:0 "
                     "(default_load_without_cuda covers this host)"};
  }
  return std::nullopt;
}

}  // namespace

TP_SCENARIO(checkpoint_map_location)
    .axis("case", {"default_load_without_cuda", "default_load_with_cuda", "map_to_cpu",
                   "cpu_map_gpu_model", "map_to_model_device", "truncated_archive",
                   "corrupt_data_pkl", "missing_file", "other_module_checkpoint"})
    .on(tp::DeviceAxis::kEach)
    .expect(expectation)
    .needs(needs)
    .run(run);
