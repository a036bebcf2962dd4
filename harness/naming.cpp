#include "naming.h"

#include <algorithm>

#include "sim/sim.h"

namespace tp::naming {

std::string device(const torch::Device& device, Form form) {
  std::string text = sim::label(device);  // "cuda:0", "sim:0", "cpu"
  if (form == Form::kTestName) text.erase(std::remove(text.begin(), text.end(), ':'), text.end());
  return text;
}

std::string devices(const std::vector<torch::Device>& devices, Form form) {
  std::string text;
  for (const torch::Device& one : devices) text += (text.empty() ? "" : "+") + device(one, form);
  return text;
}

std::string name(const std::string& family, const Axes& axes,
                 const std::vector<torch::Device>& on, Form form) {
  const char* equals = form == Form::kBenchmark ? ":" : "=";
  std::vector<std::string> parts;
  if (form != Form::kTestName) parts.push_back(family);
  for (const auto& [key, value] : axes) parts.push_back(key + equals + value);
  if (!on.empty()) parts.push_back((on.size() > 1 ? "devices" : "device") + std::string(equals) +
                                   devices(on, form));
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : "/") + part;
  return text;
}

}  // namespace tp::naming
