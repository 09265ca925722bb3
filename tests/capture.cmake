# capture/: unit tests of the two-path engine's device-free logic. The live paths (device,
# ends, bench, validate) run in the soft-RoCE VM (tests/vm/capture-*.sh) and GPU memory on the
# GPU machine (tests/gpu/).
hs_add_unit_test(test_cap_policy SOURCES test_cap_policy.c LIBS hs_capture hs_testlib)
# the live runs' duration histogram (bench and validate report their own costs with it)
hs_add_unit_test(test_cap_hist SOURCES test_cap_hist.c LIBS hs_capture hs_testlib)
hs_add_valgrind_test(valgrind_test_cap_policy COMMAND $<TARGET_FILE:test_cap_policy>)
hs_add_unit_test(test_cap_validate SOURCES test_cap_validate.c LIBS hs_capture hs_testlib)
# the control connection's TCP keepalive; its vanished-client case needs a network namespace
# of its own (root) and skips without one
hs_add_unit_test(test_cap_keepalive SOURCES test_cap_keepalive.c LIBS hs_capture hs_testlib)
# the client's dial within --timeout, also where the server's host drops the connection
# requests (a full accept queue on loopback); the timeout keeps a blocking connect, which
# waits out the kernel's SYN retries (~127 s), from holding CI; its name lookups (a name
# server that never answers, a name with two addresses) need namespaces of their own (root)
# and skip without them
hs_add_unit_test(test_cap_dial SOURCES test_cap_dial.c LIBS hs_capture hs_testlib)
set_tests_properties(test_cap_dial PROPERTIES TIMEOUT 30)

# the control protocol under hostile input: its parsers (test_cap_proto), the server's wait
# for its client against hostile connections on loopback TCP (test_cap_hostile: no device),
# a libFuzzer target over the parsers (fuzz_cap_proto, below) and, in the VM, the real
# --server against the same hostile clients (vm_capture_hostile: the cap_hostile tool)
hs_add_unit_test(test_cap_proto SOURCES test_cap_proto.c LIBS hs_capture hs_testlib)
hs_add_unit_test(test_cap_hostile SOURCES test_cap_hostile.c cap_hostile.c
  LIBS hs_capture hs_testlib)
# its accept wrapper lets another taker come between the server's poll and its accept
target_link_options(test_cap_hostile PRIVATE -Wl,--wrap=accept)
add_executable(cap_hostile cap_hostile_main.c cap_hostile.c
  ${PROJECT_SOURCE_DIR}/capture/cap_proto.c)
target_include_directories(cap_hostile PRIVATE ${PROJECT_SOURCE_DIR})
if(HS_CLANG)
  set(HS_FUZZ_CAP_BIN ${CMAKE_CURRENT_BINARY_DIR}/fuzz_cap_proto)
  add_custom_command(OUTPUT ${HS_FUZZ_CAP_BIN}
    COMMAND ${HS_CLANG} -std=c11 -g -O1 -D_GNU_SOURCE
            -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
            -I${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_cap_proto.c
            ${PROJECT_SOURCE_DIR}/capture/cap_proto.c -o ${HS_FUZZ_CAP_BIN}
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_cap_proto.c
            ${PROJECT_SOURCE_DIR}/capture/cap_proto.c ${PROJECT_SOURCE_DIR}/capture/cap_proto.h
    COMMENT "clang: libFuzzer target fuzz_cap_proto" VERBATIM)
  add_custom_target(fuzz_cap_proto ALL DEPENDS ${HS_FUZZ_CAP_BIN})
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fuzz-work-cap_proto)
  add_test(NAME fuzz_cap_proto
    COMMAND ${HS_FUZZ_CAP_BIN} -runs=200000 -max_total_time=20 -max_len=1024 -seed=1
            ${CMAKE_CURRENT_BINARY_DIR}/fuzz-work-cap_proto
            ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus_cap_proto)
  set_tests_properties(fuzz_cap_proto PROPERTIES LABELS fuzz TIMEOUT 300
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1")
endif()
if(COMMAND hs_add_vm_test)
  hs_add_vm_test(vm_capture_hostile SCRIPT capture-hostile.sh TIMEOUT 600
    FILES $<TARGET_FILE:cap_hostile>)
endif()

# In the soft-RoCE VM (label vm; tests/vm/README.md).
if(COMMAND hs_add_vm_test)
  hs_add_vm_test(vm_capture_bench SCRIPT capture-bench.sh TIMEOUT 600
    CHECK capture-bench-check.sh)
  hs_add_vm_test(vm_capture_validate SCRIPT capture-validate.sh TIMEOUT 900
    FILES ${PROJECT_SOURCE_DIR}/traces/samples/kv.hst ${PROJECT_SOURCE_DIR}/traces/samples/burst.hst
    CHECK capture-validate-check.sh)
  hs_add_vm_test(vm_capture_peer SCRIPT capture-peer.sh TIMEOUT 900)
  # --server / --connect across two hosts: two VMs, each with its own kernel and rxe device
  # on a virtio NIC, joined by a wire (plain) or through a third VM that routes between two
  # subnets (routed: RoCE v2 crosses a router); capture bench, calibrate and validate in turn
  # (tests/vm/cross-host-run.sh). A test of its own each: PROCESSORS 2, like every VM test.
  foreach(topo plain routed)
    set(name vm_cross_host)
    if(topo STREQUAL routed)
      set(name vm_cross_host_routed)
    endif()
    add_test(NAME ${name}
      COMMAND ${HS_BASH} ${HS_VM_DIR}/cross-host-run.sh ${HINTSIM_VM_CACHE}
              $<TARGET_FILE:hintsim> ${CMAKE_BINARY_DIR}/vm-out/${name} 1 ${topo})
    set_tests_properties(${name} PROPERTIES LABELS vm SKIP_RETURN_CODE 77 PROCESSORS 2
      TIMEOUT 600)
  endforeach()
endif()

# GPU memory (label gpu): needs a CUDA GPU; exits 77 (skipped) with a message without one.
if(HINTSIM_HAVE_CUDA)
  hs_add_unit_test(test_cap_cuda SOURCES gpu/test_cap_cuda.c LIBS hs_capture hs_testlib
    LABELS gpu)
endif()
