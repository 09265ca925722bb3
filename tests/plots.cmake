# plots/: figures (gnuplot) and the fixture shared with tests/report.cmake.
add_library(hs_plot_fixture STATIC test_plot_fixture.c)
target_link_libraries(hs_plot_fixture PUBLIC hs_plots hs_trace hs_common ${M_LIB})
hs_add_unit_test(test_plot_figs SOURCES test_plot_figs.c LIBS hs_plot_fixture hs_sim hs_testlib)
# calib/: the fit of hintsim calibrate (kept here: tests/CMakeLists.txt includes no calib.cmake).
hs_add_unit_test(test_calib_fit SOURCES test_calib_fit.c LIBS hs_calib hs_model hs_testlib)
# hintsim calibrate on soft-RoCE in the VM, --server and --connect: fit, write, reload, the
# held-out figures by class (single, stream, mixed) within their bounds.
if(COMMAND hs_add_vm_test)
  hs_add_vm_test(vm_calibrate_fit SCRIPT calibrate-fit.sh TIMEOUT 900 CHECK calibrate-fit-check.sh)
endif()
hs_add_valgrind_test(valgrind_test_calib_fit COMMAND $<TARGET_FILE:test_calib_fit>)
