// The sim tests' one helper: the message of the c10::Error a statement raises, "" when none.
#pragma once
#include <c10/util/Exception.h>

#include <functional>
#include <string>

namespace tp_test {

inline std::string message_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const c10::Error& error) {
    return error.what_without_backtrace();
  }
  return "";
}

}  // namespace tp_test
