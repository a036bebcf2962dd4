# The shell tests' few helpers: a scratch folder, and checks counted into "N passed, N failed".
# shellcheck shell=bash
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

check() { # <what> <command...>
  local what=$1
  shift
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $what" >&2; fi
}

# Prints the closing line CTest's log shows; returns 1 when any check failed.
checks_summary() {
  echo "$passed passed, $failed failed"
  ((failed == 0))
}
