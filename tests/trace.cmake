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
# hs_add_fuzz(NAME SECONDS GLOBS...): the libFuzzer target tests/fuzz/NAME.c built with the
# sources GLOBS name (relative to the project; common/*.c always), and a test that runs it for SECONDS over its seed corpus
# tests/fuzz/corpus/NAME (new inputs go to the build tree, never to the repository).
function(hs_add_fuzz name seconds)
  set(srcs "")
  foreach(g ${ARGN} common/*.c)
    file(GLOB s ${PROJECT_SOURCE_DIR}/${g})
    list(APPEND srcs ${s})
  endforeach()
  set(bin ${CMAKE_CURRENT_BINARY_DIR}/${name})
  add_custom_command(OUTPUT ${bin}
    COMMAND ${HS_CLANG} -std=c11 -g -O1 -D_GNU_SOURCE -DHINTSIM_VERSION="${PROJECT_VERSION}"
            -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
            -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
            -I${PROJECT_SOURCE_DIR} -I${CJSON_INC}
            ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/${name}.c ${srcs}
            ${CJSON_LIB} -lm -lpthread -o ${bin}
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/${name}.c ${srcs}
    COMMENT "clang: libFuzzer target ${name}" VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${bin})
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fuzz-work/${name})
  add_test(NAME ${name}
    COMMAND ${bin} -max_total_time=${seconds} -max_len=16384 -close_fd_mask=3 -seed=1
            -print_final_stats=1
            ${CMAKE_CURRENT_BINARY_DIR}/fuzz-work/${name} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${name})
  set_tests_properties(${name} PROPERTIES LABELS fuzz TIMEOUT 300
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1")
endfunction()

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
  # salvage, the text imports, profile and grid JSON: a few seconds each here; the
  # corpus folders hold their seeds (tests/fuzz/README.md)
  hs_add_fuzz(fuzz_trace_salvage 5 traces/*.c)
  hs_add_fuzz(fuzz_trace_text 5 traces/*.c)
  hs_add_fuzz(fuzz_profile_json 5 model/profile/profile*.c model/path_rules.c)
  hs_add_fuzz(fuzz_sweep_grid 5 sweep/sweep_grid.c)
  # bench/bench_fuzz.sh as a user runs it by hand, the tests folder named relative to the
  # working folder (each target runs from a work folder of its own): a second a target, and
  # the script's exit status says whether any failed to run or found anything
  add_test(NAME bench_fuzz_script
    COMMAND bash ${PROJECT_SOURCE_DIR}/bench/bench_fuzz.sh 1 . ${PROJECT_SOURCE_DIR}
            $<TARGET_FILE:hintsim>
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(bench_fuzz_script PROPERTIES LABELS fuzz TIMEOUT 300
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1")
else()
  message(STATUS "hintsim: clang not found, fuzz_trace_reader not built")
endif()

# '-' (standard input, output), pipes and FIFOs through every command that reads or writes a
# file without a device, each compared with the same command on files.
add_test(NAME test_pipes
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_pipes.sh $<TARGET_FILE:hintsim> ${PROJECT_SOURCE_DIR})
set_tests_properties(test_pipes PROPERTIES LABELS unit TIMEOUT 300)
