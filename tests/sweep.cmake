# sweep/: grid, keys, resume, local/MPI/Slurm engines and merge (closed-form stand-in
# evaluator), and the CLI over the real model.
add_library(hs_test_sweep_fake STATIC test_sweep_fake.c)
target_link_libraries(hs_test_sweep_fake PUBLIC hs_sweep hs_common)
hs_add_unit_test(test_sweep_grid SOURCES test_sweep_grid.c LIBS hs_test_sweep_fake hs_sweep hs_testlib)
hs_add_unit_test(test_sweep_file SOURCES test_sweep_file.c LIBS hs_sweep hs_testlib)
hs_add_unit_test(test_sweep_run SOURCES test_sweep_run.c LIBS hs_test_sweep_fake hs_sweep hs_testlib)
add_executable(test_sweep_mpi_helper test_sweep_mpi_helper.c)
target_link_libraries(test_sweep_mpi_helper PRIVATE hs_test_sweep_fake hs_sweep hs_common
  ${CJSON_LIB} ${M_LIB})
hs_add_unit_test(test_sweep_mpi SOURCES test_sweep_mpi.c LIBS hs_test_sweep_fake hs_sweep hs_testlib)
add_dependencies(test_sweep_mpi test_sweep_mpi_helper)
set_property(TEST test_sweep_mpi APPEND PROPERTY ENVIRONMENT
  "SWEEP_MPI_HELPER=$<TARGET_FILE:test_sweep_mpi_helper>")
hs_add_unit_test(test_sweep_cli SOURCES test_sweep_cli.c LIBS hs_test_sweep_fake hs_sweep hs_testlib)
hs_add_valgrind_test(valgrind_test_sweep_grid COMMAND $<TARGET_FILE:test_sweep_grid>)
hs_add_valgrind_test(valgrind_test_sweep_run COMMAND $<TARGET_FILE:test_sweep_run>)
# The --emit-slurm script under a real, private one-node Slurm (skipped without slurmctld,
# slurmd and slurm-client, or when not root).
add_test(NAME test_sweep_slurm
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_sweep_slurm.sh $<TARGET_FILE:hintsim>
  ${PROJECT_SOURCE_DIR})
set_tests_properties(test_sweep_slurm PROPERTIES LABELS unit TIMEOUT 300 SKIP_RETURN_CODE 77)
