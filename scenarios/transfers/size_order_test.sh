#!/usr/bin/env bash
# The transfer benchmarks run one tensor size at a time on each device (every direction and
# strategy of a size, then the next), so that the host cache makes each size's batch once
# (host_cache.h; 1 GiB takes seconds to make). Lists them (no GPU needed) and fails when a
# size comes back after another.
# Usage: size_order_test.sh TORCHPLACE_BENCH
set -euo pipefail
list=$("$1" --benchmark_list_tests --benchmark_filter='^transfer/')
[[ -n "$list" ]] || { echo "FAIL: no transfer/ benchmarks listed" >&2; exit 1; }
# "device bytes" per benchmark, consecutive repeats collapsed: each pair must appear once
pairs=$(sed -E 's|^.*/bytes:([0-9]+)/device:([^/]+)(/.*)?$|\2 \1|' <<<"$list" | uniq)
if grep -qv '^[^ ]* [0-9][0-9]*$' <<<"$pairs"; then
  echo "FAIL: a transfer/ benchmark name without /bytes:N/device:D:" >&2
  grep -v '^[^ ]* [0-9][0-9]*$' <<<"$pairs" >&2
  exit 1
fi
again=$(sort <<<"$pairs" | uniq -d)
if [[ -n "$again" ]]; then
  echo "FAIL: these sizes come back after another size, so their host batch is made again:" >&2
  echo "$again" >&2
  exit 1
fi
echo "ok: $(wc -l <<<"$list") transfer/ benchmarks, $(wc -l <<<"$pairs") sizes x devices, each once"
