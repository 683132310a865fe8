# Runs a fuzz engine over the seed corpora for a while (cmake -P, from CTest).
#   FUZZER   the libFuzzer binary or the standalone driver (same flags)
#   SEEDS    the seed corpus directories, separated by commas
#   WORK     a scratch directory: libFuzzer's growing corpus and crash files
#   SECONDS  how long
#   MAX_LEN  the longest input to make (empty: the engine's default)
# An input running longer than 10 s counts as a hang, and an input growing
# the process beyond 2 GB as a leak: either fails the run like a crash. The
# scratch directory is removed after a clean run and kept (with the input
# that broke the target) after a failure.
foreach(variable FUZZER SEEDS WORK SECONDS)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "run_fuzzer.cmake: ${variable} is not set")
  endif()
endforeach()

string(REPLACE "," ";" seed_directories "${SEEDS}")
set(length_flag)
if(MAX_LEN)
  set(length_flag -max_len=${MAX_LEN})
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/corpus" "${WORK}/artifacts")
execute_process(
  COMMAND "${FUZZER}" -max_total_time=${SECONDS} -timeout=10 -rss_limit_mb=2048 ${length_flag}
          -print_final_stats=1 -artifact_prefix=${WORK}/artifacts/ "${WORK}/corpus" ${seed_directories}
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "fuzzing failed (${result}); the input that broke it is in ${WORK}/artifacts: "
                      "once its bug is fixed, keep it in tests/fuzz/regressions/<target>/")
endif()
file(REMOVE_RECURSE "${WORK}")
