# `cmake --install <build> --prefix P` lays the package out as:
#   P/include/torchplace/...            public headers (fixes/, sim/, bench/, the scenario API)
#   P/lib/libtorchplace_*.a             the libraries
#   P/lib/libtorchplace_sim_cuda.so     the sim as CUDA (harness/sim/README.md "As CUDA")
#   P/lib/cmake/torchplace/             torchplaceConfig.cmake, the targets, TorchplaceHelpers.cmake
#   P/share/torchplace/                 the torchplace command's scripts and Python package
#   P/bin/torchplace                    the command (run / report / gate / explain on a user's own suite)
#   P/share/torchplace/bin/torchplace_classify   the classifier explain runs
# Components: "fixes" (torchplace::fixes, torchplace::sim, torchplace::sim_cuda; LibTorch only)
# and "harness"
# (torchplace::harness, ::gtest_main, ::bench, ::bench_main; also GoogleTest, Google Benchmark, nlohmann_json).
include(CMakePackageConfigHelpers)
set(_tp_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/torchplace)
set(_tp_share_dir ${CMAKE_INSTALL_DATADIR}/torchplace)

install(TARGETS torchplace_fixes torchplace_sim torchplace_sim_cuda EXPORT torchplaceFixesTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS torchplace_harness torchplace_harness_gtest_main torchplace_harness_bench
  torchplace_harness_bench_main
  EXPORT torchplaceHarnessTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(_set Fixes Harness)
  install(EXPORT torchplace${_set}Targets NAMESPACE torchplace:: DESTINATION ${_tp_cmake_dir})
endforeach()

# Headers: the public API only (internal/ and tests/ stay behind).
set(_tp_harness ${PROJECT_SOURCE_DIR}/harness)
install(DIRECTORY ${_tp_harness}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/torchplace
  FILES_MATCHING PATTERN "*.h"
  PATTERN internal EXCLUDE PATTERN tests EXCLUDE PATTERN messages EXCLUDE
  PATTERN sim_internal.h EXCLUDE)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/torchplaceConfig.cmake.in
  ${PROJECT_BINARY_DIR}/torchplaceConfig.cmake INSTALL_DESTINATION ${_tp_cmake_dir}
  PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/torchplaceConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/torchplaceConfig.cmake
  ${PROJECT_BINARY_DIR}/torchplaceConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/TorchplaceHelpers.cmake DESTINATION ${_tp_cmake_dir})

# The command: ci/torchplace (a shim over `python3 -m torchplace`) and the Python package it runs,
# under share/torchplace/ in the same relative layout, so one shim serves the source tree and the
# installed package.
install(PROGRAMS ${PROJECT_SOURCE_DIR}/ci/torchplace DESTINATION ${_tp_share_dir}/ci)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/reports/torchplace DESTINATION ${_tp_share_dir}/reports
  PATTERN __pycache__ EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/ci/gate/policy.json DESTINATION ${_tp_share_dir}/ci/gate)
# The classifier that `torchplace explain` runs (reports/torchplace/explain finds it here).
install(TARGETS torchplace_classify RUNTIME DESTINATION ${_tp_share_dir}/bin)
file(RELATIVE_PATH _tp_bin_to_share ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_DATADIR}/torchplace)
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/bin/torchplace CONTENT
  "#!/bin/sh\n# The installed torchplace command (see ${_tp_share_dir}/ci/torchplace).\nexec \"$(dirname \"$(readlink -f \"$0\")\")/${_tp_bin_to_share}/ci/torchplace\" \"$@\"\n")
install(PROGRAMS ${PROJECT_BINARY_DIR}/bin/torchplace DESTINATION ${CMAKE_INSTALL_BINDIR})
