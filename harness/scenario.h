// A scenario: named axes run as a cartesian product over a device axis, an expectation per cell,
// and a body. Registered where it is written:
//
//   TP_SCENARIO(forgotten_labels)
//       .axis("loss", {"cross_entropy", "nll"})
//       .axis("variant", {"broken", "manual_to"})
//       .on(tp::DeviceAxis::kEach)
//       .expect([](const tp::CellSpec& cell) { return tp::Expect::success(); })
//       .run([](tp::Cell& cell) { /* uses cell.axis("loss"), cell.device() */ });
//
// An expected error counts only if it comes from the statement under test, which the body marks:
//
//   const torch::Tensor logits = model(input.to(cell.device()));  // preparing
//   cell.under_test("cross_entropy", [&] { return cross_entropy(logits, target); });
//
// An error raised anywhere else in the body fails the cell as "error while preparing".
//
// The harness turns each cell into one GoogleTest test, named
// "forgotten_labels.loss=nll/variant=manual_to/device=cuda0", and into one record of the results
// JSON. Scenarios hold no timing or reporting code.
#pragma once
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <c10/util/Exception.h>

#include "devices.h"
#include "error_class.h"

namespace tp {

// What a cell must do: raise an error of a class, succeed, or not run here (with the reason).
// A success also says what it proves (see Category): a fix whose mistake cannot show on this
// cell's device proves only that the code runs, and a race control must show its race.
struct Expect {
  enum class Outcome { kSuccess, kError, kSkip };
  enum class Proves {
    kClaim,
    kNothingHere,
    kRace
  };  // success: its claim; only that it runs; a race
  Outcome outcome = Outcome::kSuccess;
  ErrorClass error_class = ErrorClass::kUnclassified;
  std::string note;     // why: the skip reason, why a mistake stays latent or a fix unexercised
  bool latent = false;  // a mistake that cannot show here: it runs and must match the reference
  Proves proves = Proves::kClaim;
  // kError: the argument a device-mismatch message must name where it names one ("target":
  // "but got target is on cpu" from ~2.8, "for argument target" in 1.9-2.7); empty: any.
  std::string argument = {};

  static Expect success(std::string note = {}) { return {Outcome::kSuccess, {}, std::move(note)}; }
  static Expect latent_mistake(std::string why) {
    return {Outcome::kSuccess, {}, std::move(why), true, Proves::kNothingHere};
  }
  // A fix that runs where its mistake cannot show: green here is no evidence that it works.
  static Expect unexercised(std::string why) {
    return {Outcome::kSuccess, {}, std::move(why), false, Proves::kNothingHere};
  }
  // An unsynchronised control: it must show its race (Cell::race_not_shown says when it did not).
  static Expect race_control(std::string note) {
    return {Outcome::kSuccess, {}, std::move(note), false, Proves::kRace};
  }
  static Expect error(ErrorClass error_class, std::string note = {}) {
    return {Outcome::kError, error_class, std::move(note)};
  }
  static Expect skip(std::string reason) { return {Outcome::kSkip, {}, std::move(reason)}; }
  Expect naming(std::string argument_name) const {
    Expect named = *this;
    named.argument = std::move(argument_name);
    return named;
  }
};

// The outcome category of a cell: its machine value in results.json "category" and its label,
// defined once by category_label() in scenario.cpp (torchplace.schema's CATEGORIES must equal it:
// reports/tests/test_package.py). expected_category() is what the expectation promises; the
// record's category adds the status and what the body reported.
const char* expected_category(const Expect& expect);
const char* category_label(const std::string& category);

using AxisValues = std::vector<std::pair<std::string, std::string>>;  // in declaration order

class CellSpec {
 public:
  CellSpec(std::string scenario, AxisValues axes, Placement placement)
      : scenario_(std::move(scenario)), axes_(std::move(axes)), placement_(std::move(placement)) {}

  const std::string& scenario() const { return scenario_; }
  const AxisValues& axes() const { return axes_; }
  const std::string& axis(const std::string& name) const;  // throws std::out_of_range
  const Placement& placement() const { return placement_; }
  torch::Device device() const { return placement_.primary(); }
  std::string id() const;         // "forgotten_labels/loss=nll/device=cuda:0"
  std::string test_name() const;  // "loss=nll/device=cuda0"

