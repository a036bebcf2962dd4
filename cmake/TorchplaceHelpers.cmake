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
# In this repository every suite reuses the harness's precompiled header (<torch/torch.h>,
# GoogleTest, nlohmann-json), so a scenario file costs seconds to compile rather than the ~30 s
# of a file that parses LibTorch itself.
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

# One discovery run per suite (each run loads LibTorch: ~1 s), then a CTest include script that
# labels every discovered test by its name's last part, the device (tp::naming): first match
# wins, and the last rule takes the rest. NO_PRETTY_VALUES: a TEST_P's CTest name is its gtest
# name, never its parameter's printed bytes (which change from run to run). CTest leaves a name
# holding '[' or ']' out of the list, and with it unlabelled; the test labels.every_test fails then.
function(_torchplace_discover_labelled target)
  gtest_discover_tests(${target} TEST_LIST ${target}_TESTS DISCOVERY_TIMEOUT 120 NO_PRETTY_VALUES)
  set(_body [=[
foreach(_test IN LISTS @TARGET@_TESTS)
  if(_test MATCHES "/device=cpu$")
    set(_label cpu)
  elseif(_test MATCHES "/device=sim[0-9]+$" OR _test MATCHES "/devices=sim[0-9]+([+]sim[0-9]+)+$")
    set(_label sim)
  elseif(_test MATCHES "/device=cuda[0-9]+$" OR _test MATCHES "_CUDA$")
    set(_label cuda)
  elseif(_test MATCHES "/devices=cuda[0-9]+([+]cuda[0-9]+)+$")
    set(_label multi_gpu)
  else()
    set(_label unit)
  endif()
  set_tests_properties("${_test}" PROPERTIES LABELS ${_label})
endforeach()
]=])
  set(TARGET ${target})
  string(CONFIGURE "${_body}" _body @ONLY)
  set(_script ${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake)
  file(WRITE ${_script} "${_body}")
  # After the discovery's own include file, which sets ${target}_TESTS.
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${_script})
endfunction()
