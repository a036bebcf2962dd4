# torchplace_add_suite(<name> KIND <gtest|benchmark|tool> SOURCES <file>...)
#
# The one way to make a torchplace executable: scenarios, benchmarks, or a tool. The same function
# serves this repository and a project that uses the installed package (find_package(torchplace))
# or FetchContent.
#   KIND gtest      links torchplace::gtest_main; every cell becomes a CTest test through
#                   gtest_discover_tests, labelled by the device it needs:
#                     cpu        names holding "device=cpu"
#                     sim        names holding "device=sim" (the simulated device, harness/sim/)
#                     cuda       names holding "device=cuda", and harness tests named *_CUDA
#                     multi_gpu  names holding "devices=" (cells that take two GPUs)
#                     unit       everything else (harness self-tests)
#   KIND benchmark  links torchplace::bench_main and adds one smoke run to CTest, labelled "bench",
#                   that times each benchmark for a single iteration.
#   KIND tool       links torchplace::harness only (its own main), adds no test.
# In this repository every suite reuses the harness's precompiled <torch/torch.h>, so a scenario
# file costs seconds to compile rather than the ~30 s of a file that parses LibTorch itself.
#
# Example (scenarios/CMakeLists.txt):
#   torchplace_add_suite(torchplace_scenarios KIND gtest SOURCES forgotten_labels.cpp)
function(torchplace_add_suite name)
  cmake_parse_arguments(ARG "" "KIND" "SOURCES" ${ARGN})
  if(NOT ARG_KIND MATCHES "^(gtest|benchmark|tool)$" OR NOT ARG_SOURCES)
    message(FATAL_ERROR "torchplace_add_suite(${name}): needs KIND gtest|benchmark|tool and SOURCES")
  endif()
  add_executable(${name} ${ARG_SOURCES})
  if(TARGET torchplace_harness)  # this repository (or FetchContent): share its precompiled header
    target_precompile_headers(${name} REUSE_FROM torchplace_harness)
  endif()
  if(ARG_KIND STREQUAL "tool")
    target_link_libraries(${name} PRIVATE torchplace::harness)
  elseif(ARG_KIND STREQUAL "gtest")
    target_link_libraries(${name} PRIVATE torchplace::gtest_main)
    _torchplace_discover_labelled(${name})
  else()
    target_link_libraries(${name} PRIVATE torchplace::bench_main)
    if(benchmark_VERSION VERSION_LESS 1.8)
      set(_min_time 0.001) # seconds
    else()
      set(_min_time 1x) # one iteration
    endif()
    add_test(NAME ${name}.smoke COMMAND ${name} --benchmark_min_time=${_min_time})
    set_tests_properties(${name}.smoke PROPERTIES LABELS bench)
  endif()
endfunction()

# One discovery per label; the filters are disjoint and the last one takes the rest,
# so no test is left out of CTest.
function(_torchplace_discover_labelled target)
  set(_filters "*device=cpu*" "*device=sim*" "*device=cuda*:*_CUDA" "*devices=*"
               "-*device=*:*devices=*:*_CUDA")
  set(_labels cpu sim cuda multi_gpu unit)
  foreach(_filter _label IN ZIP_LISTS _filters _labels)
    gtest_discover_tests(${target}
      TEST_FILTER "${_filter}"
      DISCOVERY_TIMEOUT 120
      PROPERTIES LABELS ${_label})
  endforeach()
endfunction()

