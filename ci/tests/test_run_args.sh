#!/usr/bin/env bash
# `torchplace run`'s argument checks: each bad input exits 64 (TP_EXIT_USAGE) with a message that
# names the problem, before anything runs, and leaves what an earlier run wrote into --out as it
# was. Nothing is built: every case fails its checks first. Prints "N passed, N failed"; exits 1
# on any failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
torchplace=$here/../torchplace
source "$here/../lib/common.sh"
# shellcheck source=../lib/checks.sh
source "$here/../lib/checks.sh" # work, check, checks_summary
: "${work:?checks.sh sets work}"

out=$work/out
mkdir -p "$out"
echo '{"earlier": true}' >"$out/results.json"
mkdir "$work/a_folder"

# refuses <message pattern> <run arguments...>: exit 64, the message on stderr, out untouched.
refuses() {
  local pattern=$1 code
  shift
  "$torchplace" run "$@" >"$work/stdout" 2>"$work/stderr"
  code=$?
  [[ $code == "$TP_EXIT_USAGE" ]] || { echo "exit $code, not $TP_EXIT_USAGE: $*" >&2; return 1; }
  grep -q -- "$pattern" "$work/stderr" || { echo "no '$pattern' in: $(cat "$work/stderr")" >&2; return 1; }
  [[ "$(cat "$out/results.json")" == '{"earlier": true}' ]] || { echo "out was touched: $*" >&2; return 1; }
}

check "--out without a value" refuses "--out needs a value" --suite /bin/true --out
check "an unknown argument" refuses "unknown argument '--frobnicate'" --out "$out" --frobnicate
check "--bench without --suite" refuses "--bench goes with --suite" --out "$out" --bench /bin/true
check "a suite that does not exist" refuses "'$work/none' is not an executable file" \
  --out "$out" --suite "$work/none"
check "a suite that is a folder" refuses "is not an executable file" --out "$out" --suite "$work/a_folder"
check "a bench that is not executable" refuses "is not an executable file" \
  --out "$out" --suite /bin/true --bench "$out/results.json"
# with <NAME=value> <message pattern> <run arguments...>: refuses, with that variable set.
with() { (export "${1?}" && shift && refuses "$@"); }
check "repetitions that are not a whole number" with TORCHPLACE_BENCH_REPETITIONS=0 \
  "TORCHPLACE_BENCH_REPETITIONS must be a whole number" --out "$out" --suite /bin/true
check "a minimum time that is not seconds" with TORCHPLACE_BENCH_MIN_TIME=fast \
  "TORCHPLACE_BENCH_MIN_TIME must be a number of seconds" --out "$out" --suite /bin/true
checks_summary
