# libhintcap (capture/preload): hook logic against a provider double, the matcher, the
# configuration, the trace files it writes; `capture run` and `trace audit` end to end.
add_library(hs_hcap_fake STATIC test_hcap_fake.c)
hs_add_unit_test(test_hcap_hooks SOURCES test_hcap_hooks.c LIBS hs_hcap hs_hcap_fake hs_testlib)
hs_add_unit_test(test_hcap_match SOURCES test_hcap_match.c LIBS hs_hcap hs_testlib)
