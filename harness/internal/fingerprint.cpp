#include "fingerprint.h"

#include <torch/torch.h>
#include <torch/version.h>

#include <torchplace/compat.h>

#include <fstream>
#include <string>
#include <thread>

#if TORCHPLACE_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace tp {
namespace host_files {

std::string read_field(const std::string& path, const std::string& key, char separator) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    const auto at = line.find(separator);
    if (at == std::string::npos) continue;
    std::string value = line.substr(at + 1);
    value.erase(0, value.find_first_not_of(" \t\""));
    while (!value.empty() && (value.back() == '"' || value.back() == ' ')) value.pop_back();
    return value;
  }
  return {};
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace host_files

namespace {

using host_files::first_line;
using host_files::read_field;

nlohmann::ordered_json cuda_fingerprint() {
  nlohmann::ordered_json cuda = {{"built_with_cuda", bool(TORCHPLACE_WITH_CUDA)},
                                 {"available", torch::cuda::is_available()},
                                 {"device_count", static_cast<int>(torch::cuda::device_count())},
                                 {"runtime_version", nullptr},
                                 {"cudnn_version", nullptr},
                                 {"driver", nullptr},
                                 {"gpus", nlohmann::ordered_json::array()}};
  const std::string driver = first_line("/proc/driver/nvidia/version");  // NVRM version line
  if (!driver.empty()) cuda["driver"] = driver;
#if TORCHPLACE_WITH_CUDA
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) cuda["runtime_version"] = runtime;
  if (at::detail::getCUDAHooks().hasCuDNN()) {
    cuda["cudnn_version"] = at::detail::getCUDAHooks().versionCuDNN();
  }
  for (int index = 0; index < cuda["device_count"].get<int>(); ++index) {
    cudaDeviceProp props{};
    if (cudaGetDeviceProperties(&props, index) != cudaSuccess) continue;
    cuda["gpus"].push_back(
        {{"index", index},
         {"name", props.name},
         {"total_memory_bytes", props.totalGlobalMem},
         {"compute_capability", std::to_string(props.major) + "." + std::to_string(props.minor)}});
  }
#endif
  return cuda;
}

}  // namespace

nlohmann::ordered_json fingerprint() {
#if defined(__clang__)
  const std::string compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  const std::string compiler = std::string("gcc ") + __VERSION__;
#else
  const std::string compiler = "unknown";
#endif
  return {{"libtorch_version", TORCH_VERSION},
          {"cuda", cuda_fingerprint()},
          {"c10d_gloo", bool(TP_HAS_C10D_GLOO)},  // the ddp cells run (skip code no_c10d_gloo)
          {"compiler", compiler},
          {"cxx_standard", static_cast<long>(__cplusplus)},
          {"cpu_model", read_field("/proc/cpuinfo", "model name", ':')},
          {"cpu_cores", std::thread::hardware_concurrency()},
          {"torch_threads", at::get_num_threads()},
          {"os", read_field("/etc/os-release", "PRETTY_NAME", '=')}};
}

}  // namespace tp
