// Holds the classifier to two committed corpora:
//  - harness/messages/corpus.json: messages observed per LibTorch version (grown by
//    torchplace.matrix.corpus from version-matrix runs); every entry must classify to its class;
//  - harness/messages/near_misses.json: messages that resemble a family and are not its class
//    (another backend's missing kernel, shape and index errors, a foreign archive); every entry
//    must stay Unclassified.
// And the family table to what was observed: a family labelled "seen <version>..." must match an
// entry of each version it names; a family no entry matches must cite the source that emits it.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>

#include <torchplace/error_class.h>

namespace tp {
namespace {

nlohmann::json load(const char* path, const char* schema) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(std::string("cannot open ") + path);
  nlohmann::json doc = nlohmann::json::parse(in);
  if (doc.at("schema") != schema) throw std::runtime_error(std::string(path) + ": wrong schema");
  if (doc.at("entries").empty()) throw std::runtime_error(std::string(path) + ": no entries");
  return doc;
}

const nlohmann::json& corpus() {
  static const nlohmann::json doc = load(TORCHPLACE_MESSAGE_CORPUS, "torchplace.message_corpus/1");
  return doc.at("entries");
}

std::set<std::string> class_names() {
  std::set<std::string> names;
  for (int value = 0; value <= static_cast<int>(ErrorClass::kUnclassified); ++value) {
    names.insert(std::string(name_of(static_cast<ErrorClass>(value))));
  }
  return names;
}

TEST(MessageCorpus, EveryEntryClassifiesToItsExpectedClass) {
  const std::set<std::string> known = class_names();
  for (const auto& entry : corpus()) {
    const auto expected = entry.at("expected_class").get<std::string>();
    const auto message = entry.at("message").get<std::string>();
    EXPECT_TRUE(known.count(expected)) << "unknown class '" << expected << "' in the corpus";
    EXPECT_EQ(name_of(classify(message)), expected)
        << "LibTorch " << entry.at("version").get<std::string>() << ", "
        << entry.at("source").get<std::string>() << ": " << message;
  }
}

TEST(MessageCorpus, NoNearMissClassifies) {
  const nlohmann::json doc = load(TORCHPLACE_NEAR_MISSES, "torchplace.near_misses/1");
  for (const auto& entry : doc.at("entries")) {
    const auto message = entry.at("message").get<std::string>();
    EXPECT_EQ(name_of(classify(message)), "Unclassified")
        << "a near miss of " << entry.at("resembles").get<std::string>()
        << " classifies: " << message;
  }
}

// The versions a family's label says it was seen in: "seen 1.13.1, 2.6.0" -> {1.13.1, 2.6.0}.
std::set<std::string> seen_versions(const std::string& label) {
  std::set<std::string> versions;
  const auto at = label.find("seen ");
  if (at == std::string::npos) return versions;
  static const std::regex version(R"(\d+\.\d+\.\d+)");
  const std::string rest = label.substr(at);
  for (auto it = std::sregex_iterator(rest.begin(), rest.end(), version);
       it != std::sregex_iterator(); ++it) {
    versions.insert(it->str());
  }
  return versions;
}

TEST(MessageFamilies, LabelsNameTheVersionsThatEmitThem) {
  for (const MessageFamily& family : message_families()) {
    const std::regex pattern(family.pattern, std::regex::ECMAScript);
    std::set<std::string> matched_in;
    for (const auto& entry : corpus()) {
      // As classify() sees it: the known wrappers and the backtrace off (core_message).
      if (std::regex_search(core_message(entry.at("message").get<std::string>()), pattern)) {
        matched_in.insert(entry.at("version").get<std::string>());
      }
    }
    for (const std::string& version : seen_versions(family.versions)) {
      EXPECT_TRUE(matched_in.count(version))
          << family.pattern << " is labelled seen in " << version << ", no entry of it matches";
    }
    static const std::regex source_file(R"(\w\.(cpp|cc|cu|h|mm)\b|C10_CUDA_CHECK|THCudaCheck)");
    const bool cites_source = std::regex_search(family.versions, source_file);
    EXPECT_TRUE(!matched_in.empty() || cites_source)
        << family.pattern << " matches nothing observed and cites no source (" << family.versions
        << "): delete it or name the source that emits it";
  }
}

}  // namespace
}  // namespace tp
