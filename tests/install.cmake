# `cmake --install` into a DESTDIR: the installed hintsim runs, its man page and bash
# completion cover every command and option (tests/test_install.sh).
add_test(NAME test_install
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_install.sh ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(test_install PROPERTIES LABELS unit TIMEOUT 120)
