add_library(hs_testlib STATIC hs_test.c)
hs_add_unit_test(test_common SOURCES test_common.c LIBS hs_testlib)
