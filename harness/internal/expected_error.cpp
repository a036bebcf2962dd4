#include "expected_error.h"

#include <regex>

namespace tp {

std::optional<std::string> named_argument(std::string_view message) {
  static const std::regex patterns[] = {
      std::regex(R"(but got (\w+) is on )"),  // ~2.8 on
      std::regex(R"(for argument (\w+))"),    // 1.9-2.7
  };
  const std::string text(message);
  std::smatch match;
  for (const std::regex& pattern : patterns) {
    if (std::regex_search(text, match, pattern)) return match[1].str();
  }
  return std::nullopt;
}

namespace {

std::string preparing_error(const CellRecord& record) {
  std::string why =
      "error while preparing: raised outside every cell.under_test(...) region, so not by the "
      "statement under test";
  if (!record.raised_in.empty()) {
    why +=
        " (" + record.raised_in + " had raised another error first: " + record.raised_message + ")";
  }
  return why + "; raw message:\n" + record.message;
}

}  // namespace

std::optional<std::string> unexpected_error(const CellRecord& record) {
  if (record.raised_in.empty() || record.raised_message != record.message) {
    return preparing_error(record);
  }
  const ErrorClass wanted = record.expected.error_class;
  const ErrorClass observed = record.observed_class.value_or(ErrorClass::kUnclassified);
  if (observed != wanted) {
    return record.raised_in + " raised " + std::string(name_of(observed)) + ", expected " +
           std::string(name_of(wanted)) + "; raw message:\n" + record.message;
  }
  const std::string& argument = record.expected.argument;
  const std::optional<std::string> named = named_argument(record.message);
  if (!argument.empty() && named && *named != argument) {
    return record.raised_in + " raised " + std::string(name_of(observed)) + " about argument '" +
           *named + "', expected '" + argument + "'; raw message:\n" + record.message;
  }
  return std::nullopt;
}

}  // namespace tp
