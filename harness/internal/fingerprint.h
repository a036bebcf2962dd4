// Where a result came from: LibTorch, CUDA, GPUs and driver, compiler, CPU. Goes into every
// results file and into the benchmark JSON's context.
#pragma once
#include <nlohmann/json.hpp>

namespace tp {

nlohmann::ordered_json fingerprint();

}  // namespace tp
