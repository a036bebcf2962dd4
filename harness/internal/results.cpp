#include "results.h"

#include "fingerprint.h"

namespace tp {

ResultLog& ResultLog::instance() {
  static ResultLog log;
  return log;
}

CellRecord& ResultLog::begin(const CellSpec& spec, const Expect& expected) {
  records_.push_back(std::make_unique<CellRecord>(spec, expected));
  current_ = records_.back().get();
  return *current_;
}

std::string CellRecord::category() const {
  if (status == "skip") return "skipped";
  if (status != "pass") return "failed";  // "fail", or a cell that never finished
  if (observed_outcome == "error") return "expected_error";
  if (race_not_shown) return "race_not_shown";
  return expected_category(expected);
}

namespace {

nlohmann::ordered_json expected_json(const Expect& expect) {
  static const char* const outcomes[] = {"success", "error", "skip"};
  nlohmann::ordered_json out = {{"outcome", outcomes[static_cast<int>(expect.outcome)]}};
  out["error_class"] = expect.outcome == Expect::Outcome::kError
                           ? nlohmann::ordered_json(std::string(name_of(expect.error_class)))
                           : nlohmann::ordered_json(nullptr);
  out["note"] = expect.note;
  out["latent"] = expect.latent;
  out["category"] = expected_category(expect);
  out["argument"] = expect.argument;
  return out;
}

// null unless skipped; "unlisted" for a skip the harness did not code (a GTEST_SKIP in a body).
nlohmann::ordered_json skip_code_json(const CellRecord& record) {
  if (record.status != "skip") return nullptr;
  return std::string(record.skip_code ? name_of(*record.skip_code) : "unlisted");
}

}  // namespace

nlohmann::ordered_json to_json(const CellRecord& record) {
  nlohmann::ordered_json axes = nlohmann::ordered_json::object();
  for (const auto& [name, value] : record.spec.axes()) axes[name] = value;
  nlohmann::ordered_json observed = {{"outcome", record.observed_outcome},
                                     {"message", record.message},
                                     {"raised_in", record.raised_in}};
  observed["error_class"] =
      record.observed_class ? nlohmann::ordered_json(std::string(name_of(*record.observed_class)))
                            : nlohmann::ordered_json(nullptr);
  return {{"id", record.spec.id()},
          {"scenario", record.spec.scenario()},
          {"axes", axes},
          {"device", record.spec.placement().label()},
          {"expected", expected_json(record.expected)},
          {"observed", observed},
          {"status", record.status},
          {"category", record.category()},
          {"category_label", category_label(record.category())},
          {"reason", record.reason},
          {"skip_code", skip_code_json(record)},
          {"needs_libtorch", record.needs_libtorch.empty()
                                 ? nlohmann::ordered_json(nullptr)
                                 : nlohmann::ordered_json(record.needs_libtorch)},
          {"duration_ms", record.duration_ms},
          {"metrics", record.metrics},
          {"notes", record.notes}};
}

nlohmann::ordered_json ResultLog::to_json() const {
  nlohmann::ordered_json cells = nlohmann::ordered_json::array();
  for (const auto& record : records_) cells.push_back(tp::to_json(*record));
  return {{"schema", "torchplace.results/1"}, {"fingerprint", fingerprint()}, {"cells", cells}};
}

}  // namespace tp
