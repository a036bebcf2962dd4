# torchplace_add_suite(<name> KIND <gtest|benchmark|tool> SOURCES <file>...)
#
# The one way this project makes an executable: scenarios, benchmarks, or a tool.
#   KIND gtest      links the harness's test main; every cell becomes a CTest test through
#                   gtest_discover_tests, labelled by the device it needs:
#                     cpu        names holding "device=cpu"
#                     sim        names holding "device=sim" (the simulated device, harness/sim/)
#                     cuda       names holding "device=cuda", and harness tests named *_CUDA
#                     multi_gpu  names holding "devices=" (cells that take two GPUs)
#                     unit       everything else (harness self-tests)
#   KIND benchmark  links the harness's benchmark main and adds one smoke run to CTest,
#                   labelled "bench", that times each benchmark for a single iteration.
#   KIND tool       links the harness only (its own main), adds no test.
# All suites reuse the harness's precompiled <torch/torch.h>, so a scenario file costs
# seconds to compile rather than the ~30 s of a file that parses LibTorch itself.
#
# Example (scenarios/CMakeLists.txt):
#   torchplace_add_suite(torchplace_scenarios KIND gtest SOURCES forgotten_labels.cpp)
function(torchplace_add_suite name)
  cmake_parse_arguments(ARG "" "KIND" "SOURCES" ${ARGN})
  if(NOT ARG_KIND MATCHES "^(gtest|benchmark|tool)$" OR NOT ARG_SOURCES)
    message(FATAL_ERROR "torchplace_add_suite(${name}): needs KIND gtest|benchmark|tool and SOURCES")
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_precompile_headers(${name} REUSE_FROM torchplace_harness)
  if(ARG_KIND STREQUAL "tool")
    target_link_libraries(${name} PRIVATE torchplace_harness)
  elseif(ARG_KIND STREQUAL "gtest")
    target_link_libraries(${name} PRIVATE torchplace_harness_gtest_main)
    _torchplace_discover_labelled(${name})
  else()
    target_link_libraries(${name} PRIVATE torchplace_harness_bench_main)
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

# torchplace_add_python_test(<name> LABEL <label> [NEEDS <module>...] COMMAND <script> [args...])
# Runs a Python test script under the first Python (TORCHPLACE_PYTHON if set, else
# /usr/bin/python3, else python3 on PATH) that imports every module in NEEDS. With none, the test
# is still listed and reports itself skipped, naming the missing modules, instead of vanishing.
# Example: torchplace_add_python_test(gate.units LABEL gate NEEDS scipy COMMAND tests/test_units.py)
function(torchplace_add_python_test name)
  cmake_parse_arguments(ARG "" "LABEL" "NEEDS;COMMAND" ${ARGN})
  _torchplace_python_with(_python ${ARG_NEEDS})
  if(_python)
    add_test(NAME ${name} COMMAND ${_python} ${ARG_COMMAND})
  else()
    list(JOIN ARG_NEEDS " and " _modules)
    list(TRANSFORM ARG_NEEDS PREPEND python3- OUTPUT_VARIABLE _packages)
    list(JOIN _packages " " _packages)
    add_test(NAME ${name} COMMAND sh -c
      "echo 'SKIP: needs a Python 3 with ${_modules} (apt-get install ${_packages})'; exit 77")
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS ${ARG_LABEL}
    ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1;PYTHONPATH=${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../reports")
endfunction()

# _torchplace_python_with(<out var> [module...]): the first candidate Python that imports every
# module, or "" when none does. Each module list is probed once per configure.
function(_torchplace_python_with out)
  string(REPLACE ";" "," _key "python3:${ARGN}")
  get_property(_known GLOBAL PROPERTY TORCHPLACE_PY_${_key} SET)
  if(NOT _known)
    set(_code "import sys")
    foreach(_module IN LISTS ARGN)
      string(APPEND _code "; import ${_module}")
    endforeach()
    set(_found "")
    set(_candidates /usr/bin/python3 python3)
    if(TORCHPLACE_PYTHON)
      set(_candidates ${TORCHPLACE_PYTHON})
    endif()
    foreach(_candidate IN LISTS _candidates)
      find_program(_tp_python NAMES ${_candidate} NO_CACHE)
      if(_tp_python)
        execute_process(COMMAND ${_tp_python} -c "${_code}; assert sys.version_info >= (3, 7)"
                        RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
        if(_rc EQUAL 0)
          set(_found ${_tp_python})
          break()
        endif()
      endif()
      unset(_tp_python)
    endforeach()
    set_property(GLOBAL PROPERTY TORCHPLACE_PY_${_key} "${_found}")
  endif()
  get_property(_python GLOBAL PROPERTY TORCHPLACE_PY_${_key})
  set(${out} "${_python}" PARENT_SCOPE)
endfunction()

# The Python tests (report, gate, matrix) each name the modules they need
# (torchplace_add_python_test ... NEEDS): the report needs matplotlib and scipy, the speed gate
# scipy, the behaviour gate and the matrix nothing beyond the standard library. Each runs under
# the first of TORCHPLACE_PYTHON (when set), /usr/bin/python3 (Debian's, where python3-matplotlib
# and python3-scipy install) or python3 on PATH that has them; the others are listed, skipped with
# the reason.
set(TORCHPLACE_PYTHON "" CACHE FILEPATH "Python interpreter for the Python tests (default: /usr/bin/python3, then python3)")
_torchplace_python_with(_tp_full_python matplotlib scipy)
if(NOT _tp_full_python)
  message(WARNING "No Python with matplotlib and scipy: the report and speed-gate tests will be "
                  "skipped. Install them with: apt-get install python3-matplotlib python3-scipy")
endif()
