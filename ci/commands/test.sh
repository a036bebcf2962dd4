# shellcheck shell=bash
# ci/torchplace test [--no-install]: build, then run every CTest test (JUnit in the build folder).
cmd_test() {
  while (($#)); do
    case "$1" in
      --no-install) export TORCHPLACE_NO_INSTALL=1 ;;
      *) tp_die $TP_EXIT_USAGE "test: unknown argument '$1' (usage: ci/torchplace test [--no-install])" ;;
    esac
    shift
  done
  # shellcheck disable=SC2086 # a list of package names
  tp_ensure_deps $TP_CHECK_PACKAGES
  tp_build
  local build_dir
  build_dir=$(tp_build_dir)
  ctest --test-dir "$build_dir" -j "$(nproc)" --output-on-failure --no-tests=error \
    --output-junit "$build_dir/junit.xml" || exit $TP_EXIT_FAIL
}
