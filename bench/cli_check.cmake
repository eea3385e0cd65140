# One mla_bench command line and what it must do (ctest, bench/CMakeLists.txt):
#   cmake -DBENCH=<mla_bench> -DARGS="a;b" -DWANT_RC=<exit status> -DWANT_OUTPUT=<regex>
#         [-DWANT_CSV=<regex> -DCSV=<path>] -P cli_check.cmake
# Fails unless the exit status is WANT_RC, stdout + stderr match WANT_OUTPUT, and (when CSV is
# given) the CSV file exists and matches WANT_CSV, or (WANT_CSV empty) was not written.
if(DEFINED CSV)
  file(REMOVE "${CSV}")
endif()
execute_process(COMMAND "${BENCH}" ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT rc STREQUAL "${WANT_RC}")
  message(FATAL_ERROR "exit status ${rc}, want ${WANT_RC}:\n${all}")
endif()
if(NOT all MATCHES "${WANT_OUTPUT}")
  message(FATAL_ERROR "output does not match '${WANT_OUTPUT}':\n${all}")
endif()
if(DEFINED CSV)
  if(WANT_CSV STREQUAL "")
    if(EXISTS "${CSV}")
      message(FATAL_ERROR "${CSV} was written, want none")
    endif()
  else()
    if(NOT EXISTS "${CSV}")
      message(FATAL_ERROR "no ${CSV}")
    endif()
    file(READ "${CSV}" csv)
    if(NOT csv MATCHES "${WANT_CSV}")
      message(FATAL_ERROR "${CSV} does not match '${WANT_CSV}':\n${csv}")
    endif()
  endif()
endif()
