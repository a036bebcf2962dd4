#include "scenario.h"

#include <stdexcept>

#include "results.h"

namespace tp {

const std::string& CellSpec::axis(const std::string& name) const {
  for (const auto& [axis_name, value] : axes_) {
    if (axis_name == name) return value;
  }
  throw std::out_of_range("scenario " + scenario_ + " has no axis named '" + name + "'");
}

std::string CellSpec::id() const {
  std::string text = scenario_;
  for (const auto& [axis_name, value] : axes_) text += "/" + axis_name + "=" + value;
  return text + (placement_.devices.size() > 1 ? "/devices=" : "/device=") + placement_.label();
}

std::string CellSpec::test_name() const {
  std::string text;
  for (const auto& [axis_name, value] : axes_) text += axis_name + "=" + value + "/";
  return text + placement_.name_part();
}

void Cell::metric(const std::string& name, double value) { record_.metrics[name] = value; }
void Cell::note(const std::string& text) { record_.notes.push_back(text); }

Scenario& Scenario::axis(std::string name, std::vector<std::string> values) {
  axes_.emplace_back(std::move(name), std::move(values));
  return *this;
}

Scenario& Scenario::on(DeviceAxis device_axis) {
  device_axis_ = device_axis;
  return *this;
}

Scenario& Scenario::expect(ExpectFn expect_fn) {
  expect_fn_ = std::move(expect_fn);
  return *this;
}

Scenario& Scenario::run(BodyFn body_fn) {
  body_fn_ = std::move(body_fn);
  return *this;
}

std::vector<CellSpec> Scenario::cells() const {
  std::vector<AxisValues> products{{}};
  for (const auto& [axis_name, values] : axes_) {
    std::vector<AxisValues> next;
    for (const AxisValues& prefix : products) {
      for (const std::string& value : values) {
        next.push_back(prefix);
        next.back().emplace_back(axis_name, value);
      }
    }
    products = std::move(next);
  }
  std::vector<CellSpec> cells;
  for (const AxisValues& axes : products) {
    for (const Placement& placement : expand(device_axis_)) cells.emplace_back(name_, axes, placement);
  }
  return cells;
}

namespace {
std::deque<Scenario>& scenarios() {
  static std::deque<Scenario> registered;  // deque: references stay valid as it grows
  return registered;
}
}  // namespace

Scenario& Registry::add(std::string name) { return scenarios().emplace_back(std::move(name)); }
const std::deque<Scenario>& Registry::all() { return scenarios(); }

}  // namespace tp
