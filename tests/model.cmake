# model/: profiles, the replay engine (closed forms), the seeds reproduced, recommend;
# test_param_sweep: every profile parameter at its edges through model, sim and sweep;
# test_model_grid: the engine's shortcuts against its chunk-by-chunk replay on the grid of
# what-if points (hs_points) the GPU engine is checked on too.
add_library(hs_test_points STATIC hs_points.c)
target_link_libraries(hs_test_points PUBLIC hs_testlib hs_model)
hs_add_unit_test(test_profile SOURCES test_profile.c LIBS hs_testlib hs_model)
hs_add_unit_test(test_model_closed SOURCES test_model_closed.c LIBS hs_testlib hs_model)
hs_add_unit_test(test_model_seeds SOURCES test_model_seeds.c LIBS hs_testlib hs_model)
hs_add_unit_test(test_recommend SOURCES test_recommend.c LIBS hs_testlib hs_model)
hs_add_valgrind_test(valgrind_test_model_closed COMMAND $<TARGET_FILE:test_model_closed>)
hs_add_unit_test(test_model_load SOURCES test_model_load.c LIBS hs_testlib hs_model)
hs_add_unit_test(test_model_skip SOURCES test_model_skip.c LIBS hs_testlib hs_model)
hs_add_unit_test(test_model_memo SOURCES test_model_memo.c LIBS hs_testlib hs_model)
hs_add_unit_test(test_hint_class SOURCES test_hint_class.c LIBS hs_testlib hs_model)
hs_add_unit_test(test_param_sweep SOURCES test_param_sweep.c LIBS hs_testlib hs_model)
hs_add_unit_test(test_lat_hist SOURCES test_lat_hist.c LIBS hs_testlib hs_model)
hs_add_unit_test(test_model_grid SOURCES test_model_grid.c LIBS hs_test_points hs_testlib hs_model)
