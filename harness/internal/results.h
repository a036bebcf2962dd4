// One record per cell, collected while the tests run, and the results JSON they are written to.
// Schema "torchplace.results/1" (see README): {"schema", "fingerprint", "cells": [...]}.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <torchplace/scenario.h>
#include "atomic_write.h"

namespace tp {

struct CellRecord {
  CellRecord(CellSpec cell_spec, Expect expectation)
      : spec(std::move(cell_spec)), expected(std::move(expectation)) {}

  CellSpec spec;
  Expect expected;
  std::string observed_outcome = "not_run";  // "success", "error", "exception", "not_run"
  std::optional<ErrorClass> observed_class;
  std::string message;  // the raw message LibTorch gave, without backtrace
  // The operation whose cell.under_test(...) region raised (innermost), and what it raised;
  // empty when no region raised.
  std::string raised_in;
  std::string raised_message;
  std::string status;                 // "pass", "fail", "skip"
  std::string reason;                 // skip reason, or the failures gtest reported
  std::optional<SkipCode> skip_code;  // set by the harness when it skips the cell
  std::string needs_libtorch;         // the version a needs_newer_libtorch skip waits for
  double duration_ms = 0;
  std::map<std::string, double> metrics;
  std::vector<std::string> notes;
  bool race_not_shown = false;  // set by Cell::race_not_shown

  // The outcome category (scenario.h): the status first, then the expectation and the body.
  std::string category() const;
};

class ResultLog {
 public:
  static ResultLog& instance();
  CellRecord& begin(const CellSpec& spec, const Expect& expected);
  CellRecord* current() { return current_; }
  void end_current() { current_ = nullptr; }
  nlohmann::ordered_json to_json() const;

 private:
  std::vector<std::unique_ptr<CellRecord>> records_;
  CellRecord* current_ = nullptr;
};

nlohmann::ordered_json to_json(const CellRecord& record);

}  // namespace tp
