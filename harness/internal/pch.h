// Precompiled once for the harness and reused by every suite (see cmake/TorchplaceHelpers.cmake).
#pragma once
#include <torch/torch.h>
// Parsed once here, not in each of the mains, the probe and the tests (~10 s a file).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>
