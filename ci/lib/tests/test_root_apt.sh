#!/usr/bin/env bash
# Apt inside a matrix root (ci/matrix/roots.sh), with chroot replaced by a recorder: every apt-get
# call carries the snapshot option (an expired Release file is accepted), and a failed update
# stops with the cause its log shows. Prints "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../common.sh"
source "$here/../../matrix/roots.sh"
# shellcheck source=../checks.sh
source "$here/../checks.sh" # work, check, checks_summary
: "${work:?checks.sh sets work}"

# The fake chroot: dpkg-query finds nothing installed; apt-get prints $APT_OUTPUT, exits $APT_RC.
chroot() {
  shift
  echo "$*" >>"$work/calls"
  [[ "$*" == *dpkg-query* ]] && return 1
  [[ -n "${APT_OUTPUT:-}" ]] && cat "$APT_OUTPUT"
  return "${APT_RC:-0}"
}

every_apt_call_tolerates_expiry() {
  local calls
  calls=$(grep -c 'apt-get' "$work/calls")
  ((calls == 2)) && ! grep 'apt-get' "$work/calls" | grep -vq -- '-o Acquire::Check-Valid-Until=false'
}

(tp_matrix_install "$work/root" "pkg-a pkg-b") 2>/dev/null
check "update and install in a root both pass -o Acquire::Check-Valid-Until=false" \
  every_apt_call_tolerates_expiry

message=$(
  export APT_OUTPUT=$here/apt_logs/expired_release.log APT_RC=100
  (tp_matrix_install "$work/root" "pkg-a") 2>&1 >/dev/null
  echo "exit=$?"
)
check "a failed update exits 3" grep -q 'exit=3' <<<"$message"
check "a failed update names the expired Release file" grep -q 'expired Release file' <<<"$message"

checks_summary
