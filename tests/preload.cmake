# libhintcap (capture/preload): hook logic against a provider double, the matcher, the
# configuration, the trace files it writes; `capture run` and `trace audit` end to end.
add_library(hs_hcap_fake STATIC test_hcap_fake.c)
hs_add_unit_test(test_hcap_hooks SOURCES test_hcap_hooks.c LIBS hs_hcap hs_hcap_fake hs_testlib ${IBVERBS_LIB})
hs_add_unit_test(test_hcap_match SOURCES test_hcap_match.c LIBS hs_hcap hs_testlib)
hs_add_unit_test(test_hcap_cli SOURCES test_hcap_cli.c ${PROJECT_SOURCE_DIR}/cli/cmd_capture_run.c
  ${PROJECT_SOURCE_DIR}/cli/cmd_trace_audit.c ${PROJECT_SOURCE_DIR}/cli/cli.c
  LIBS hs_trace hs_testlib)
add_dependencies(test_hcap_cli hintcap)

# In the soft-RoCE VM: ibv_rc_pingpong, ib_write_lat and ib_write_bw captured unmodified;
# the host check counts their WRs against the tools' options (tests/vm/preload-tools*.sh).
include(${CMAKE_CURRENT_SOURCE_DIR}/vm/hs_add_vm_test.cmake)
hs_add_vm_test(vm_preload_tools SCRIPT preload-tools.sh TIMEOUT 900
  FILES $<TARGET_FILE:hintcap>:/usr/lib/libhintcap.so CHECK preload-tools-check.sh)

# Under valgrind memcheck too (label valgrind, release build): threads, rings, fork.
hs_add_valgrind_test(valgrind_test_hcap_match COMMAND $<TARGET_FILE:test_hcap_match>)
hs_add_valgrind_test(valgrind_test_hcap_hooks COMMAND $<TARGET_FILE:test_hcap_hooks>)

# A verbs program that resolves libibverbs as NCCL does (dlopen + dlvsym/dlsym, RTLD_DEFAULT,
# RTLD_NEXT from a library) and posts through the context's ops; the same source linked
# normally. Run in the soft-RoCE VM by vm_preload_dlopen (tests/vm/preload-dlopen*.sh).
add_library(hcap_vapp_dl SHARED test_hcap_vapp.c)
target_link_libraries(hcap_vapp_dl PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(hcap_vapp_dl PROPERTIES C_VISIBILITY_PRESET hidden)
add_executable(hcap_vapp test_hcap_vapp.c)
target_compile_definitions(hcap_vapp PRIVATE VAPP_MAIN_ONLY)
target_link_libraries(hcap_vapp PRIVATE hcap_vapp_dl)
add_executable(hcap_vapp_linked test_hcap_vapp.c)
target_compile_definitions(hcap_vapp_linked PRIVATE VAPP_LINKED)
target_link_libraries(hcap_vapp_linked PRIVATE ${IBVERBS_LIB} ${CMAKE_DL_LIBS})
