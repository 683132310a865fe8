# Helpers every folder uses to declare its target.
#
# The runtime's own code must never be built with -finstrument-functions: its
# hooks would call themselves. limpwatch_runtime_target() refuses a build whose
# flags would instrument it.

set(LIMPWATCH_WARNINGS -Wall -Wextra -Wno-unused-parameter)

function(limpwatch_refuse_instrumentation target)
  foreach(flags_var CMAKE_C_FLAGS CMAKE_CXX_FLAGS "CMAKE_C_FLAGS_${CMAKE_BUILD_TYPE}" "CMAKE_CXX_FLAGS_${CMAKE_BUILD_TYPE}")
    string(TOUPPER "${flags_var}" flags_var_upper)
    if("${${flags_var}}${${flags_var_upper}}" MATCHES "-finstrument-functions")
      message(FATAL_ERROR "limpwatch: ${flags_var} contains -finstrument-functions; the runtime target "
                          "'${target}' must not be instrumented (its hooks would call themselves). "
                          "Instrument only the program under test, e.g. with limpwatch_instrument().")
    endif()
  endforeach()
  get_target_property(options ${target} COMPILE_OPTIONS)
  if(options AND "${options}" MATCHES "-finstrument-functions")
    message(FATAL_ERROR "limpwatch: target '${target}' is part of the runtime and must not use -finstrument-functions")
  endif()
endfunction()

# A library that is part of limpwatch itself (never instrumented).
function(limpwatch_runtime_target target)
  limpwatch_refuse_instrumentation(${target})
  target_compile_options(${target} PRIVATE ${LIMPWATCH_WARNINGS})
endfunction()

# Marks a program (examples, golden test programs, the test-bed) as traced.
function(limpwatch_instrument target)
  target_compile_options(${target} PRIVATE -finstrument-functions -fno-omit-frame-pointer)
  target_link_libraries(${target} PRIVATE limpwatch::limpwatch)
endfunction()
