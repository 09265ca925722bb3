add_library(hs_testlib STATIC hs_test.c)
hs_add_unit_test(test_common SOURCES test_common.c LIBS hs_testlib)
hs_add_valgrind_test(valgrind_test_common COMMAND $<TARGET_FILE:test_common>)
