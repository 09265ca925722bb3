# libhintcap (capture/preload): hook logic against a provider double, the matcher, the
# configuration, the trace files it writes; `capture run` and `trace audit` end to end.
add_library(hs_hcap_fake STATIC test_hcap_fake.c)
hs_add_unit_test(test_hcap_hooks SOURCES test_hcap_hooks.c LIBS hs_hcap hs_hcap_fake hs_testlib ${IBVERBS_LIB})
hs_add_unit_test(test_hcap_match SOURCES test_hcap_match.c LIBS hs_hcap hs_testlib)
# QPs created and destroyed by the hundred thousand: what stays of them (the allocator
# counted: --wrap redirects the calls of the statically linked hs_hcap and the fake).
hs_add_unit_test(test_hcap_churn SOURCES test_hcap_churn.c LIBS hs_hcap hs_hcap_fake hs_testlib
  ${IBVERBS_LIB})
target_link_options(test_hcap_churn PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc
  -Wl,--wrap=realloc -Wl,--wrap=posix_memalign -Wl,--wrap=free)
# The interposer's time stamps (TSC, converted) against CLOCK_MONOTONIC over a 5 s run:
# inside each post's and poll's bracket, no drift (figures printed); and the fallback.
hs_add_unit_test(test_hcap_clock SOURCES test_hcap_clock.c LIBS hs_hcap hs_hcap_fake hs_testlib
  ${IBVERBS_LIB})
hs_add_unit_test(test_hcap_cli SOURCES test_hcap_cli.c ${PROJECT_SOURCE_DIR}/cli/cmd_capture_run.c
  ${PROJECT_SOURCE_DIR}/cli/cmd_trace_audit.c ${PROJECT_SOURCE_DIR}/cli/cli.c
  LIBS hs_capture hs_trace hs_testlib)
add_dependencies(test_hcap_cli hintcap)

# In the soft-RoCE VM: ibv_rc_pingpong, ib_write_lat and ib_write_bw captured unmodified;
# the host check counts their WRs against the tools' options (tests/vm/preload-tools*.sh).
include(${CMAKE_CURRENT_SOURCE_DIR}/vm/hs_add_vm_test.cmake)
hs_add_vm_test(vm_preload_tools SCRIPT preload-tools.sh TIMEOUT 900
  FILES $<TARGET_FILE:hintcap>:/usr/lib/libhintcap.so
        $<TARGET_FILE:hintcap_audit>:/usr/lib/libhintcap-audit.so CHECK preload-tools-check.sh)

# Under valgrind memcheck too (label valgrind, release build): threads, rings, fork.
hs_add_valgrind_test(valgrind_test_hcap_match COMMAND $<TARGET_FILE:test_hcap_match>)
hs_add_valgrind_test(valgrind_test_hcap_hooks COMMAND $<TARGET_FILE:test_hcap_hooks>)
hs_add_valgrind_test(valgrind_test_hcap_churn COMMAND $<TARGET_FILE:test_hcap_churn>)

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
# A libibverbs.so.1 made of the provider double, in a directory of its own (LD_LIBRARY_PATH
# puts it in front of the system's), and a transport plugin linking it that hcap_vapp
# loads with RTLD_DEEPBIND: the audit library must catch its calls on a host without a
# device.
add_library(hcap_fakeverbs SHARED test_hcap_fakeverbs.c test_hcap_fake.c)
set_target_properties(hcap_fakeverbs PROPERTIES OUTPUT_NAME ibverbs SOVERSION 1
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fakeverbs C_VISIBILITY_PRESET hidden
  LINK_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/test_hcap_fakeverbs.map)
target_link_options(hcap_fakeverbs PRIVATE
  -Wl,--version-script=${CMAKE_CURRENT_SOURCE_DIR}/test_hcap_fakeverbs.map)
add_library(hcap_deep SHARED test_hcap_deep.c)
target_link_libraries(hcap_deep PRIVATE hcap_fakeverbs)
set_target_properties(hcap_deep PROPERTIES C_VISIBILITY_PRESET hidden)
# The sanitizer build compiles them plain: they run under LD_PRELOAD=libhintcap.so, which
# ASan's runtime does not allow in front of it.
if(HINTSIM_SANITIZE)
  foreach(t hcap_vapp_dl hcap_vapp hcap_vapp_linked hcap_fakeverbs hcap_deep)
    set_property(TARGET ${t} PROPERTY COMPILE_OPTIONS -Wall -Wextra)
    set_property(TARGET ${t} PROPERTY LINK_OPTIONS "")
  endforeach()
