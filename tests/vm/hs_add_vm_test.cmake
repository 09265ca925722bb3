# hs_add_vm_test(NAME SCRIPT script.sh [FILES host[:guest] ...] [TIMEOUT s] [CHECK host.sh]
#                [APPEND "kernel args"] [ARGS a ...])
# Registers a CTest test (label vm) that boots the soft-RoCE VM (tests/vm/run-in-vm.sh) with
# the release-built hintsim as /usr/bin/hintsim and runs SCRIPT in it under busybox sh, from
# /hs/files, with OUT=/out. SCRIPT and CHECK are relative to tests/vm/ unless absolute. FILES
# are copied in (guest default /hs/files/<name>; ELF files bring their shared libraries;
# generator expressions such as $<TARGET_FILE:tgt>:/usr/lib/libx.so work). What the script
# leaves in $OUT comes back to <build>/vm-out/NAME/, then CHECK (a host program) runs with
# that directory as its argument. TIMEOUT (default 600 s) bounds the VM; the test passes iff
# the script and the check exit 0; 77 = skipped (VM cannot boot here). APPEND adds guest
# kernel command-line arguments (HS_VM_TEST_APPEND of tests/vm/run-in-vm.sh: a user's own
# HS_VM_APPEND still applies after them).
include_guard(GLOBAL)

set(HINTSIM_VM_CACHE "${CMAKE_BINARY_DIR}/vm-cache" CACHE PATH
    "Where the VM tests keep Debian's kernel package and the base initramfs")
set(HS_VM_DIR "${CMAKE_CURRENT_LIST_DIR}" CACHE INTERNAL "tests/vm: the VM harness")
find_program(HS_BASH bash REQUIRED)

function(hs_add_vm_test name)
  cmake_parse_arguments(V "" "SCRIPT;TIMEOUT;CHECK;APPEND" "FILES;ARGS" ${ARGN})
  if(NOT V_SCRIPT)
    message(FATAL_ERROR "hs_add_vm_test(${name}): SCRIPT is required")
  endif()
  if(NOT V_TIMEOUT)
    set(V_TIMEOUT 600)
  endif()
  foreach(p SCRIPT CHECK)
    if(V_${p} AND NOT IS_ABSOLUTE "${V_${p}}")
      set(V_${p} "${HS_VM_DIR}/${V_${p}}")
    endif()
  endforeach()
  if(NOT V_CHECK)
    set(V_CHECK -)
  endif()
  set(file_args)
  foreach(f IN LISTS V_FILES)
    list(APPEND file_args --file "${f}")
  endforeach()
  add_test(NAME ${name}
    COMMAND ${HS_BASH} ${HS_VM_DIR}/vm-ctest.sh ${CMAKE_BINARY_DIR}/vm-out/${name} ${V_CHECK}
            --timeout ${V_TIMEOUT} --hintsim $<TARGET_FILE:hintsim> --cache ${HINTSIM_VM_CACHE}
            ${file_args} ${V_SCRIPT} ${V_ARGS})
  # the CTest timeout is above the VM's own so the harness reports the hang itself; PROCESSORS
  # 2: a TCG guest keeps two host cores busy, so ctest -j counts it that way
  math(EXPR ctest_timeout "${V_TIMEOUT} + 180")
  set_tests_properties(${name} PROPERTIES LABELS vm SKIP_RETURN_CODE 77 PROCESSORS 2
    TIMEOUT ${ctest_timeout}
    ENVIRONMENT "HINTSIM_SRC=${PROJECT_SOURCE_DIR};HINTSIM_BIN=$<TARGET_FILE:hintsim>;HINTSIM_VM_CACHE=${HINTSIM_VM_CACHE}")
  if(V_APPEND)
    set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT "HS_VM_TEST_APPEND=${V_APPEND}")
  endif()
endfunction()
