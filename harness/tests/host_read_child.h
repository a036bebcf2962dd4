// The one child of the sim's host-read signal tests (SimHostReadFaults.Child, defined in
// sim_host_read_faults_test.cpp, started by its tests and sim_host_read_signals_test.cpp's):
// this binary again, with the handler it had before the sim's (TP_TEST_PREVIOUS) and what it
// then does (TP_TEST_ACTION); the child's comment lists both settings' values.
#pragma once
#include <sys/wait.h>

#include <string>
#include <utility>

#include "child_run.h"

namespace tp_test {

inline constexpr char kHostReadChild[] = "SimHostReadFaults.Child";

// The child's exit status as a shell gives it (128 + the signal it died of), or -1, and its
// output; `more`: further assignments (NAME=value ...).
inline std::pair<int, std::string> host_read_child(const std::string& previous,
                                                   const std::string& action,
                                                   const std::string& more = "") {
  const auto [status, output] = run_child(
      "TP_TEST_PREVIOUS=" + previous + " TP_TEST_ACTION=" + action + " " + more, kHostReadChild);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

}  // namespace tp_test
