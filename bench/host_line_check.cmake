# cmake [-DEXPECT=REGEX] -P host_line_check.cmake BENCH [ARGS...]: a benchmark's smoke test.
# Runs BENCH with ARGS and fails unless it exits 0, its first line names the host
# (hs_host_print, common/hs_host.h: CPU model, cores online and allowed, clock source,
# invariant TSC) and its output matches REGEX where one is given.
set(HS_HOST_LINE_RE
  "^host: cpu=\"[^\"\n]+\" cores_online=[1-9][0-9]* cores_allowed=[1-9][0-9]* clocksource=[^ \n]+ tsc_invariant=(yes|no)\n")
if(NOT CMAKE_SCRIPT_MODE_FILE)
  return() # included by bench/CMakeLists.txt for HS_HOST_LINE_RE only
endif()
set(cmd)
set(after_p -1) # the command follows "-P script" (a -D before -P shifts it)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE 1 ${last})
  if(after_p EQUAL -1 AND "${CMAKE_ARGV${i}}" STREQUAL "-P")
    math(EXPR after_p "${i} + 2")
  elseif(NOT after_p EQUAL -1 AND i GREATER_EQUAL after_p)
    list(APPEND cmd "${CMAKE_ARGV${i}}")
  endif()
endforeach()
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${cmd}: exit status ${rc}")
endif()
if(NOT out MATCHES "${HS_HOST_LINE_RE}")
  string(REGEX MATCH "^[^\n]*" first "${out}")
  message(FATAL_ERROR "first line does not name the host: '${first}'")
endif()
# where the kernel gives the CPU's family and model (x86), the line names them: one model
# name ("Intel(R) Xeon(R) Processor") covers generations whose figures differ
file(READ /proc/cpuinfo cpuinfo LIMIT 4096)
if(cpuinfo MATCHES "\ncpu family[ \t]*: [0-9]+" AND
   NOT out MATCHES "^host: cpu=\"[^\"\n]*, family [0-9]+ model [0-9]+ stepping [0-9?]+\"")
  string(REGEX MATCH "^[^\n]*" first "${out}")
  message(FATAL_ERROR "the host line does not name the CPU's family and model: '${first}'")
endif()
if(DEFINED EXPECT AND NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output does not match '${EXPECT}'")
endif()
