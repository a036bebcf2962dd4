// torchplace_classify: the suite's one classifier (tp::classify, message_families.cpp) as a
// program, for `torchplace explain` (reports/torchplace/explain) and anyone without a C++
// toolchain. Reads a JSON array of messages on stdin and writes, per message, a JSON object:
// {"class", "family": {"pattern", "versions"} or null, "core": the LibTorch sentence}.
// `--families` writes the family table instead. Exit: 0 written, 3 unreadable input, 64 bad args.
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "error_class.h"

namespace {

nlohmann::json family_json(const tp::MessageFamily& family) {
  return {{"class", std::string(tp::name_of(family.error_class))},
          {"pattern", family.pattern},
          {"versions", family.versions},
          {"from_source", family.from_source}};
}

nlohmann::json classify_all(const nlohmann::json& messages) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& message : messages) {
    const std::string text = message.get<std::string>();
    const tp::MessageFamily* family = tp::match_family(text);
    out.push_back({{"class", std::string(tp::name_of(tp::classify(text)))},
                   {"family", family == nullptr ? nlohmann::json() : family_json(*family)},
                   {"core", tp::core_message(text)}});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (argc > 2 || (argc == 2 && mode != "--families")) {
    std::cerr << "usage: torchplace_classify [--families] < messages.json\n";
    return 64;
  }
  if (mode == "--families") {
    nlohmann::json table = nlohmann::json::array();
    for (const tp::MessageFamily& family : tp::message_families())
      table.push_back(family_json(family));
    std::cout << table.dump(1) << "\n";
    return 0;
  }
  const std::string input((std::istreambuf_iterator<char>(std::cin)),
                          std::istreambuf_iterator<char>());
  nlohmann::json messages = nlohmann::json::parse(input, nullptr, false);
  if (messages.is_discarded() || !messages.is_array()) {
    std::cerr << "torchplace_classify: stdin is not a JSON array of messages\n";
    return 3;
  }
  for (const auto& message : messages) {
    if (!message.is_string()) {
      std::cerr << "torchplace_classify: every message must be a JSON string\n";
      return 3;
    }
  }
  std::cout << classify_all(messages).dump(1, ' ', false, nlohmann::json::error_handler_t::replace)
            << "\n";
  return 0;
}
