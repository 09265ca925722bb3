# report.html: content and atomicity, and a render in headless Chromium.
hs_add_unit_test(test_report_html SOURCES test_report_html.c LIBS hs_plot_fixture hs_testlib)
find_library(HS_Z_LIB z)
if(HS_Z_LIB)
  hs_add_unit_test(test_report_chromium SOURCES test_report_chromium.c
    LIBS hs_plot_fixture hs_testlib ${HS_Z_LIB})
  set_tests_properties(test_report_chromium PROPERTIES TIMEOUT 300)
else()
  message(STATUS "hintsim: zlib not found, test_report_chromium not built (apt-get install zlib1g-dev)")
endif()
# hintsim doctor: the machine report.
hs_add_unit_test(test_report_doctor SOURCES test_report_doctor.c LIBS hs_plots hs_testlib)
# recommend -o: the report from a real rec_run.
hs_add_unit_test(test_report_rec SOURCES test_report_rec.c LIBS hs_plots hs_model hs_trace hs_testlib)
# validate -o: the report from validate's JSON.
hs_add_unit_test(test_report_val SOURCES test_report_val.c LIBS hs_plots hs_model hs_trace hs_testlib)
