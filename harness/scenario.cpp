#include "scenario.h"

#include <torch/csrc/jit/frontend/error_report.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string_view>

#include "internal/results.h"
#include "naming.h"

namespace tp {

namespace {
// Names and values become test names, ids and CTest label filters: keep them to [a-z0-9_].
void check_token(const std::string& token, const std::string& what) {
  const bool ok = !token.empty() && std::all_of(token.begin(), token.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!ok) throw std::invalid_argument(what + " '" + token + "': use lowercase letters, digits, _");
}
}  // namespace

const std::string& CellSpec::axis(const std::string& name) const {
  for (const auto& [axis_name, value] : axes_) {
    if (axis_name == name) return value;
  }
  throw std::out_of_range("scenario " + scenario_ + " has no axis named '" + name + "'");
}

std::string CellSpec::id() const {
  return naming::name(scenario_, axes_, placement_.devices, naming::Form::kCellId);
}

std::string CellSpec::test_name() const {
  return naming::name(scenario_, axes_, placement_.devices, naming::Form::kTestName);
}

Expect cross_device_mistake(const CellSpec& cell, const std::string& why_latent_on_cpu) {
  if (cell.device().is_cpu())
    return Expect::latent_mistake("latent on the CPU: " + why_latent_on_cpu);
  return Expect::error(ErrorClass::kDeviceMismatch);
}

Expect cross_device_fix(const CellSpec& cell, const std::string& why_latent_on_cpu) {
  if (!cross_device_mistake(cell, why_latent_on_cpu).latent) return Expect::success();
  return Expect::unexercised("placement not exercised on the CPU: " + why_latent_on_cpu);
}

const char* expected_category(const Expect& expect) {
  switch (expect.outcome) {
    case Expect::Outcome::kError:
      return "expected_error";
    case Expect::Outcome::kSkip:
      return "skipped";
    case Expect::Outcome::kSuccess:
      break;
  }
  if (expect.latent) return "latent_unexercised";
  if (expect.proves == Expect::Proves::kNothingHere) return "ran_unexercised";
  if (expect.proves == Expect::Proves::kRace) return "race_shown";
  return "passed";
}

const char* category_label(const std::string& category) {
  static const std::map<std::string, const char*> labels = {
      {"passed", "passed"},
      {"expected_error", "expected error"},
      {"ran_unexercised", "ran (placement not exercised)"},
      {"latent_unexercised", "latent (mistake cannot show here)"},
      {"race_shown", "race shown"},
      {"race_not_shown", "race not shown"},
      {"skipped", "skipped"},
      {"failed", "failed"}};
  const auto found = labels.find(category);
  if (found == labels.end()) throw std::invalid_argument("no outcome category '" + category + "'");
  return found->second;
}

void Cell::race_not_shown(const std::string& why) {
  record_.race_not_shown = true;
  record_.notes.push_back("race not shown: " + why);
}

void Cell::metric(const std::string& name, double value) { record_.metrics[name] = value; }
void Cell::note(const std::string& text) { record_.notes.push_back(text); }

void Cell::raised_under_test(const std::string& operation, const c10::Error& error) {
  if (!record_.raised_in.empty()) return;  // nested regions: the innermost names it
  record_.raised_in = operation;
  record_.raised_message = error.what_without_backtrace();
}

// The TorchScript interpreter rethrows every error but a missing kernel (c10::NotImplementedError)
// as a std::runtime_error that begins with this sentence (torch/csrc/jit/runtime/interpreter.cpp
// handleError, 1.x-2.x).
constexpr std::string_view kInterpreterError =
    "The following operation failed in the TorchScript interpreter.";

void Cell::rethrow_torchscript_error(const std::string& operation, const std::exception& error) {
  const std::string message = error.what();
  const bool interpreter = dynamic_cast<const std::runtime_error*>(&error) != nullptr &&
                           message.rfind(kInterpreterError, 0) == 0;
  const bool compiler = dynamic_cast<const torch::jit::ErrorReport*>(&error) != nullptr;
  if (!interpreter && !compiler) throw;  // the exception being handled, unchanged
  note(operation + " raised " +
       (interpreter ? "the TorchScript interpreter's std::runtime_error"
                    : "TorchScript's compiler error (torch::jit::ErrorReport)") +
       ", judged as a c10::Error with its message");
  const c10::Error as_c10(c10::SourceLocation{__func__, __FILE__, __LINE__}, message);
  raised_under_test(operation, as_c10);
  throw as_c10;
}

namespace {
void refuse_if_cased(bool cased, const std::string& scenario, const std::string& call) {
  if (cased)
    throw std::logic_error(scenario + ": " + call + "() after cases(): the table holds it");
}
}  // namespace

Scenario& Scenario::axis(std::string name, std::vector<std::string> values) {
  check_token(name, name_ + ": axis name");
  if (name == "device" || name == "devices") {
    throw std::invalid_argument(name_ + ": axis name '" + name + "' is the device axis's (on())");
  }
  for (const auto& [known, unused] : axes_) {
    if (known == name) throw std::invalid_argument(name_ + ": axis '" + name + "' declared twice");
  }
  if (values.empty()) throw std::invalid_argument(name_ + ": axis '" + name + "' has no values");
  for (const std::string& value : values) check_token(value, name_ + ": value of axis " + name);
  axes_.emplace_back(std::move(name), std::move(values));
  return *this;
}

Scenario& Scenario::on(DeviceAxis device_axis) {
  device_axis_ = device_axis;
  return *this;
}

Scenario& Scenario::expect(ExpectFn expect_fn) {
  refuse_if_cased(cased_, name_, "expect");
  behaviour_set_ = true;
  expect_fn_ = std::move(expect_fn);
  return *this;
}

Scenario& Scenario::needs(NeedsFn needs_fn) {
  refuse_if_cased(cased_, name_, "needs");
  behaviour_set_ = true;
  needs_fn_ = std::move(needs_fn);
  return *this;
}

Scenario& Scenario::run(BodyFn body_fn) {
  refuse_if_cased(cased_, name_, "run");
  behaviour_set_ = true;
  body_fn_ = std::move(body_fn);
  return *this;
}

Scenario& Scenario::cases(std::string axis_name, std::vector<Case> table) {
  if (cased_ || behaviour_set_) {
    throw std::logic_error(name_ +
                           ": cases() registers the behaviour; it cannot follow run(), "
                           "expect(), needs() or another cases()");
  }
  std::vector<std::string> names;
  for (const Case& entry : table) {
    if (!entry.run || !entry.expect) {
      throw std::invalid_argument(name_ + ": case '" + entry.name +
                                  "' needs a body and an expectation");
    }
    if (std::find(names.begin(), names.end(), entry.name) != names.end()) {
      throw std::invalid_argument(name_ + ": case '" + entry.name + "' registered twice");
    }
    names.push_back(entry.name);
  }
  axis(axis_name, names);
  const auto shared = std::make_shared<const std::vector<Case>>(std::move(table));
  const auto find = [shared, axis_name](const CellSpec& cell) -> const Case& {
    const std::string& value = cell.axis(axis_name);
    for (const Case& entry : *shared) {
      if (entry.name == value) return entry;
    }
    throw std::logic_error("case '" + value + "' is not in the table");  // the axis is the table
  };
  expect_fn_ = [find](const CellSpec& cell) { return find(cell).expect(cell); };
  needs_fn_ = [find](const CellSpec& cell) {
    const Case& entry = find(cell);
    return entry.needs ? entry.needs(cell) : std::optional<Unmet>();
  };
  body_fn_ = [find](Cell& cell) { find(cell).run(cell); };
  cased_ = true;
  return *this;
}

std::vector<CellSpec> Scenario::cells() const {
  std::vector<CellSpec> cells;
  for (const AxisValues& axes : naming::product(axes_)) {
    for (const Placement& placement : expand(device_axis_))
      cells.emplace_back(name_, axes, placement);
  }
  return cells;
}

namespace {
std::deque<Scenario>& scenarios() {
  static std::deque<Scenario> registered;  // deque: references stay valid as it grows
  return registered;
}
}  // namespace

Scenario& Registry::add(std::string name) {
  check_token(name, "scenario name");
  for (const Scenario& scenario : scenarios()) {
    if (scenario.name() == name)
      throw std::invalid_argument("scenario '" + name + "' registered twice");
  }
  return scenarios().emplace_back(std::move(name));
}
const std::deque<Scenario>& Registry::all() { return scenarios(); }

}  // namespace tp
