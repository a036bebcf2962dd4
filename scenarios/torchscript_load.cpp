// torchscript_load: map_location where most LibTorch programs load their model, a TorchScript
// archive read with torch::jit::load(path, device). The archive is a torch::jit::Module built
// here (parameters, a buffer, a `define`d forward) and saved, no Python. The cpu cell's archive
// is that one re-tagged to cuda:0 (harness/archive_retag.h), as exported from a GPU; a cuda or
// sim cell saves it from its device. Each case is registered once, with its body, its
// expectation and what it needs (the table at the end):
//   default_load_without_cuda  jit::load(path) of the cuda:0 archive, no CUDA: BackendUnavailable
//   map_to_cpu              jit::load(path, kCPU): parameters and buffer bit-identical, forward too
//   map_to_model_device     the fix: the map names the device the inputs are on; the archive
//                           comes from another device (cuda:0 in the cpu cell, the CPU elsewhere)
//   cpu_map_device_input    broken: mapped to the CPU, inputs on the device: DeviceMismatch
//   cpu_map_then_to         mapped to the CPU, then module.to(device): the other fix
//   baked_device            a device written into the code (as tracing records it) is not
//                           mapped: the forward fails after a kCPU map (cpu: BackendUnavailable,
//                           cuda or sim: DeviceMismatch)
//   baked_device_fixed      the fix: the code takes the device from its input (x.device)
//   missing_code, missing_constants, truncated_archive   bad archives: CorruptArchive
//   onto_device_1           loaded onto device 1 while device 0 is current (cuda:K, K > 0: cuda:0)
// Only jit::load, or the forward after it, is the statement under test.
#include <gtest/gtest.h>
#include <torch/script.h>

#include <fstream>
#include <map>
#include <optional>
#include <string>

#include <torchplace/archive_retag.h>
#include <torchplace/numeric.h>
#include <torchplace/scenario.h>
#include <torchplace/sim/sim.h>
#include <torchplace/temp_dir.h>

