// map_tensors(batch, fn): the traversal that the batch mover and the prefetcher share. It rebuilds
// a nested batch (tensors inside vectors, tuples, pairs, string-keyed maps, torch::data::Example)
// with fn applied to every defined tensor; undefined tensors and plain leaves (numbers, strings)
// pass through.
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

// map_tensors(batch, fn): the same nested shape (as the batch mover knows it) with every defined
// tensor t replaced by fn(t), visited in the batch's own order; other leaves are copied.
// Leaves without tensors pass through; any other type is a compile error rather than a batch
// whose tensors silently stay where they were.
template <typename T, typename F>
T map_tensors(const T& leaf, F&&) {
  static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_same_v<T, std::string>,
                "map_tensors: unsupported batch element; add an overload for it");
  return leaf;
}

template <typename F>
torch::Tensor map_tensors(const torch::Tensor& tensor, F&& fn) {
  return tensor.defined() ? fn(tensor) : tensor;
}
template <typename T, typename F>
std::vector<T> map_tensors(const std::vector<T>& items, F&& fn);
template <typename A, typename B, typename F>
std::pair<A, B> map_tensors(const std::pair<A, B>& pair, F&& fn);
template <typename... Ts, typename F>
std::tuple<Ts...> map_tensors(const std::tuple<Ts...>& tuple, F&& fn);
template <typename T, typename F>
std::map<std::string, T> map_tensors(const std::map<std::string, T>& map, F&& fn);
template <typename T, typename F>
std::unordered_map<std::string, T> map_tensors(const std::unordered_map<std::string, T>& map,
                                               F&& fn);
template <typename D, typename L, typename F>
torch::data::Example<D, L> map_tensors(const torch::data::Example<D, L>& example, F&& fn);
template <typename D, typename F>
torch::data::Example<D, torch::data::example::NoTarget> map_tensors(
    const torch::data::Example<D, torch::data::example::NoTarget>& example, F&& fn);

template <typename T, typename F>
std::vector<T> map_tensors(const std::vector<T>& items, F&& fn) {
  std::vector<T> mapped;
  mapped.reserve(items.size());
  for (const T& item : items) mapped.push_back(map_tensors(item, fn));
  return mapped;
}

template <typename A, typename B, typename F>
std::pair<A, B> map_tensors(const std::pair<A, B>& pair, F&& fn) {
  A first = map_tensors(pair.first, fn);  // sequenced: first, then second
  return {std::move(first), map_tensors(pair.second, fn)};
}

template <typename... Ts, typename F>
std::tuple<Ts...> map_tensors(const std::tuple<Ts...>& tuple, F&& fn) {
  // braced initialisation evaluates left to right, so the visiting order is the tuple's
  return std::apply(
      [&](const Ts&... items) { return std::tuple<Ts...>{map_tensors(items, fn)...}; }, tuple);
}

template <typename T, typename F>
std::map<std::string, T> map_tensors(const std::map<std::string, T>& map, F&& fn) {
  std::map<std::string, T> mapped;
  for (const auto& [key, value] : map) mapped.emplace(key, map_tensors(value, fn));
  return mapped;
}

template <typename T, typename F>
std::unordered_map<std::string, T> map_tensors(const std::unordered_map<std::string, T>& map,
                                               F&& fn) {
  std::unordered_map<std::string, T> mapped;
  for (const auto& [key, value] : map) mapped.emplace(key, map_tensors(value, fn));
  return mapped;
}

template <typename D, typename L, typename F>
torch::data::Example<D, L> map_tensors(const torch::data::Example<D, L>& example, F&& fn) {
  D data = map_tensors(example.data, fn);
  return {std::move(data), map_tensors(example.target, fn)};
}

// A TensorDataset's examples carry no target.
template <typename D, typename F>
torch::data::Example<D, torch::data::example::NoTarget> map_tensors(
    const torch::data::Example<D, torch::data::example::NoTarget>& example, F&& fn) {
  return {map_tensors(example.data, fn)};
}

}  // namespace tp::fixes