endif()

# libhintcap-audit.so on this host (no device): hcap_vapp's lookups land on libhintcap's
# wrappers with it, on libibverbs' own functions without it.
hs_add_unit_test(test_hcap_audit SOURCES test_hcap_audit.c LIBS hs_testlib)
target_compile_definitions(test_hcap_audit PRIVATE HCAP_LIB="$<TARGET_FILE:hintcap>"
  HCAP_AUDIT_LIB="$<TARGET_FILE:hintcap_audit>" HCAP_VAPP="$<TARGET_FILE:hcap_vapp>"
  HCAP_VAPP_LINKED="$<TARGET_FILE:hcap_vapp_linked>" HCAP_DEEP="$<TARGET_FILE:hcap_deep>"
  HCAP_FAKEVERBS_DIR="$<TARGET_FILE_DIR:hcap_fakeverbs>")
add_dependencies(test_hcap_audit hintcap hintcap_audit hcap_vapp hcap_vapp_linked hcap_deep)

# In the soft-RoCE VM: hcap_vapp in each lookup mode and linked, the control without
# LD_AUDIT, a process that posts nothing, one that posts outside its context's ops, and a
# command that opens no device (tests/vm/preload-dlopen*.sh).
hs_add_vm_test(vm_preload_dlopen SCRIPT preload-dlopen.sh TIMEOUT 900
  FILES $<TARGET_FILE:hintcap>:/usr/lib/libhintcap.so
        $<TARGET_FILE:hintcap_audit>:/usr/lib/libhintcap-audit.so
        $<TARGET_FILE:hcap_vapp>:/usr/bin/hcap_vapp
        $<TARGET_FILE:hcap_vapp_linked>:/usr/bin/hcap_vapp_linked
        # the loader under its soname, as on any Debian system (the base image has only
        # /lib64's): dlmopen (--outside) loads a second libc, which needs it by that name
        /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2:/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
  CHECK preload-dlopen-check.sh)

# In the soft-RoCE VM: launchers that spawn the verbs processes pass the interposer on, and
# each rank's trace carries its rank and host: mpirun -n 2 (Open MPI, when the host has it:
# its launcher, components, help and configuration files go into the image) and a
# torchrun-like parent setting RANK (tests/vm/preload-launch*.sh).
set(hcap_launch_files)
find_program(HCAP_ORTERUN orterun)
find_program(HCAP_ORTED orted)
find_program(HCAP_OMPI_INFO ompi_info)
if(HCAP_ORTERUN AND HCAP_ORTED AND HCAP_OMPI_INFO)
  execute_process(COMMAND ${HCAP_OMPI_INFO} --path pkglibdir --parsable
    OUTPUT_VARIABLE ompi_lib OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${HCAP_OMPI_INFO} --path pkgdatadir --parsable
    OUTPUT_VARIABLE ompi_data OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REGEX REPLACE ".*:" "" ompi_lib "${ompi_lib}")
  string(REGEX REPLACE ".*:" "" ompi_data "${ompi_data}")
  list(APPEND hcap_launch_files ${HCAP_ORTERUN}:/usr/bin/mpirun ${HCAP_ORTED}:/usr/bin/orted)
  file(GLOB ompi_mca ${ompi_lib}/mca_*.so)
  file(GLOB pmix_mca /usr/lib/*/pmix2/lib/pmix/*.so)
  foreach(f ${ompi_mca} ${pmix_mca})
    # components whose libraries are not installed here (UCX, OFI, ...) stay out
    execute_process(COMMAND ldd ${f} OUTPUT_VARIABLE deps ERROR_QUIET)
    if(NOT deps MATCHES "not found")
      list(APPEND hcap_launch_files ${f}:${f})
    endif()
  endforeach()
  file(GLOB_RECURSE ompi_text ${ompi_data}/* /etc/openmpi/* /usr/lib/*/pmix2/share/*)
  foreach(f ${ompi_text})
    list(APPEND hcap_launch_files ${f}:${f})
  endforeach()
endif()
hs_add_vm_test(vm_preload_launch SCRIPT preload-launch.sh TIMEOUT 900
  FILES $<TARGET_FILE:hintcap>:/usr/lib/libhintcap.so
        $<TARGET_FILE:hintcap_audit>:/usr/lib/libhintcap-audit.so
        $<TARGET_FILE:hcap_vapp>:/usr/bin/hcap_vapp ${hcap_launch_files}
  CHECK preload-launch-check.sh)
