# sim/: golden timelines, agreement with the model, incast, bad input.
hs_add_unit_test(test_sim_golden SOURCES test_sim_golden.c LIBS hs_sim hs_model hs_trace hs_testlib)
hs_add_unit_test(test_sim_agree SOURCES test_sim_agree.c LIBS hs_sim hs_model hs_trace hs_testlib)
hs_add_unit_test(test_sim_flows SOURCES test_sim_flows.c LIBS hs_sim hs_model hs_trace hs_testlib)
hs_add_unit_test(test_sim_errors SOURCES test_sim_errors.c LIBS hs_testlib)
hs_add_unit_test(test_sim_cli SOURCES test_sim_cli.c LIBS hs_testlib util)
hs_add_unit_test(test_pred_jitter SOURCES test_pred_jitter.c LIBS hs_sim hs_model hs_trace hs_testlib)
