# Finds the suite's dependencies and derives the settings that depend on the LibTorch found.
#
# Sets:
#   TORCHPLACE_CXX_STANDARD  17 or 20: what the LibTorch headers demand (2.14 needs 20)
#   TORCHPLACE_WITH_CUDA     ON when the LibTorch found was built with CUDA
#   Torch_VERSION            from TorchConfigVersion.cmake
#   TORCHPLACE_WITH_C10D_GLOO ON when the ddp scenario can run: LibTorch's torch_cpu target
#                            defines USE_C10D_GLOO and the Gloo headers are found (libgloo-dev)
#   TORCHPLACE_WITH_LIBDW    ON when elfutils' libdw is found (pkg-config; Debian libdw-dev):
#                            PkgConfig::TP_LIBDW, the user's file:line in the sim's messages

find_package(Torch QUIET)
if(NOT Torch_FOUND)
  message(FATAL_ERROR
    "LibTorch not found.\n"
    "  On Debian/Ubuntu: apt-get install libtorch-dev\n"
    "  Elsewhere: point CMake at it with -DTorch_DIR=<libtorch>/share/cmake/Torch\n"
    "  or -DCMAKE_PREFIX_PATH=<libtorch> (a pip torch: "
    "python3 -c 'import torch;print(torch.utils.cmake_prefix_path)').")
endif()

# The headers state the standard they need (`#error C++20 or later compatible compiler is
# required` in torch/all.h of 2.14; "C++14 or later" in 1.13): read it instead of guessing from
# the version. C++17 is this suite's own minimum.
find_file(TORCHPLACE_TORCH_ALL_H torch/all.h
          PATHS ${TORCH_INCLUDE_DIRS} PATH_SUFFIXES torch/csrc/api/include NO_DEFAULT_PATH)
set(TORCHPLACE_CXX_STANDARD 17)
if(TORCHPLACE_TORCH_ALL_H)
  file(STRINGS "${TORCHPLACE_TORCH_ALL_H}" _tp_required REGEX "C\\+\\+[0-9]+ or later")
  if(_tp_required MATCHES "C\\+\\+(2[0-9])")
    set(TORCHPLACE_CXX_STANDARD ${CMAKE_MATCH_1})
  endif()
endif()

if(TORCH_CUDA_LIBRARIES OR TARGET torch_cuda OR C10_CUDA_LIBRARY)
  set(TORCHPLACE_WITH_CUDA ON)
else()
  set(TORCHPLACE_WITH_CUDA OFF)
endif()

# c10d's Gloo backend (scenarios/ddp.cpp): torch_cpu's interface definitions say whether
# libtorch_cpu was built with it; ProcessGroupGloo.hpp includes <gloo/...>, a package of its own.
# Without either the ddp cells skip (no_c10d_gloo); harness/compat.h TP_HAS_C10D_GLOO decides
# the same in the compiler.
set(TORCHPLACE_WITH_C10D_GLOO OFF)
if(TARGET torch_cpu)
  get_target_property(_tp_torch_defs torch_cpu INTERFACE_COMPILE_DEFINITIONS)
  find_path(TORCHPLACE_GLOO_INCLUDE_DIR gloo/config.h)
  if("USE_C10D_GLOO" IN_LIST _tp_torch_defs AND TORCHPLACE_GLOO_INCLUDE_DIR)
    set(TORCHPLACE_WITH_C10D_GLOO ON)
  endif()
endif()

# Optional: without it the sim names the user's function where it can, not the line.
set(TORCHPLACE_WITH_LIBDW OFF)
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(TP_LIBDW QUIET IMPORTED_TARGET GLOBAL libdw)
  if(TP_LIBDW_FOUND)
    set(TORCHPLACE_WITH_LIBDW ON)
  endif()
endif()

find_package(GTest REQUIRED)
find_package(benchmark REQUIRED)
find_package(nlohmann_json 3.9 REQUIRED)
include(GoogleTest)

message(STATUS "torchplace: LibTorch ${Torch_VERSION}, C++${TORCHPLACE_CXX_STANDARD}, "
               "CUDA ${TORCHPLACE_WITH_CUDA}, c10d Gloo ${TORCHPLACE_WITH_C10D_GLOO}, "
               "libdw ${TORCHPLACE_WITH_LIBDW}, "
               "Google Benchmark ${benchmark_VERSION}")

# The Python for the report, gate and matrix tests: see the end of TorchplaceHelpers.cmake.

# Used as a subproject (FetchContent), torchplace's targets are linked from the parent project,
# which must see the imported targets they name (torch, GTest::gtest, ...): promote them.
if(NOT PROJECT_IS_TOP_LEVEL)
  get_directory_property(_tp_imported IMPORTED_TARGETS)
  foreach(_target IN LISTS _tp_imported)
    set_property(TARGET ${_target} PROPERTY IMPORTED_GLOBAL TRUE)
  endforeach()
endif()