 private:
  std::string scenario_;
  AxisValues axes_;
  Placement placement_;
};

// A tensor left on the CPU by mistake: DeviceMismatch on a device cell; on the CPU cell all
// tensors already share one device, so the mistake is latent ("latent on the CPU: <why>").
Expect cross_device_mistake(const CellSpec& cell, const std::string& why_latent_on_cpu);
// The fix of such a mistake: where the mistake is latent it only runs ("ran_unexercised"),
// where the mistake shows it must succeed and proves the fix ("passed").
Expect cross_device_fix(const CellSpec& cell, const std::string& why_latent_on_cpu);

struct CellRecord;

// What a running body sees: its spec, plus a place for figures and notes for the report.
class Cell : public CellSpec {
 public:
  Cell(const CellSpec& spec, CellRecord& record) : CellSpec(spec), record_(record) {}
  void metric(const std::string& name, double value);
  void note(const std::string& text);
  // The race this cell exists to show did not happen (or its copy was never in flight): the
  // cell is reported "race_not_shown", never as passed. Kept as a note too.
  void race_not_shown(const std::string& why);

  // Runs the statement under test, `operation` naming it ("torch::load", "nll_loss"), and
  // returns what it returns. Only a c10::Error thrown in here can be the cell's expected error.
  // TorchScript's two errors that are not c10::Error become one with the same message (and a
  // note saying so): the interpreter's std::runtime_error ("The following operation failed in
  // the TorchScript interpreter. ...") and the compiler's torch::jit::ErrorReport.
  template <typename Statement>
  decltype(auto) under_test(const std::string& operation, Statement&& statement) {
    try {
      return statement();
    } catch (const c10::Error& error) {
      raised_under_test(operation, error);
      throw;
    } catch (const std::exception& error) {
      rethrow_torchscript_error(operation, error);
    }
  }

 private:
  void raised_under_test(const std::string& operation, const c10::Error& error);
  // Throws `error` as a c10::Error when it is TorchScript's; rethrows it as it is otherwise.
  [[noreturn]] void rethrow_torchscript_error(const std::string& operation,
                                              const std::exception& error);
  CellRecord& record_;
};

using ExpectFn = std::function<Expect(const CellSpec&)>;
using BodyFn = std::function<void(Cell&)>;
// Why a cell cannot run on this host or LibTorch (beyond its devices), or nothing when it can:
// a code from the closed set (SkipCode::kNeedsCuda, kNeedsNoCuda) and the reason in words.
// Unlike Expect::skip, it leaves the expectation as it is: the committed expectations stay the
// same on every machine, and only whether the cell runs here changes.
using NeedsFn = std::function<std::optional<Unmet>(const CellSpec&)>;

// One value of a case axis, registered once with its behaviour (Scenario::cases): its body, its
// expectation and, optionally, what it needs beyond its device.
struct Case {
  std::string name;
  BodyFn run;
  ExpectFn expect;
  NeedsFn needs = {};  // empty: runs wherever its device is present
};

class Scenario {
 public:
  explicit Scenario(std::string name) : name_(std::move(name)) {}
  Scenario& axis(std::string name, std::vector<std::string> values);
  Scenario& on(DeviceAxis device_axis);
  Scenario& expect(ExpectFn expect_fn);
  Scenario& needs(NeedsFn needs_fn);
  Scenario& run(BodyFn body_fn);
  // A case axis: its values are the table's names, and each cell runs, expects and needs what
  // its case says, so no name can fall through to another case's behaviour. Takes the place of
  // run/expect/needs (calling those too, before or after, is an error, as is a case twice,
  // without behaviour, an empty table or an axis name already declared):
  //   TP_SCENARIO(loads).cases("case", {{"map_to_cpu", map_to_cpu, succeeds}, ...}).on(...);
  Scenario& cases(std::string axis_name, std::vector<Case> table);

  const std::string& name() const { return name_; }
  std::vector<CellSpec> cells() const;  // the cartesian product, devices last
  Expect expectation(const CellSpec& cell) const { return expect_fn_(cell); }
  std::optional<Unmet> unmet_need(const CellSpec& cell) const { return needs_fn_(cell); }
  const BodyFn& body() const { return body_fn_; }

 private:
  std::string name_;
  std::vector<std::pair<std::string, std::vector<std::string>>> axes_;
  DeviceAxis device_axis_ = DeviceAxis::kEach;
  ExpectFn expect_fn_ = [](const CellSpec&) { return Expect::success(); };
  NeedsFn needs_fn_ = [](const CellSpec&) { return std::optional<Unmet>(); };
  BodyFn body_fn_;
  bool cased_ = false;          // cases() set the behaviour
  bool behaviour_set_ = false;  // run(), expect() or needs() set some of it
};

class Registry {
 public:
  static Scenario& add(std::string name);
  static const std::deque<Scenario>& all();
};

// Registers every cell of every scenario with GoogleTest. Called once, from the test main.
void register_cells();

}  // namespace tp

#define TP_CONCAT_INNER(a, b) a##b
#define TP_CONCAT(a, b) TP_CONCAT_INNER(a, b)
#define TP_SCENARIO(name) \
  [[maybe_unused]] static ::tp::Scenario& TP_CONCAT(tp_scenario_, name) = ::tp::Registry::add(#name)
