// torchvision's models as TorchScript on sim:0 in a C++ process: each file that
// reports/torchplace/conformance/torchscript.py saved (random weights, scripted by the Python's
// torch) is loaded with torch::jit::load(path, kCPU), and one training step (forward, loss,
// backward, SGD with momentum or Adam) runs on a copy on the CPU and on a copy moved to sim:0.
// Outputs, loss, gradients, and parameters and buffers after the step must be bit-identical, the
// sim's on sim:0. Usage: torchplace_sim_model_tests MANIFEST [gtest flags]; exit 77 (skip)
// without a manifest. Detection models need torchvision's C++ operators (nms, roi_align): the
// manifest names torchvision's library, which is loaded here with dlopen.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include <torchplace/sim/sim.h>

namespace {

using Named = std::vector<std::pair<std::string, torch::Tensor>>;
using Json = nlohmann::json;
Json manifest;                    // read by main()
std::filesystem::path directory;  // the manifest's
std::string torchvision_missing;  // why torchvision's operators did not load, if they did not

struct Step {
  Named outputs, loss, gradients, parameters, buffers;
  double seconds = 0;
};

// An output's tensors in order (a dict's by key), named by their path in it.
void flatten(const c10::IValue& value, const std::string& name, Named& out) {
  if (value.isTensor()) {
    out.emplace_back(name, value.toTensor());
  } else if (value.isTuple() || value.isList()) {
    const auto items =
        value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
    for (size_t index = 0; index < items.size(); ++index) {
      flatten(items[index], name + "/" + std::to_string(index), out);
    }
  } else if (value.isGenericDict()) {
    std::vector<std::pair<std::string, c10::IValue>> items;
    for (const auto& item : value.toGenericDict()) {
      items.emplace_back(item.key().toStringRef(), item.value());
    }
    std::sort(items.begin(), items.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [key, item] : items) flatten(item, name + "/" + key, out);
  }
}

// The SYNTHETIC targets the manifest gives (torchplace.conformance.models: drawn by hand).
c10::List<c10::Dict<std::string, torch::Tensor>> synthetic_targets(const Json& entry) {
  c10::List<c10::Dict<std::string, torch::Tensor>> targets;
  for (size_t image = 0; image < entry["synthetic_boxes"].size(); ++image) {
    std::vector<torch::Tensor> boxes;
    for (const auto& box : entry["synthetic_boxes"][image]) {
      boxes.push_back(torch::tensor(box.get<std::vector<float>>()));
    }
    c10::Dict<std::string, torch::Tensor> target;
    target.insert("boxes", torch::stack(boxes));
    target.insert("labels",
                  torch::tensor(entry["synthetic_labels"][image].get<std::vector<int64_t>>()));
    targets.push_back(target);
  }
  return targets;
}

// The forward's arguments on the CPU, and the labels (none for detection).
std::pair<std::vector<c10::IValue>, torch::Tensor> batch(const Json& entry) {
  torch::manual_seed(manifest["seed"].get<int64_t>());
  const auto shape = entry["batch"].get<std::vector<int64_t>>();
  const int64_t classes = entry["classes"].get<int64_t>();
  const torch::Tensor images = torch::rand(shape);
  if (entry["kind"] == "classifier") return {{images}, torch::randint(classes, {shape[0]})};
  if (entry["kind"] == "segmentation") {
    return {{images}, torch::randint(classes, {shape[0], shape[2], shape[3]})};
  }
  c10::List<torch::Tensor> list;
  for (int64_t index = 0; index < shape[0]; ++index) list.push_back(images[index]);
  return {{list, synthetic_targets(entry)}, torch::Tensor()};
}

// Every tensor of `value` moved to `device` (tensors, lists of tensors, lists of dicts).
c10::IValue moved(const c10::IValue& value, const torch::Device& device) {
  if (value.isTensor()) return value.toTensor().to(device);
  if (value.isTensorList()) {
    c10::List<torch::Tensor> out;
    for (const torch::Tensor& tensor : value.toTensorList()) out.push_back(tensor.to(device));
    return out;
  }
  c10::List<c10::Dict<std::string, torch::Tensor>> out;  // the detection targets
  for (const c10::IValue& item : value.toListRef()) {
    c10::Dict<std::string, torch::Tensor> target;
    for (const auto& field : item.toGenericDict()) {
      target.insert(field.key().toStringRef(), field.value().toTensor().to(device));
    }
    out.push_back(target);
  }
  return out;
}

torch::Tensor loss_of(const Json& entry, const c10::IValue& output, const torch::Tensor& labels) {
  if (entry["kind"] == "classifier") {
    return torch::nn::functional::cross_entropy(output.toTensor(), labels);
  }
  if (entry["kind"] == "segmentation") {
    return torch::nn::functional::cross_entropy(output.toGenericDict().at("out").toTensor(),
                                                labels);
  }
  torch::Tensor sum;  // the detector's losses, in its order
  for (const auto& loss : output.toTupleRef().elements()[0].toGenericDict()) {
    sum = sum.defined() ? sum + loss.value().toTensor() : loss.value().toTensor();
  }
  return sum;
}

Named named_of(const torch::jit::named_parameter_list& list, bool gradients) {
  Named out;
  for (const auto& item : list) {
    out.emplace_back(item.name, gradients ? item.value.grad() : item.value.detach().clone());
  }
  return out;
}

// One training step of the model loaded from the manifest's file, on `device`.
Step train_step(const Json& entry, const torch::Device& device) {
  torch::jit::Module module =
      torch::jit::load((directory / entry["file"].get<std::string>()).string(), torch::kCPU);
  module.to(device);
  module.train();
  std::vector<torch::Tensor> parameters;
  for (const torch::Tensor& parameter : module.parameters()) parameters.push_back(parameter);
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  if (entry["optimizer"] == "adam") {
    optimizer = std::make_unique<torch::optim::Adam>(parameters, torch::optim::AdamOptions(1e-3));
  } else {
    optimizer = std::make_unique<torch::optim::SGD>(parameters,
                                                    torch::optim::SGDOptions(0.01).momentum(0.9));
  }
  auto [arguments, labels] = batch(entry);
  for (c10::IValue& argument : arguments) argument = moved(argument, device);
  if (labels.defined()) labels = labels.to(device);
  torch::manual_seed(manifest["seed"].get<int64_t>());  // dropout, the detector's sampling
  const auto start = std::chrono::steady_clock::now();
  Step step;
  const c10::IValue output = module.forward(arguments);
  const torch::Tensor loss = loss_of(entry, output, labels);
  loss.backward();
  optimizer->step();
  step.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  flatten(output, "output", step.outputs);
  step.loss = {{"loss", loss.detach()}};
  step.gradients = named_of(module.named_parameters(), true);
  step.parameters = named_of(module.named_parameters(), false);
  for (const auto& buffer : module.named_buffers())
    step.buffers.emplace_back(buffer.name, buffer.value);
  return step;
}

// Each of the sim's tensors is on sim:0 and equal to the CPU's, bit for bit.
void expect_identical(const std::string& what, const Named& cpu, const Named& sim) {
  ASSERT_EQ(cpu.size(), sim.size()) << what;
  int differing = 0;
  for (size_t index = 0; index < cpu.size(); ++index) {
    const auto& [name, expected] = cpu[index];
    const torch::Tensor& got = sim[index].second;
    ASSERT_EQ(expected.defined(), got.defined()) << what << " " << name;
    if (!expected.defined()) continue;
    EXPECT_EQ(got.device(), tp::sim::device()) << what << " " << name;
    if (torch::equal(got.cpu(), expected)) continue;
    if (++differing > 3) continue;  // the first three named
    const double largest =
        (got.cpu().to(torch::kDouble) - expected.to(torch::kDouble)).abs().max().item<double>();
    ADD_FAILURE() << what << " " << name << ": max |sim - cpu| " << largest;
  }
  EXPECT_EQ(differing, 0) << what << ": of " << cpu.size() << " tensors, " << differing
                          << " differ";
}

class SimModels : public testing::TestWithParam<std::string> {};

TEST_P(SimModels, TrainingStepMatchesTheCpuBitForBit) {
  const Json* found = nullptr;
  for (const Json& entry : manifest["models"]) {
    if (entry["name"] == GetParam()) found = &entry;
  }
  ASSERT_NE(found, nullptr);
  if ((*found)["kind"] == "detection" && !torchvision_missing.empty()) {
    GTEST_SKIP() << "needs torchvision's C++ operators (nms, roi_align): " << torchvision_missing;
  }
  const Step cpu = train_step(*found, torch::kCPU), sim = train_step(*found, tp::sim::device());
  std::cout << GetParam() << ": step " << cpu.seconds << " s on the CPU, " << sim.seconds
            << " s on sim:0\n";
  expect_identical("output", cpu.outputs, sim.outputs);
  expect_identical("loss", cpu.loss, sim.loss);
  expect_identical("gradient", cpu.gradients, sim.gradients);
  expect_identical("parameter", cpu.parameters, sim.parameters);
  expect_identical("buffer", cpu.buffers, sim.buffers);
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const Json& entry : manifest["models"]) names.push_back(entry["name"]);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Torchvision, SimModels, testing::ValuesIn(model_names()),
                         [](const auto& info) { return info.param; });

}  // namespace

// The manifest (the first argument), torchvision's operators, then the tests (registered by
// InitGoogleTest, one per model of the manifest); 77 without a manifest.
int main(int argc, char** argv) {
  const std::filesystem::path path = argc > 1 ? argv[1] : "";
  std::ifstream file(path);
  if (!file) {
    std::cout << "SKIP: no manifest at '" << path.string()
              << "': the CTest fixture conformance.models_script writes it "
                 "(torchplace.conformance.torchscript, a Python with torch and torchvision)\n";
    return 77;
  }
  manifest = Json::parse(file);
  directory = path.parent_path();
  const Json& library = manifest["torchvision_library"];
  if (!library.is_string()) {
    torchvision_missing = "the manifest names no torchvision library";
  } else if (dlopen(library.get<std::string>().c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    torchvision_missing = dlerror();
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
