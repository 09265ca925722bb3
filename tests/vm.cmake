# Soft-RoCE VM tests (label vm): see tests/vm/README.md.
include(${CMAKE_CURRENT_SOURCE_DIR}/vm/hs_add_vm_test.cmake)

# Boots, checks rxe0/PORT_ACTIVE, runs ibv_rc_pingpong, ib_write_lat, ib_write_bw in the
# guest; the host re-reads the results that came back through $OUT.
hs_add_vm_test(vm_smoke SCRIPT vm-smoke.sh CHECK vm-smoke-check.sh TIMEOUT 600)
