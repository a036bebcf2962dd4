// The one function that names things from their axes: cell ids, GoogleTest names and benchmark
// names. Each form spells the same axes and devices; only the separators differ, where a tool
// needs them to:
//   kCellId     amp/variant=broken/device=cuda:0              results.json, expectations, reports
//   kTestName   variant=broken/device=cuda0                   a scenario's gtest name: its suite
//                                                             is the family, and ':' separates
//                                                             gtest filters, so devices drop it
//   kBenchmark  transfer/direction:h2d/bytes:4096/device:cuda:0   Google Benchmark's arg:value
// Devices: "cpu", "sim:0" (tp::sim), "cuda:0"; several join with '+' under the key "devices";
// no devices, no device part. The cells and benchmarks of a family are the product of its
// axes' values (`product`); scenarios add their devices last, benchmarks first.
#pragma once
#include <torch/types.h>

#include <string>
#include <utility>
#include <vector>

namespace tp::naming {

enum class Form { kCellId, kTestName, kBenchmark };
using Axes = std::vector<std::pair<std::string, std::string>>;  // in the order declared
using Domain = std::vector<std::pair<std::string, std::vector<std::string>>>;  // axis -> values

// Every combination of the domain's values, each spelled in the domain's axis order. The first
// axis varies slowest, or the axis named `slowest` (the transfer benchmarks: one size at a time,
// so that the host cache makes each size once). Throws std::invalid_argument for an unknown
// `slowest` or an axis declared twice.
std::vector<Axes> product(const Domain& domain, const std::string& slowest = "");

// One device in `form`: "cuda:0" ("cuda0" in kTestName).
std::string device(const torch::Device& device, Form form);
// The devices joined with '+': "cuda:0+cuda:1".
std::string devices(const std::vector<torch::Device>& devices, Form form);
// family + axes + devices in `form` (kTestName leaves the family out: it is the gtest suite).
std::string name(const std::string& family, const Axes& axes,
                 const std::vector<torch::Device>& devices, Form form);

}  // namespace tp::naming
