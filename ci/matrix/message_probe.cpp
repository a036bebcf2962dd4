// torchplace_message_probe OUT.json: makes the mistakes that fail the same way on a CPU-only
// LibTorch of any version, and records each raw c10::Error message with the class a person
// expects for it. The version matrix runs it in every column; torchplace.matrix.corpus turns the
// observations into harness/messages/corpus.json, whose test holds the classifier to them.
// A device mismatch is provoked between the meta device and the CPU, which every build has
// (index_select has no meta kernel in 1.13, and mm on meta+cpu is accepted there: both left out).
#include <torch/script.h>
#include <torch/torch.h>

#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>

#include <torchplace/archive_retag.h>
#include <torchplace/error_class.h>
#include <torchplace/temp_dir.h>

#include "internal/atomic_write.h"  // a repository tool: the harness's own writer

namespace {

struct Probe {
  const char* name;
  tp::ErrorClass expected;
  std::function<void(const tp::TempDir&)> mistake;
};

std::string saved_linear(const tp::TempDir& dir, int in, int out, bool bias) {
  const std::string path = dir.file("linear.pt");
  torch::save(torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias)), path);
  return path;
}

const std::vector<Probe>& probes() {
  using E = tp::ErrorClass;
  static const std::vector<Probe> all = {
      {"to_cuda", E::kBackendUnavailable, [](auto&) { torch::ones({2}).to(torch::kCUDA); }},
      {"pin_memory", E::kBackendUnavailable, [](auto&) { torch::ones({2}).pin_memory(); }},
      {"load_cuda_tagged_archive", E::kBackendUnavailable,
       [](const tp::TempDir& dir) {
         const std::string cuda = dir.file("cuda.pt");
         tp::archive::retag_devices(saved_linear(dir, 2, 2, true), cuda, "cpu", "cuda:0");
         torch::nn::Linear linear(2, 2);
         torch::load(linear, cuda);
       }},
      {"add_meta_cpu", E::kDeviceMismatch,
       [](auto&) { torch::ones({2}, torch::kMeta) + torch::ones({2}); }},
      {"linear_float64_weight", E::kDtypeMismatch,
       [](auto&) {
         torch::nn::Linear linear(2, 2);
         linear->to(torch::kFloat64);
         linear(torch::ones({1, 2}));
       }},
      {"cross_entropy_int_targets", E::kDtypeMismatch,
       [](auto&) {
         torch::nn::functional::cross_entropy(torch::randn({3, 4}), torch::zeros({3}, torch::kInt));
       }},
      {"load_missing_key", E::kMissingKey,
       [](const tp::TempDir& dir) {
         torch::nn::Linear with_bias(2, 2);
         torch::load(with_bias, saved_linear(dir, 2, 2, false));
       }},
      {"load_missing_file", E::kFileNotFound,
       [](const tp::TempDir& dir) {
         torch::nn::Linear linear(2, 2);
         torch::load(linear, dir.file("absent.pt"));
       }},
      // A scripted method with cuda:0 baked in, run on a CPU-only host: the error comes wrapped
      // by the TorchScript interpreter (its sentence, the code traceback, then the message).
      {"torchscript_cuda_constant", E::kBackendUnavailable,
       [](auto&) {
         torch::jit::Module module("m");
         module.define(
             "def forward(self):\n  return torch.ones(2, device=torch.device(\"cuda:0\"))\n");
         module.forward({});
       }},
      {"load_truncated_archive", E::kCorruptArchive,
       [](const tp::TempDir& dir) {
         const std::string path = saved_linear(dir, 2, 2, true);
         std::ifstream in(path, std::ios::binary);
         const std::string bytes((std::istreambuf_iterator<char>(in)), {});
         std::ofstream(dir.file("short.pt"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
         torch::nn::Linear linear(2, 2);
         torch::load(linear, dir.file("short.pt"));
       }},
  };
  return all;
}

nlohmann::ordered_json observe(const Probe& probe) {
  nlohmann::ordered_json entry = {{"probe", probe.name},
                                  {"expected_class", std::string(tp::name_of(probe.expected))}};
  tp::TempDir dir(std::string("probe-") + probe.name);
  try {
    probe.mistake(dir);
    entry["outcome"] = "success";  // this version accepts the mistake: a behaviour change
  } catch (const c10::Error& error) {
    entry["outcome"] = "error";
    entry["message"] = error.what_without_backtrace();
    entry["classified_as"] = std::string(tp::name_of(tp::classify(error.what_without_backtrace())));
  }
  return entry;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: torchplace_message_probe OUT.json\n";
    return 2;
  }
  nlohmann::ordered_json observations = nlohmann::ordered_json::array();
  for (const Probe& probe : probes()) observations.push_back(observe(probe));
  const nlohmann::ordered_json out = {{"schema", "torchplace.messages/1"},
                                      {"libtorch_version", TORCH_VERSION},
                                      {"observations", observations}};
  try {
    tp::write_atomically(argv[1], out.dump(1) + "\n");
  } catch (const std::exception& error) {
    std::cerr << "torchplace_message_probe: " << error.what() << "\n";
    return 3;
  }
  return 0;
}
