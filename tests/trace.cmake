# Trace module tests: the library in-process, and the `hintsim trace` CLI end to end.
hs_add_unit_test(test_trace_format SOURCES test_trace_format.c LIBS hs_testlib hs_trace)
hs_add_unit_test(test_trace_cli SOURCES test_trace_cli.c LIBS hs_testlib hs_trace)
hs_add_unit_test(test_trace_json SOURCES test_trace_json.c LIBS hs_testlib hs_model hs_trace)
hs_add_valgrind_test(valgrind_test_trace_format COMMAND $<TARGET_FILE:test_trace_format>)

# libFuzzer target for the reader and parsers. The project may be built with gcc, so the
# target is compiled by a separate clang invocation when clang is installed; a bounded run
# over the seed corpus (new inputs go to a scratch corpus in the build tree) is a test.
find_program(HS_CLANG NAMES clang clang-14)
if(HS_CLANG)
  # the libFuzzer runtime is a separate package on some systems: check that it links
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/fuzz_probe.c
       "#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n")
  execute_process(COMMAND ${HS_CLANG} -fsanitize=fuzzer,address,undefined
                  ${CMAKE_CURRENT_BINARY_DIR}/fuzz_probe.c -o ${CMAKE_CURRENT_BINARY_DIR}/fuzz_probe
                  RESULT_VARIABLE HS_FUZZ_PROBE OUTPUT_QUIET ERROR_QUIET)
  if(NOT HS_FUZZ_PROBE EQUAL 0)
    message(STATUS "hintsim: ${HS_CLANG} cannot link libFuzzer targets, fuzz_trace_reader not built")
    set(HS_CLANG "")
  endif()
endif()
if(HS_CLANG)
  file(GLOB HS_FUZZ_SOURCES ${PROJECT_SOURCE_DIR}/traces/*.c ${PROJECT_SOURCE_DIR}/common/*.c)
  set(HS_FUZZ_BIN ${CMAKE_CURRENT_BINARY_DIR}/fuzz_trace_reader)
  add_custom_command(OUTPUT ${HS_FUZZ_BIN}
    COMMAND ${HS_CLANG} -std=c11 -g -O1 -D_GNU_SOURCE -DHINTSIM_VERSION="${PROJECT_VERSION}"
            -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
            -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
            -I${PROJECT_SOURCE_DIR} -I${CJSON_INC}
            ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_trace_reader.c ${HS_FUZZ_SOURCES}
            ${CJSON_LIB} -lm -o ${HS_FUZZ_BIN}
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_trace_reader.c ${HS_FUZZ_SOURCES}
    COMMENT "clang: libFuzzer target fuzz_trace_reader" VERBATIM)
  add_custom_target(fuzz_trace_reader ALL DEPENDS ${HS_FUZZ_BIN})
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fuzz-work)
  add_test(NAME fuzz_trace_reader
    COMMAND ${HS_FUZZ_BIN} -runs=20000 -max_total_time=20 -max_len=16384 -close_fd_mask=2 -seed=1
            ${CMAKE_CURRENT_BINARY_DIR}/fuzz-work ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus)
  set_tests_properties(fuzz_trace_reader PROPERTIES LABELS fuzz TIMEOUT 300
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1")
else()
  message(STATUS "hintsim: clang not found, fuzz_trace_reader not built")
endif()
