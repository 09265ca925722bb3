# Tests in Python: the Chrome JSON export checked against the Trace Event Format and the CSV
# (test_chrome_json.py), the Perfetto protobuf export read back by a wire-format decoder of its
# own (test_perfetto_pb.py; also by protoc --decode_raw where installed), the numpy reader
# of .hst against the C reader (test_py_trace.py).
# They run with a python3 that imports numpy (Debian's python3-numpy, in setup.sh's
# packages), else the first python3 found; without numpy the reader test skips (exit 77).
set(HS_PYTHON "")
find_program(HS_PYTHON_FOUND python3)
foreach(py /usr/bin/python3 ${HS_PYTHON_FOUND})
  if(EXISTS ${py})
    execute_process(COMMAND ${py} -c "import numpy" RESULT_VARIABLE hs_py_rc
                    OUTPUT_QUIET ERROR_QUIET)
    if(hs_py_rc EQUAL 0)
      set(HS_PYTHON ${py})
      break()
    endif()
    if(NOT HS_PYTHON)
      set(HS_PYTHON ${py})
    endif()
  endif()
endforeach()
if(NOT HS_PYTHON)
  message(STATUS "hintsim: no python3, the Python tests are not registered")
  return()
endif()

add_test(NAME test_chrome_json
  COMMAND ${HS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/test_chrome_json.py $<TARGET_FILE:hintsim>
          ${PROJECT_SOURCE_DIR})
set_tests_properties(test_chrome_json PROPERTIES LABELS unit TIMEOUT 120)

add_test(NAME test_perfetto_pb
  COMMAND ${HS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/test_perfetto_pb.py $<TARGET_FILE:hintsim>
          ${PROJECT_SOURCE_DIR})
set_tests_properties(test_perfetto_pb PROPERTIES LABELS unit TIMEOUT 300)

add_test(NAME test_py_trace
  COMMAND ${HS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/test_py_trace.py $<TARGET_FILE:hintsim>
          ${PROJECT_SOURCE_DIR})
set_tests_properties(test_py_trace PROPERTIES LABELS unit TIMEOUT 120 SKIP_RETURN_CODE 77)

# The evaluators' source id (sweep points' keys) is the hash of the sources as built.
add_test(NAME test_eval_source
  COMMAND ${HS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/test_eval_source.py $<TARGET_FILE:hintsim>
          ${PROJECT_BINARY_DIR}/sweep/eval_sources.txt ${PROJECT_SOURCE_DIR})
set_tests_properties(test_eval_source PROPERTIES LABELS unit TIMEOUT 60)

# Tokens written into the tree's scripts are long enough for capture's control protocol.
add_test(NAME test_script_tokens
  COMMAND ${HS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/test_script_tokens.py ${PROJECT_SOURCE_DIR})
set_tests_properties(test_script_tokens PROPERTIES LABELS unit TIMEOUT 60)

# No function in model/ takes more than 6 parameters (a context struct instead).
add_test(NAME test_param_count
  COMMAND ${HS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/test_param_count.py ${PROJECT_SOURCE_DIR} 6 model sim)
set_tests_properties(test_param_count PROPERTIES LABELS unit TIMEOUT 60)
