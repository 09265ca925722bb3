# Soft-RoCE VM tests (label vm): see tests/vm/README.md.
include(${CMAKE_CURRENT_SOURCE_DIR}/vm/hs_add_vm_test.cmake)

# Boots, checks rxe0/PORT_ACTIVE, runs ibv_rc_pingpong, ib_write_lat, ib_write_bw in the
# guest; the host re-reads the results that came back through $OUT.
hs_add_vm_test(vm_smoke SCRIPT vm-smoke.sh CHECK vm-smoke-check.sh TIMEOUT 600)

# The harness itself: exit status, arguments, files in and out, skip codes, timeout.
add_test(NAME vm_selftest
  COMMAND ${HS_BASH} ${HS_VM_DIR}/vm-selftest.sh ${HINTSIM_VM_CACHE} $<TARGET_FILE:hintsim>
          ${CMAKE_BINARY_DIR}/vm-out/vm_selftest)
set_tests_properties(vm_selftest PROPERTIES LABELS vm SKIP_RETURN_CODE 77 PROCESSORS 2
  TIMEOUT 900)

# validate's live replay measures the device, not itself: in one boot, capture bench's 64 B
# latency, paced as each trace is (--gap-us), against validate's of sparse open-loop traces
# on LL (500 us and 5 ms apart) and of a closed-loop ping-pong on BW with selective
# signalling (tests/vm/capture-replay.sh; the ratios are checked on the host by
# capture-replay-check.sh). The guest's vCPUs poll when idle (idle=poll), as a NIC does not
# sleep: a halted vCPU's wake-up (slow where the host itself is a VM) would land on the
# sparse messages.
hs_add_vm_test(vm_capture_replay SCRIPT capture-replay.sh CHECK capture-replay-check.sh
  APPEND "idle=poll" TIMEOUT 600)
# The check itself, without a VM: made-up rounds it must pass (a still device, a drifting
# one, validate slow only where the host ran it slower than its benches), fail (validate ten
# times late, 40% slow on a still device and host, a bench missing) and leave undecided
# (the host's speed differed in 5 rounds of 7).
add_test(NAME capture_replay_check_selftest
  COMMAND ${HS_BASH} ${HS_VM_DIR}/capture-replay-check-selftest.sh
          ${HS_VM_DIR}/capture-replay-check.sh ${CMAKE_BINARY_DIR}/capture-replay-check-selftest)
