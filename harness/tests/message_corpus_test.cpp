// Holds the classifier to two committed corpora:
//  - harness/messages/corpus.json: messages observed per LibTorch version (grown by
//    torchplace.matrix.corpus from version-matrix runs); every entry must classify to its class;
//  - harness/messages/near_misses.json: messages that resemble a family and are not its class
//    (another backend's missing kernel, shape and index errors, a foreign archive); every entry
//    must stay Unclassified;
//  - harness/messages/real_messages.json, the held-out-style measure: its figures per split as
//    recorded (real_messages.py checks them too; here the mutation engine's kill set sees them).
// And the family table to what was observed: a family labelled "seen <version>..." must match an
// entry of each version it names; a family no entry matches must cite the source that emits it.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

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

// Per split, how many entries classify to their expected class and how many to another class,
// as real_messages.py --record wrote them; the entries not right are listed when they differ.
TEST(MessageCorpus, RealMessagesKeepTheirRecordedFigures) {
  const nlohmann::json doc = load(TORCHPLACE_REAL_MESSAGES, "torchplace.real_messages/1");
  std::map<std::string, std::map<std::string, int>> figures;
  std::string not_right;
  for (const auto& entry : doc.at("entries")) {
    const auto split = entry.at("split").get<std::string>();
    const auto expected = entry.at("expected_class").get<std::string>();
    const auto message = entry.at("message").get<std::string>();
    const std::string got(name_of(classify(message)));
    auto& counts = figures[split];
    ++counts["messages"];
    counts["right"] += got == expected ? 1 : 0;
    counts["wrong"] += got != expected && got != "Unclassified" ? 1 : 0;
    if (got != expected)
      not_right += "\n  " + split + ": " + got + ", not " + expected + ": " + message;
  }
  const nlohmann::json& recorded = doc.at("measured").at("after");
  EXPECT_EQ(figures.size(), recorded.size()) << "splits";
  for (const auto& [split, counts] : figures) {
    for (const auto& [figure, value] : counts) {
      EXPECT_EQ(value, recorded.at(split).at(figure).get<int>())
          << split << ", " << figure << "; not right:" << not_right;
    }
  }
}

// A hand-written family of class Unclassified stops a near miss that a source template would
// classify: each must stop one of near_misses.json, or it has no reason to be.
TEST(MessageFamilies, EachStopperStopsANearMiss) {
  const nlohmann::json doc = load(TORCHPLACE_NEAR_MISSES, "torchplace.near_misses/1");
  for (const MessageFamily& family : message_families()) {
    if (family.error_class != ErrorClass::kUnclassified) continue;
    const std::regex pattern(family.pattern, std::regex::ECMAScript);
    bool stops = false;
    for (const auto& entry : doc.at("entries")) {
      stops =
          stops || std::regex_search(core_message(entry.at("message").get<std::string>()), pattern);
    }
    EXPECT_TRUE(stops) << family.pattern << " stops no entry of near_misses.json";
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
    // A source file of LibTorch or another library, or the public issue that shows the text.
    static const std::regex source_file(
        R"(\w\.(cpp|cc|c|cu|h|hpp|mm|py)\b|C10_CUDA_CHECK|THCudaCheck|issue \d+)");
    const bool cites_source = std::regex_search(family.versions, source_file);
    EXPECT_TRUE(!matched_in.empty() || cites_source)
        << family.pattern << " matches nothing observed and cites no source (" << family.versions
        << "): delete it or name the source that emits it";
  }
}

// The template with each placeholder filled by `fill` ({{ and }} stay literal braces).
std::string filled(const std::string& templ, const std::string& fill = "X") {
  std::string out;
  for (std::size_t i = 0; i < templ.size(); ++i) {
    const std::string two = templ.substr(i, 2);
    out += two == "{}" ? fill : std::string(1, templ[i]);
    if (two == "{}" || two == "{{" || two == "}}") ++i;
  }
  return out;
}

TEST(SourceFamilies, EachTemplateMatchesItsOwnMessageAndNamesItsSource) {
  ASSERT_GT(source_families().size(), 1000u) << "messages/source_families.inc is nearly empty";
  static const std::regex label(R"(^source (\d+\.\d+\.\d+ ?)+ \([\w/.+-]+:\d+@\d+\.\d+\.\d+\)$)");
  for (const MessageFamily& family : source_families()) {
    EXPECT_TRUE(family.from_source);
    EXPECT_NE(family.error_class, ErrorClass::kUnclassified) << family.pattern;
    EXPECT_TRUE(std::regex_match(family.versions, label)) << family.versions;
    EXPECT_TRUE(template_matches(family.pattern, filled(family.pattern))) << family.pattern;
  }
}

// Synthetic templates and messages: the matching rule itself.
TEST(SourceFamilies, LiteralPartsInOrderFromTheStart) {
  EXPECT_TRUE(template_matches("Expected {} on {}", "Expected weight on cuda:0"));
  EXPECT_FALSE(template_matches("Expected {} on {}", "I Expected weight on cuda:0"));
  EXPECT_TRUE(template_matches("{} must be a CUDA tensor", "weight must be a CUDA tensor"));
  EXPECT_FALSE(template_matches("a{}b{}c", "acb"));
  EXPECT_TRUE(template_matches("size {{{}}}", "size {3}"));
}

// The most specific source template takes a message: for each template's own message, the one
// taken has at least as much literal text, and of equals it is the first (a hand-written
// family, tried first, may take the message instead).
TEST(SourceFamilies, TheMostLiteralTextWinsAndTheFirstOfEquals) {
  const std::vector<MessageFamily>& table = source_families();
  std::size_t checked = 0;
  for (std::size_t index = 0; index < table.size(); ++index) {
    const MessageFamily& own = table[index];
    const std::string text = filled(own.pattern);
    if (core_message(text) != text) continue;  // a leading space or tag: not its own core
    ++checked;
    const MessageFamily* taken = match_family(text);
    ASSERT_NE(taken, nullptr) << own.pattern;
    if (!taken->from_source) continue;
    const std::size_t length = filled(taken->pattern, "").size();
    const std::size_t own_length = filled(own.pattern, "").size();
    EXPECT_GE(length, own_length) << own.pattern << " taken by " << taken->pattern;
    if (length == own_length)
      EXPECT_LE(static_cast<std::size_t>(taken - table.data()), index)
          << own.pattern << " taken by a later equal " << taken->pattern;
  }
  EXPECT_GT(checked, table.size() * 9 / 10) << "templates checked";
}

TEST(SourceFamilies, ASourceTemplateClassifiesWhatNoHandFamilyKnows) {
  // c10/cuda/CUDAFunctions.cpp warn_or_error_on_sync (1.13.1, 2.6.0): only in the source table.
  const std::string sync = "called a synchronizing CUDA operation";
  ASSERT_NE(match_family(sync), nullptr);
  EXPECT_TRUE(match_family(sync)->from_source);
  EXPECT_EQ(classify(sync), ErrorClass::kHostSync);
}

}  // namespace
}  // namespace tp
