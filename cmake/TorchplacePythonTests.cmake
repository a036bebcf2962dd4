# The suite's own Python tests (report, gate, matrix): torchplace_add_python_test(). In-tree only;
# not installed with the package.

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
    ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1;PYTHONPATH=${PROJECT_SOURCE_DIR}/reports")
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
