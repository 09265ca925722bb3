# capture/: unit tests of the two-path engine's device-free logic. The live paths (device,
# ends, bench, validate) run in the soft-RoCE VM (tests/vm/capture-*.sh) and GPU memory on the
# GPU machine (tests/gpu/).
hs_add_unit_test(test_cap_policy SOURCES test_cap_policy.c LIBS hs_capture hs_testlib)
hs_add_valgrind_test(valgrind_test_cap_policy COMMAND $<TARGET_FILE:test_cap_policy>)
