# GPU tests (label gpu): need a CUDA device, exit 77 (skipped) with a message without one.
# The CUDA sweep engine's, where sweep/cuda.cmake built it.
if(HINTSIM_HAVE_CUDA_SWEEP)
  hs_add_unit_test(test_sweep_cuda SOURCES gpu/test_sweep_cuda.c
    LIBS hs_sweep_cuda hs_test_points hs_model hs_testlib LABELS gpu)
  set_tests_properties(test_sweep_cuda PROPERTIES TIMEOUT 900)
  add_test(NAME test_sweep_cuda_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/test_sweep_cuda_cli.sh
    $<TARGET_FILE:hintsim> ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_sweep_cuda_cli PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
