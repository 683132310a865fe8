# Runs a fuzz target once on each input of a directory (cmake -P, from
# CTest): the inputs that once broke it, kept so that the bugs stay fixed.
#   FUZZER   the libFuzzer binary or the standalone driver (both run the
#            files they are given once each)
#   INPUTS   the directory
foreach(variable FUZZER INPUTS)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "replay_inputs.cmake: ${variable} is not set")
  endif()
endforeach()

file(GLOB inputs LIST_DIRECTORIES false "${INPUTS}/*")
list(FILTER inputs EXCLUDE REGEX "/README[^/]*$")
if(NOT inputs)
  message(FATAL_ERROR "no inputs in ${INPUTS}")
endif()
execute_process(COMMAND "${FUZZER}" -timeout=10 ${inputs} RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "an input of ${INPUTS} breaks the target again (${result})")
endif()
