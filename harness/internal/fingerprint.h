// Where a result came from: LibTorch, CUDA, GPUs and driver, compiler, CPU. Goes into every
// results file and into the benchmark JSON's context.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

namespace tp {

nlohmann::ordered_json fingerprint();

// The readers of the host's text files it uses (/proc/cpuinfo, /etc/os-release, the NVIDIA
// driver's version file); "" for a file that cannot be read.
namespace host_files {
// The value of the first "key: value" (or key=value) line of a text file that starts with key:
// the text after the separator, without the blanks and quotes around it.
std::string read_field(const std::string& path, const std::string& key, char separator);
std::string first_line(const std::string& path);
}  // namespace host_files

}  // namespace tp
