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

namespace {

nlohmann::ordered_json expected_json(const Expect& expect) {
  static const char* const outcomes[] = {"success", "error", "skip"};
  nlohmann::ordered_json out = {{"outcome", outcomes[static_cast<int>(expect.outcome)]}};
  out["error_class"] = expect.outcome == Expect::Outcome::kError
                           ? nlohmann::ordered_json(std::string(name_of(expect.error_class)))
                           : nlohmann::ordered_json(nullptr);
  out["note"] = expect.note;
  out["latent"] = expect.latent;
  out["argument"] = expect.argument;
  return out;
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
          {"reason", record.reason},
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
