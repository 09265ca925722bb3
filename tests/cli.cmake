# cli/: the command files' layering (no cmd_*.c calls another's internals).
add_test(NAME cli_layering COMMAND ${CMAKE_COMMAND} -DCLI_DIR=${PROJECT_SOURCE_DIR}/cli
  -P ${CMAKE_CURRENT_SOURCE_DIR}/cli_layering.cmake)
set_tests_properties(cli_layering PROPERTIES LABELS unit)
