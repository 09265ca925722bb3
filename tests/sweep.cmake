# sweep/: grid, keys, resume, local/MPI/Slurm engines and merge (closed-form stand-in
# evaluator), and the CLI over the real model.
add_library(hs_test_sweep_fake STATIC test_sweep_fake.c)
target_link_libraries(hs_test_sweep_fake PUBLIC hs_sweep hs_common)
hs_add_unit_test(test_sweep_grid SOURCES test_sweep_grid.c LIBS hs_test_sweep_fake hs_sweep hs_testlib)
