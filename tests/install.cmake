# Install and CLI vocabulary tests. `cmake --install` into a DESTDIR: the installed hintsim
# runs, its man page and bash completion cover every command and option
# (tests/test_install.sh).
add_test(NAME test_install
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_install.sh ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(test_install PROPERTIES LABELS unit TIMEOUT 120)

# One option vocabulary across subcommands, read from every command's --help
# (tests/test_cli_vocab.sh): letters, --profile/-p, --port/-P, --hint and its old names.
add_test(NAME test_cli_vocab
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_cli_vocab.sh $<TARGET_FILE:hintsim>)
set_tests_properties(test_cli_vocab PROPERTIES LABELS unit TIMEOUT 120)
