// The batch mover: moves a nested batch (tensors inside vectors, tuples, pairs, string-keyed maps
// and torch::data::Example) to a device in one call, the C++ counterpart of a device-moving
// data-loader wrapper. Non-tensor leaves (strings, numbers) pass through unchanged.
#pragma once
#include <torch/torch.h>

#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tp::fixes {

struct MoveOptions {
  bool non_blocking = false;  // only asynchronous from pinned host memory
};

template <typename T>
T to_device(const T& leaf, torch::Device, MoveOptions = {}) {
  return leaf;  // a leaf with no device: labels' names, sizes
}

inline torch::Tensor to_device(const torch::Tensor& tensor, torch::Device device,
                               MoveOptions options = {}) {
  return tensor.defined() ? tensor.to(device, options.non_blocking) : tensor;
}

template <typename T>
std::vector<T> to_device(const std::vector<T>& items, torch::Device device, MoveOptions options = {});
template <typename A, typename B>
std::pair<A, B> to_device(const std::pair<A, B>& pair, torch::Device device, MoveOptions options = {});
template <typename... Ts>
std::tuple<Ts...> to_device(const std::tuple<Ts...>& tuple, torch::Device device,
                            MoveOptions options = {});
template <typename T>
std::map<std::string, T> to_device(const std::map<std::string, T>& map, torch::Device device,
                                   MoveOptions options = {});
template <typename T>
std::unordered_map<std::string, T> to_device(const std::unordered_map<std::string, T>& map,
                                             torch::Device device, MoveOptions options = {});
template <typename D, typename L>
torch::data::Example<D, L> to_device(const torch::data::Example<D, L>& example,
                                     torch::Device device, MoveOptions options = {});
template <typename D>
torch::data::Example<D, torch::data::example::NoTarget> to_device(
    const torch::data::Example<D, torch::data::example::NoTarget>& example, torch::Device device,
    MoveOptions options = {});

template <typename T>
std::vector<T> to_device(const std::vector<T>& items, torch::Device device, MoveOptions options) {
  std::vector<T> moved;
  moved.reserve(items.size());
  for (const T& item : items) moved.push_back(to_device(item, device, options));
  return moved;
}

template <typename A, typename B>
std::pair<A, B> to_device(const std::pair<A, B>& pair, torch::Device device, MoveOptions options) {
  return {to_device(pair.first, device, options), to_device(pair.second, device, options)};
}

template <typename... Ts>
std::tuple<Ts...> to_device(const std::tuple<Ts...>& tuple, torch::Device device,
                            MoveOptions options) {
  return std::apply(
      [&](const Ts&... items) { return std::tuple<Ts...>(to_device(items, device, options)...); },
      tuple);
}

template <typename T>
std::map<std::string, T> to_device(const std::map<std::string, T>& map, torch::Device device,
                                   MoveOptions options) {
  std::map<std::string, T> moved;
  for (const auto& [key, value] : map) moved.emplace(key, to_device(value, device, options));
  return moved;
}

template <typename T>
std::unordered_map<std::string, T> to_device(const std::unordered_map<std::string, T>& map,
                                             torch::Device device, MoveOptions options) {
  std::unordered_map<std::string, T> moved;
  for (const auto& [key, value] : map) moved.emplace(key, to_device(value, device, options));
  return moved;
}

template <typename D, typename L>
torch::data::Example<D, L> to_device(const torch::data::Example<D, L>& example,
                                     torch::Device device, MoveOptions options) {
  return {to_device(example.data, device, options), to_device(example.target, device, options)};
}

// A TensorDataset's examples carry no target.
template <typename D>
torch::data::Example<D, torch::data::example::NoTarget> to_device(
    const torch::data::Example<D, torch::data::example::NoTarget>& example, torch::Device device,
    MoveOptions options) {
  return {to_device(example.data, device, options)};
}

}  // namespace tp::fixes
