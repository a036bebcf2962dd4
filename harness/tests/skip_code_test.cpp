// A skip code's name is what results.json writes and what the behaviour gate reads: the names of
// harness/skip_code.h are the codes reports/torchplace/gate/skips.py lists (SKIP_CODES, accepted,
// and NOT_ACCEPTED, less "unlisted", which the runner writes for a skip it did not code).
#include <torchplace/skip_code.h>

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace skip_code_test {
namespace {

// The quoted keys of the gate's two tables: `    "name": "what it means",` lines.
std::set<std::string> gate_codes() {
  std::ifstream in(TORCHPLACE_GATE_SKIPS);
  std::stringstream text;
  text << in.rdbuf();
  const std::string source = text.str();
  const std::regex table(R"re((SKIP_CODES|NOT_ACCEPTED) = \{([^}]*)\})re");
  const std::regex key(R"re(\n\s*"([a-z0-9_]+)":)re");
  std::set<std::string> codes;
  for (std::sregex_iterator it(source.begin(), source.end(), table), end; it != end; ++it) {
    const std::string body = (*it)[2];
    for (std::sregex_iterator at(body.begin(), body.end(), key); at != end; ++at)
      codes.insert((*at)[1]);
  }
  return codes;
}

TEST(SkipCodes, EachNameIsACodeTheGateKnows) {
  std::set<std::string> named;
  for (int code = 0; code <= static_cast<int>(tp::SkipCode::kNeedsNewerLibTorch); ++code)
    named.insert(std::string(tp::name_of(static_cast<tp::SkipCode>(code))));
  std::set<std::string> known = gate_codes();
  ASSERT_EQ(known.erase("unlisted"), 1u) << TORCHPLACE_GATE_SKIPS << ": no 'unlisted' code";
  EXPECT_EQ(named, known);
  EXPECT_EQ(named.size(), static_cast<size_t>(tp::SkipCode::kNeedsNewerLibTorch) + 1)
      << "a name twice";
}

}  // namespace
}  // namespace skip_code_test
