// Judges the error raised in a cell that expects one. It counts only if it came from the
// statement under test (a cell.under_test(...) region), is of the expected class, and, where the
// message names the offending argument, names the expected one.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "results.h"

namespace tp {

// The argument a device-mismatch message names, or nothing when it names none:
//   ~2.8 on:  "... but got target is on cpu, different from other tensors on cuda:0 ..."
//   1.9-2.7:  "... (when checking argument for argument target in method ...)"
//             (1.9 spells the first word "arugment"; the second is right in every version)
std::optional<std::string> named_argument(std::string_view message);

// Why the error in `record` (message and observed class already set) is not the cell's expected
// error, or nothing when it is.
std::optional<std::string> unexpected_error(const CellRecord& record);

}  // namespace tp
