// Precompiled once for the harness and reused by every suite (see cmake/TorchplaceHelpers.cmake).
#pragma once
#include <torch/torch.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>
