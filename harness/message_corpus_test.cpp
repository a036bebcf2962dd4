// Holds the classifier to the committed corpus of messages observed per LibTorch version
// (harness/messages/corpus.json, grown by ci/matrix/corpus.py from version-matrix runs): every
// entry must classify to the class a person expected for it.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>

#include "error_class.h"

namespace tp {
namespace {

nlohmann::json load_corpus() {
  std::ifstream in(TORCHPLACE_MESSAGE_CORPUS);
  if (!in) throw std::runtime_error("cannot open " TORCHPLACE_MESSAGE_CORPUS);
  return nlohmann::json::parse(in);
}

std::set<std::string> class_names() {
  std::set<std::string> names;
  for (int value = 0; value <= static_cast<int>(ErrorClass::kUnclassified); ++value) {
    names.insert(std::string(name_of(static_cast<ErrorClass>(value))));
  }
  return names;
}

TEST(MessageCorpus, EveryEntryClassifiesToItsExpectedClass) {
  const nlohmann::json corpus = load_corpus();
  ASSERT_EQ(corpus.at("schema"), "torchplace.message_corpus/1");
  const auto& entries = corpus.at("entries");
  ASSERT_FALSE(entries.empty()) << TORCHPLACE_MESSAGE_CORPUS << " holds no entries";
  const std::set<std::string> known = class_names();
  for (const auto& entry : entries) {
    const auto expected = entry.at("expected_class").get<std::string>();
    const auto message = entry.at("message").get<std::string>();
    EXPECT_TRUE(known.count(expected)) << "unknown class '" << expected << "' in the corpus";
    EXPECT_EQ(name_of(classify(message)), expected)
        << "LibTorch " << entry.at("version").get<std::string>() << ", "
        << entry.at("source").get<std::string>() << ": " << message;
  }
}

}  // namespace
}  // namespace tp
