// The sim tests' one helper: the message of the c10::Error a statement raises, "" when none:
// LibTorch's text (msg()), which the sim keeps as CUDA's; its own context after it, the operator
// and the user's line (sim/README.md "Where it happened"), is sim_where_test.cpp's.
#pragma once
#include <c10/util/Exception.h>

#include <functional>
#include <string>

namespace tp_test {

inline std::string message_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const c10::Error& error) {
    return error.msg();
  }
  return "";
}

}  // namespace tp_test
