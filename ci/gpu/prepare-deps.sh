#!/usr/bin/env bash
# For a GPU machine that reaches no package registry (a self-hosted runner, the lent H200):
# unpacks Debian's GoogleTest, GoogleMock, Google Benchmark and nlohmann-json packages into a
# folder (default .deps) on a machine that has apt, so the folder can be copied along and found
# through CMAKE_PREFIX_PATH=$PWD/.deps/usr. No root needed.
set -euo pipefail
dest=${1:-.deps}
top=$(git rev-parse --show-toplevel)
cd "$top"
grep -qx "/${dest}/" .git/info/exclude 2>/dev/null || echo "/${dest}/" >>.git/info/exclude
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pkgs="libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian nlohmann-json3-dev"
(cd "$work" && { apt-get download $pkgs >/dev/null 2>&1 ||
  { apt-get update -o Acquire::Check-Valid-Until=false >/dev/null && apt-get download $pkgs >/dev/null; }; })
rm -rf "$dest" && mkdir -p "$dest"
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$dest"; done
du -sh "$dest"
echo "CMAKE_PREFIX_PATH gets \$PWD/$dest/usr"
