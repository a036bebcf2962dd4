// The families generated from each LibTorch version's source (harness/messages/
// source_strings.py writes messages/source_families.inc; README.md there says how): classify()
// tries them after the hand-written ones, and the most specific that matches wins.
#include <string>
#include <vector>

#include "error_class.h"

namespace tp {

namespace {

struct SourceTemplate {
  ErrorClass error_class;
  const char* versions;  // the versions whose source raises it, e.g. "1.13.1 2.6.0"
  const char* where;     // its first file:line@version
  const char* text;      // the template: {} a placeholder, {{ and }} a literal brace
};

using E = ErrorClass;
// clang-format off
const SourceTemplate kTemplates[] = {
#include "messages/source_families.inc"
};
// clang-format on

}  // namespace

const std::vector<MessageFamily>& source_families() {
  static const std::vector<MessageFamily> families = [] {
    std::vector<MessageFamily> out;
    for (const SourceTemplate& entry : kTemplates) {
      out.push_back({entry.error_class,
                     std::string("source ") + entry.versions + " (" + entry.where + ")", entry.text,
                     true});
    }
    return out;
  }();
  return families;
}

}  // namespace tp