namespace scenarios::torchscript_load {
namespace {

constexpr int kFeatures = 6;
constexpr int kOutputs = 3;
constexpr int kSamples = 4;

// The forward of every case but the baked ones: a linear layer scaled by a buffer.
constexpr const char* kForward = R"(
def forward(self, x):
    return torch.linear(x, self.weight, self.bias) * self.scale
)";
// The forward times a constant made on `device` (TorchScript): a literal, as tracing records the
// device it ran on, or the fix, the input's device (x.device).
std::string times_ones_on(const std::string& device) {
  return "\ndef forward(self, x):\n    return torch.linear(x, self.weight, self.bias) * "
         "self.scale * torch.ones(" +
         std::to_string(kOutputs) + ", device=" + device + ")\n";
}
std::string literal(const std::string& device) { return "torch.device(\"" + device + "\")"; }

// A module as a user exports it, and the archives the cases load. `cpu_path`: saved on the
// CPU; `tagged_path`: tagged with the cell's device (cuda:0 in the cpu cell, by re-tagging).
struct Archive {
  Archive(const tp::Cell& cell, const std::string& forward) : dir(cell.id()), module("Net") {
    module.register_parameter("weight", torch::randn({kOutputs, kFeatures}), false);
    module.register_parameter("bias", torch::randn({kOutputs}), false);
    module.register_buffer("scale", torch::rand({kOutputs}) + 0.5);
    module.define(forward);
    for (const auto& item : module.named_attributes(false)) {
      if (item.value.isTensor()) saved[item.name] = item.value.toTensor().clone();
    }
    module.save(cpu_path);
    if (cell.device().is_cpu()) {
      tp::archive::retag_devices(cpu_path, dir.file("cuda0.pt"), "cpu", "cuda:0");
      tagged_path = dir.file("cuda0.pt");
    } else {
      module.to(cell.device());
      module.save(tagged_path);
      module.to(torch::kCPU);
    }
  }
  // Where the map must put the archive right: from another device than the cell's.
  const std::string& from_other_device(const tp::Cell& cell) const {
    return cell.device().is_cpu() ? tagged_path : cpu_path;
  }
  const tp::TempDir dir;
  torch::jit::Module module;                   // on the CPU
  std::map<std::string, torch::Tensor> saved;  // its parameters and buffer, on the CPU
  const std::string cpu_path = dir.file("cpu.pt");
  std::string tagged_path = dir.file("tagged.pt");
};

torch::Tensor input_on(torch::Device device) {
  return torch::randn({kSamples, kFeatures}).to(device);
}

// How each tensor of a jit::Module is held: "parameter" or "buffer".
std::map<std::string, std::string> kinds_of(const torch::jit::Module& module) {
  std::map<std::string, std::string> kinds;
  for (const auto& item : module.named_parameters()) kinds[item.name] = "parameter";
  for (const auto& item : module.named_buffers()) kinds[item.name] = "buffer";
  return kinds;
}

// Every parameter and buffer of `loaded` on `device` and bit-identical to the saved ones; the
// parameters still parameters (what an optimizer of the loaded model trains), the buffer a buffer.
void expect_saved_values_on(torch::jit::Module& loaded, const Archive& archive,
                            torch::Device device) {
  const std::map<std::string, std::string> exported{
      {"bias", "parameter"}, {"scale", "buffer"}, {"weight", "parameter"}};
  EXPECT_EQ(kinds_of(loaded), exported);
  for (const auto& [name, value] : archive.saved) {
    const torch::Tensor tensor = loaded.attr(name).toTensor();
    EXPECT_EQ(tensor.device(), device) << name;
    EXPECT_TRUE(torch::equal(tensor.cpu(), value)) << name;
  }
}

// The forward of `loaded` on `input` under test, compared with the saved module's on the CPU
// (the same CPU kernels on cpu and sim; float32 rounding on CUDA).
void expect_forward_matches(tp::Cell& cell, torch::jit::Module& loaded, Archive& archive,
                            const torch::Tensor& input) {
  const torch::Tensor output =
      cell.under_test("forward", [&] { return loaded.forward({input}).toTensor(); });
  EXPECT_EQ(output.device(), input.device());
  const torch::Tensor expected = archive.module.forward({input.cpu()}).toTensor();
  TP_EXPECT_CLOSE(output, expected, tp::Rtol{1e-5}, tp::Atol{1e-6});
}

void default_load(tp::Cell& cell) {
  const Archive archive(cell, kForward);
  cell.under_test("torch::jit::load", [&] { return torch::jit::load(archive.tagged_path); });
}

void map_to_cpu(tp::Cell& cell) {
  Archive archive(cell, kForward);
  torch::jit::Module loaded = cell.under_test(
      "torch::jit::load", [&] { return torch::jit::load(archive.tagged_path, torch::kCPU); });
  expect_saved_values_on(loaded, archive, torch::kCPU);
  expect_forward_matches(cell, loaded, archive, input_on(torch::kCPU));
}

void map_to_model_device(tp::Cell& cell) {
  Archive archive(cell, kForward);
  const std::string& path = archive.from_other_device(cell);
  torch::jit::Module loaded = torch::jit::load(path, cell.device());
  expect_saved_values_on(loaded, archive, cell.device());
  expect_forward_matches(cell, loaded, archive, input_on(cell.device()));
}

void cpu_map_device_input(tp::Cell& cell) {
  Archive archive(cell, kForward);
  torch::jit::Module loaded = torch::jit::load(archive.tagged_path, torch::kCPU);
  expect_forward_matches(cell, loaded, archive, input_on(cell.device()));  // device: raises
}

void cpu_map_then_to(tp::Cell& cell) {
  Archive archive(cell, kForward);
  torch::jit::Module loaded = torch::jit::load(archive.tagged_path, torch::kCPU);
  loaded.to(cell.device());
  expect_saved_values_on(loaded, archive, cell.device());
  expect_forward_matches(cell, loaded, archive, input_on(cell.device()));
}

// The device a model exported from this cell's device was traced on.
std::string traced_on(const tp::CellSpec& cell) {
  return cell.device().is_cpu() ? "cuda:0" : cell.device().str();
}

void baked_device(tp::Cell& cell) {
  Archive archive(cell, times_ones_on(literal(traced_on(cell))));
  torch::jit::Module loaded = torch::jit::load(archive.tagged_path, torch::kCPU);
  const torch::Tensor input = input_on(torch::kCPU);
  cell.under_test("forward", [&] { return loaded.forward({input}); });  // raises
}

void baked_device_fixed(tp::Cell& cell) {
  Archive archive(cell, times_ones_on("x.device"));
  torch::jit::Module loaded = torch::jit::load(archive.tagged_path, torch::kCPU);
  expect_forward_matches(cell, loaded, archive, input_on(torch::kCPU));
}

// jit::load of a damaged copy of the archive, made by `damage` from the archive's path.
void load_damaged(tp::Cell& cell, void (*damage)(const std::string&, const std::string&)) {
  const Archive archive(cell, kForward);
  damage(archive.cpu_path, archive.dir.file("damaged.pt"));
  const std::string path = archive.dir.file("damaged.pt");
  cell.under_test("torch::jit::load", [&] { return torch::jit::load(path, cell.device()); });
}

void missing_code(tp::Cell& cell) {
  load_damaged(cell, [](const std::string& from, const std::string& to) {
    tp::archive::drop_records(from, to,
                              [](const std::string& name) { return name.rfind("code/", 0) == 0; });
  });
}

void missing_constants(tp::Cell& cell) {
  load_damaged(cell, [](const std::string& from, const std::string& to) {
    tp::archive::drop_records(from, to,
                              [](const std::string& name) { return name == "constants.pkl"; });
  });
}

// The first half of the archive's bytes: a download or a copy cut short.
void truncated_archive(tp::Cell& cell) {
  load_damaged(cell, [](const std::string& from, const std::string& to) {
    std::ifstream in(from, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(to, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  });
}

// Onto the other device while the cell's is current (device 1 from device 0; a cuda:K cell, K > 0,
// loads onto cuda:0, so that it expects what its kind's cuda:0 cell does): everything must land on
// that device and stay there.
void onto_device_1(tp::Cell& cell) {
  Archive archive(cell, kForward);
  const torch::Device second(cell.device().type(), cell.device().index() == 0 ? 1 : 0);
  ASSERT_NE(second, cell.device()) << "the case loads onto a device other than the current one";
  const c10::DeviceGuard current(cell.device());
  torch::jit::Module loaded = torch::jit::load(archive.cpu_path, second);
  expect_saved_values_on(loaded, archive, second);
  expect_forward_matches(cell, loaded, archive, input_on(second));
}

using E = tp::ErrorClass;
constexpr const char* kSimSkip =
    "sim:0: this case is about a cuda:0-tagged archive or a damaged file, the same on every "
    "device; the simulated device runs the placement cases";

// An expectation for the cpu and cuda cells; sim:0 skips with kSimSkip.
tp::ExpectFn off_sim(tp::ExpectFn expect) {
  return [expect](const tp::CellSpec& cell) {
    return tp::sim::is_sim(cell.device()) ? tp::Expect::skip(kSimSkip) : expect(cell);
  };
}
tp::Expect succeeds(const tp::CellSpec&) { return tp::Expect::success(); }
tp::Expect corrupt(const tp::CellSpec&) { return tp::Expect::error(E::kCorruptArchive); }
tp::Expect without_cuda(const tp::CellSpec& cell) {
  if (cell.device().is_cpu()) {
    return tp::Expect::error(E::kBackendUnavailable, "a cuda:0-tagged archive, no CUDA here");
  }
  return tp::Expect::skip("runs in the cpu cell: a cuda cell's archive is on its own device");
}
tp::Expect cross_device(const tp::CellSpec& cell) {
  return tp::cross_device_mistake(cell, "the module and the input share the CPU").naming("mat1");
}
tp::Expect cross_device_fixed(const tp::CellSpec& cell) {
  return tp::cross_device_fix(cell, "the module and the input share the CPU");
}
tp::Expect baked(const tp::CellSpec& cell) {
  if (cell.device().is_cpu()) {
    return tp::Expect::error(E::kBackendUnavailable, "a cuda:0 constant, no CUDA here");
  }
  return tp::Expect::error(E::kDeviceMismatch, "a " + traced_on(cell) + " constant, CPU inputs");
}
tp::Expect on_two_devices(const tp::CellSpec& cell) {
  if (cell.device().is_cpu())
    return tp::Expect::skip("needs two devices of one kind: the CPU is one");
  return tp::Expect::success();
}

std::optional<tp::Unmet> needs_no_cuda(const tp::CellSpec& cell) {
  if (!cell.device().is_cpu() || !torch::cuda::is_available()) return std::nullopt;
  return tp::Unmet{tp::SkipCode::kNeedsNoCuda,
                   "needs a LibTorch or host without CUDA: here cuda:0 exists and the load "
                   "(or the constant) would succeed"};
}
// 1.13's unpickler maps only to CPU, CUDA and HPU ("supported devices include CPU, CUDA and HPU,
// however got PRIVATEUSEONE", torch/csrc/jit/serialization/unpickler.cpp); 2.x to any backend.
std::optional<tp::Unmet> needs_map_to_sim(const tp::CellSpec& cell) {
  if (!tp::sim::is_sim(cell.device())) return std::nullopt;
  return tp::needs_libtorch(2, 0,
                            "LibTorch 1.13's torch::jit::load maps only to CPU, CUDA and HPU, "
                            "not to sim:0; cpu_map_then_to is the way there, and the cpu cell "
                            "proves the map");
}
std::optional<tp::Unmet> needs_second_device(const tp::CellSpec& cell) {
  if (cell.device().is_cuda()) {
    if (tp::cuda_device_count() >= 2) return std::nullopt;
    return tp::Unmet{tp::SkipCode::kTooFewGpus, "needs cuda:1 beside cuda:0"};
  }
  if (!tp::sim::is_sim(cell.device())) return std::nullopt;
  if (const auto unmet = needs_map_to_sim(cell)) return unmet;
  if (tp::sim::device_count() >= 2) return std::nullopt;
  return tp::Unmet{tp::SkipCode::kNotOnSim,
                   "needs sim:1 beside sim:0: TORCHPLACE_SIM_DEVICES asks for one device"};
}

}  // namespace

TP_SCENARIO(torchscript_load)
    .cases("case",
           {{"default_load_without_cuda", default_load, off_sim(without_cuda), needs_no_cuda},
            {"map_to_cpu", map_to_cpu, succeeds},
            {"map_to_model_device", map_to_model_device, succeeds, needs_map_to_sim},
            {"cpu_map_device_input", cpu_map_device_input, cross_device},
            {"cpu_map_then_to", cpu_map_then_to, cross_device_fixed},
            {"baked_device", baked_device, baked, needs_no_cuda},
            {"baked_device_fixed", baked_device_fixed, succeeds},
            {"missing_code", missing_code, off_sim(corrupt)},
            {"missing_constants", missing_constants, off_sim(corrupt)},
            {"truncated_archive", truncated_archive, off_sim(corrupt)},
            {"onto_device_1", onto_device_1, on_two_devices, needs_second_device}})
    .on(tp::DeviceAxis::kEach);

}  // namespace scenarios::torchscript_load
