#include "naming.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

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

std::string name(const std::string& family, const Axes& axes, const std::vector<torch::Device>& on,
                 Form form) {
  const char* equals = form == Form::kBenchmark ? ":" : "=";
  std::vector<std::string> parts;
  if (form != Form::kTestName) parts.push_back(family);
  for (const auto& [key, value] : axes) parts.push_back(key + equals + value);
  if (!on.empty())
    parts.push_back((on.size() > 1 ? "devices" : "device") + std::string(equals) +
                    devices(on, form));
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : "/") + part;
  return text;
}

std::vector<Axes> product(const Domain& domain, const std::string& slowest) {
  for (auto axis = domain.begin(); axis != domain.end(); ++axis) {
    const auto same = [&](const auto& other) { return other.first == axis->first; };
    if (std::any_of(domain.begin(), axis, same))
      throw std::invalid_argument("naming::product: axis '" + axis->first + "' declared twice");
  }
  std::vector<size_t> order(domain.size());  // the order of iteration: `slowest` first
  std::iota(order.begin(), order.end(), 0);
  if (!slowest.empty()) {
    const auto it = std::find_if(order.begin(), order.end(),
                                 [&](size_t index) { return domain[index].first == slowest; });
    if (it == order.end())
      throw std::invalid_argument("naming::product: no axis '" + slowest + "'");
    std::rotate(order.begin(), it, it + 1);
  }
  Axes blank;  // each point is spelled in the domain's order; iteration fills in the values
  for (const auto& entry : domain) blank.emplace_back(entry.first, "");
  std::vector<Axes> products{blank};
  for (const size_t index : order) {
    std::vector<Axes> next;
    for (const Axes& prefix : products) {
      for (const std::string& value : domain[index].second) {
        next.push_back(prefix);
        next.back()[index].second = value;
      }
    }
    products = std::move(next);
  }
  return products;
}

}  // namespace tp::naming
