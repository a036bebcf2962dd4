# What bash is left of ci/torchplace (reports/torchplace/command owns the commands): the exit codes'
# mirror, the Debian packages and their install (tp_ensure_deps), and the helpers of the matrix's
# apt/debootstrap/chroot plumbing (ci/matrix/*.sh).
# shellcheck shell=bash

# 2 is kept for the gates' "behaviour regression"; usage errors take sysexits' EX_USAGE; 77 is a
# test's skip. The same values as torchplace.schema's EXIT_* (reports/tests/test_package.py).
# shellcheck disable=SC2034 # used by the files that source this one
readonly TP_EXIT_OK=0 TP_EXIT_FAIL=1 TP_EXIT_REGRESSION=2 TP_EXIT_ENV=3 TP_EXIT_BUILD=4 \
  TP_EXIT_BUDGET=5 TP_EXIT_USAGE=64 TP_EXIT_SKIP=77
TP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
readonly TP_ROOT
# The Python package (reports/torchplace): every tool runs as `python3 -m torchplace.<module>`
# (the matrix's plumbing records steps with torchplace.run_record).
export PYTHONPATH="$TP_ROOT/reports${PYTHONPATH:+:$PYTHONPATH}"
# Debian packages the suite needs: build, tests, benchmarks, report and gate (libdw-dev and
# pkgconf: the user's file:line in the sim's messages, harness/sim/README.md).
readonly TP_APT_PACKAGES="cmake g++ make libtorch-dev libgtest-dev libgmock-dev libbenchmark-dev \
nlohmann-json3-dev python3-matplotlib python3-scipy libgloo-dev libdw-dev pkgconf"
# And for `test` on the host only (not in the matrix roots): the lint label's tools and the gates'
# property tests, so that CI runs those checks instead of skipping them (exit 77).
readonly TP_CHECK_PACKAGES="clang-format shellcheck black flake8 mypy python3-hypothesis \
python3-torch python3-torchvision python3-venv python3-coverage"

tp_die() { # <exit code> <message>
  echo "torchplace: $2" >&2
  exit "$1"
}

tp_log() { echo "torchplace: $*" >&2; }

# The Debian archive these machines reach is a snapshot: a suite's Release file may carry a
# Valid-Until date that has passed (sid's does). apt then refuses it as expired; this accepts it.
# The signature is still checked (only the date check is off); tp_apt_note_expired logs each use.
readonly TP_APT_SNAPSHOT_OPTIONS="-o Acquire::Check-Valid-Until=false"

# Logs every Release file in <root>'s apt lists (the host's for "") past its Valid-Until date.
tp_apt_note_expired() { # <root or "">
  local file until suite
  for file in "$1"/var/lib/apt/lists/*Release; do
    [[ -f "$file" ]] || continue
    until=$(sed -n 's/^Valid-Until: //p' "$file" | head -n 1)
    [[ -n "$until" ]] && (($(date -d "$until" +%s 2>/dev/null || echo 0) < $(date +%s))) || continue
    suite=$(sed -n 's/^Suite: //p' "$file" | head -n 1)
    tp_log "apt: the Release file of ${suite:-${file##*/}}${1:+ in $1} expired on $until; accepted" \
      "(snapshot mirror: Acquire::Check-Valid-Until=false; signatures still checked)"
  done
  return 0
}

# One line naming the cause apt's (or debootstrap's) log shows, and the log's path.
tp_apt_cause() { # <log>
  local python
  python=$(command -v /usr/bin/python3 || command -v python3) || { echo "see $1"; return 0; }
  echo "$("$python" -m torchplace.apt_log "$1"); see $1"
}

# Installs the missing Debian packages when that is allowed and possible; otherwise prints the
# exact command and stops. TORCHPLACE_NO_INSTALL=1 (or --no-install) forbids installing:
# the dependencies then come from CMAKE_PREFIX_PATH / Torch_DIR (a GPU runner, a pip torch).
tp_ensure_deps() { # [extra package...]
  [[ "${TORCHPLACE_NO_INSTALL:-0}" == 1 ]] && return 0
  command -v dpkg-query >/dev/null || tp_die $TP_EXIT_ENV \
    "not a Debian/Ubuntu system: install LibTorch, GoogleTest, Google Benchmark, nlohmann-json, matplotlib and scipy yourself, then rerun with --no-install"
  local missing=() pkg
  for pkg in $TP_APT_PACKAGES "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  ((${#missing[@]} == 0)) && return 0
  local cmd="apt-get install -y --no-install-recommends ${missing[*]}"
  if [[ $(id -u) != 0 ]]; then
    tp_die $TP_EXIT_ENV "missing packages; run as root: apt-get update && $cmd"
  fi
  tp_log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  local log=/tmp/torchplace-apt.$$.log
  apt-get update -q $TP_APT_SNAPSHOT_OPTIONS 2>&1 | tee "$log" >&2 ||
    tp_die $TP_EXIT_ENV "apt-get update failed: $(tp_apt_cause "$log")"
  tp_apt_note_expired ""
  $cmd -q $TP_APT_SNAPSHOT_OPTIONS 2>&1 | tee -a "$log" >&2 ||
    tp_die $TP_EXIT_ENV "apt-get install failed ($cmd): $(tp_apt_cause "$log")"
}

# The build folder, overridable for builds against other LibTorch installs.
tp_build_dir() { echo "${TORCHPLACE_BUILD_DIR:-$TP_ROOT/build/ci}"; }

# tp_record <run.json> <step> status=VALUE [KEY=VALUE ...]: merges one step into the run record
# (python3 -m torchplace.run_record; any python3 will do). A step it cannot record is logged:
# readers of the record then find the step missing, which they count as not done.
tp_record() {
  local python
  python=$(command -v "${TORCHPLACE_PYTHON:-python3}" || command -v /usr/bin/python3) ||
    { tp_log "no python3: step $2 not recorded in $1"; return 0; }
  "$python" -m torchplace.run_record "$@" || tp_log "could not record step $2 in $1"
}
