# Runs a fuzz engine over the seed corpus for a while (cmake -P, from CTest).
#   FUZZER   the libFuzzer binary or the standalone driver (same flags)
#   SEEDS    the seed corpus directory
#   WORK     a scratch directory: libFuzzer's growing corpus and crash files
#   SECONDS  how long
# The scratch directory is removed after a clean run and kept (with the
# crashing input) after a failure.
foreach(variable FUZZER SEEDS WORK SECONDS)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "run_fuzzer.cmake: ${variable} is not set")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/corpus" "${WORK}/artifacts")
execute_process(
  COMMAND "${FUZZER}" -max_total_time=${SECONDS} -print_final_stats=1 -artifact_prefix=${WORK}/artifacts/
          "${WORK}/corpus" "${SEEDS}"
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "fuzzing failed (${result}); the input that broke it is in ${WORK}/artifacts")
endif()
file(REMOVE_RECURSE "${WORK}")
